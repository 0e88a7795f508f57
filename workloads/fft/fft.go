// Package fft simulates a distributed 3D FFT of an Nx x Ny x Nz complex
// grid: local 1D FFTs (5 n log2 n FLOPs per line of n points, the
// standard count for a radix-2 complex FFT), and transposes between them
// as alltoalls on sub-communicators, with the packing and unpacking of
// the exchanged blocks as their own cost.
//
// Decompositions (as P3DFFT and 2DECOMP&FFT name them): a slab gives each
// rank whole x-z planes (y split among the ranks) and needs one alltoall
// on all ranks; a pencil
// over a Pr x Pc grid gives each rank whole lines of one dimension and
// needs two alltoalls, on its row (Pr ranks) and on its column (Pc ranks).
//
// Rank (r, c) of the grid holds, in turn:
//
//	X-pencil: x all,     y block r of Pr, z block c of Pc   (FFT along x)
//	Y-pencil: x block r, y all,           z block c          (FFT along y)
//	Z-pencil: x block r, y block c of Pc, z all              (FFT along z)
//
// the first transpose within its row (the ranks of its c), the second
// within its column (the ranks of its r). A slab is the pencil with Pc = 1:
// it starts with x and z whole, so the z lines are transformed before the
// only transpose.
package fft

import (
	"fmt"
	"math"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads"
)

// Job is one 3D FFT.
type Job struct {
	Nx, Ny, Nz int
	Double     bool // complex128 (16 bytes) rather than complex64 (8)
	// Pr x Pc is the process grid: Pc = 1 is a slab decomposition.
	Pr, Pc    int
	RoundTrip bool // forward then inverse
	// FLOPs is the rate the local 1D FFTs achieve, FLOP/s.
	FLOPs float64
	// Pack is how blocks are packed and unpacked around each alltoall:
	// "device" (a pack kernel at PackRate bytes/s) or "host" (staged
	// through host memory: over the host link at HostLink bytes/s each
	// way, and a host copy at HostCopy bytes/s).
	Pack                         string
	PackRate, HostLink, HostCopy float64
	// Alltoall is the algorithm (or library selector) of the transposes;
	// NodeSize and GroupSize are the machine's, for two_level and
	// group_aligned.
	Alltoall            string
	NodeSize, GroupSize int
	// Aligned numbers the grid column-major, so that each row (the first
	// transpose's communicator) is Pr consecutive ranks: block placement
	// then puts a row inside one Dragonfly group when Pr divides the
	// group. The default numbers it row-major (rank = r Pc + c).
	Aligned bool
	// Data adds the local copies that pack and unpack every element, so
	// that a data-mode run moves real elements (small grids only).
	Data bool
}

// Ranks is Pr x Pc.
func (j *Job) Ranks() int { return j.Pr * j.Pc }

func (j *Job) elemBytes() int64 {
	if j.Double {
		return 16
	}
	return 8
}

// Check refuses a job that cannot run.
func (j *Job) Check() error {
	switch {
	case j.Nx < 1 || j.Ny < 1 || j.Nz < 1:
		return fmt.Errorf("grid %dx%dx%d: every dimension must be at least 1", j.Nx, j.Ny, j.Nz)
	case j.Pr < 1 || j.Pc < 1:
		return fmt.Errorf("grid of ranks %dx%d: both at least 1", j.Pr, j.Pc)
	case j.Nx%j.Pr != 0 || j.Ny%j.Pr != 0:
		return fmt.Errorf("Nx %d and Ny %d must be multiples of Pr %d (the transposes exchange equal blocks)", j.Nx, j.Ny, j.Pr)
	case j.Ny%j.Pc != 0 || j.Nz%j.Pc != 0:
		return fmt.Errorf("Ny %d and Nz %d must be multiples of Pc %d (the transposes exchange equal blocks)", j.Ny, j.Nz, j.Pc)
	case !(j.FLOPs > 0):
		return fmt.Errorf("the FFT's FLOP rate must be positive")
	case j.Pack != "device" && j.Pack != "host":
		return fmt.Errorf("pack %q: device or host", j.Pack)
	case j.Pack == "device" && !(j.PackRate > 0), j.Pack == "host" && !(j.HostLink > 0 && j.HostCopy > 0):
		return fmt.Errorf("pack %s needs its rates (device: the pack rate; host: the host link and host copy rates)", j.Pack)
	}
	if float64(j.Nx)*float64(j.Ny)*float64(j.Nz) > 1<<50 {
		return fmt.Errorf("grid %dx%dx%d is too large", j.Nx, j.Ny, j.Nz)
	}
	return nil
}

