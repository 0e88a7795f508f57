package redist

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads"
)

// The schedules.
//
//   - scalapack: ScaLAPACK's PxGEMR2D ("caterpillar" steps): in step k
//     rank r exchanges with rank (R-1-r-k) mod R (a pairing: that rank's
//     partner in step k is r): both pack, then, blocking, the lower rank
//     sends and the higher receives, then the other way round, and both
//     unpack; the step whose partner is r itself is the local copy, packed,
//     copied (Clacpy) and unpacked, three copies. Every rank takes
//     every step, so a rank with nothing to exchange in a step still
//     waits for the steps around it.
//   - caterpillar: task-based, as a runtime (PaRSEC) moves data: every
//     receive posted up front, each outgoing message sent (non-blocking)
//     once it is packed, rank r to r+1, r+2, ... in turn, so that at any
//     moment the ranks send to different receivers.
//   - naive: the same, but every rank sends to ranks 0, 1, 2, ... in
//     turn: they all start on the same receiver.
var Schedules = []string{"scalapack", "caterpillar", "naive"}

// How messages are cut: one per pair of ranks (every piece one sends
// the other, packed into one buffer), or one per piece (a tile or the
// part of a tile that overlaps one target tile; sent from and received
// into the tile in place when it is contiguous there, else packed).
var MessageModes = []string{"pair", "tile"}

// maxPieces bounds the pieces a job may cut the matrix into (each is
// some tens of bytes of plan).
const maxPieces = 1 << 23

// Job is one redistribution.
type Job struct {
	M, N     int
	Elem     int64 // bytes per element
	From, To Layout
	// Ranks is how many ranks take part: 0 means the larger grid's P x Q
	// (with two maps: the highest rank they name, plus one). A rank no
	// layout names holds nothing.
	Ranks    int
	Schedule string
	Messages string
	// CopyRate is the bytes/s at which a rank packs, unpacks and copies
	// locally.
	CopyRate float64
	// Data adds the element copies that pack, unpack and copy, so that a
	// data-mode run moves real elements (small matrices only).
	Data bool
}

// Size is the job's ranks.
func (j *Job) Size() int {
	if j.Ranks > 0 {
		return j.Ranks
	}
	if j.From.Owners != nil && j.To.Owners != nil {
		return max(j.From.ranks(), j.To.ranks())
	}
	n := 0
	for _, l := range []*Layout{&j.From, &j.To} {
		if l.Owners == nil {
			n = max(n, l.ranks())
		}
	}
	return n
}

// Check refuses a job that cannot run.
func (j *Job) Check() error {
	switch {
	case j.M < 1 || j.N < 1:
		return fmt.Errorf("matrix %dx%d: both dimensions at least 1", j.M, j.N)
	case j.M > math.MaxInt32 || j.N > math.MaxInt32:
		// A piece's rows and columns are int32s (a 5e9 x 1 matrix wrapped
		// to a send of -1794967296 bytes: an audit).
		return fmt.Errorf("matrix %dx%d: each dimension at most %d", j.M, j.N, math.MaxInt32)
	case j.Elem < 1:
		return fmt.Errorf("elements of %d bytes: at least 1", j.Elem)
	case float64(j.M)*float64(j.N)*float64(j.Elem) > 1<<50:
		return fmt.Errorf("a %dx%d matrix of %d-byte elements is more than a PiB", j.M, j.N, j.Elem)
	case !slices.Contains(Schedules, j.Schedule):
		return fmt.Errorf("schedule %q; valid: %v", j.Schedule, Schedules)
	case !slices.Contains(MessageModes, j.Messages):
		return fmt.Errorf("messages %q; valid: %v", j.Messages, MessageModes)
	case j.Schedule == "scalapack" && j.Messages != "pair":
		return fmt.Errorf("the scalapack schedule sends one packed message per pair of ranks; give messages pair, or another schedule for one message per tile")
	case !(j.CopyRate > 0) || math.IsInf(j.CopyRate, 0):
		return fmt.Errorf("copy rate %g bytes/s: give a positive rate", j.CopyRate)
	case j.Ranks < 0 || j.Ranks > sim.MaxRanks:
		return fmt.Errorf("ranks %d: from 1 to %d (0: as the layouts name)", j.Ranks, sim.MaxRanks)
	}
	for _, l := range []struct {
		what string
		l    *Layout
	}{{"source", &j.From}, {"target", &j.To}} {
		// Each side first, so that P x Q cannot wrap (a 2^32 x 2^32 grid
		// wrapped to 0 ranks and crashed: an audit).
		if g := l.l; g.Owners == nil && (g.P > sim.MaxRanks || g.Q > sim.MaxRanks || g.P > 0 && g.Q > sim.MaxRanks/g.P) {
			return fmt.Errorf("%s layout: a %dx%d grid names more than %d ranks", l.what, g.P, g.Q, sim.MaxRanks)
		}
	}
	r := j.Size()
	if r > sim.MaxRanks {
		return fmt.Errorf("the layouts name %d ranks: at most %d", r, sim.MaxRanks)
	}
	for _, l := range []struct {
		what string
		l    *Layout
	}{{"source", &j.From}, {"target", &j.To}} {
		if err := l.l.check(l.what, j.M, j.N, r); err != nil {
			return err
		}
	}
	if n := float64(intervals(j.M, j.From.MB, j.To.MB)) * float64(intervals(j.N, j.From.NB, j.To.NB)); n > maxPieces {
		return fmt.Errorf("the two layouts cut the matrix into %.0f pieces; at most %d: use larger tiles", n, maxPieces)
	}
	return nil
}

