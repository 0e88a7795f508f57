package collsim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
)

// DefaultElemSize is the element size every command takes by default: 8
// bytes, a double (MPI_DOUBLE), the type the MPI libraries' choices are
// usually compared on, and the size of the elements the data checker moves.
const DefaultElemSize = 8

// Call turns a message size in bytes into collective parameters, as
// nccl-tests counts sizes (see collectives.Params.SizeBytes): the vector
// for allreduce and bcast, the whole gathered vector for allgather and
// reduce_scatter, everything a rank sends for alltoall (split evenly over
// the ranks; a remainder that does not divide is dropped and the smaller
// size reported).
func Call(c collectives.Collective, ranks int, size, elemSize int64, root int) (collectives.Params, error) {
	if elemSize < 1 {
		return collectives.Params{}, optionf("--elem-size must be at least 1 byte, not %d", elemSize)
	}
	if size < 0 {
		return collectives.Params{}, optionf("--size must not be negative")
	}
	p := collectives.Params{Ranks: ranks, ElemSize: elemSize}
	if collectives.Rooted(c) {
		// (Open MPI's HAN allreduce is built of rooted parts, which took
		// an allreduce's --root: the same call then ran twice as long.)
		p.Root = root
	}
	switch c {
	case collectives.Barrier:
	case collectives.Alltoall:
		p.Count = size / elemSize / int64(max(ranks, 1))
	default:
		if size%elemSize != 0 {
			return p, optionf("size %dB is not a whole number of %d-byte elements; use a multiple of %d or --elem-size 1", size, elemSize, elemSize)
		}
		p.Count = size / elemSize
	}
	return p, nil
}

// Shortfall says how much of an alltoall's asked size Call's params p
// move, when that is less: -s is each rank's whole send buffer, split
// evenly over the ranks in whole elements, and the rest is not sent (as
// nccl-tests rounds its alltoall count down to a multiple of the ranks).
// note is "" when all of it moves; err refuses a size of which nothing
// would move.
func Shortfall(c collectives.Collective, p collectives.Params, asked int64) (note string, err error) {
	moved := p.SizeBytes(c)
	if c != collectives.Alltoall || moved == asked {
		return "", nil
	}
	per := AlltoallQuantum(p.ElemSize, p.Ranks)
	each := fmt.Sprintf("%d elements", p.Count)
	if p.Count == 1 {
		each = "1 element"
	}
	note = fmt.Sprintf("alltoall splits each rank's %s evenly over %s in whole %d-byte elements: %s to each, %s in all (%s is not sent; a multiple of %s moves everything)",
		configs.FormatBytes(asked), RankCount(p.Ranks), p.ElemSize, each, configs.FormatBytes(moved), configs.FormatBytes(asked-moved), per)
	if p.Count == 0 {
		return "", optionf("--size: nothing would be sent: %s", note)
	}
	return note, nil
}

// AlltoallQuantum is the size whose multiples an alltoall of elements of
// elem bytes on ranks ranks moves whole: one element to each rank, in
// words ("more than 2^63 bytes" where that overflows: absurd element sizes
// were told "a multiple of 0B").
func AlltoallQuantum(elem int64, ranks int) string {
	if elem > math.MaxInt64/int64(max(ranks, 1)) {
		return "more than 2^63 bytes"
	}
	return configs.FormatBytes(elem * int64(ranks))
}

// RankCount says n ranks in words: "1 rank", "4 ranks".
func RankCount(n int) string {
	if n == 1 {
		return "1 rank"
	}
	return fmt.Sprintf("%d ranks", n)
}

// ChooseAlgorithm resolves an algorithm name, or a library selector
// (collectives.Selectors) to the algorithm it picks for params, and then
// sets params to the library's (its segment, its parts); chosenBy then
// says which selector and rule chose it.
func ChooseAlgorithm(c collectives.Collective, name string, params *collectives.Params) (a collectives.Algorithm, chosenBy string, err error) {
	if collectives.IsSelector(name) {
		s, err := collectives.Select(name, c, *params)
		if err != nil {
			return a, "", err
		}
		*params = s.Params
		return s.Algorithm, name + " (" + collectives.SelectorVersion(name) + "): " + s.Rule, nil
	}
	a, err = collectives.Lookup(c, name)
	switch {
	case err == nil:
		return a, "", nil
	case !slices.Contains(collectives.Collectives, c):
		// (A library's choice is an algorithm, not a collective.)
		return a, "", &OptionError{Err: err}
	}
	return a, "", &OptionError{Err: fmt.Errorf("%w (or a library's choice: %s)", err, strings.Join(collectives.Selectors, ", "))}
}

// innerCandidates are the allreduce algorithms SUARA may run in a subset.
var innerCandidates = []string{"ring", "recursive_doubling", "rabenseifner", "reduce_bcast"}

// SuaraPlan chooses SUARA2's grid and inner algorithm by the closed
// forms: the G x p/G grid and the algorithm whose two steps (an allreduce
// on p/G ranks, then one on G ranks) cost least; among equal costs, the
// squarest grid (SUARA2's intent). It returns the params and the
// predicted time.
func SuaraPlan(h cost.Hockney, params collectives.Params) (collectives.Params, float64) {
	best, plan := math.Inf(1), params
	for g := 2; g <= params.Ranks/2; g++ {
		if params.Ranks%g != 0 {
			continue
		}
		for _, name := range innerCandidates {
			a, _ := collectives.Lookup(collectives.Allreduce, name)
			t := 0.0
			for _, d := range []int{params.Ranks / g, g} {
				q := params
				q.Ranks = d
				t += predictOrInf(h, a, q)
			}
			squarer := math.Abs(math.Log(float64(g*g)/float64(params.Ranks))) < math.Abs(math.Log(float64(plan.Groups*plan.Groups)/float64(params.Ranks)))
			if t < best*(1-1e-9) || t <= best*(1+1e-9) && squarer {
				best = min(best, t)
				plan.Groups, plan.Inner, plan.Steps = g, name, 2
			}
		}
	}
	return plan, best
}

