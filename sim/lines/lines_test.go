package lines

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type failing struct{ after string }

var errDisk = errors.New("disk on fire")

func (f *failing) Read(p []byte) (int, error) {
	if f.after == "" {
		return 0, errDisk
	}
	n := copy(p, f.after)
	f.after = f.after[n:]
	return n, nil
}

func TestScannerErrorsNameFileAndLine(t *testing.T) {
	sc := New(strings.NewReader("a\nbb\n"+strings.Repeat("x", 20)+"\nd\n"), "f.txt", 10)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if strings.Join(got, ",") != "a,bb" {
		t.Errorf("lines %q, want a, bb", got)
	}
	if err := sc.Err(); err == nil || err.Error() != "f.txt:3: a line longer than 10 bytes; is this the right file?" {
		t.Errorf("a long third line: %v", err)
	}
	sc = New(&failing{after: "one\ntwo\n"}, "g.txt", 100)
	for sc.Scan() {
	}
	if err := sc.Err(); !errors.Is(err, errDisk) || err.Error() != "g.txt:3: disk on fire" {
		t.Errorf("a read error after two lines: %v", err)
	}
	sc = New(strings.NewReader("x\n"), "h.txt", 100)
	for sc.Scan() {
	}
	if err := sc.Err(); err != nil {
		t.Errorf("a clean end: %v", err)
	}
}

func TestQuoteCutsLongInput(t *testing.T) {
	if got := Quote("a\tb"); got != `"a\tb"` {
		t.Errorf("short: %s", got)
	}
	long := strings.Repeat("x", 300000)
	if got, want := Quote(long), `"`+strings.Repeat("x", 60)+`"... (300000 bytes)`; got != want {
		t.Errorf("long: %s, want %s", got, want)
	}
}

// TestNear: names at most two edits away, none for words of two bytes
// or fewer (every name is near those).
func TestNear(t *testing.T) {
	among := []string{"small", "xc40", "size", "seed"}
	for _, tc := range []struct {
		word string
		want []string
	}{{"smal", []string{"small"}}, {"sise", []string{"size"}}, {"sed", []string{"seed"}}, {"xc4", []string{"xc40"}}, {"xc", nil}, {"cori", nil}} {
		if got := Near(tc.word, among); !slices.Equal(got, tc.want) {
			t.Errorf("Near(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}
