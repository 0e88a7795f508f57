package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLists(t *testing.T) {
	// A range ends at its end, a doubling of its start or not.
	if got, err := Ints("2..20"); err != nil || !slices.Equal(got, []int{2, 4, 8, 16, 20}) {
		t.Errorf("Ints(2..20) = %v, %v", got, err)
	}
	if got, err := Ints("2..1000"); err != nil || len(got) != 10 || got[8] != 512 || got[9] != 1000 {
		t.Errorf("Ints(2..1000) = %v, %v; want 2, 4, ..., 512, 1000", got, err)
	}
	if got, err := Ints("5..5"); err != nil || !slices.Equal(got, []int{5}) {
		t.Errorf("Ints(5..5) = %v, %v", got, err)
	}
	// Up to the largest size: 63 values, no doubling past it (which would
	// wrap negative and never end).
	if got, err := Sizes("1..4611686018427387904"); err != nil || len(got) != 63 || got[62] != 1<<62 {
		t.Errorf("Sizes(1..2^62) = %d values ending %v, %v; want 63 ending 2^62", len(got), got[len(got)-1:], err)
	}
	if got, err := Ints("3, 5,7"); err != nil || !slices.Equal(got, []int{3, 5, 7}) {
		t.Errorf("Ints(3, 5,7) = %v, %v", got, err)
	}
	if got, err := Sizes("8..64"); err != nil || !slices.Equal(got, []int64{8, 16, 32, 64}) {
		t.Errorf("Sizes(8..64) = %v, %v", got, err)
	}
	if got, err := Sizes("1KiB,1MiB"); err != nil || !slices.Equal(got, []int64{1024, 1 << 20}) {
		t.Errorf("Sizes(1KiB,1MiB) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "0..8", "8..2", "1,,2"} {
		if _, err := Ints(bad); err == nil {
			t.Errorf("Ints(%q) accepted", bad)
		}
	}
	// A missing item or range end is named as such (they said `"" does
	// not start with a number`: an audit).
	for bad, want := range map[string]string{
		"8..":   `range "8.." lacks an end`,
		"..8":   `range "..8" lacks an end`,
		"8,,16": `"8,,16" has an empty item`,
		"8,":    `"8," has an empty item`,
	} {
		if _, err := Sizes(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Sizes(%q): %v, want %s", bad, err, want)
		}
	}
}

// OutputFile refuses a file of another kind than exts, or in a directory
// that is not one (missing, or a regular file), as a bad flag; a file in
// the working directory or in one that exists passes.
func TestOutputFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		exts []string
		want string // "" for no refusal
	}{
		{"x.png", []string{".png", ".svg"}, ""},
		{filepath.Join(dir, "x.svg"), []string{".png", ".svg"}, ""},
		{filepath.Join(dir, "x.anything"), nil, ""},
		{"x.jpg", []string{".png", ".svg"}, "give a .png or .svg file"},
		{filepath.Join(dir, "missing", "x.png"), []string{".png"}, "there is no directory " + filepath.Join(dir, "missing")},
		{filepath.Join(file, "x.png"), []string{".png"}, "there is no directory " + file},
	} {
		err := OutputFile("--plot", c.path, c.exts...)
		var fe *FlagError
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("OutputFile(%q, %q) = %v; want %q", c.path, c.exts, err, c.want)
		}
	}
}
