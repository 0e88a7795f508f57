package cost

import (
	"math"
	"testing"

	"github.com/collsim/collsim/collectives"
)

// A reduce of 2^59 elements of 8 bytes (2^62 bytes) on 64 ranks: the
// busiest rank reduces at least 63/64 of the vector, (63/64) 2^62 bytes,
// at gamma = 2e-10 s/B: 9.08e8 s, above the bandwidth term, the root's
// 2^62 bytes in at beta = 1e-10 s/B, 4.61e8 s. (63 x 2^59 elements
// wrapped past 2^63, and the bound lost its reductions; an audit.)
func TestLowerBoundPastInt64(t *testing.T) {
	m := Hockney{Alpha: 1e-6, Beta: 1e-10, Gamma: 2e-10}
	b, err := m.LowerBound(collectives.Reduce, collectives.Params{Ranks: 64, Count: 1 << 59, ElemSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	want := 1e-6 + 63.0/64*math.Ldexp(1, 62)*2e-10
	if math.Abs(b.Compute-want)/want > 1e-12 || math.Abs(b.Time-want)/want > 1e-12 {
		t.Errorf("compute %g s, time %g s, want %g", b.Compute, b.Time, want)
	}
}
