package sim

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A schedule parses the same through a read buffer of any size: the
// same schedule, or the same error, at windows from 16 bytes to 1 MiB,
// as from one buffer that holds all of it, with long lines, comments,
// blank lines and damaged text (the parser's fast path stops at the
// buffer's end, and a line longer than the buffer is read in pieces).
func TestParseGOALAnyBuffer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text, _, _, _, _ := drawLayoutGOAL(t, 300)
		lines := strings.SplitAfter(text, "\n")
		for range rapid.IntRange(0, 4).Draw(t, "insertions") {
			at := rapid.IntRange(0, len(lines)).Draw(t, "at")
			extra := rapid.SampledFrom([]string{
				"\n", "  \r\n", "// a comment\n", "/* a\nblock */\n",
				"# " + strings.Repeat("x", 300) + "\n", strings.Repeat("y", 200) + "\n",
			}).Draw(t, "extra")
			lines = append(lines[:at], append([]string{extra}, lines[at:]...)...)
		}
		text = strings.Join(lines, "")
		if rapid.Bool().Draw(t, "damaged") && len(text) > 0 {
			i := rapid.IntRange(0, len(text)-1).Draw(t, "byte")
			text = text[:i] + rapid.SampledFrom([]string{"", "x", "\n", "9", " ", "{"}).Draw(t, "with") + text[i+1:]
		}
		if rapid.Bool().Draw(t, "no last newline") {
			text = strings.TrimSuffix(text, "\n")
		}
		window := rapid.SampledFrom([]int{16, 17, 64, 100, 4096, 1 << 20}).Draw(t, "window")
		whole := max(len(text)+1, 1<<20)

		want, werr := parseWith(bufio.NewReaderSize(strings.NewReader(text), whole))
		got, gerr := parseWith(bufio.NewReaderSize(strings.NewReader(text), window))
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("window %d: %v; in one buffer: %v", window, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("window %d: the schedules differ", window)
		}
	})
}

// The usual lines, which the parser's fast path reads 8 bytes at a time
// straight from the buffer, parse the same whatever byte of a line the
// buffer ends at: every window from 64 bytes (the guard: the longest such
// line's reach) to 200, against one buffer that holds the whole text.
func TestUsualLinesAtEveryBufferEnd(t *testing.T) {
	// Sizes and tags of 8 digits and labels of up to 5 (the parser keeps
	// label l<a> in its table while a <= 2 x the op's index + 1024, so a
	// longer label needs a longer rank): "l13022: recv 12345678b from 0 tag
	// 12345678" reads 43 bytes (with labels and a peer of 8 digits 53,
	// which takes 10^7 ops and ranks; bigGOAL's lines read 36 at most, and
	// a guard of 40 passed: an audit).
	const ops = 6000
	var b strings.Builder
	b.WriteString("num_ranks 2\n")
	for r := range 2 {
		fmt.Fprintf(&b, "rank %d {\n", r)
		for i := range ops {
			l := 2*i + 1024
			switch {
			case i%9 == 4:
				fmt.Fprintf(&b, "l%d: calc 12345678\n", l)
			case (i+r)%2 == 0:
				fmt.Fprintf(&b, "l%d: send %db to %d tag %d\n", l, 12345678-i, 1-r, 12345678-i/2)
			default:
				fmt.Fprintf(&b, "l%d: recv %db from %d tag %d\n", l, 12345678-i, 1-r, 12345678-i/2)
			}
			if i > 0 {
				fmt.Fprintf(&b, "l%d requires l%d\n", l, l-2)
			}
		}
		b.WriteString("}\n")
	}
	text := b.String()
	want, err := parseWith(bufio.NewReaderSize(strings.NewReader(text), len(text)+1))
	if err != nil {
		t.Fatal(err)
	}
	for window := 64; window <= 200; window++ {
		got, err := parseWith(bufio.NewReaderSize(strings.NewReader(text), window))
		if err != nil {
			t.Fatalf("window %d: %v", window, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("window %d: the schedules differ", window)
		}
	}
}

func parseWith(in *bufio.Reader) (*GOAL, error) {
	p := newGOALParser(in, "m.goal")
	if err := p.parse(); err != nil {
		return nil, err
	}
	p.g.layout()
	return p.g, nil
}

// bigGOAL returns a schedule of two ranks that exchange messages,
// about size bytes long.
func bigGOAL(size int) string {
	var b strings.Builder
	b.WriteString("num_ranks 2\n")
	per := size / 2 / 60
	for r := range 2 {
		fmt.Fprintf(&b, "rank %d {\n", r)
		for i := range per {
			if i%2 == 0 {
				fmt.Fprintf(&b, "l%d: send %db to %d tag %d\n", i, 8+i%7, 1-r, i)
			} else {
				fmt.Fprintf(&b, "l%d: recv %db from %d tag %d\nl%d requires l%d\n", i, 8+(i-1)%7, 1-r, i-1, i, i-1)
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// A file larger than the read buffer parses as the same text does, and
// shows its progress in steps up to the file's size.
func TestParseGOALFileProgress(t *testing.T) {
	text := bigGOAL(3<<20 + 12345)
	var dones []int64
	fileAsText(t, "big.goal", text, func(done, total int64) {
		if total != int64(len(text)) {
			t.Fatalf("progress: total %d, want %d", total, len(text))
		}
		dones = append(dones, done)
	})
	if len(dones) < 3 || dones[len(dones)-1] != int64(len(text)) {
		t.Fatalf("progress %v: want several steps, ending at %d", dones, len(text))
	}
	for i := 1; i < len(dones); i++ {
		if dones[i] < dones[i-1] {
			t.Fatalf("progress went back: %v", dones)
		}
	}
}

// A file whose lines end in comments, or hold block comments, parses as
// its text does, across read buffers: the parser strips comments in
// place, in its buffer, never in the file.
func TestGOALFileWithComments(t *testing.T) {
	var b strings.Builder
	b.WriteString("num_ranks 2 // two\n")
	for r := range 2 {
		fmt.Fprintf(&b, "rank %d { /* rank */\n", r)
		for i := range 20000 {
			if r == 0 {
				fmt.Fprintf(&b, "l%d: send 8b to 1 tag %d // out\n", i, i)
			} else {
				fmt.Fprintf(&b, "l%d: recv /* in */ 8b from 0 tag %d\n", i, i)
			}
			if i > 0 {
				fmt.Fprintf(&b, "l%d requires l%d /* chain */ // in order\n", i, i-1)
			}
		}
		b.WriteString("}\n")
	}
	text := b.String()
	if len(text) < 2<<20 {
		t.Fatalf("%d bytes: shorter than two read buffers", len(text))
	}
	file := fileAsText(t, "comments.goal", text, nil)
	if after, err := os.ReadFile(file); err != nil || string(after) != text {
		t.Fatalf("the file changed (%v)", err)
	}
}

// fileAsText writes text to a file called name, requires ParseGOALFile
// (with progress) to give the schedule ParseGOAL gives for the text, and
// returns the file's path.
func fileAsText(t *testing.T, name, text string, progress func(done, total int64)) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := ParseGOAL(strings.NewReader(text), file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseGOALFile(file, progress)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatal("the file's schedule differs from the text's")
	}
	return file
}
