package sim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"unsafe"
)

// goalInput is what the GOAL parser reads through: a bufio.Reader, or a
// file mapped into memory (mappedInput), which the kernel need not copy.
type goalInput interface {
	ReadSlice(delim byte) ([]byte, error)
	Peek(n int) ([]byte, error)
	Buffered() int
	Discard(n int) (int, error)
}

// ParseGOALFile reads the GOAL schedule in the named file, as ParseGOAL
// does, mapping a regular file into memory where it can: the 1,024-rank
// ring's 314 MB spent about 60 ms copying the file through read(2). If
// progress is not nil, it is called as the file is read, with the bytes
// read so far and the file's size.
func ParseGOALFile(name string, progress func(done, total int64)) (*GOAL, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().IsRegular() && st.Size() >= minMappedGOAL {
		if data, unmap, ok := mapFile(f, st.Size()); ok {
			defer unmap()
			return parseMapped(&mappedInput{data: data, window: mappedWindow, release: releasePages, progress: progress}, name)
		}
	}
	var in io.Reader = f
	if progress != nil {
		in = &countingReader{r: f, total: st.Size(), show: progress}
	}
	return ParseGOAL(in, name)
}

// minMappedGOAL is the smallest file ParseGOALFile maps: below it a read
// costs less than a mapping.
const minMappedGOAL = 1 << 20

// parseMapped parses a mapped file. A file cut short while it is mapped
// faults on the pages past its new end: that is an error here, not a
// crash. Any other fault is the parser's, and still a crash.
func parseMapped(in *mappedInput, file string) (g *GOAL, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(interface{ Addr() uintptr }); ok && in.holds(f.Addr()) {
				g, err = nil, fmt.Errorf("%s: the file changed while it was read (it is mapped into memory): %v", file, r)
				return
			}
			panic(r)
		}
	}()
	p := newGOALParser(in, file)
	if err := p.parse(); err != nil {
		return nil, err
	}
	p.g.layout()
	return p.g, nil
}

// countingReader counts the bytes read through it and shows the count.
type countingReader struct {
	r           io.Reader
	done, total int64
	show        func(done, total int64)
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.done += int64(n)
	c.show(c.done, c.total)
	return n, err
}

// mappedInput reads a file mapped into memory as a bufio.Reader of
// window bytes reads it: ReadSlice gives up on a line at that length
// (ErrBufferFull) as the reader does, and Buffered offers a window of
// that size. Behind what the parser has read, pages are given back every
// releaseEvery bytes, so that the file's pages do not add to the
// process's resident memory (keepBehind bytes stay: the line the parser
// holds is at most a window long).
type mappedInput struct {
	data     []byte
	pos      int
	window   int
	released int  // data before it has been given back
	ended    bool // the end has been shown
	release  func(b []byte)
	progress func(done, total int64)
}

const (
	mappedWindow = 1 << 20 // goalBuffer's size for a file
	releaseEvery = 8 << 20
	keepBehind   = 2 * mappedWindow
	// pageMask rounds an offset into a mapping down to a page (4 KiB
	// pages; a larger page only makes a release give back less).
	pageMask = 1<<12 - 1
)

var _ goalInput = (*mappedInput)(nil)

// holds reports whether addr lies in the mapped file.
func (m *mappedInput) holds(addr uintptr) bool {
	if len(m.data) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	return addr >= start && addr-start < uintptr(len(m.data))
}

func (m *mappedInput) Buffered() int { return min(len(m.data)-m.pos, m.window) }

func (m *mappedInput) Peek(n int) ([]byte, error) {
	switch {
	case n > m.window:
		return m.data[m.pos : m.pos+m.Buffered()], bufio.ErrBufferFull
	case n > len(m.data)-m.pos:
		return m.data[m.pos:], io.EOF
	}
	return m.data[m.pos : m.pos+n], nil
}

func (m *mappedInput) Discard(n int) (int, error) {
	if n < 0 {
		return 0, errors.New("mappedInput: negative count")
	}
	n = min(n, len(m.data)-m.pos)
	m.advance(n)
	return n, nil
}

func (m *mappedInput) ReadSlice(delim byte) ([]byte, error) {
	rest := m.data[m.pos:]
	if len(rest) > m.window {
		rest = rest[:m.window]
	}
	if i := bytes.IndexByte(rest, delim); i >= 0 {
		line := rest[:i+1]
		m.advance(i + 1)
		return line, nil
	}
	m.advance(len(rest))
	if len(rest) == m.window { // full, even at the end, as bufio's is
		return rest, bufio.ErrBufferFull
	}
	return rest, io.EOF
}

// advance moves past n bytes, giving back what lies far enough behind
// and showing the progress each time, and once at the end.
func (m *mappedInput) advance(n int) {
	m.pos += n
	end := (m.pos - keepBehind) &^ pageMask
	switch {
	case end-m.released >= releaseEvery:
		if m.release != nil {
			m.release(m.data[m.released:end])
		}
		m.released = end
	case m.pos < len(m.data) || m.ended:
		return
	}
	m.ended = m.ended || m.pos == len(m.data)
	if m.progress != nil {
		m.progress(int64(m.pos), int64(len(m.data)))
	}
}

// Locate names, in a DeadlockError or a TruncationError of a run of g,
// where the file wrote each op its message shows ("file:line"): the error
// names an op by its index in its rank's program, which a rank whose
// dependencies point forward has reordered, and a user looks for it in
// the file (a new user's trial). It reads the file again, once, and only
// on such an error; err is returned as it is otherwise, or where the file
// cannot be read again (standard input).
func (g *GOAL) Locate(err error) error {
	var de *DeadlockError
	var te *TruncationError
	want := map[[2]int32]int{}
	switch {
	case errors.As(err, &de):
		for i, p := range de.Pending {
			if i == pendingShown {
				break
			}
			if p.Index >= 0 {
				want[[2]int32{p.Rank, p.Index}] = 0
			}
		}
	case errors.As(err, &te):
		want[[2]int32{te.Rank, te.Op}], want[[2]int32{te.Src, te.Send}] = 0, 0
	}
	if len(want) == 0 || g.file == "" || g.file == "-" {
		return err
	}
	f, oerr := os.Open(g.file)
	if oerr != nil {
		return err
	}
	defer f.Close()
	p := newGOALParser(bufio.NewReaderSize(f, goalBuffer(f)), g.file)
	p.opLines = want
	if p.parse() != nil {
		return err // changed since: leave the error as it was
	}
	at := func(rank, op int32) string {
		if line := want[[2]int32{rank, op}]; line > 0 {
			return fmt.Sprintf("%s:%d", g.file, line)
		}
		return ""
	}
	if de != nil {
		for i := range de.Pending {
			de.Pending[i].Where = at(de.Pending[i].Rank, de.Pending[i].Index)
		}
	} else {
		te.RecvWhere, te.SendWhere = at(te.Rank, te.Op), at(te.Src, te.Send)
	}
	return err
}
