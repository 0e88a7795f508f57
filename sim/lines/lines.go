// Package lines reads collsim's line-oriented input files (noise traces,
// OSU, nccl-tests and Netgauge logs) with a bound on a line's length and
// errors that name the file and line, never bufio's own wording.
package lines

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Scanner is a bufio.Scanner of lines that counts them.
type Scanner struct {
	sc   *bufio.Scanner
	name string
	line int
	max  int
}

// New returns a Scanner of r, named name in errors, whose lines may be up
// to max bytes long.
func New(r io.Reader, name string, max int) *Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(max, 4096)), max)
	return &Scanner{sc: sc, name: name, max: max}
}

// Scan advances to the next line and reports whether there was one.
func (s *Scanner) Scan() bool {
	if !s.sc.Scan() {
		return false
	}
	s.line++
	return true
}

// Text is the current line, without its end of line.
func (s *Scanner) Text() string { return s.sc.Text() }

// Err is the error that stopped Scan, as "name:line: what happened", or
// nil at the end of the input.
func (s *Scanner) Err() error {
	err := s.sc.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%s:%d: a line longer than %d bytes; is this the right file?", s.name, s.line+1, s.max)
	}
	return fmt.Errorf("%s:%d: %w", s.name, s.line+1, err)
}

// Quote is s quoted for an error message, cut to its first 60 bytes: a
// message names the input it refuses, but a line of a megabyte is no
// message.
func Quote(s string) string {
	const most = 60
	if len(s) <= most {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:most]) + fmt.Sprintf("... (%d bytes)", len(s))
}

// Near returns the names of among that word may be a typo of: at most two
// edits away (and word longer than two bytes, which any name is near).
func Near(word string, among []string) []string {
	var near []string
	for _, n := range among {
		if len(word) > 2 && EditDistance(word, n) <= 2 {
			near = append(near, n)
		}
	}
	return near
}

// EditDistance is the Levenshtein distance between a and b: the fewest
// single-byte insertions, deletions and substitutions that turn one into
// the other. Typo suggestions ("did you mean ...?") take names at most two
// away.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