// rank numbers grid position (r, c).
func (j *Job) rank(r, c int) int {
	if j.Aligned {
		return c*j.Pr + r
	}
	return r*j.Pc + c
}

func (j *Job) coords(rank int) (r, c int) {
	if j.Aligned {
		return rank % j.Pr, rank / j.Pr
	}
	return rank / j.Pc, rank % j.Pc
}

// box is a rank's part of the grid in one stage: the ranges of x, y, z it
// holds, stored with ord[0] innermost.
type box struct {
	lo, n [3]int // start and extent per dimension (0 x, 1 y, 2 z)
	ord   [3]int // storage order, innermost first
}

func (b *box) size() int64 { return int64(b.n[0]) * int64(b.n[1]) * int64(b.n[2]) }

// at is the offset of global point p in the box's storage.
func (b *box) at(p [3]int) int64 {
	var off, stride int64 = 0, 1
	for _, d := range b.ord {
		off += int64(p[d]-b.lo[d]) * stride
		stride *= int64(b.n[d])
	}
	return off
}

// stage is the box of rank (r, c) in stage s (0 X-pencil, 1 Y-pencil, 2
// Z-pencil), stored with the stage's FFT dimension innermost.
func (j *Job) stage(s, r, c int) box {
	N := [3]int{j.Nx, j.Ny, j.Nz}
	var b box
	split := func(d, parts, i int) { b.n[d] = N[d] / parts; b.lo[d] = i * b.n[d] }
	whole := func(d int) { b.n[d] = N[d] }
	switch s {
	case 0:
		whole(0)
		split(1, j.Pr, r)
		split(2, j.Pc, c)
		b.ord = [3]int{0, 2, 1}
	case 1:
		split(0, j.Pr, r)
		whole(1)
		split(2, j.Pc, c)
		b.ord = [3]int{1, 2, 0}
	default:
		split(0, j.Pr, r)
		split(1, j.Pc, c)
		whole(2)
		b.ord = [3]int{2, 1, 0}
	}
	return b
}

// Buffers: 0 the grid in the current stage, 1 the alltoall's send blocks,
// 2 its receive blocks, 3 and up the algorithm's scratch.
const (
	bufGrid = 0
	bufSend = 1
	bufRecv = 2
)

// Composition returns the FFT as per-rank programs.
func (j *Job) Composition() (collectives.Composition, error) {
	if err := j.Check(); err != nil {
		return collectives.Composition{}, err
	}
	local := int64(j.Nx) * int64(j.Ny) * int64(j.Nz) / int64(j.Ranks())
	var scratch []int64
	for which, q := range []int{j.Pr, j.Pc} {
		g := make(collectives.Group, q) // rank (0, 0)'s row, then its column
		for i := range g {
			if which == 0 {
				g[i] = j.rank(i, 0)
			} else {
				g[i] = j.rank(0, i)
			}
		}
		c, err := j.call(g, 1+which)
		if err != nil {
			return collectives.Composition{}, err
		}
		for i, n := range c.Buffers()[2:] {
			if i == len(scratch) {
				scratch = append(scratch, 0)
			}
			scratch[i] = max(scratch[i], n)
		}
	}
	return collectives.Composition{
		Name:  fmt.Sprintf("fft %dx%dx%d on %dx%d", j.Nx, j.Ny, j.Nz, j.Pr, j.Pc),
		Ranks: j.Ranks(),
		Buffers: func(int) []int64 {
			return append([]int64{local, local, local}, scratch...)
		},
		Script: func(rank int) collectives.Script {
			rs := &rankScript{j: j, rank: rank}
			rs.r, rs.c = j.coords(rank)
			rs.plan()
			rs.phased = &workloads.Phased{Fill: rs.fill}
			return rs.phased
		},
	}, nil
}

