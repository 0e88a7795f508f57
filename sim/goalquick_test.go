package sim

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// parseBothWays parses text with the quick path and with the general one
// alone, and fails t unless both give the same schedule, table for table,
// or the same error. The quick path reads the text twice: whole, and in
// pieces of a few bytes, so that lines end past what the parser's reader
// holds (quickLines reads from its buffer).
func parseBothWays(t interface{ Fatalf(string, ...any) }, text []byte) {
	defer func(on bool) { quickStatements = on }(quickStatements)
	quickStatements = false
	general, gerr := ParseGOAL(bytes.NewReader(text), "x.goal")
	quickStatements = true
	for _, in := range []io.Reader{bytes.NewReader(text), &piecesReader{text: text},
		&piecesReader{text: text, sizes: []int{4093, 65536, 100, 60000}}} {
		quick, qerr := ParseGOAL(in, "x.goal")
		switch {
		case qerr != nil || gerr != nil:
			if qerr == nil || gerr == nil || qerr.Error() != gerr.Error() {
				t.Fatalf("quick path (%T): %v\ngeneral path: %v\n%s", in, qerr, gerr, text)
			}
		case !reflect.DeepEqual(quick, general):
			t.Fatalf("the quick path's schedule (%T) differs from the general path's\n%s", in, text)
		}
	}
}

// piecesReader reads text in pieces of 1 to 29 bytes (or of sizes), of
// sizes that cycle, so that reads end anywhere in a line.
type piecesReader struct {
	text  []byte
	sizes []int
	n     int // reads so far
}

func (r *piecesReader) Read(b []byte) (int, error) {
	if len(r.text) == 0 {
		return 0, io.EOF
	}
	sizes := r.sizes
	if sizes == nil {
		sizes = []int{1, 7, 29, 3, 17, 2, 11, 23, 5, 13}
	}
	k := copy(b[:min(len(b), sizes[r.n%len(sizes)])], r.text)
	r.text = r.text[k:]
	r.n++
	return k, nil
}

// TestQuickStatementsReadAsStatementDoes: on GOAL text made of the forms
// the quick path reads, and of near misses of them (other spacing, signs,
// leading zeros, numbers out of range, options, unknown and repeated
// labels, trailing words and comments), the quick path and the general one
// give the same schedule or the same error.
func TestQuickStatementsReadAsStatementDoes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		for range 20 {
			quickAgainstGeneral(t)
		}
	})
}