// cuts returns the boundaries of the intervals two tilings of a
// dimension of n elements (tiles of a and of b) cut it into: 0, every
// multiple of a or b below n, and n.
func cuts(n, a, b int) []int {
	out := make([]int, 1, intervals(n, a, b)+1)
	for x, y := a, b; min(x, y) < n; {
		c := min(x, y)
		out = append(out, c)
		if x == c {
			x += a
		}
		if y == c {
			y += b
		}
	}
	return append(out, n)
}

// intervals is how many intervals cuts(n, a, b) makes, counted without
// making them: the multiples of a or b inside (0, n), those of both once,
// make one interval more each.
func intervals(n, a, b int) int {
	g := a
	for h := b; h != 0; g, h = h, g%h {
	}
	return 1 + (n-1)/a + (n-1)/b - (n-1)/(a/g*b)
}

// piece is a rectangle of the matrix inside one source tile and one
// target tile: rows r0..r1-1, columns c0..c1-1.
type piece struct {
	r0, r1, c0, c1 int32
	from, to       int32 // its owners
}

func (p *piece) elems() int64 { return int64(p.r1-p.r0) * int64(p.c1-p.c0) }

// storage is where each tile of a layout lies in its owner's buffer.
type storage struct {
	l          *Layout
	m, n       int
	rows, cols int
	off        []int64 // by tile, i*cols + j
	size       []int64 // by rank: elements stored
}

func newStorage(l *Layout, m, n, ranks int) *storage {
	s := &storage{l: l, m: m, n: n, size: make([]int64, ranks)}
	s.rows, s.cols = l.tiles(m, n)
	s.off = make([]int64, s.rows*s.cols)
	for j := range s.cols {
		w := int64(min(l.NB, n-j*l.NB))
		for i := range s.rows {
			h := int64(min(l.MB, m-i*l.MB))
			o := l.owner(i, j, s.cols)
			s.off[i*s.cols+j] = s.size[o]
			s.size[o] += h * w
		}
	}
	return s
}

// column returns where column c of piece p lies in its owner's buffer,
// and whether the piece's columns lie one after another there (its rows
// are the whole tile's, or it is one column wide).
func (s *storage) column(p *piece, c int32) (off int64, contiguous bool) {
	i, j := int(p.r0)/s.l.MB, int(c)/s.l.NB
	h := int32(min(s.l.MB, s.m-i*s.l.MB))
	off = s.off[i*s.cols+j] + int64(c-int32(j*s.l.NB))*int64(h) + int64(p.r0-int32(i*s.l.MB))
	return off, p.r1-p.r0 == h || p.c1-p.c0 == 1
}

// plan is what every rank's script reads: the pieces, sorted by sender
// and by receiver, and where each layout keeps its tiles.
type plan struct {
	j        *Job
	ranks    int
	pieces   []piece
	out, in  []int32 // piece indices by (from, to) and by (to, from), each column-major
	outStart []int32 // by rank: its first entry in out; in likewise
	inStart  []int32
	src, dst *storage
}

func newPlan(j *Job) *plan {
	r := j.Size()
	p := &plan{j: j, ranks: r, src: newStorage(&j.From, j.M, j.N, r), dst: newStorage(&j.To, j.M, j.N, r)}
	rc, cc := cuts(j.M, j.From.MB, j.To.MB), cuts(j.N, j.From.NB, j.To.NB)
	p.pieces = make([]piece, 0, (len(rc)-1)*(len(cc)-1))
	for b := range len(cc) - 1 {
		for a := range len(rc) - 1 {
			pc := piece{r0: int32(rc[a]), r1: int32(rc[a+1]), c0: int32(cc[b]), c1: int32(cc[b+1])}
			pc.from = int32(j.From.owner(rc[a]/j.From.MB, cc[b]/j.From.NB, p.src.cols))
			pc.to = int32(j.To.owner(rc[a]/j.To.MB, cc[b]/j.To.NB, p.dst.cols))
			p.pieces = append(p.pieces, pc)
		}
	}
	p.out, p.outStart = p.index(func(pc *piece) (int32, int32) { return pc.from, pc.to })
	p.in, p.inStart = p.index(func(pc *piece) (int32, int32) { return pc.to, pc.from })
	return p
}

