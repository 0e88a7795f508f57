package collectives

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/collsim/collsim/sim"
)

// Collective names an MPI-style collective operation.
type Collective string

// The collectives. What Params.Count means differs: see Params.
const (
	Allreduce     Collective = "allreduce"
	Bcast         Collective = "bcast"
	Reduce        Collective = "reduce"
	Allgather     Collective = "allgather"
	ReduceScatter Collective = "reduce_scatter"
	Gather        Collective = "gather"
	Scatter       Collective = "scatter"
	Alltoall      Collective = "alltoall"
	Barrier       Collective = "barrier"
)

// DefaultAlgorithm is the algorithm collsim runs for c when none is named:
// the bandwidth-optimal or classic choice.
func DefaultAlgorithm(c Collective) string {
	switch c {
	case Allreduce, Allgather, ReduceScatter:
		return "ring"
	case Bcast, Reduce, Gather, Scatter:
		if c == Gather || c == Scatter {
			return "linear"
		}
		return "binomial"
	case Alltoall:
		return "pairwise"
	case Barrier:
		return "dissemination"
	}
	return ""
}

// String returns the collective's name.
func (c Collective) String() string { return string(c) }

// Collectives lists every collective, in a stable order.
var Collectives = []Collective{Allreduce, Bcast, Reduce, Allgather, ReduceScatter, Gather, Scatter, Alltoall, Barrier}

// Params sizes one collective call.
type Params struct {
	Ranks int
	// Count is the number of elements: the vector on each rank (allreduce,
	// bcast); the whole gathered vector, split as evenly as possible into
	// one block per rank (allgather's output, reduce_scatter's input); the
	// elements each rank sends to each rank (alltoall); gather and scatter
	// count the whole vector at the root, one block per rank. Barrier
	// ignores it.
	Count    int64
	ElemSize int64 // bytes per element; 0 means 8
	Root     int   // the root of rooted collectives
	// Segment is the pipeline segment, in elements, of pipelined algorithms;
	// 0 lets the algorithm choose (see each one's summary).
	Segment int64
	// NodeSize is how many consecutive ranks share a node, for hierarchical
	// algorithms; the caller derives it from the machine.
	NodeSize int
	// UnevenNodes says that the nodes hold unequal numbers of ranks where
	// the placement interleaves them (Ranks % NodeSize says it for blocks
	// of consecutive ranks), for the libraries' choices that check it.
	UnevenNodes bool
	// Inner names the allreduce algorithm that hierarchical and SUARA run
	// inside each subset ("" chooses by size).
	Inner string
	// Intra names the reduce and bcast pair hierarchical runs inside each
	// node ("" means binomial).
	Intra string
	// Groups is SUARA2's G (the grid is G x p/G); 0 picks the most square
	// grid. Steps is SUARA's L (0 means 2).
	Groups, Steps int
	// GroupSize is how many consecutive ranks share a Dragonfly group (or
	// any group of equals), for group-aligned algorithms.
	GroupSize int
	// Overlap relaxes the steps algorithms write as MPI_Sendrecv (ring,
	// recursive doubling, pairwise, Bruck, ...): by default a step waits
	// for the previous step's send and receive, as MPI_Sendrecv returns
	// only when both are complete; with Overlap it waits for the receive
	// alone, as if the send were an MPI_Isend waited for at the end.
	Overlap bool
	// ZeroCountSends runs a call of no elements as its algorithm does, with
	// empty messages, where the library does (MPICH 4.3.2's MPI_Allreduce,
	// whose binding and algorithms do not return early); otherwise such a
	// call sends nothing (SendsNothing).
	ZeroCountSends bool
	// Library is the library release whose rules an MPI library's
	// composite algorithm follows for its parts: "" for the one it is
	// named after (MPICH 3.3.2 for smp, Open MPI 4.1.8 for
	// nonoverlapping), "mpich4" for MPICH 4.3.2, "ompi40" for Open MPI
	// 4.0.7.
	Library string
}

func (p Params) elemSize() int64 {
	if p.ElemSize == 0 {
		return 8
	}
	return p.ElemSize
}

// Algorithm is one way to carry out a collective.
type Algorithm struct {
	Collective Collective
	Name       string
	Summary    string // one paragraph: the idea, its steps and when it wins
	Cost       string // its alpha-beta-gamma cost, for reading
	newRank    func(p Params, r int) stepper
	// lookahead lets a rank read further ahead than MPI program order
	// (sim.Schedule.Lookahead): pipelined algorithms keep several segments
	// in flight in both directions at once.
	lookahead int
	// emptyMessages: the algorithm's messages carry no bytes (barriers); in
	// data mode they still carry knowledge vectors.
	emptyMessages bool
	// needs, when set, refuses parameters the algorithm cannot run with,
	// saying what to use instead.
	needs func(p Params) error
	// scratch gives the sizes of the extra buffers each rank needs (after
	// the collective's own buffers).
	scratch func(p Params) []int64
}

// oneScratch is one scratch buffer the size of the vector.
func oneScratch(p Params) []int64 { return []int64{p.Count} }

// Unsupported is the error of an algorithm asked to run with parameters
// it cannot handle (an odd rank count for neighbor exchange, say).
type Unsupported struct{ Reason string }

func (e *Unsupported) Error() string { return e.Reason }

// ID is "collective/name".
func (a *Algorithm) ID() string { return string(a.Collective) + "/" + a.Name }

// Build returns the algorithm's schedule for p. Programs are generated as
// ranks advance, so Build itself costs nothing per op.
func (a *Algorithm) Build(p Params) (sim.Schedule, error) {
	if err := p.check(a.Collective); err != nil {
		return sim.Schedule{}, fmt.Errorf("%s: %w", a.ID(), err)
	}
	if a.needs != nil {
		if err := a.needs(p); err != nil {
			return sim.Schedule{}, fmt.Errorf("%s: %w", a.ID(), err)
		}
	}
	sem := semanticsOf[a.Collective]
	es := p.elemSize()
	if SendsNothing(a.Collective, p) {
		return sim.Schedule{
			Name:     a.ID(),
			Ranks:    p.Ranks,
			Rank:     func(int) sim.Source { return newStream(nothing{}, es, p.Overlap) },
			Buffers:  func(r int) []int64 { return a.buffers(p) },
			ReduceOp: sem.reduce,
		}, nil
	}
	if a.emptyMessages {
		es = 0
		p.Count = int64(p.Ranks) // the knowledge vector
	}
	return sim.Schedule{
		Name:      a.ID(),
		Ranks:     p.Ranks,
		Rank:      func(r int) sim.Source { return newStream(a.newRank(p, r), es, p.Overlap) },
		Buffers:   func(r int) []int64 { return a.buffers(p) },
		ReduceOp:  sem.reduce,
		Lookahead: a.lookahead,
	}, nil
}