// call is the alltoall of one transpose on group g, with its buffers
// placed.
func (j *Job) call(g collectives.Group, ctx int) (*collectives.Call, error) {
	count := int64(j.Nx) * int64(j.Ny) * int64(j.Nz) / int64(j.Ranks()) / int64(len(g))
	// The machine's nodes and groups as the communicator's members see
	// them (block placement).
	p := collectives.Params{Count: count, ElemSize: j.elemBytes(), NodeSize: collectives.SubHierarchy(g, j.NodeSize), GroupSize: collectives.SubHierarchy(g, j.GroupSize)}
	c, err := collectives.NewCall(collectives.Alltoall, j.Alltoall, g, p, ctx)
	if err != nil {
		return nil, fmt.Errorf("the transposes' alltoall on %d ranks: %w", len(g), err)
	}
	places := []collectives.Place{{Buf: bufSend}, {Buf: bufRecv}}
	for i := range c.Buffers()[2:] {
		places = append(places, collectives.Place{Buf: uint8(3 + i)})
	}
	c.Places = places
	return c, nil
}

type step struct {
	kind  int // fft, transpose
	dim   int // fft: the dimension; transpose: the stage it leaves
	inv   bool
	lines int64
}

const (
	stepFFT = iota
	stepTranspose
)

type rankScript struct {
	j      *Job
	phased *workloads.Phased
	rank   int
	r, c   int
	steps  []step
	next   int
	calls  [2]*collectives.Call
}

// plan lists the forward FFT's steps (and the inverse's, reversed).
func (rs *rankScript) plan() {
	j := rs.j
	fwd := []step{{kind: stepFFT, dim: 0}}
	if j.Pc == 1 { // a slab: z is whole from the start
		fwd = append(fwd, step{kind: stepFFT, dim: 2}, step{kind: stepTranspose, dim: 0}, step{kind: stepFFT, dim: 1})
	} else {
		fwd = append(fwd, step{kind: stepTranspose, dim: 0}, step{kind: stepFFT, dim: 1}, step{kind: stepTranspose, dim: 1}, step{kind: stepFFT, dim: 2})
	}
	rs.steps = fwd
	if j.RoundTrip {
		for i := len(fwd) - 1; i >= 0; i-- {
			s := fwd[i]
			s.inv = true
			rs.steps = append(rs.steps, s)
		}
	}
}

func (rs *rankScript) fill(w *workloads.Writer) bool {
	if rs.next == len(rs.steps) {
		return false
	}
	s := rs.steps[rs.next]
	rs.next++
	j := rs.j
	if s.kind == stepFFT {
		N := [3]int{j.Nx, j.Ny, j.Nz}
		n := float64(N[s.dim])
		lines := float64(j.Nx) * float64(j.Ny) * float64(j.Nz) / n / float64(j.Ranks())
		flops := 5 * n * math.Log2(n) * lines
		w.Add(collectives.Item{Kind: collectives.Compute, Dur: sim.FromSeconds(flops / j.FLOPs)})
		return true
	}
	// A transpose from stage a to stage b (or back, inverse).
	a, b := s.dim, s.dim+1
	if s.inv {
		a, b = b, a
	}
	rs.transpose(w, a, b, s.dim)
	return true
}

