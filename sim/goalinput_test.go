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

// A schedule read from memory as mappedInput reads it parses as read
// through a bufio.Reader of the same size: the same schedule, or the same
// error, at any window, with long lines, comments, blank lines and
// damaged text.
func TestMappedInputParsesAsBufio(t *testing.T) {
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

		want, werr := parseWith(bufio.NewReaderSize(strings.NewReader(text), window))
		var released [][2]int
		m := &mappedInput{data: []byte(text), window: window}
		m.release = func(b []byte) { released = append(released, [2]int{m.released, m.released + len(b)}) }
		got, gerr := parseWith(m)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("window %d: mapped: %v; read: %v", window, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("window %d: the schedules differ", window)
		}
		if len(released) > 0 {
			t.Fatalf("released %v of a %d-byte text", released, len(text))
		}
	})
}

func parseWith(in goalInput) (*GOAL, error) {
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

// A file mapped into memory parses as the same text read, gives back its
// pages behind the parser in page-aligned runs, one after another, up to
// keepBehind and a release's stride from the end, and shows its progress
// up to the file's size.
func TestParseGOALFileMapsAndReleases(t *testing.T) {
	text := bigGOAL(3*releaseEvery + 12345)
	var dones []int64
	mappedAsText(t, "big.goal", text, func(done, total int64) {
		if total != int64(len(text)) {
			t.Fatalf("progress: total %d, want %d", total, len(text))
		}
		dones = append(dones, done)
	})
	if len(dones) < 3 || dones[len(dones)-1] != int64(len(text)) {
		t.Fatalf("progress %v: want several steps, ending at %d", dones, len(text))
	}
	for i := 1; i < len(dones); i++ {
		if dones[i] <= dones[i-1] {
			t.Fatalf("progress went back: %v", dones)
		}
	}

	var released [][2]int
	m := &mappedInput{data: []byte(text), window: mappedWindow}
	m.release = func(b []byte) {
		from, to := m.released, m.released+len(b)
		if to > m.pos-keepBehind || to%4096 != 0 {
			t.Fatalf("released up to %d at %d: not %d behind, or not a page's end", to, m.pos, keepBehind)
		}
		if n := len(released); n > 0 && released[n-1][1] != from || n == 0 && from != 0 {
			t.Fatalf("release %d-%d after %v", from, to, released)
		}
		released = append(released, [2]int{from, to})
	}
	if _, err := parseWith(m); err != nil {
		t.Fatal(err)
	}
	if last := released[len(released)-1][1]; last < len(text)-keepBehind-releaseEvery-4096 {
		t.Fatalf("released up to %d of %d", last, len(text))
	}
}

// A mapped file whose lines end in comments, or hold block comments,
// parses as its text does: the parser strips comments in place, in the
// process's own copy of the pages it writes, never in the file.
func TestMappedFileWithComments(t *testing.T) {
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
	if len(text) < minMappedGOAL {
		t.Fatalf("%d bytes: too short to be mapped", len(text))
	}
	file := mappedAsText(t, "comments.goal", text, nil)
	if after, err := os.ReadFile(file); err != nil || string(after) != text {
		t.Fatalf("the file changed (%v)", err)
	}
}

// mappedAsText writes text to a file called name, requires ParseGOALFile
// (with progress) to give the schedule ParseGOAL gives for the text, and
// returns the file's path.
func mappedAsText(t *testing.T, name, text string, progress func(done, total int64)) string {
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
		t.Fatal("the mapped file's schedule differs from the text's")
	}
	return file
}