// index sorts the pieces by key (stable: column-major within a key) and
// returns the order and each rank's first entry.
func (p *plan) index(key func(*piece) (int32, int32)) ([]int32, []int32) {
	idx := make([]int32, len(p.pieces))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int {
		a1, a2 := key(&p.pieces[a])
		b1, b2 := key(&p.pieces[b])
		return cmp.Or(cmp.Compare(a1, b1), cmp.Compare(a2, b2))
	})
	start := make([]int32, p.ranks+1)
	for _, i := range idx {
		k, _ := key(&p.pieces[i])
		start[k+1]++
	}
	for r := range p.ranks {
		start[r+1] += start[r]
	}
	return idx, start
}

// group is the pieces one rank exchanges with one peer: entries lo..hi-1
// of out (or in).
type group struct{ peer, lo, hi int32 }

// groups returns rank r's groups in list (out or in), by peer.
func (p *plan) groups(list, start []int32, r int, peerOf func(*piece) int32) []group {
	var gs []group
	for k := start[r]; k < start[r+1]; k++ {
		peer := peerOf(&p.pieces[list[k]])
		if n := len(gs); n > 0 && gs[n-1].peer == peer {
			gs[n-1].hi = k + 1
			continue
		}
		gs = append(gs, group{peer, k, k + 1})
	}
	return gs
}

// Flow is what one rank sends another.
type Flow struct {
	From, To int
	Bytes    int64
	Messages int // as the job's message mode cuts it
}

// Exchange returns every pair of ranks' traffic (a rank's own pieces,
// copied locally, included as From == To), sender by sender.
func (j *Job) Exchange() ([]Flow, error) {
	if err := j.Check(); err != nil {
		return nil, err
	}
	p := newPlan(j)
	var out []Flow
	for r := range p.ranks {
		for _, g := range p.groups(p.out, p.outStart, r, func(pc *piece) int32 { return pc.to }) {
			f := Flow{From: r, To: int(g.peer), Messages: 1}
			for k := g.lo; k < g.hi; k++ {
				f.Bytes += p.pieces[p.out[k]].elems() * j.Elem
			}
			if j.Messages == "tile" {
				f.Messages = int(g.hi - g.lo)
			}
			if f.From == f.To {
				f.Messages = 0
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// Buffers are a rank's data buffers: 0 the matrix in the source layout, 1
// in the target layout, 2 and 3 the packed messages out and in.
const (
	bufFrom = iota
	bufTo
	bufOut
	bufIn
)

// Composition returns the redistribution as per-rank programs. In data
// mode a rank's buffer 0 holds its tiles of the source layout and buffer 1
// receives its tiles of the target layout (each tile column-major, the
// tiles in column-major order).
func (j *Job) Composition() (collectives.Composition, error) {
	if err := j.Check(); err != nil {
		return collectives.Composition{}, err
	}
	p := newPlan(j)
	stage := p.staging()
	c := collectives.Composition{
		Name:  "redistribute-" + j.Schedule,
		Ranks: p.ranks,
		Lanes: 1 + b2i(j.Schedule != "scalapack"),
		Script: func(r int) collectives.Script {
			rs := newRankScript(p, stage, r)
			return &workloads.Phased{Fill: rs.fill}
		},
	}
	if j.Data {
		c.Buffers = func(r int) []int64 {
			return []int64{p.src.size[r], p.dst.size[r], stage.outSize[r], stage.inSize[r]}
		}
	}
	return c, nil
}

// staging is where each piece that is packed lies in its sender's
// buffer 2 and its receiver's buffer 3 (-1: sent in place).
type staging struct {
	outOff, inOff   []int64 // by piece
	outSize, inSize []int64 // by rank
}

func (p *plan) staging() *staging {
	s := &staging{outOff: make([]int64, len(p.pieces)), inOff: make([]int64, len(p.pieces)),
		outSize: make([]int64, p.ranks), inSize: make([]int64, p.ranks)}
	for _, side := range []struct {
		list, start []int32
		st          *storage
		off, size   []int64
	}{{p.out, p.outStart, p.src, s.outOff, s.outSize}, {p.in, p.inStart, p.dst, s.inOff, s.inSize}} {
		for r := range p.ranks {
			for k := side.start[r]; k < side.start[r+1]; k++ {
				i := side.list[k]
				pc := &p.pieces[i]
				_, contiguous := side.st.column(pc, pc.c0)
				if pc.from == pc.to || p.j.Messages == "tile" && contiguous {
					side.off[i] = -1
					continue
				}
				side.off[i] = side.size[r]
				side.size[r] += pc.elems()
			}
		}
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
