package collectives

import (
	"testing"

	"github.com/collsim/collsim/sim"
)

// runsAsPhase: the collectives whose algorithms the composites run inside
// sub (hierarchical's, HAN's and SUARA's levels, nonoverlapping's stages).
var runsAsPhase = map[Collective]bool{Allreduce: true, Reduce: true, Bcast: true}

// Every algorithm that a composite can run as a phase (inside sub) reports
// in done() ops after which every one of its receives has completed: the
// phase that follows reads and overwrites the vector and the scratch, so a
// receive still landing would clobber it. (Sends are no hazard: a send
// captures its data when it starts.) The data checks catch a missing
// dependency only when timing happens to reorder the receives
// (TestSuaraWaitsForEverySegmentOfItsChain); this test checks the
// dependency graph itself, for every rank, size and segment. Before it,
// linear_pipeline's allreduce, the chain and ADAPT bcasts, ADAPT's reduce and
// allgather_reduce each ended on an op that did not wait for all their
// receives.
func TestPhaseEndCoversEveryReceive(t *testing.T) {
	for _, a := range All() {
		if !IsComposite(a.Name) && runsAsPhase[a.Collective] {
			checkPhaseEnds(t, a)
		}
	}
}

// checkPhaseEnds reports a's first receive left uncovered, if any.
func checkPhaseEnds(t *testing.T, a Algorithm) {
	for _, p := range []int{1, 2, 3, 4, 5, 7, 8, 12, 13} {
		for _, n := range counts(p) {
			for _, seg := range []int64{0, 1, 2, 5} {
				params := Params{Ranks: p, Count: n, Segment: seg, Root: p / 2, GroupSize: largestDivisorBelow(p, 6), NodeSize: 1 + p%3}
				if _, err := a.Build(params); err != nil {
					continue // refused: the data tests check the refusals
				}
				for r := range p {
					if i, op, ok := uncoveredReceive(a.newRank(params, r)); !ok {
						t.Errorf("%s %+v rank %d: op %d (%s) is neither among the ops done() reports nor before them",
							a.ID(), params, r, i, op.String())
						return
					}
				}
			}
		}
	}
}

// uncoveredReceive runs st inside a sub to its end and returns a receive
// that is neither one of the sub's done() ops nor an ancestor of one
// (through After), if there is one.
func uncoveredReceive(st stepper) (int, sim.Op, bool) {
	s := newSub(st, nil, 0, nil, 0)
	b := builder{elemSize: 8}
	for s.step(&b) {
	}
	covered := make([]bool, len(b.ops))
	stack := append([]int32(nil), s.done()...)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i < 0 || covered[i] {
			continue
		}
		covered[i] = true
		stack = append(stack, b.ops[i].After...)
	}
	for i, op := range b.ops {
		if op.Kind == sim.OpRecv && !covered[i] {
			return i, op, false
		}
	}
	return 0, sim.Op{}, true
}