// SendsNothing reports whether a call of c with p returns at once, sending
// nothing: a call of no elements, which Open MPI's MPI_ functions (every
// collective's, 4.0 to 5.0: ompi/mpi/c) and MPICH's (3.3.2's; 4.3.2's but
// MPI_Allreduce, see Params.ZeroCountSends) return from before any
// algorithm runs, as NCCL does; collsim's algorithms sent empty messages,
// a 6-rank Bruck allgather 18 of them, 3 us on the default machine (an
// audit). A barrier carries no elements and always runs.
func SendsNothing(c Collective, p Params) bool {
	return p.Count == 0 && c != Barrier && !p.ZeroCountSends
}

// nothing is the program of a call that sends nothing.
type nothing struct{}

func (nothing) step(*builder) bool { return false }

func (p Params) check(c Collective) error {
	switch {
	case p.Ranks < 1 || p.Ranks > sim.MaxRanks:
		return fmt.Errorf("ranks must be 1..%d, not %d", sim.MaxRanks, p.Ranks)
	case p.Count < 0:
		return fmt.Errorf("element count must not be negative, not %d", p.Count)
	case p.ElemSize < 0:
		return fmt.Errorf("element size must not be negative, not %d", p.ElemSize)
	case p.Root < 0 || p.Root >= p.Ranks:
		return fmt.Errorf("root %d is not a rank of 0..%d", p.Root, p.Ranks-1)
	case p.Segment < 0:
		return fmt.Errorf("segment must not be negative, not %d elements", p.Segment)
	case c == Alltoall && p.Count > (1<<62)/int64(p.Ranks):
		return fmt.Errorf("alltoall of %d elements per pair on %d ranks overflows", p.Count, p.Ranks)
	case p.Count > (1<<62)/p.elemSize():
		return fmt.Errorf("%d elements of %d B are more than 2^62 bytes", p.Count, p.elemSize())
	}
	return nil
}

// CheckParams reports what makes p a call no algorithm of a's collective
// can be given (ranks, counts, sizes, root and segment out of range), as
// Build does before anything else.
func (a *Algorithm) CheckParams(p Params) error {
	if err := p.check(a.Collective); err != nil {
		return fmt.Errorf("%s: %w", a.ID(), err)
	}
	return nil
}

// buffers is the collective's buffers plus the algorithm's scratch.
func (a *Algorithm) buffers(p Params) []int64 {
	b := semanticsOf[a.Collective].buffers(p)
	if a.scratch != nil {
		b = append(b, a.scratch(p)...)
	}
	return b
}

// CheckData refuses a data-mode run of a with parameters p whose buffers,
// the collective's and the algorithm's scratch, pass MaxDataElements in
// all (CheckData counted the collective's alone, and an allgather_reduce
// allreduce on 1,000 ranks, whose scratch holds every rank's vector on
// each, grew past 22 GB: an audit).
func (a *Algorithm) CheckData(p Params) error {
	if err := CheckData(a.Collective, p); err != nil {
		return err
	}
	return fitData(p, a.buffers(p))
}

// Data allocates and fills the buffers of a data-mode run of a with
// parameters p (the collective's buffers and the algorithm's scratch).
func (a *Algorithm) Data(p Params, seed uint64) (*Data, error) {
	if err := a.CheckData(p); err != nil {
		return nil, err
	}
	d, err := NewData(a.Collective, p, seed)
	if err != nil {
		return nil, err
	}
	a.addScratch(d, p)
	return d, nil
}

// Origins is Data with NewOrigins' inputs: each element's value is the set
// of ranks whose input it holds.
func (a *Algorithm) Origins(p Params) (*Data, error) {
	d, err := NewOrigins(a.Collective, p)
	if err != nil {
		return nil, err
	}
	a.addScratch(d, p)
	return d, nil
}

func (a *Algorithm) addScratch(d *Data, p Params) {
	if a.scratch != nil {
		for r := range d.Buffers {
			for _, n := range a.scratch(p) {
				d.Buffers[r] = append(d.Buffers[r], make([]uint64, n))
			}
		}
	}
}

// SizeBytes is the message size of the call as nccl-tests reports it: the
// vector for allreduce and bcast, the whole gathered vector for allgather
// and reduce_scatter, what each rank sends in all for alltoall.
func (p Params) SizeBytes(c Collective) int64 {
	switch c {
	case Alltoall:
		return p.Count * int64(p.Ranks) * p.elemSize()
	case Barrier:
		return 0
	}
	return p.Count * p.elemSize()
}

// BusFactor converts algorithm bandwidth to bus bandwidth (nccl-tests
// PERFORMANCE.md): the fraction of the data each rank's link must carry
// for an optimal algorithm, so that bus bandwidth is comparable to link
// bandwidth whatever the rank count.
func BusFactor(c Collective, ranks int) float64 {
	p := float64(ranks)
	switch c {
	case Allreduce:
		return 2 * (p - 1) / p
	case Allgather, ReduceScatter, Alltoall, Gather, Scatter:
		return (p - 1) / p
	}
	return 1
}

// registry holds every algorithm. It is filled in init because some
// algorithms (hierarchical, SUARA) look others up when they build.
var registry []Algorithm

