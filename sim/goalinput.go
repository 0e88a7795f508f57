package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// ParseGOALFile reads the GOAL schedule in the named file, as ParseGOAL
// does. If progress is not nil, it is called as the file is read, with
// the bytes read so far and the file's size.
//
// The file is read through read(2) into one buffer the parser reuses,
// not mapped into memory: on this project's machine (a virtual machine)
// the loads from a mapping of the file's pages cost more than the
// kernel's copy into a buffer that stays in the caches. Parsing the
// 1,024-rank ring's 314 MB took 0.31-0.40 s read against 0.48-0.70 s
// mapped (6 alternated parses in one process, one core), and a loop that
// only loads every word of it 40-50 ms read in 256 KiB-4 MiB pieces
// against 180-185 ms mapped (page faults are not the difference: about
// 5,000 a pass either way).
func ParseGOALFile(name string, progress func(done, total int64)) (*GOAL, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var in io.Reader = f
	if progress != nil {
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		in = &countingReader{r: f, total: st.Size(), show: progress}
	}
	return ParseGOAL(in, name)
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