// transpose packs the blocks of stage a for each peer of the transpose's
// communicator, exchanges them by alltoall, and unpacks stage b.
func (rs *rankScript) transpose(w *workloads.Writer, a, b, which int) {
	j := rs.j
	// The communicator: transpose 0 within the row (same c), 1 within
	// the column (same r).
	q := j.Pr
	if which == 1 {
		q = j.Pc
	}
	pos := rs.r
	if which == 1 {
		pos = rs.c
	}
	peer := func(i int) (int, int) {
		if which == 0 {
			return i, rs.c
		}
		return rs.r, i
	}
	if rs.calls[which] == nil {
		g := make(collectives.Group, q)
		for i := range g {
			pr, pc := peer(i)
			g[i] = j.rank(pr, pc)
		}
		c, err := j.call(g, 1+which)
		if err != nil {
			rs.phased.Error = err
			return
		}
		rs.calls[which] = c
	}
	call := rs.calls[which]
	from := j.stage(a, rs.r, rs.c)
	bytes := float64(from.size() * j.elemBytes())
	packCost := func() sim.Time {
		if j.Pack == "device" {
			return sim.FromSeconds(bytes / j.PackRate)
		}
		return sim.FromSeconds(bytes/j.HostLink + bytes/j.HostCopy)
	}
	block := from.size() / int64(q)
	if j.Data {
		// Block i of the send buffer: the points of from that peer i
		// holds in stage b, in peer i's storage order.
		for i := range q {
			pr, pc := peer(i)
			rs.copies(w, from, j.stage(b, pr, pc), j.stage(b, pr, pc).ord, bufGrid, bufSend, int64(i)*block, false)
		}
	}
	w.Add(collectives.Item{Kind: collectives.Compute, Dur: packCost()})
	w.Add(collectives.Item{Kind: collectives.CallItem, Call: call, Pos: pos})
	to := j.stage(b, rs.r, rs.c)
	if j.Data {
		for i := range q {
			pr, pc := peer(i)
			rs.copies(w, to, j.stage(a, pr, pc), to.ord, bufGrid, bufRecv, int64(i)*block, true)
		}
	}
	w.Add(collectives.Item{Kind: collectives.Compute, Dur: packCost()})
}

// copies adds the copies between a rank's box mine (in buffer mineBuf)
// and the intersection of mine with other, laid out contiguously in the
// receiver's storage order ord (the stage it is sent to) from offset off
// of buffer blockBuf: packing (mine -> block) or, with unpack, the other
// way. Runs contiguous on both sides become one copy.
func (rs *rankScript) copies(w *workloads.Writer, mine, other box, ord [3]int, mineBuf, blockBuf uint8, off int64, unpack bool) {
	var lo, n [3]int
	for d := range 3 {
		lo[d] = max(mine.lo[d], other.lo[d])
		n[d] = min(mine.lo[d]+mine.n[d], other.lo[d]+other.n[d]) - lo[d]
	}
	sub := box{lo: lo, n: n, ord: ord}
	var runSrc, runDst, runLen int64 = -1, -1, 0
	flush := func() {
		if runLen == 0 {
			return
		}
		src := sim.Region{Buf: mineBuf, Off: runSrc, Count: runLen}
		dst := sim.Region{Buf: blockBuf, Off: off + runDst, Count: runLen}
		if unpack {
			src, dst = sim.Region{Buf: blockBuf, Off: off + runDst, Count: runLen}, sim.Region{Buf: mineBuf, Off: runSrc, Count: runLen}
		}
		w.Add(collectives.Item{Kind: collectives.Copy, Src: src, Data: dst})
		runLen = 0
	}
	var p [3]int
	o := sub.ord
	for k := range sub.n[o[2]] {
		for jj := range sub.n[o[1]] {
			for i := range sub.n[o[0]] {
				p[o[0]], p[o[1]], p[o[2]] = lo[o[0]]+i, lo[o[1]]+jj, lo[o[2]]+k
				m, s := mine.at(p), sub.at(p)
				if runLen > 0 && m == runSrc+runLen && s == runDst+runLen {
					runLen++
					continue
				}
				flush()
				runSrc, runDst, runLen = m, s, 1
			}
		}
	}
	flush()
}