// predictOrInf prices a by its closed form, or +Inf if it has none.
func predictOrInf(h cost.Hockney, a collectives.Algorithm, p collectives.Params) float64 {
	pr, err := h.Predict(a, p)
	if err != nil {
		return math.Inf(1)
	}
	return pr.Time
}

// Tune fills in the options of a that are best chosen from the machine's
// model when the user left them: a pipeline's segment (PipelineSegment),
// and SUARA's grid and subsets' algorithm. It says what it chose.
func Tune(a collectives.Algorithm, p *collectives.Params, t TuneModel) string {
	switch openOption(a, *p) {
	case openSegment:
		var why string
		p.Segment, why = PipelineSegment(a, t, p.Ranks, p.Count, p.ElemSize)
		return why
	case openSuaraGrid:
		plan, _ := SuaraPlan(t.Hockney, *p)
		if plan.Groups > 0 {
			*p = plan
			return fmt.Sprintf("grid %dx%d with %s in each subset, chosen by the closed forms", p.Groups, p.Ranks/p.Groups, p.Inner)
		}
	}
	return ""
}

// An option Tune chooses.
type tunedOption int

const (
	openNothing   tunedOption = iota
	openSegment               // a pipeline's segment
	openSuaraGrid             // SUARA's grid and subsets' algorithm
)

// openOption returns the option of a that p leaves for Tune to choose:
// where there is none, Tune needs no model of the machine, whose making
// (Hockney) prices every route between the placed ranks (65,280 routes
// on 256 ranks, 5% of a pairwise alltoall's run on the flow model).
func openOption(a collectives.Algorithm, p collectives.Params) tunedOption {
	if _, ok := pipelineOf(a, p.Ranks); ok && p.Segment == 0 {
		return openSegment
	}
	if a.Name == "suara" && p.Groups == 0 && p.Inner == "" && (p.Steps == 0 || p.Steps == 2) {
		// (--steps 1, which the algorithm refuses, was replaced by the
		// plan's 2 and ran: a new user's trial.)
		return openSuaraGrid
	}
	return openNothing
}

// Resolve turns a collective call into its algorithm and parameters on m
// (nil: no option defaults from a machine): size split over the ranks as
// Call splits it, with Shortfall's note (or its refusal when nothing would
// move), the root checked, the shape's options applied, and a library's
// choice (ChooseAlgorithm) resolved, with chosenBy naming its rule.
func Resolve(c collectives.Collective, algo string, ranks int, size, elemSize int64, root int, shape Shape, m *configs.Machine) (a collectives.Algorithm, chosenBy string, p collectives.Params, note string, err error) {
	if p, err = Call(c, ranks, size, elemSize, root); err != nil {
		return a, "", p, "", err
	}
	if note, err = Shortfall(c, p, size); err != nil {
		return a, "", p, "", err
	}
	if err := shape.Check(); err != nil {
		return a, "", p, "", err
	}
	if shape.NodeSize == 0 && m != nil {
		// The ranks per node the machine's own placement (seed 1) puts on
		// a node, as Experiment.Run reckons them for its own placement
		// (explain and model took the machine's 8 where run, on a
		// round-robin machine, took 1: an audit).
		shape.NodeSize, _, shape.unevenNodes = placedNodes(m, ranks, "", 1)
	}
	shape.Apply(&p, m)
	if root < 0 || root >= ranks {
		return a, "", p, "", optionf("--root %d is not a rank of 0..%d", root, ranks-1)
	}
	a, chosenBy, err = ChooseAlgorithm(c, cmp.Or(algo, collectives.DefaultAlgorithm(c)), &p)
	return a, chosenBy, p, note, err
}

// PlacedNodeSize is the ranks per node that the hierarchical algorithms
// and the libraries' choices take for ranks ranks placed on m by policy
// (the machine's if empty) and seed: what the placement puts on a node
// where the nodes hold blocks of consecutive ranks; else (interleaved,
// or a placement that fails, which the run reports) the machine's ranks
// per node. 0 on a machine without nodes.
func PlacedNodeSize(m *configs.Machine, ranks int, policy string, seed uint64) (size int, interleaved bool) {
	size, interleaved, _ = placedNodes(m, ranks, policy, seed)
	return size, interleaved
}

// placedNodes is PlacedNodeSize, and whether the nodes the ranks occupy
// hold unequal numbers of them: Open MPI 5.0's coll/han hands its bcast
// and reduce to coll/tuned then (coll_han_topo.c, are_ppn_imbalanced),
// which an interleaving placement hides from the ranks' count (72 ranks
// round-robin on gpu-cluster: 2 on 8 nodes, 1 on 56; an audit).
func placedNodes(m *configs.Machine, ranks int, policy string, seed uint64) (size int, interleaved, uneven bool) {
	if m.NodeSize() <= 1 {
		return 0, false, false
	}
	perNode, least, blocked, err := m.PlacedNodes(ranks, policy, seed)
	if err == nil && blocked {
		return perNode, false, least < perNode
	}
	return m.NodeSize(), err == nil && perNode > 1, err == nil && least < perNode
}
