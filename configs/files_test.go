package configs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file of exactly the limit is read whole; one byte more is refused with
// the path and the limit named; /dev/zero, which never ends, is refused
// after the limit (in well under a second for 1 MiB).
func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact")
	over := filepath.Join(dir, "over")
	os.WriteFile(exact, []byte(strings.Repeat("x", 1000)), 0o644)
	os.WriteFile(over, []byte(strings.Repeat("x", 1001)), 0o644)
	if b, err := ReadFile(exact, 1000, "a test file"); err != nil || len(b) != 1000 {
		t.Errorf("a file of exactly the limit: %d bytes, %v", len(b), err)
	}
	_, err := ReadFile(over, 1000, "a test file")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), over+": file too large: more than 1000B, too large for a test file") {
		t.Errorf("a file past the limit: %v", err)
	}
	start := time.Now()
	if _, err := ReadFile("/dev/zero", MaxConfigBytes, "a machine config"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 1MiB") {
		t.Errorf("/dev/zero: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("/dev/zero took %v: not bounded", d)
	}
}

// A table's lines are bounded wherever they fall in the reads: lines of
// exactly MaxLineBytes pass, split across reads of any size; one byte more,
// in the first line, a middle one or the last one without its newline, is
// refused; /dev/zero, one endless line, is refused after MaxLineBytes.
func TestBoundedTableLines(t *testing.T) {
	line := strings.Repeat("x", MaxLineBytes)
	cases := []struct {
		name string
		text string
		ok   bool
	}{
		{"lines at the bound", line + "\n" + line + "\n" + line, true},
		{"first line over", line + "x\nshort\n", false},
		{"middle line over", "a\n" + line + "x\nb\n", false},
		{"last line over, no newline", "a\nb\n" + line + "x", false},
		{"short lines", strings.Repeat("a,b,c\n", 1000), true},
	}
	for _, c := range cases {
		for _, chunk := range []int{1, 7, 4096, 3 << 20} {
			r := BoundedTable(&chunked{s: c.text, n: chunk}, "a test table")
			got, err := io.ReadAll(r)
			if c.ok && (err != nil || string(got) != c.text) {
				t.Errorf("%s, reads of %d: %d bytes, %v", c.name, chunk, len(got), err)
			}
			if !c.ok && (!errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "a line longer than 1MiB, too long for a test table")) {
				t.Errorf("%s, reads of %d: %v", c.name, chunk, err)
			}
		}
	}
	if _, err := ReadTable("/dev/zero", "a results table"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "/dev/zero: file too large: a line longer than 1MiB") {
		t.Errorf("/dev/zero: %v", err)
	}
}

// chunked reads s at most n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.s) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