func init() {
	registry = []Algorithm{
		{Collective: Allreduce, Name: "ring",
			Summary: "Reduce-scatter then allgather around a logical ring (Patarasuk and Yuan 2009). The vector is cut into p blocks; in each of p-1 steps every rank sends one block to its right neighbour and reduces the block from its left, so that each rank ends up owning one fully reduced block, which then circulates p-1 more steps. Every link carries 2(p-1)/p of the vector, the bandwidth optimum, but latency grows as 2(p-1) alpha: the choice for large vectors.",
			Cost:    "2(p-1)a + 2(p-1)/p nb + (p-1)/p ng, with n/p rounded up to whole elements",
			newRank: func(p Params, r int) stepper { return &ringAllreduce{r: r, p: p.Ranks, n: p.Count, last: noEnd} }},
		{Collective: Allreduce, Name: "recursive_doubling",
			Summary: "In round k, ranks at distance 2^k exchange their whole vectors and reduce (Thakur, Rabenseifner, Gropp 2005). log2 p rounds of full vectors: the fewest messages, so the choice for short vectors. For p not a power of two the surplus ranks first fold their vector into a partner and get the result back at the end: two steps more, the first overlapped by the ranks that skip it.",
			Cost:    "log2 p (a + nb + ng) for p a power of two; otherwise between (floor(log2 p)+1)(a + nb + ng) and that plus a + nb (the unfold): ranks that skip the fold start their rounds early",
			newRank: func(p Params, r int) stepper {
				return &recursiveDoubling{foldPhase: newFold(r, p.Ranks), n: p.Count, last: noEnd}
			}},
		{Collective: Allreduce, Name: "rabenseifner",
			Summary: "A reduce-scatter by recursive halving (partners exchange half of what they hold, distance doubling each round) followed by an allgather that retraces those steps backwards, distance halving (Rabenseifner 2004; MPICH's order). Bandwidth-optimal like the ring but with 2 log2 p latency terms: the MPI libraries' choice for medium and large vectors. Non-powers of two fold first, as in recursive doubling (MPICH's fold: the even rank of a pair sends its vector to the odd one; -a ompi runs Open MPI's, where the pair swap halves, each reduces one, and the odd rank returns its half to the even one, which goes on).",
			Cost:    "2 log2 p a + 2(p-1)/p nb + (p-1)/p ng, p the largest power of two up to the ranks; plus a fold (a + nb + ng) and an unfold (a + nb) when the ranks are not a power of two, where it is a bound: at least that, at most that plus nb (the rank that takes in the fold takes in its first half at the same time, and sends the unfold while its last half leaves: two waits at its port of up to nb/2 each)",
			newRank: func(p Params, r int) stepper {
				return newRabenseifner(p, r)
			}},
		{Collective: Allreduce, Name: "reduce_bcast",
			Summary: "A binomial-tree reduce to rank 0 followed by a binomial-tree broadcast from rank 0. Simple and latency-light, but every level moves the whole vector twice and the root does all the final reductions: a baseline, and the algorithm of the oldest MPI libraries.",
			Cost:    "ceil(log2 p)(2a + 2nb + ng), exact for powers of two, an upper bound otherwise",
			newRank: func(p Params, r int) stepper {
				return &reduceBcast{red: newBinomialReduce(r, p.Ranks, 0, p.Count, 0)}
			}},
		{Collective: Bcast, Name: "binomial",
			Summary: "The root sends to the ranks at relative distance 2^(ceil(log2 p)-1), ..., 2, 1 (largest first: p/2, p/4, ..., 1 for a power of two); every rank that has the data forwards it the same way within its subtree. ceil(log2 p) levels of whole-vector messages: ideal for short messages, wasteful of bandwidth for long ones.",
			Cost:    "ceil(log2 p)(a + nb), exact for powers of two, an upper bound otherwise",
			newRank: func(p Params, r int) stepper {
				bc := newBinomialBcast(r, p.Ranks, p.Root, p.Count, 0, nil)
				return &bc
			}},
		{Collective: Allgather, Name: "ring",
			Summary: "Each rank passes the newest block it has to its right neighbour: p-1 steps of one block each. Bandwidth-optimal ((p-1)/p of the data per link), latency linear in p.",
			Cost:    "(p-1)a + (p-1)/p nb, with n/p rounded up to whole elements",
			newRank: func(p Params, r int) stepper { return &ringAllgather{r: r, p: p.Ranks, n: p.Count, last: noEnd} }},
		{Collective: ReduceScatter, Name: "ring",
			Summary: "The reduce-scatter half of the ring allreduce: in each of p-1 steps every rank sends a partial block to its right neighbour and reduces the one from its left; rank r ends with block r fully reduced.",
			Cost:    "(p-1)a + (p-1)/p n(b + g), with n/p rounded up to whole elements",
			newRank: func(p Params, r int) stepper {
				return &ringReduceScatter{r: r, p: p.Ranks, n: p.Count, last: noEnd}
			}},
		{Collective: Alltoall, Name: "pairwise",
			Summary: "p-1 steps in which every rank exchanges one block with one partner: XOR partners for powers of two, otherwise send to r+i and receive from r-i (MPICH's pairwise exchange; Open MPI's, which -a ompi, ompi40 and ompi5 run, takes r+i and r-i at every p and copies its own block last). One message in and one out per step, so no port is overloaded: the choice for long messages.",
			Cost:    "(p-1)(a + cb), c the block per pair",
			newRank: func(p Params, r int) stepper {
				return newPairwiseAlltoall(p, r)
			}},
		{Collective: Alltoall, Name: "two_procs",
			Summary: "Open MPI's alltoall for two ranks, which its fixed rules pick on 2 ranks (Open MPI 4.0's at every size, 4.1's and 5.0's at some): one exchange of blocks with the other rank, then the rank's own block copied locally. The same messages as pairwise on 2 ranks, whose copy comes first. Runs on 2 ranks only.",
			Cost:    "a + cb, c the block per pair (the local copy costs no network)",
			newRank: func(p Params, r int) stepper { return &twoProcsAlltoall{r: r, c: p.Count} },
			needs: func(p Params) error {
				if p.Ranks != 2 {
					return &Unsupported{Reason: fmt.Sprintf("two_procs runs on 2 ranks, not %d; use pairwise or linear", p.Ranks)}
				}
				return nil
			}},
		{Collective: Alltoall, Name: "linear",
			Summary: "Every rank posts all its receives, from r+1, r+2, ..., and all its sends, to r-1, r-2, ..., at once (Open MPI's basic linear alltoall). Nothing waits for anything but the NICs: one latency, then the sends stream out back to back. Good for small messages and few ranks; with many ranks it floods the network with p^2 messages at once, which contention punishes (the analytic model cannot show that; the flow model will).",
			Cost:    "a + (p-1)cb, c the block per pair",
			newRank: func(p Params, r int) stepper { return &linearAlltoall{r: r, p: p.Ranks, c: p.Count} }},
		{Collective: Allreduce, Name: "linear",
			Summary: "Every rank sends its vector to rank 0, which posts every receive at once, reduces the vectors as they arrive and sends the result back to everyone. 2(p-1) messages through one NIC: only for very few ranks, and as a baseline (Open MPI's, which takes one vector at a time, is basic_linear).",
			Cost:    "2a + nb + ng + (p-2)max(nb, ng) + (p-1)nb through rank 0's port: latency once each way, the messages overlapping",
			newRank: func(p Params, r int) stepper { return &linearRooted{c: Allreduce, r: r, p: p.Ranks, n: p.Count} }},
		{Collective: Allreduce, Name: "basic_linear",
			Summary: "Open MPI's basic_linear: a linear reduce to rank 0 whose receives go one at a time, from rank p-1 down, each posted once the vector before it is reduced (ompi_coll_base_reduce_intra_basic_linear), then a linear bcast of the result, every send posted at once. What Open MPI's algorithm 1 and its Rabenseifner's fallback run.",
			Cost:    "between linear's 2a + nb + ng + (p-2)max(nb, ng) + (p-1)nb and 2a + (p-1)(2a + nb + ng) + (p-1)nb: which vector the port takes in first, and each rendezvous handshake, set the reduce's time",
			newRank: func(p Params, r int) stepper {
				return &linearRooted{c: Allreduce, r: r, p: p.Ranks, n: p.Count, ompi: true}
			}},
		{Collective: Allreduce, Name: "linear_pipeline",
			Summary: "Linear Pipelining: the vector is cut into segments (--segment; collsim run chooses it from the machine's costs, 64 KiB elsewhere) that are reduced along the chain of ranks towards rank 0 and broadcast back down the chain, each segment going down as soon as rank 0 has reduced it. Every link carries each segment once each way, so for long vectors the time approaches 2n beta whatever p: nearly flat in p, where trees grow with log p.",
			Cost:    "about 2(p-1)(a + sb) + (p-1)sg + (k-1)max(2sb, sg) for k segments of s bytes: latency once per hop",
			newRank: func(p Params, r int) stepper {
				return newChain(Allreduce, Params{Ranks: p.Ranks, Count: p.Count, ElemSize: p.ElemSize, Segment: p.Segment}, r)
			}, lookahead: 1024},
		{Collective: Allreduce, Name: "hierarchical",
			Summary: "HAN-style (Luo et al. 2020): for each segment (--segment, default 64 KiB), a reduce inside each node to its first rank, an allreduce among those leaders, and a bcast inside the node; the algorithm at each level is an option (--intra: binomial by default, or linear, chain, adapt, segmented_binary; --inner for the leaders: recursive_doubling up to 64 KiB, ring above, by default). Segments overlap, so intra-node and inter-node stages run at the same time. Needs the machine's ranks per node (--node-size, or a machine with nodes): without it there is no hierarchy to use and the algorithm refuses.",
			Cost:    "about T_reduce,intra(s) + T_allreduce,inter(s) + T_bcast,intra(s) + (k-1) max stage, for k segments of s",
			newRank: func(p Params, r int) stepper { st, _ := newHierarchical(p, r); return st }, lookahead: 256,
			scratch: func(p Params) []int64 {
				// The leaders' allreduce of each segment has its own part of
				// the scratch (segments overlap in time).
				seg := p.Segment
				if seg == 0 {
					seg = max(1, (64<<10)/p.elemSize())
				}
				sc := innerScratch(p, []int{(p.Ranks + max(p.NodeSize, 1) - 1) / max(p.NodeSize, 1)}, min(seg, max(p.Count, 1)))
				if len(sc) == 0 {
					return nil
				}
				per := slices.Max(sc)
				for i := range sc {
					sc[i] = per * int64(segments(p.Count, seg))
				}
				return sc
			},
			needs: func(p Params) error {
				if p.NodeSize < 1 {
					return &Unsupported{Reason: "hierarchical needs ranks per node (--node-size, or a machine config with nodes or several ranks per host); on a flat machine use ring or rabenseifner"}
				}
				_, err := buildHierarchical(p, 0, true)
				return err
			}},
		{Collective: Allreduce, Name: "suara",
			Summary: "SUARA: L serial steps (--steps, default 2) on a grid of the ranks; in step i, the ranks that differ only in coordinate i allreduce the whole vector together, all subsets at once (--inner picks their algorithm). SUARA2 is L=2 on a G x Q grid (--groups G; by default run takes the grid and the subsets' algorithm its closed forms price fastest, and a schedule without a machine the most square grid). Each step runs on subsets of about p^(1/L) ranks, so latency terms shrink from p or log p of the whole job to L times those of a subset.",
			Cost:    "sum over steps of T_inner(p_i, n), p_i the grid's i-th dimension",
			newRank: func(p Params, r int) stepper { st, _ := newSuara(p, r); return st },
			scratch: func(p Params) []int64 {
				return innerScratch(p, suaraGrid(p.Ranks, max(p.Steps, 2), p.Groups), p.Count)
			},
			needs: func(p Params) error {
				// Each rule says what is wrong with what was given (the
				// one message named --steps when only --groups was: a new
				// user's trial).
				switch {
				case p.Groups < 0 || p.Groups > 0 && p.Ranks%p.Groups != 0:
					return &Unsupported{Reason: fmt.Sprintf("suara with --groups %d: the groups must divide the %d ranks; use a divisor, or leave --groups out to pick the grid", p.Groups, p.Ranks)}
				case p.Steps < 0 || p.Steps == 1:
					return &Unsupported{Reason: fmt.Sprintf("suara with --steps %d: at least 2 steps (1 is a plain allreduce); use 2 or more, or leave --steps out for 2", p.Steps)}
				case p.Groups > 0 && p.Steps > 2:
					// --groups makes SUARA2's G x Q grid: --steps was
					// dropped without a word (an audit).
					return &Unsupported{Reason: fmt.Sprintf("suara with --groups %d and --steps %d: --groups sets SUARA2's grid of 2 steps (groups x ranks/groups); use one of them", p.Groups, p.Steps)}
				}
				_, err := newSuara(p, 0)
				return err
			}},
		{Collective: Allreduce, Name: "segmented_ring",
			Summary: "Open MPI's segmented ring: the ring's reduce-scatter run in phases, each on one piece of every block, then one ring allgather of whole blocks, so that the reductions move in bounded pieces. Segments of --segment elements (default 1 MiB worth) make count/(p x segment) phases (one more for a large remainder), each block cut in that many near-equal pieces; under p segments it is the ring. Open MPI 4.0 picks it with 1 MiB segments above P MiB; 4.1 picks it with segment size 0, which is the ring.",
			Cost:    "(phases + 1)(p-1)a + 2(p-1)/p nb + (p-1)/p ng",
			newRank: func(p Params, r int) stepper { return newSegmentedRing(p, r) }},
		{Collective: Bcast, Name: "linear",
			Summary: "The root sends the whole vector to every other rank in turn. p-1 messages through the root's port: fine for few ranks, the baseline otherwise.",
			Cost:    "a + (p-1)nb",
			newRank: func(p Params, r int) stepper {
				return &linearRooted{c: Bcast, r: r, p: p.Ranks, root: p.Root, n: p.Count}
			}},
		{Collective: Bcast, Name: "binary",
			Summary: "A binary tree: relative rank v receives from (v-1)/2 and forwards the whole vector to 2v+1 and 2v+2. Depth log2 p, two sends per level: a little slower than binomial for short messages, and its fixed fan-out is what segmented trees build on.",
			Cost:    "about floor(log2 p)(a + 2nb): a rank's second child has the vector nb after its first (latency overlaps the next send); priced rank by rank, exactly",
			newRank: func(p Params, r int) stepper { return &binaryBcast{r: r, p: p.Ranks, root: p.Root, n: p.Count} }},
		{Collective: Bcast, Name: "chain",
			Summary: "Pipelined chain (Linear Pipelining's bcast): segments of the vector (--segment; collsim run chooses it from the machine's costs, 64 KiB elsewhere) flow down the chain of ranks root, root+1, ...; every rank forwards segment k as soon as it has it. For long vectors the time is about n beta plus (p-1) segment times: nearly flat in p.",
			Cost:    "(p-1)(a + sb) + (k-1)sb for k segments of s bytes: latency once per hop",
			newRank: func(p Params, r int) stepper { return newChain(Bcast, p, r) }, lookahead: 64},
		{Collective: Bcast, Name: "scatter_allgather",
			Summary: "The root sends each rank its block of the vector, one message after another (a linear scatter), then the blocks circulate in a ring allgather (van de Geijn's broadcast, ring variant). Moves about 2n bytes per link whatever p: wins for long vectors, loses for short ones (p messages). The MPI libraries scatter by a binomial tree instead: scatter_ring_allgather.",
			Cost:    "at most a + (p-1)/p nb (the scatter: the root's sends follow one another, one latency) + (p-1)(a + nb/p) (the ring allgather), with n/p rounded up to whole elements",
			newRank: func(p Params, r int) stepper {
				return &scatterThen{r: r, p: p.Ranks, root: p.Root, n: p.Count, gather: &ringAllgather{r: r, p: p.Ranks, n: p.Count, last: noEnd}}
			}},
		{Collective: Reduce, Name: "binomial",
			Summary: "A binomial tree towards the root: relative rank v receives and reduces its children's partial sums (v+1, v+2, v+4, ... below its lowest set bit), then sends to its parent. ceil(log2 p) levels of whole vectors: the choice for short vectors.",
			Cost:    "ceil(log2 p)(a + nb + ng), exact for powers of two, an upper bound otherwise",
			newRank: func(p Params, r int) stepper {
				red := newBinomialReduce(r, p.Ranks, p.Root, p.Count, 0)
				return &red
			}},
		{Collective: Reduce, Name: "linear",
			Summary: "Every rank sends its vector to the root, which posts every receive at once and reduces the vectors as they arrive. p-1 messages through one port: only for few ranks (Open MPI's, which takes one vector at a time, is basic_linear).",
			Cost:    "a + nb + ng + (p-2)max(nb, ng): the root takes the vectors in one after another while it reduces the one before",
			newRank: func(p Params, r int) stepper {
				return &linearRooted{c: Reduce, r: r, p: p.Ranks, root: p.Root, n: p.Count}
			}},
		{Collective: Reduce, Name: "basic_linear",
			Summary: "Open MPI's basic_linear: every rank sends its vector to the root, which receives them one at a time, from rank p-1 down, each receive posted once the vector before it is reduced (ompi_coll_base_reduce_intra_basic_linear). What Open MPI's algorithm 1 and its Rabenseifner reduce's fallback run.",
			Cost:    "between linear's a + nb + ng + (p-2)max(nb, ng) and a + (p-1)(2a + nb + ng): which vector the port takes in first, and each rendezvous handshake, set its time (exact on 2 ranks)",
			newRank: func(p Params, r int) stepper {
				return &linearRooted{c: Reduce, r: r, p: p.Ranks, root: p.Root, n: p.Count, ompi: true}
			}},
		{Collective: Reduce, Name: "chain",
			Summary: "Pipelined chain: segments (--segment; collsim run chooses it from the machine's costs, 64 KiB elsewhere) are reduced along the ranks towards the root, each rank adding segment k of its neighbour's partial sum to its own and passing it on. For long vectors about n(beta + gamma) plus (p-1) segment times.",
			Cost:    "(p-1)(a + sb + sg) + (k-1)max(sb, sg) for k segments of s bytes: latency once per hop",
			newRank: func(p Params, r int) stepper { return newChain(Reduce, p, r) }, lookahead: 64},
		{Collective: Allgather, Name: "bruck",
			Summary: "ceil(log2 p) steps at distances 1, 2, 4, ...: each rank sends all it has gathered to r-2^k and receives as much from r+2^k (Bruck et al. 1997; in the last step, where p is not a power of two, only the p-2^k blocks still missing), then rotates its blocks home. The fewest messages for any p (no power of two needed): the choice for short messages.",
			Cost:    "ceil(log2 p) a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper { return &bruckAllgather{r: r, p: p.Ranks, n: p.Count, last: noEnd} },
			scratch: oneScratch},
		{Collective: Allgather, Name: "neighbor_exchange",
			Summary: "For an even number of ranks: pairs swap their blocks, then each step passes the two newest blocks to the neighbour on alternate sides (Chen et al. 2005). p/2 steps instead of the ring's p-1, same bandwidth. An odd number of ranks is refused: use ring.",
			Cost:    "(p/2)a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper { return newNeighborExchange(r, p.Ranks, p.Count) },
			needs: func(p Params) error {
				if p.Ranks%2 != 0 {
					return &Unsupported{Reason: fmt.Sprintf("neighbor exchange needs an even number of ranks, not %d; use allgather/ring or allgather/bruck", p.Ranks)}
				}
				return nil
			}},
		{Collective: ReduceScatter, Name: "pairwise",
			Summary: "p-1 steps: in step i rank r sends its partial block r+i to rank r+i and reduces its own block from rank r-i. One message each way per step, bandwidth-optimal, latency linear in p: for long vectors and any p.",
			Cost:    "(p-1)(a + (n/p)(b + g))",
			newRank: func(p Params, r int) stepper {
				return &pairwiseReduceScatter{r: r, p: p.Ranks, n: p.Count, last: noEnd}
			}},
		{Collective: Gather, Name: "linear",
			Summary: "Every rank sends its block to the root, which receives them all at once. p-1 messages into one port.",
			Cost:    "a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper {
				return &linearRooted{c: Gather, r: r, p: p.Ranks, root: p.Root, n: p.Count}
			}},
		{Collective: Scatter, Name: "linear",
			Summary: "The root sends block j to rank j, all at once. p-1 messages out of one port.",
			Cost:    "a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper {
				return &linearRooted{c: Scatter, r: r, p: p.Ranks, root: p.Root, n: p.Count}
			}},
		{Collective: Gather, Name: "basic_linear",
			Summary: "Every rank sends its block to the root, which receives them in rank order, one blocking receive after another. Open MPI's basic_linear: the same as the linear gather for eager blocks; above the eager limit each block's handshake waits for the receive before it, so the blocks arrive one after another.",
			Cost:    "a + (p-1)/p nb; above the eager limit (p-1)(2a + nb/p) + a",
			newRank: func(p Params, r int) stepper {
				return &rankOrderLinear{c: Gather, r: r, p: p.Ranks, root: p.Root, n: p.Count}
			}},
		{Collective: Scatter, Name: "basic_linear",
			Summary: "The root sends each rank its block in rank order 0, 1, ..., p-1, one blocking send after another. Open MPI's basic_linear: back to back out of one port, and above the eager limit each send's handshake starts only once the send before it is complete.",
			Cost:    "a + (p-1)/p nb, plus 2a for each block above the eager limit",
			newRank: func(p Params, r int) stepper {
				return &rankOrderLinear{c: Scatter, r: r, p: p.Ranks, root: p.Root, n: p.Count}
			}},
		{Collective: Gather, Name: "linear_sync",
			Summary: "The root takes the ranks one at a time, in rank order: it sends each an empty go-ahead and waits for the first segment of its block (--segment elements; by default the whole block, then an empty message for the rest) before the next; the rest arrives meanwhile. Open MPI's linear_sync: p-1 round trips in a row, but never more than one rank's first segment heading for the root at once.",
			Cost:    "(p-1)(2a + nb/p), one go-ahead and one block a rank, one after another",
			newRank: func(p Params, r int) stepper {
				return &linearSyncGather{r: r, p: p.Ranks, root: p.Root, n: p.Count, seg: p.Segment}
			}},
		{Collective: Scatter, Name: "linear_nb",
			Summary: "The root posts a non-blocking send of every rank's block at once, to ranks 0, 1, ..., p-1 in turn, and waits for them all: p-1 messages out of one port. Open MPI's linear_nb (with its default of no limit on requests).",
			Cost:    "a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper {
				return &rankOrderLinear{c: Scatter, r: r, p: p.Ranks, root: p.Root, n: p.Count, nonblocking: true}
			}},
		{Collective: Barrier, Name: "tree",
			Summary: "Empty messages up a binomial tree to rank 0, then back down: 2 floor(log2 p) latencies (the deepest rank's hops, each way), fewer messages than dissemination (2(p-1) instead of p log2 p).",
			Cost:    "2 floor(log2 p) a",
			newRank: func(p Params, r int) stepper {
				return &reduceBcast{red: newBinomialReduce(r, p.Ranks, 0, p.Count, 0)}
			}, emptyMessages: true},
		{Collective: Allgather, Name: "recursive_doubling",
			Summary: "Partners at distance 1, 2, 4, ... exchange everything they have gathered, doubling it each time: log2 p steps, bandwidth-optimal (Thakur et al. 2005; MPICH's choice for powers of two under 512 KiB). Powers of two only: otherwise it refuses and names bruck or ring.",
			Cost:    "log2 p a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper { return &rdAllgather{r: r, p: p.Ranks, n: p.Count, last: noEnd} },
			needs:   pow2Only("allgather/bruck or allgather/ring")},
		{Collective: ReduceScatter, Name: "recursive_halving",
			Summary: "At distances p/2, p/4, ..., 1 partners each keep the half of their range that holds their own blocks and reduce the partner's copy of it: log2 p steps, bandwidth-optimal (Thakur et al. 2005; MPICH's choice under 512 KiB). For p not a power of two the surplus ranks fold into a partner first and get their block back at the end.",
			Cost:    "log2 p a + (p-1)/p n(b + g) for p a power of two; otherwise a fold (about a + nb + ng) and a return (about a + nb/p) more, with no closed form in collsim yet",
			newRank: func(p Params, r int) stepper {
				return &rhReduceScatter{foldPhase: newFold(r, p.Ranks), n: p.Count, last: noEnd}
			}},
		{Collective: Reduce, Name: "rabenseifner",
			Summary: "MPICH's long-message reduce (Rabenseifner 2004; reduce_intra_reduce_scatter_gather.c), step for step: for p not a power of two each odd rank below 2(p-pof2) first hands its vector to the even rank below it; then a reduce-scatter by recursive halving over the remaining power of two of ranks, the vector in that many blocks, and a binomial gather of the blocks straight to the root (a folded-out root first gets new rank 0's block and takes its place). Bandwidth-optimal for long vectors.",
			Cost:    "2 log2 p a + 2(p-1)/p nb + (p-1)/p ng (+ a + nb for a root other than 0)",
			newRank: func(p Params, r int) stepper {
				return newRedScatGather(p, r)
			}},
		{Collective: Bcast, Name: "scatter_allgather_rd",
			Summary: "The root sends each rank its block (a linear scatter), then a recursive-doubling allgather rebuilds the vector everywhere (van de Geijn). log2 p allgather steps instead of the ring's p-1. Powers of two only. MPICH's and Open MPI's version, with a binomial scatter and any p, is scatter_rd_allgather.",
			Cost:    "about (p-1)(a + nb/p) + log2 p a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper {
				return &scatterThen{r: r, p: p.Ranks, root: p.Root, n: p.Count, gather: &rdAllgather{r: r, p: p.Ranks, n: p.Count, last: noEnd}}
			},
			needs: pow2Only("bcast/scatter_allgather")},
		{Collective: Bcast, Name: "knomial",
			Summary: "A radix-4 generalisation of the binomial tree: each rank forwards to up to 3 children per level, so the tree has log4 p levels instead of log2 p (Open MPI's knomial). Fewer levels for short messages, more sends per rank.",
			Cost:    "at most ceil(log4 p)(a + 3nb): a rank's j-th child has the vector a + j nb after it (exact, rank by rank, in collsim model)",
			newRank: func(p Params, r int) stepper { return &knomialBcast{r: r, p: p.Ranks, root: p.Root, k: 4, n: p.Count} }},
		{Collective: Bcast, Name: "adapt",
			Summary: "ADAPT's event-driven segmented binary tree (Luo et al. 2018): each rank keeps up to 3 segments' receives posted and 2 sends in flight per peer, as Open MPI's coll/adapt does, and forwards segment k to its children the moment it arrives, with no per-step synchronisation, so a delayed rank holds up only what passes through it. Compare bcast/pipelined_binary, Open MPI's segmented tree, under noise (collsim study noise). Open MPI's coll/adapt defaults differ: a binomial tree and no segments for a bcast.",
			Cost:    "about (depth + k - 1) segment times, as the lock-step tree without noise",
			newRank: func(p Params, r int) stepper { return newSegmentedTree(Bcast, false, p, r) }, lookahead: 1024},
		{Collective: Bcast, Name: "segmented_binary",
			Summary: "The classic lock-step segmented binary tree: segment k+1 starts on a rank only when all of its segment-k operations are done (an MPI_Waitall per step). Slower than Open MPI's segmented tree (bcast/pipelined_binary), which keeps the next segment's receive posted.",
			Cost:    "about (depth + k - 1) segment times",
			newRank: func(p Params, r int) stepper { return newSegmentedTree(Bcast, true, p, r) }},
		{Collective: Bcast, Name: "pipelined_binary",
			Summary: "Open MPI's segmented binary-tree bcast (ompi_coll_base_bcast_intra_bintree, run by ompi_coll_base_bcast_intra_generic): a rank keeps two receives posted, segment k+1's before it waits for segment k's, sends segment k to its children once it is in, and waits for those sends before posting the next receive. Between the lock-step tree (bcast/segmented_binary) and ADAPT's windows (bcast/adapt): the fair baseline for ADAPT. Segments of --segment elements (default 64 KiB worth).",
			Cost:    "about (depth + k - 1) segment times, as the lock-step tree without noise",
			newRank: func(p Params, r int) stepper { return newPipelinedBinary(p, r) }},
		{Collective: Reduce, Name: "adapt",
			Summary: "ADAPT's event-driven segmented binary-tree reduce: each rank keeps up to 3 segments' receives posted per child (2 sends in flight) and sends segment k up as soon as every child's copy of it is reduced. Open MPI's coll/adapt defaults differ: a binomial tree and 163,740-byte segments.",
			Cost:    "about (depth + k - 1) segment times with reduction",
			newRank: func(p Params, r int) stepper { return newSegmentedTree(Reduce, false, p, r) }, lookahead: 1024},
		{Collective: Reduce, Name: "segmented_binary",
			Summary: "The lock-step segmented binary-tree reduce: segment k+1 starts only when everything of segment k on this rank is done.",
			Cost:    "about (depth + k - 1) segment times with reduction",
			newRank: func(p Params, r int) stepper { return newSegmentedTree(Reduce, true, p, r) }},
		{Collective: Reduce, Name: "pipelined_binary",
			Summary: "Open MPI's segmented binary-tree reduce (ompi_coll_base_reduce_intra_binary, run by ompi_coll_base_reduce_generic): a rank takes each segment's children one after another, posting the next child's (or next segment's) receive into a second buffer before it waits for the one before and reduces it, and sends a segment to its parent with a blocking send once its last child is reduced; a leaf sends its segments one blocking send after another. Segments of --segment elements (default 64 KiB worth).",
			Cost:    "about (depth + k - 1) segment times with reduction, as the lock-step tree",
			newRank: func(p Params, r int) stepper { return newPipelinedReduce(p, r) },
			scratch: pipelinedReduceScratch},
		{Collective: Reduce, Name: "segmented_binomial",
			Summary: "Open MPI's binomial reduce given a segment size (ompi_coll_base_reduce_intra_binomial, which Open MPI 4.0 calls with 1 KiB segments): reduce/binomial's tree, relative rank v reducing segment k from its children v+1, v+2, v+4, ... and sending it on, in lock step: segment k+1 starts only when everything of segment k on this rank is done. Segments of --segment elements (default 64 KiB worth).",
			Cost:    "about (depth + k - 1) segment times with reduction",
			newRank: func(p Params, r int) stepper { return newSegmentedBinomial(p, r) }},
		{Collective: Alltoall, Name: "group_aligned",
			Summary: "Pairwise exchange in an order aligned with the machine's groups (Dragonfly groups, --group-size, default from the machine): in each run of group-size steps every rank of group g exchanges with group g+d, so the traffic follows the groups' all-to-all wiring instead of loading all global links at once. Needs the rank count to be a multiple of the group size.",
			Cost:    "(p-1)(a + cb) without contention, as pairwise",
			newRank: func(p Params, r int) stepper {
				return &groupAligned{r: r, p: p.Ranks, gs: p.GroupSize, c: p.Count, last: noEnd}
			},
			needs: func(p Params) error {
				if p.GroupSize < 1 || p.Ranks%p.GroupSize != 0 {
					return &Unsupported{Reason: fmt.Sprintf("group_aligned needs ranks in whole groups (--group-size, or a dragonfly machine): %d ranks, group size %d; use alltoall/pairwise", p.Ranks, p.GroupSize)}
				}
				return nil
			}},
		{Collective: Gather, Name: "binomial",
			Summary: "A binomial tree towards the root over ranks relative to it: the rank whose lowest set bit is m receives its children's subtrees (relative ranks v+1, v+2, v+4, ...) one after another, then sends its subtree's blocks to v-m; log2 p steps, growing messages. MPICH's gather, and Open MPI's binomial one (in-order binomial tree); with a root other than 0 the subtrees travel in a scratch copy of the vector rotated to start at the root, as in their temporary buffers.",
			Cost:    "log2 p a + (p-1)/p nb for p a power of two dividing the count (no closed form in collsim for other calls yet)",
			newRank: func(p Params, r int) stepper {
				return newBinomialGatherScatter(Gather, p, r)
			},
			scratch: binomialScratch},
		{Collective: Scatter, Name: "binomial",
			Summary: "The binomial gather run backwards: the root hands each child its subtree's blocks, largest first, and each rank does the same once it has its own subtree; log2 p steps, shrinking messages. MPICH's scatter, and Open MPI's binomial one; ranks relative to the root, as in the gather.",
			Cost:    "log2 p a + (p-1)/p nb for p a power of two dividing the count (no closed form in collsim for other calls yet)",
			newRank: func(p Params, r int) stepper {
				return newBinomialGatherScatter(Scatter, p, r)
			},
			scratch: binomialScratch},
		{Collective: Alltoall, Name: "bruck",
			Summary: "Bruck et al. 1997: after a local rotation, ceil(log2 p) rounds; in round k every rank sends to r+2^k, in one message, all blocks whose index has bit k set, and receives as many from r-2^k; a final local permutation puts each block home. log p messages per rank instead of p-1, each carrying about half the data: the choice for short messages on many ranks (MPICH: at most 256 B per pair). As in MPICH, a round packs its blocks with one local copy (an indexed datatype) and receives straight into their places; the final permutation is two reversed copies (blocks 0..r land in r..0, the rest in p-1..r+1).",
			Cost:    "the sum over rounds of a + m cb, m the blocks sent in the round (those among 1..p-1 with the round's bit set): ceil(log2 p)(a + (p/2)cb) for powers of two",
			newRank: func(p Params, r int) stepper { return &bruckAlltoall{r: r, p: p.Ranks, c: p.Count} },
			scratch: func(p Params) []int64 { n := int64(p.Ranks) * p.Count; return []int64{n, n} }},
		{Collective: Alltoall, Name: "linear_sync",
			Summary: "The linear alltoall with at most 8 exchanges in flight: each batch of 8 partners (receives from r+i, sends to r-i) waits for the batch before it. Bounds the messages flooding the network at once. Open MPI's linear_sync keeps its window sliding instead, posting the next receive or send as soon as any of its own kind completes (ompi_request_wait_any), and its default window (coll_tuned_alltoall_max_requests 0) is every partner: the linear alltoall.",
			Cost:    "the sum over batches of 8 partners of a + k cb, k the batch's ranks other than itself: a + (p-1)cb up to 8 ranks, c the block per pair",
			newRank: func(p Params, r int) stepper { return &linearSync{r: r, p: p.Ranks, c: p.Count, window: 8} }},
		{Collective: Allreduce, Name: "allgather_reduce",
			Summary: "Every rank gathers every rank's whole vector (a ring allgather of p vectors into a scratch buffer), then reduces them locally (Open MPI's allgather_reduce). p times the data of a reduce-scatter, no dependency on a root: only for tiny vectors on few ranks.",
			Cost:    "(p-1)(a + nb) + (p-1)ng",
			newRank: func(p Params, r int) stepper { return &allgatherReduce{r: r, p: p.Ranks, n: p.Count, last: noEnd} },
			scratch: func(p Params) []int64 { return []int64{int64(p.Ranks) * p.Count} }},
		{Collective: Allreduce, Name: "double_binary_tree",
			Summary: "A double binary tree in the manner of NCCL's (Sanders, Speck and Traff 2009): half of the vector is reduced up and broadcast down one binary tree, the other half another tree, the mirror image of the first (rank r in one is rank p-1-r in the other), both in segments (--segment) so that reduce and bcast overlap. Log-depth latency, where the ring's grows with p: NCCL takes its tree for small and medium allreduces on many nodes, and the ring for large ones (its model, tuning.cc, prices the tree's allreduce at 0.92 of the bus bandwidth its channels give, not half the ring's: the two bandwidths come out close, and the tree's latency grows with log p). The trees are heap-numbered (children 2v+1 and 2v+2), so each rank is interior in at most one of them, and span all ranks; NCCL builds its trees otherwise: over the nodes (numbered by lowest set bit, the root with one child, the second tree shifted or mirrored by the parity of nodes), with a chain through each node's GPUs, so that far fewer tree edges cross nodes.",
			Cost:    "about 2 log2 p (a + sb) + 2nb + ng for segments of s (an interior rank takes in its tree's half from two children and sends it down to two)",
			newRank: func(p Params, r int) stepper { return newDoubleTree(p, r) }, lookahead: 1024},
		{Collective: Barrier, Name: "recursive_doubling",
			Summary: "Open MPI's recursive_doubling barrier: empty messages between partners at distance 1, 2, 4, ... among the first p' ranks, p' the largest power of two up to p: log2 p rounds for powers of two. Otherwise each rank r from p' on first sends to r-p' and waits for it, and that rank, after the rounds, answers with a synchronous send, which completes when its acknowledgement comes back (collsim sends the acknowledgement as an empty message).",
			Cost:    "log2 p a; otherwise up to (floor(log2 p) + 3) a, a rank r < p - p' waiting a for the message of r + p' and 2a for its synchronous send's acknowledgement",
			newRank: func(p Params, r int) stepper { return newOmpiBarrierRD(r, p.Ranks) }, emptyMessages: true},
		{Collective: Reduce, Name: "in_order_binary",
			Summary: "Open MPI's in-order binary tree: rank p-1 is the tree's root, lower ranks sit in its left subtree and higher ones in its right, recursively, so that reductions combine ranks in order (what non-commutative operations need); the tree's root hands the result to the reduce's root if they differ.",
			Cost:    "at most floor(log2 p)(a + 2nb + 2ng) (+ a + nb for a root other than p-1): at each level a rank takes its two children's vectors in one after the other and reduces each",
			newRank: func(p Params, r int) stepper { return newInOrderBinary(p, r) }},
		{Collective: Allgather, Name: "linear",
			Summary: "Every rank sends its block to rank 0, which sends the whole vector back to everyone (Open MPI's linear allgather): 2(p-1) messages through one port.",
			Cost:    "about 2a + (p-1)/p nb + (p-1)nb through rank 0's port",
			newRank: func(p Params, r int) stepper { return &gatherThenBcast{r: r, p: p.Ranks, n: p.Count} }},
		{Collective: ReduceScatter, Name: "non_overlapping",
			Summary: "A binomial reduce of the whole vector to rank 0, then rank 0 sends each rank its block (Open MPI's non-overlapping reduce_scatter): simple, and slow for long vectors.",
			Cost:    "ceil(log2 p)(a + nb + ng) + a + (p-1)/p nb",
			newRank: func(p Params, r int) stepper {
				return &reduceThenScatter{red: newBinomialReduce(r, p.Ranks, 0, p.Count, 0), r: r, p: p.Ranks, n: p.Count}
			}},
		{Collective: Alltoall, Name: "two_level",
			Summary: "Topology-aware: ranks first exchange blocks inside their node (or Dragonfly group: --node-size, else --group-size, defaults from the machine), so that each holds, for every other node, all of its node's blocks for one rank there; then one aggregated message per node crosses the network. N-1 network messages of ns blocks per rank instead of p-ns of one: fewer, larger messages on the expensive links. Blocks are packed by local copies, which the model takes as free.",
			Cost:    "about (ns-1)(a + (p/ns)cb) intra-node + (p/ns - 1)(a + ns cb) across the network",
			newRank: func(p Params, r int) stepper {
				return &twoLevelAlltoall{r: r, p: p.Ranks, ns: TwoLevelSize(p), c: p.Count}
			},
			scratch: func(p Params) []int64 { n := int64(p.Ranks) * p.Count; return []int64{n, n, n} },
			needs: func(p Params) error {
				if ns := TwoLevelSize(p); ns < 1 || p.Ranks%ns != 0 {
					return &Unsupported{Reason: fmt.Sprintf("two_level needs ranks in whole nodes or groups (--node-size or --group-size): %d ranks, size %d; use alltoall/pairwise", p.Ranks, TwoLevelSize(p))}
				}
				return nil
			}},
		{Collective: Bcast, Name: "split_binary",
			Summary: "Open MPI's split binary tree: the root sends the first half of the vector down its left subtree and the second half down its right one, in segments of --segment elements that every rank forwards as soon as it has them (0, the default, sends each half whole); then every rank swaps halves with its mirror image in the other subtree (or gets the missing half from the root). Each link carries half the vector each way: about half the binary tree's time for long vectors. Open MPI 4.0 picks it with 1 KiB segments from 2 KiB to 362 KiB.",
			Cost:    "about depth (a + nb/2) + (a + nb/2) whole; about (depth + 2(k-1))(a + sb) + a + nb/2 in k segments of s",
			newRank: func(p Params, r int) stepper { return newSplitBinary(p, r) }},
		{Collective: Barrier, Name: "linear",
			Summary: "Every rank signals rank 0, which answers every rank once all have arrived (Open MPI's linear barrier): 2(p-1) empty messages through one port, 2 latencies deep.",
			Cost:    "about 2a + 2(p-1) g_port",
			newRank: func(p Params, r int) stepper { return &linearRooted{c: Allreduce, r: r, p: p.Ranks, n: p.Count} }, emptyMessages: true},
		{Collective: Barrier, Name: "dissemination",
			Summary: "In round k every rank signals rank r+2^k and waits for rank r-2^k (Hensgen, Finkel and Manber 1988). After ceil(log2 p) rounds every rank has heard from every other, directly or through others; no root, any p.",
			Cost:    "ceil(log2 p) a",
			newRank: func(p Params, r int) stepper { return &disseminationBarrier{r: r, p: p.Ranks, dist: 1, last: noEnd} }, emptyMessages: true},
	}
	registry = append(registry, libraryAlgorithms()...)
}