// quickAgainstGeneral draws a GOAL file and parses it both ways.
func quickAgainstGeneral(t *rapid.T) {
	{
		// Most parts are drawn in their usual form, one in 25 as a near
		// miss, so that files run long enough to reach their odd lines.
		odd := func(t *rapid.T, usual string, misses ...string) string {
			if rapid.IntRange(0, 24).Draw(t, "odd") > 0 {
				return usual
			}
			return rapid.SampledFrom(misses).Draw(t, "miss")
		}
		ranks := rapid.IntRange(1, 4).Draw(t, "ranks")
		var b strings.Builder
		b.WriteString("num_ranks " + strconv.Itoa(ranks) + "\n")
		sep := func(t *rapid.T) string { return odd(t, " ", "  ", "\t", " \t") }
		// number draws a number up to max, or a near miss: one of the
		// limits of its place (edges) as often as any other.
		number := func(t *rapid.T, max int, edges ...string) string {
			misses := []string{"007", "-1", "-0", "999999999999999999", "1000000000000000000",
				"9223372036854775807", "9223372036854775808", "12345678901234567890",
				strconv.Itoa(ranks - 1), strconv.Itoa(ranks), "x", ""}
			if len(edges) > 0 && rapid.Bool().Draw(t, "edge") {
				misses = edges
			}
			return odd(t, strconv.Itoa(rapid.IntRange(0, max).Draw(t, "n")), misses...)
		}
		label := func(t *rapid.T, n int) string {
			return odd(t, "l"+strconv.Itoa(n), "l"+strconv.Itoa(rapid.IntRange(0, n+2).Draw(t, "other")),
				"l0"+strconv.Itoa(n), "a"+strconv.Itoa(n), "l", "l-1", "l.x", "l\u00e9", "l123456789", "l12345678", "send", "9")
		}
		for r := range ranks {
			b.WriteString("rank " + strconv.Itoa(r) + " {\n")
			n := rapid.IntRange(0, 12).Draw(t, "statements")
			for i := range n {
				var line string
				switch rapid.IntRange(0, 2).Draw(t, "form") {
				case 0: // send or recv
					kind := rapid.SampledFrom([]string{"send", "recv"}).Draw(t, "kind")
					dir := map[string]string{"send": "to", "recv": "from"}[kind]
					line = label(t, i) + ":" + sep(t) + odd(t, kind, "sned", "calc") + sep(t) + number(t, 1<<20, "4611686018427387904", "4611686018427387905") + odd(t, "b", "", "bb", "B") +
						sep(t) + odd(t, dir, "to", "from", "tot") + sep(t) + number(t, ranks-1)
					if rapid.Bool().Draw(t, "tag") {
						line += sep(t) + odd(t, "tag", "cpu", "nic", "tags") + sep(t) + number(t, 100, "2147483647", "2147483648")
					}
				case 1:
					line = label(t, i) + ":" + sep(t) + "calc" + sep(t) + number(t, 1000, "9223372036854775", "9223372036854776")
				default:
					line = label(t, rapid.IntRange(0, i).Draw(t, "a")) + sep(t) + odd(t, rapid.SampledFrom([]string{"requires", "irequires"}).Draw(t, "dep"), "require", "Requires") +
						sep(t) + label(t, rapid.IntRange(0, i).Draw(t, "b"))
				}
				b.WriteString(odd(t, "", " ", "\t") + line + odd(t, "", " ", "\r", " \t", " junk", "}", " // note", " /* x */", " cpu 1", " nic 1", " cpu 1 nic 1", ":") + "\n")
			}
			b.WriteString("}\n")
		}
		parseBothWays(t, []byte(b.String()))
	}
}

// TestQuickLinesAcrossBuffers: in files of several of the parser's
// reader's buffers (64 KiB) of the usual lines, with a line of another
// form starting at and around the end of the first and second buffer's
// worth of text, the quick path and the general one agree (quickLines
// reads from the buffer, so its lines end where a buffer does; the rapid
// test's files fit in one). The odd lines: comments, one opened on a quick
// line and closed on the next, other spacing and line ends, a wildcard
// receive, lines longer than the buffer, and errors after many quick
// lines (a NUL byte, an unknown label).
func TestQuickLinesAcrossBuffers(t *testing.T) {
	for _, odd := range []struct {
		form string // %[1]d, %[2]d: the next two labels
		bad  bool   // the file is not valid GOAL
	}{
		{"l%[1]d: calc 5 // c", false},
		{"l%[1]d: calc 5 /* open\nl%[2]d: calc 6 */", false},
		{"l%[1]d: calc 5\r", false},
		{"l%[1]d: calc 5 \t", false},
		{"  l%[1]d: calc 5", false},
		{"l%[1]d: recv 8b from -1", false},
		{"l%[1]d: calc 5\nl%[1]d requires l0 // c", false},
		{"l%[1]d: calc 5" + strings.Repeat(" ", 70000), false},
		{"// " + strings.Repeat("c", 70000), false},
		{"l%[1]d: calc 5\x00", true},
		{"l%[1]d: calc 5\nl%[1]d requires l99999", true},
	} {
		for _, boundary := range []int{1 << 16, 2 << 16} {
			for shift := -40; shift <= 8; shift += 4 {
				text := oddLineAt(odd.form, boundary+shift)
				if _, err := ParseGOAL(bytes.NewReader(text), "x.goal"); (err != nil) != odd.bad {
					t.Fatalf("%q at %d: error %v, want one: %t", odd.form, boundary+shift, err, odd.bad)
				}
				parseBothWays(t, text)
			}
		}
	}
}

