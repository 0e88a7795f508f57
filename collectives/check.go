package collectives

import (
	"fmt"

	"github.com/collsim/collsim/sim"
)

// semantics says what a collective computes, element by element: the
// buffers each rank has, what is in them before, and what must be in them
// after.
type semantics struct {
	buffers func(p Params) []int64
	// init fills rank r's buffers before the call.
	init func(p Params, r int, bufs [][]uint64, in input)
	// want returns the value element i of buffer buf must hold at rank r
	// after the call, and whether it is checked at all. sum(i) is the sum
	// of every rank's input element i, computed once per element.
	want   func(p Params, r int, buf uint8, i int64, in input, sum func(int64) uint64) (uint64, bool)
	reduce sim.ReduceOp
}

// input is rank r's pseudo-random input element i (splitmix64 of the
// seed, rank and index): distinct everywhere, so that a block that lands in
// the wrong place, or a contribution counted twice or missed, shows up.
type input struct {
	seed uint64
	// origins makes every input element of rank r the bit 1<<r and every
	// stale element 0: the sum of distinct contributions is then the set
	// of ranks whose input an element holds (see NewOrigins).
	origins bool
}

func (in input) at(r int, i int64) uint64 {
	if in.origins {
		return 1 << r
	}
	z := in.seed + uint64(r)*0x9e3779b97f4a7c15 + uint64(i)*0xd1b54a32d192ed03
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// stale is what a rank holds in a buffer it only receives into: distinct
// from any correct value, so that an element never written is caught.
func (in input) stale(r int, i int64) uint64 {
	if in.origins {
		return 0
	}
	return ^in.at(r, i)
}

// owner returns the block of the even split of n into p that holds i.
func owner(n int64, p int, i int64) int {
	q, rem := n/int64(p), n%int64(p)
	if i < rem*(q+1) {
		return int(i / (q + 1))
	}
	return int(rem + (i-rem*(q+1))/q)
}

func oneBuffer(p Params) []int64 { return []int64{p.Count} }

// fillRootOnly gives the root its input and every other rank stale
// values (bcast, scatter).
func fillRootOnly(p Params, r int, bufs [][]uint64, in input) {
	for i := range bufs[0] {
		bufs[0][i] = in.stale(r, int64(i))
		if r == p.Root {
			bufs[0][i] = in.at(r, int64(i))
		}
	}
}

// fillOwnBlock gives rank r its input in block r and stale values elsewhere
// (allgather, gather).
func fillOwnBlock(p Params, r int, bufs [][]uint64, in input) {
	for i := range bufs[0] {
		bufs[0][i] = in.stale(r, int64(i))
		if owner(p.Count, p.Ranks, int64(i)) == r {
			bufs[0][i] = in.at(r, int64(i))
		}
	}
}

func fillInput(p Params, r int, bufs [][]uint64, in input) {
	for i := range bufs[0] {
		bufs[0][i] = in.at(r, int64(i))
	}
}

var semanticsOf = map[Collective]semantics{
	Allreduce: {
		buffers: oneBuffer,
		init:    fillInput,
		want: func(p Params, r int, _ uint8, i int64, in input, sum func(int64) uint64) (uint64, bool) {
			return sum(i), true
		},
	},
	Bcast: {
		buffers: oneBuffer,
		init:    fillRootOnly,
		want: func(p Params, r int, _ uint8, i int64, in input, _ func(int64) uint64) (uint64, bool) {
			return in.at(p.Root, i), true
		},
	},
	Reduce: {
		buffers: oneBuffer,
		init:    fillInput,
		want: func(p Params, r int, _ uint8, i int64, in input, sum func(int64) uint64) (uint64, bool) {
			return sum(i), r == p.Root
		},
	},
	Gather: {
		// Rank r contributes block r of the vector; the root ends with all.
		buffers: oneBuffer,
		init:    fillOwnBlock,
		want: func(p Params, r int, _ uint8, i int64, in input, _ func(int64) uint64) (uint64, bool) {
			return in.at(owner(p.Count, p.Ranks, i), i), r == p.Root
		},
	},
	Scatter: {
		// The root holds the vector; rank r ends with block r of it.
		buffers: oneBuffer,
		init:    fillRootOnly,
		want: func(p Params, r int, _ uint8, i int64, in input, _ func(int64) uint64) (uint64, bool) {
			return in.at(p.Root, i), owner(p.Count, p.Ranks, i) == r
		},
	},
	Allgather: {
		buffers: oneBuffer,
		init:    fillOwnBlock,
		want: func(p Params, r int, _ uint8, i int64, in input, _ func(int64) uint64) (uint64, bool) {
			return in.at(owner(p.Count, p.Ranks, i), i), true
		},
	},
	ReduceScatter: {
		buffers: oneBuffer,
		init:    fillInput,
		want: func(p Params, r int, _ uint8, i int64, in input, sum func(int64) uint64) (uint64, bool) {
			if owner(p.Count, p.Ranks, i) != r {
				return 0, false
			}
			return sum(i), true
		},
	},
	Alltoall: {
		buffers: func(p Params) []int64 { return []int64{p.Count * int64(p.Ranks), p.Count * int64(p.Ranks)} },
		init: func(p Params, r int, bufs [][]uint64, in input) {
			for i := range bufs[0] {
				bufs[0][i] = in.at(r, int64(i))
				bufs[1][i] = in.stale(r, int64(i))
			}
		},
		want: func(p Params, r int, buf uint8, i int64, in input, _ func(int64) uint64) (uint64, bool) {
			if buf != 1 || p.Count == 0 {
				return 0, false
			}
			from, k := int(i/p.Count), i%p.Count
			return in.at(from, int64(r)*p.Count+k), true
		},
	},
	Barrier: {
		// Each rank starts knowing only itself; dissemination messages
		// carry knowledge vectors combined by max. A barrier is correct iff
		// every rank ends knowing every rank.
		buffers: func(p Params) []int64 { return []int64{int64(p.Ranks)} },
		init: func(p Params, r int, bufs [][]uint64, in input) {
			clear(bufs[0])
			bufs[0][r] = 1
		},
		want: func(p Params, r int, _ uint8, i int64, in input, _ func(int64) uint64) (uint64, bool) {
			return 1, true
		},
		reduce: sim.ReduceMax,
	},
}

// Data is every rank's buffers for a data-mode run of one collective
// call: filled with pseudo-random inputs by NewData, checked by Verify.
type Data struct {
	Buffers [][][]uint64 // Buffers[rank][buffer]: pass as sim.Config.Data
	checked int          // the collective's own buffers come first; scratch is not checked
	c       Collective
	p       Params
	in      input
}

// MaxDataElements bounds the elements NewData allocates over all ranks
// (1 GiB of uint64): data mode is for checking, not for scale runs.
const MaxDataElements = 1 << 27

// CheckData returns NewData's error for a call of c with parameters p,
// without allocating its buffers.
func CheckData(c Collective, p Params) error {
	sem, ok := semanticsOf[c]
	if !ok {
		return fmt.Errorf("unknown collective %q", c)
	}
	if err := p.check(c); err != nil {
		return err
	}
	return fitData(p, sem.buffers(p))
}

// fitData refuses buffers (elements on each rank) of p's ranks larger
// than MaxDataElements in all.
func fitData(p Params, buffers []int64) error {
	var perRank int64
	for _, n := range buffers {
		perRank += n
	}
	if float64(perRank)*float64(p.Ranks) > MaxDataElements {
		// The total, then the limit (it read "134217728 on each of 4
		// ranks, more than 134217728 in all"; a new user's trial).
		return fmt.Errorf("data mode would need %d elements on each of %d ranks, %.0f in all, more than its limit of %d; check data on a smaller call", perRank, p.Ranks, float64(perRank)*float64(p.Ranks), MaxDataElements)
	}
	return nil
}

// NewData allocates and fills the buffers of a call of c with parameters p;
// seed picks the inputs.
func NewData(c Collective, p Params, seed uint64) (*Data, error) {
	if err := CheckData(c, p); err != nil {
		return nil, err
	}
	sem := semanticsOf[c]
	d := &Data{c: c, p: p, in: input{seed: seed}, Buffers: make([][][]uint64, p.Ranks), checked: len(sem.buffers(p))}
	for r := range d.Buffers {
		d.Buffers[r] = sem.fill(p, r, d.in)
	}
	return d, nil
}

// MaxOriginRanks is the most ranks NewOrigins tracks: one bit each.
const MaxOriginRanks = 63

// NewOrigins is NewData with each rank's input elements set to the bit
// 1<<rank and every other element to 0, so that during a run an element's
// value is the set of ranks whose input it holds (a reduction's partial
// sums add distinct bits; counting one rank twice carries into another
// bit, which Verify catches): what collsim explain draws. The barrier's
// knowledge vectors are as NewData makes them.
func NewOrigins(c Collective, p Params) (*Data, error) {
	if p.Ranks > MaxOriginRanks {
		return nil, fmt.Errorf("origins of %d ranks: at most %d", p.Ranks, MaxOriginRanks)
	}
	d, err := NewData(c, p, 0)
	if err != nil {
		return nil, err
	}
	d.in.origins = true
	sem := semanticsOf[c]
	for r := range d.Buffers {
		d.Buffers[r] = sem.fill(p, r, d.in)
	}
	return d, nil
}

// fill allocates rank r's buffers and fills them with its input.
func (sem *semantics) fill(p Params, r int, in input) [][]uint64 {
	var bufs [][]uint64
	for _, n := range sem.buffers(p) {
		bufs = append(bufs, make([]uint64, n))
	}
	sem.init(p, r, bufs, in)
	return bufs
}

// Verify compares every checked element of every rank's buffers with the
// collective's definition and reports the first that differs. It costs
// O(ranks x elements): sums over ranks are computed once per element.
func (d *Data) Verify() error {
	sem := semanticsOf[d.c]
	sum := sums(d.p, d.in)
	for r := range d.Buffers {
		if err := sem.verify(d.p, r, d.Buffers[r][:d.checked], d.in, sum); err != nil {
			return err
		}
	}
	return nil
}

// sums returns the function giving the sum of every rank's input element
// i, computing all sums on first use.
func sums(p Params, in input) func(int64) uint64 {
	var s []uint64
	return func(i int64) uint64 {
		if s == nil {
			s = make([]uint64, p.Count)
			for r := range p.Ranks {
				for j := range s {
					s[j] += in.at(r, int64(j))
				}
			}
		}
		return s[i]
	}
}

// verify checks rank r's own buffers (not scratch) after the call.
func (sem *semantics) verify(p Params, r int, bufs [][]uint64, in input, sum func(int64) uint64) error {
	for b, buf := range bufs {
		for i, got := range buf {
			want, checked := sem.want(p, r, uint8(b), int64(i), in, sum)
			if checked && got != want {
				return fmt.Errorf("rank %d buffer %d element %d is %#x, want %#x", r, b, i, got, want)
			}
		}
	}
	return nil
}

// RankData allocates and fills the buffers one rank holds for a data-mode
// run of a with parameters p: the collective's buffers and the algorithm's
// scratch, as Data would give rank r. A real run holds one rank per
// process; it checks the result with VerifyRank and the same seed.
func (a *Algorithm) RankData(p Params, seed uint64, r int) ([][]uint64, error) {
	if err := p.check(a.Collective); err != nil {
		return nil, err
	}
	if r < 0 || r >= p.Ranks {
		return nil, fmt.Errorf("rank %d outside 0..%d", r, p.Ranks-1)
	}
	sem := semanticsOf[a.Collective]
	bufs := sem.fill(p, r, input{seed: seed})
	if a.scratch != nil {
		for _, n := range a.scratch(p) {
			bufs = append(bufs, make([]uint64, n))
		}
	}
	return bufs, nil
}

// VerifyRank checks rank r's buffers (as RankData made them, after the
// call) against the collective's definition. It costs O(ranks x elements)
// where the result is a reduction.
func (a *Algorithm) VerifyRank(p Params, seed uint64, r int, bufs [][]uint64) error {
	sem := semanticsOf[a.Collective]
	n := len(sem.buffers(p))
	if len(bufs) < n {
		return fmt.Errorf("rank %d has %d buffers, want %d", r, len(bufs), n)
	}
	in := input{seed: seed}
	return sem.verify(p, r, bufs[:n], in, sums(p, in))
}

// Check runs a's schedule for p with real data over net and verifies every
// element of every rank's buffers. seed picks the inputs (and, through the
// engine, any randomness of net). Messages up to 64 KiB are eager. It
// returns the run's result so that callers can also look at timing.
func Check(a Algorithm, p Params, seed uint64, net sim.NetworkFactory) (*sim.Result, error) {
	return CheckEager(a, p, seed, net, 64<<10)
}

// CheckEager is Check with messages above eager bytes sent by rendezvous
// (0: every message that carries data).
func CheckEager(a Algorithm, p Params, seed uint64, net sim.NetworkFactory, eager int64) (*sim.Result, error) {
	s, err := a.Build(p)
	if err != nil {
		return nil, err
	}
	d, err := a.Data(p, seed)
	if err != nil {
		return nil, err
	}
	return run(s, d, p, seed, net, eager)
}

// verify runs s, a schedule for collective c, with real data and checks it.
func verify(s sim.Schedule, c Collective, p Params, seed uint64, net sim.NetworkFactory) (*sim.Result, error) {
	d, err := NewData(c, p, seed)
	if err != nil {
		return nil, err
	}
	return run(s, d, p, seed, net, 64<<10)
}

// run executes s with the buffers of d and verifies them.
func run(s sim.Schedule, d *Data, p Params, seed uint64, net sim.NetworkFactory, eager int64) (*sim.Result, error) {
	res, err := sim.Execute(sim.New(seed), s, sim.Config{Network: net, Data: d.Buffers, Host: sim.HostParams{EagerLimit: eager}})
	if err != nil {
		return res, fmt.Errorf("%s p=%d count=%d: %w", s.Name, p.Ranks, p.Count, err)
	}
	if err := d.Verify(); err != nil {
		return res, fmt.Errorf("%s p=%d count=%d: %w", s.Name, p.Ranks, p.Count, err)
	}
	return res, nil
}