// All returns every algorithm, ordered by collective then name.
func All() []Algorithm { return slices.Clone(sorted()) }

// sorted is the registry in All's order, sorted once: Lookup runs once per
// segment of some composites, and sorting every time cost a 1 GiB model
// 14 s.
var sorted = sync.OnceValue(func() []Algorithm {
	out := slices.Clone(registry)
	slices.SortStableFunc(out, func(a, b Algorithm) int {
		ia, ib := slices.Index(Collectives, a.Collective), slices.Index(Collectives, b.Collective)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
})

// Canonical returns the registry's name for an algorithm name a user may
// give: "lp", the Linear Pipelining paper's name, is linear_pipeline.
func Canonical(name string) string {
	if name == "lp" {
		return "linear_pipeline"
	}
	return name
}

// Lookup finds an algorithm; the error lists the valid choices.
func Lookup(c Collective, name string) (Algorithm, error) {
	if !slices.Contains(Collectives, c) {
		names := make([]string, len(Collectives))
		for i, c := range Collectives {
			names[i] = string(c)
		}
		return Algorithm{}, fmt.Errorf("unknown collective %q; valid: %s", c, strings.Join(names, ", "))
	}
	var names []string
	for _, a := range sorted() {
		if a.Collective == c {
			if a.Name == name {
				return a, nil
			}
			names = append(names, a.Name)
		}
	}
	return Algorithm{}, fmt.Errorf("unknown %s algorithm %q; valid: %s", c, name, strings.Join(names, ", "))
}