// oddLineAt returns a one-rank GOAL file of the usual lines in which the
// line form (with %[1]d and %[2]d for the next two op labels) begins at
// byte at, and about 100 KB of usual lines follow.
func oddLineAt(form string, at int) []byte {
	var b bytes.Buffer
	b.WriteString("num_ranks 1\nrank 0 {\n")
	labels := 0 // ops written: l0 .. l(labels-1)
	usual := func(lines int) string {
		if lines%3 == 2 {
			return fmt.Sprintf("l%d requires l%d", labels-1, labels-2)
		}
		labels++
		return fmt.Sprintf("l%d: send 8b to 0 tag %d", labels-1, lines)
	}
	// Usual lines, the last padded with trailing spaces to end at at.
	for lines := 0; ; lines++ {
		line := usual(lines)
		if b.Len()+len(line)+1+40 >= at {
			b.WriteString(line + strings.Repeat(" ", max(at-b.Len()-len(line)-1, 0)) + "\n")
			break
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(fmt.Sprintf(form, labels, labels+1) + "\n")
	for l := labels + 2; b.Len() < at+100000; l++ {
		b.WriteString(fmt.Sprintf("l%d: calc 1\nl%d requires l%d\n", l, l, labels-1))
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// FuzzQuickStatements: on any text, the quick path and the general one
// agree.
func FuzzQuickStatements(f *testing.F) {
	f.Add([]byte("num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 3\nl1: calc 5\nl1 requires l0\n}\nrank 1 {\nl0: recv 8b from 0 tag 3\nl1: recv 8b from 0\nl1 irequires l0\n}\n"))
	f.Add([]byte("num_ranks 1\nrank 0 {\nl0: calc 9223372036854775\nl1: calc 9223372036854776\nl1 requires l1\nl2: send 4611686018427387905b to 0 tag 2147483648\n}\n"))
	// Lines that end right after the label or the size's digits (a
	// comment or the end of the file takes the newline away).
	f.Add([]byte("num_ranks 1\nrank 0 {\nl0// c\n}\n"))
	f.Add([]byte("num_ranks 1\nrank 0 {\nl0: send 8// c\n}\n"))
	f.Add([]byte("num_ranks 1\nrank 0 {\nl0: calc 5\nl1: send 8"))
	f.Fuzz(func(t *testing.T, text []byte) {
		parseBothWays(t, text)
	})
}

// TestStoreInOrderAsSorted: finishRank's one pass for edges written in
// order (storeInOrder) stores what its counting sort does (sortAndStore),
// op for op, or fails with the same error, on ranks whose dependencies
// come after each op or all at the end in any order, forward or back,
// repeated, and irequires of required ops.
func TestStoreInOrderAsSorted(t *testing.T) {
	defer func(on bool) { finishInOrder = on }(finishInOrder)
	inOrder := 0 // ranks the one pass took, to know it was tried
	rapid.Check(t, func(t *rapid.T) {
		ranks := rapid.IntRange(1, 5).Draw(t, "ranks")
		var b strings.Builder
		fmt.Fprintf(&b, "num_ranks %d\n", ranks)
		for r := range ranks {
			fmt.Fprintf(&b, "rank %d {\n", r)
			n := rapid.IntRange(0, 12).Draw(t, "ops")
			// The ops' true order: an op may wait only for ops before it
			// there, so that no cycle forms, wherever they are written.
			rank := seq(n)
			if rapid.Bool().Draw(t, "reordered") {
				rank = rapid.Permutation(rank).Draw(t, "order")
			}
			atEnd := rapid.Bool().Draw(t, "dependencies at the end")
			requiresFirst := rapid.Bool().Draw(t, "requires first") // as collsim writes them
			var late []string
			for i := range n {
				fmt.Fprintf(&b, "l%d: calc %d\n", i, i)
				var before []int
				for j := range n {
					if rank[j] < rank[i] {
						before = append(before, j)
					}
				}
				if len(before) == 0 {
					continue
				}
				var lines []string
				for range rapid.IntRange(0, 4).Draw(t, "deps") {
					kind := rapid.SampledFrom([]string{"requires", "irequires"}).Draw(t, "kind")
					lines = append(lines, fmt.Sprintf("l%d %s l%d\n", i, kind, rapid.SampledFrom(before).Draw(t, "dep")))
				}
				if requiresFirst {
					slices.SortStableFunc(lines, func(a, b string) int {
						return int(b2i(strings.Contains(a, "irequires")) - b2i(strings.Contains(b, "irequires")))
					})
				}
				if atEnd {
					late = append(late, lines...)
				} else {
					b.WriteString(strings.Join(lines, ""))
				}
			}
			for _, k := range rapid.Permutation(seq(len(late))).Draw(t, "late order") {
				b.WriteString(late[k])
			}
			b.WriteString("}\n")
		}
		text := b.String()
		finishInOrder = true
		one, oneErr := ParseGOAL(strings.NewReader(text), "x.goal")
		finishInOrder = false
		sorted, sortedErr := ParseGOAL(strings.NewReader(text), "x.goal")
		switch {
		case oneErr != nil || sortedErr != nil:
			if oneErr == nil || sortedErr == nil || oneErr.Error() != sortedErr.Error() {
				t.Fatalf("in order: %v; sorted: %v\n%s", oneErr, sortedErr, text)
			}
		case !reflect.DeepEqual(one, sorted):
			t.Fatalf("the one pass stores another schedule than the sort\n%s", text)
		}
		for _, line := range strings.Split(text, "rank ")[1:] {
			var edges []goalEdge
			for _, l := range strings.Split(line, "\n") {
				var a, d int
				if _, err := fmt.Sscanf(l, "l%d requires l%d", &a, &d); err == nil {
					edges = append(edges, goalEdge{op: int32(a), dep: int32(d)})
				} else if _, err := fmt.Sscanf(l, "l%d irequires l%d", &a, &d); err == nil {
					edges = append(edges, goalEdge{op: int32(a), dep: int32(d), start: true})
				}
			}
			if len(edges) > 0 && edgesInOrder(edges) {
				inOrder++
			}
		}
	})
	if inOrder == 0 {
		t.Fatal("no rank had its edges in order: the one pass was never compared")
	}
}

// seq returns 0 .. n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestEightDigits compares eightDigits with reading the digits a byte at
// a time, on words of digits, the bytes around them ('/' and ':', next to
// '0' and '9'), and any byte (0xfa and up carry when 6 is added).
func TestEightDigits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := make([]byte, 8)
		for i := range b {
			b[i] = rapid.OneOf(
				rapid.ByteRange('0', '9'),
				rapid.SampledFrom([]byte{'/', ':', '@', ' ', '\n', 0x30 - 6, 0x3a + 6, 0xf9, 0xfa, 0xff, 0}),
				rapid.Byte(),
			).Draw(t, fmt.Sprint("byte", i))
		}
		wantN, want := 0, 0
		for wantN < 8 && b[wantN] >= '0' && b[wantN] <= '9' {
			want = want*10 + int(b[wantN]-'0')
			wantN++
		}
		if got, n := eightDigits(b); got != want || n != wantN {
			t.Fatalf("eightDigits(%q) = %d, %d; want %d, %d", b, got, n, want, wantN)
		}
	})
	for _, s := range []string{"00000000", "99999999", "12345678", "1234567x", "0\xff999999", "\xfa9999999", "7       "} {
		wantN := 0
		for wantN < 8 && s[wantN] >= '0' && s[wantN] <= '9' {
			wantN++
		}
		want, _ := strconv.Atoi(s[:wantN])
		if got, n := eightDigits([]byte(s)); got != want || n != wantN {
			t.Errorf("eightDigits(%q) = %d, %d; want %d, %d", s, got, n, want, wantN)
		}
	}
}

// TestUsualLineNearMisses: lines that differ from the usual ones by a
// little, in the middle of a file of usual lines (usualLine reads a line
// only with 64 bytes of text from its start), parse as the general path
// parses them: the same schedule or the same error. The rapid test's
// short files reach few such lines.
func TestUsualLineNearMisses(t *testing.T) {
	for _, odd := range []struct {
		form string // %[1]d, %[2]d: the next two labels
		bad  bool   // the file is not valid GOAL
	}{
		{"l%[1]d: calc 5\nl%[1]d requires l0", false},
		{"l%[1]d: calc 5\nl0%[1]d requires l0", true},           // a leading zero: another label, undefined
		{"l0%[1]d: calc 5\nl0%[1]d requires l0", false},         // ... and defined
		{"l%[1]d: calc 5\nl%[1]d requires l00", true},           // l00 is not l0
		{"l%[1]d: calc 5\nl%[1]d requires l%[1]d", true},        // on itself
		{"l%[1]d: calc 5\nl%[1]d requires l%[2]d", true},        // on a later op
		{"l%[1]d: calc 5\nl%[2]d requires l0", true},            // of an undefined op
		{"l%[1]d: calc 5\nl%[1]d requires  l0", false},          // two spaces
		{"l%[1]d: calc 5\nl%[1]d  requires l0", false},          // two spaces
		{"l%[1]d: calc 5\nl%[1]d requires l0 ", false},          // a trailing space
		{"l%[1]d: calc 5\nl%[1]d requires l0\r", false},         // CRLF
		{"l%[1]d: calc 5\nl%[1]d requires l0 // c", false},      // a comment
		{"l%[1]d: calc 5\nl%[1]d irequires l0", false},          // irequires
		{"l%[1]d: calc 5\nl%[1]d Requires l0", true},            // not the keyword
		{"l%[1]d: calc 5\nl%[1]d requiresl0", true},             // no space
		{"l%[1]d: calc 5\nl%[1]d requires l0x", true},           // a longer word
		{"l%[1]d: calc 5\nl%[1]d requires l16777216", true},     // 2^24: not a numbered label
		{"l%[1]d: calc 5\nl%[1]d requires l123456789", true},    // 9 digits
		{"l16777215: calc %[1]d\nl16777215 requires l0", false}, // a numbered label kept in the map
		{"l12345678: calc %[1]d\nl12345678 requires l0", false}, // 8 digits
		{"l16777215: calc %[1]d\nl16777215: calc 5", true},      // defined before, in the map
		{"l%[1]d: send 123456789b to 0", false},                 // 9 digits
		{"l%[1]d: send 8b to 0 tag 123456789", false},           // 9 digits
		{"l%[1]d: calc 123456789", false},                       // 9 digits
		{"l%[1]d: calc ", true},                                 // no number
		{"l%[1]d: send b to 0", true},                           // no size
		{"l%[1]d: send 8b to 0 tag ", true},                     // no tag number
		{"l%[1]d: send 8b to ", true},                           // no peer
		{"a%[1]d: calc 5\na%[1]d requires l0", false},           // not l<i>
		{"l%[1]d: send 8b to 0 tag 1", false},
		{"l%[1]d: send 8b to 0", false},
		{"l%[1]d: recv 8b from 0 tag 1", false},
		{"l%[1]d: recv 8b from 0", false},
		{"l%[1]d: calc 5", false},
		{"l%[1]d: recv 8b to 0", true},
		{"l%[1]d: send 8b from 0", true},
		{"l%[1]d: send 8b to 1", true},                   // no rank 1
		{"l%[1]d: send 8b to 00", false},                 // leading zeros
		{"l%[1]d: send 007b to 0", false},                // leading zeros
		{"l%[1]d: send 1234567b to 0", false},            // 7 digits
		{"l%[1]d: send 12345678b to 0", false},           // 8
		{"l%[1]d: send 4611686018427387905b to 0", true}, // above 2^62
		{"l%[1]d: send 8 b to 0", false},                 // a space before b: LogGOPSim's txt2bin takes it
		{"l%[1]d: send 8B to 0", true},                   // B
		{"l%[1]d: send 8b  to 0", false},                 // two spaces
		{"l%[1]d: send 8b to 0 tag", true},               // no tag
		{"l%[1]d: send 8b to 0 tag x", true},             // not a tag
		{"l%[1]d: send 8b to 0 tag 12345678", false},     // 8 digits
		{"l%[1]d: send 8b to 0 tag 2147483647", false},   // the largest
		{"l%[1]d: send 8b to 0 tag 2147483648", true},    // above it
		{"l%[1]d: send 8b to 0 tags 1", true},            // not the keyword
		{"l%[1]d: send 8b to 0 tag 1 cpu 1", false},      // an option
		{"l%[1]d: send 8b to 0 cpu 1", false},            // an option
		{"l%[1]d: send 8b to 0 tag 1 ", false},           // a trailing space
		{"l%[1]d: send 8b to 0 tag 1\r", false},          // CRLF
		{"l%[1]d: sned 8b to 0", true},                   // not send
		{"l%[1]d:send 8b to 0", false},                   // no space
		{"l%[1]d: calc 12345678", false},                 // 8 digits
		{"l%[1]d: calc x", true},                         // not a number
		{"l%[1]d: calc -1", true},                        // a sign
		{"l0: calc %[1]d", true},                         // defined before
		{"l%[1]d: calc 5\nl%[1]d: calc 6", true},         // twice
		{"l0%[1]d: calc 5", false},                       // another label
		{"x%[1]d: calc 5", false},                        // kept in the map: l<i> after it too
		{"l%[2]d: calc 5\nl%[1]d: calc 6", false},        // out of order
		{"l%[1]d: calc 5\nl%[1]d requireXYl0", true},     // the keyword's last 2 bytes
		{"l%[1]d: calc 5\nl%[1]d requirXs l0", true},     // its first 8
		{"l%[1]d: calc 5\nl%[1]d requires x0", true},     // the second label's l
		{"l%[1]d; send 8b to 0", true},                   // not a colon
		{"l%[1]d: sendX8b to 0", true},                   // the op's word
		{"l%[1]d: send 8b toX0", true},                   // to
		{"l%[1]d: recv 8b fromX0", true},                 // from
		{"l%[1]d: send 8b to 0 tagX1", true},             // tag
		{"l%[1]d: calcX5", true},                         // calc
	} {
		text := oddLineAt(odd.form, 2000)
		if _, err := ParseGOAL(bytes.NewReader(text), "x.goal"); (err != nil) != odd.bad {
			t.Fatalf("%q: error %v, want one: %t", odd.form, err, odd.bad)
		}
		parseBothWays(t, text)
	}
	// A rank after a longer one: the labels table keeps its length, with
	// the longer rank's labels cleared, so a label beyond the shorter
	// rank's ops is found in range and undefined.
	for _, odd := range []struct {
		line string
		bad  bool
	}{
		{"l1 requires l0", false},
		{"l50 requires l0", true},
		{"l1 requires l50", true},
		{"l50: calc 7\nl50 requires l1", false},
	} {
		var b strings.Builder
		b.WriteString("num_ranks 2\nrank 0 {\n")
		for l := range 100 {
			fmt.Fprintf(&b, "l%d: calc 1\n", l)
		}
		b.WriteString("}\nrank 1 {\nl0: calc 1\nl1: calc 2\n" + odd.line + "\n")
		for l := 2; l < 20; l++ {
			fmt.Fprintf(&b, "l%d: send 8b to 0 tag 1\nl%d requires l%d\n", l, l, l-1)
		}
		b.WriteString("}\n")
		text := []byte(b.String())
		if _, err := ParseGOAL(bytes.NewReader(text), "x.goal"); (err != nil) != odd.bad {
			t.Fatalf("%q after a longer rank: error %v, want one: %t", odd.line, err, odd.bad)
		}
		parseBothWays(t, text)
	}
}

// TestReadLabel: the word's end, and its number only for the labels
// l<i> with i < 2^24 written without leading zeros, whether the word is
// shorter than the 8 bytes eightDigits reads or not.
func TestReadLabel(t *testing.T) {
	for _, c := range []struct {
		text        string
		end, number int
	}{
		{"l", 1, -1}, {"l ", 1, -1}, {"l:", 1, -1}, {"lx", 2, -1}, {"x5", 2, -1},
		{"l0", 2, 0}, {"l0 requires", 2, 0}, {"l00", 3, -1}, {"l01", 3, -1},
		{"l5:", 2, 5}, {"l5 x", 2, 5}, {"l5x", 3, -1}, {"l5\n", 2, 5},
		{"l12345678", 9, 12345678}, {"l12345678 requires l0", 9, 12345678},
		{"l16777215", 9, 16777215}, {"l16777216", 9, -1}, {"l99999999: calc", 9, -1},
		{"l123456789", 10, -1}, {"l123456789 requires l0", 10, -1},
	} {
		if end, number := readLabel([]byte(c.text)); end != c.end || number != c.number {
			t.Errorf("readLabel(%q) = %d, %d; want %d, %d", c.text, end, number, c.end, c.number)
		}
	}
}
