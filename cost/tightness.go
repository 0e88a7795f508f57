package cost

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/collsim/collsim/collectives"
)

// CheckGrid is the set of calls on which every closed form is checked
// against simulation (TestClosedFormsMatchSimulation) and on which
// TightnessOf measures it: p = 1..40 at counts 0, 1, p-1, p+1, 3p-1, 4p,
// 64 and 1000 elements of 8 bytes, with roots, small pipeline segments and
// node and group sizes varying from case to case, plus bandwidth-bound
// pipelines (20 segments of 1 Ki and 8 Ki elements and a few more) on 2 to
// 24 ranks.
func CheckGrid() []collectives.Params {
	var cases []collectives.Params
	for p := 1; p <= 40; p++ {
		for i, n := range []int64{0, 1, int64(p) - 1, int64(p) + 1, 3*int64(p) - 1, 4 * int64(p), 64, 1000} {
			if n < 0 {
				continue
			}
			// Roots vary; every other case is rooted at 0, and small
			// segments make pipelines of several segments.
			params := collectives.Params{Ranks: p, Count: n, Root: (7*p + 3) % p, Segment: int64(1 + i%3*7), GroupSize: groupSize(p), NodeSize: nodeSize(p, i)}
			if i%2 == 0 {
				params.Root = 0
			}
			cases = append(cases, params)
		}
	}
	// Bandwidth-bound pipelines: segments of 8 KiB and 64 KiB (a segment's
	// time about half alpha, and four times it), a few dozen of them, where
	// ports and CPUs, not latencies, set the pace.
	for _, p := range []int{2, 3, 5, 8, 13, 16, 24} {
		for i, seg := range []int64{1024, 8192} {
			cases = append(cases, collectives.Params{Ranks: p, Count: 20*seg + 5, Segment: seg, GroupSize: groupSize(p), NodeSize: nodeSize(p, i+1)})
		}
	}
	return cases
}

// nodeSize is a node size for the hierarchical algorithms: the largest
// divisor of p up to 6, or, every third case, 4 (a smaller last node when 4
// does not divide p).
func nodeSize(p, i int) int {
	if i%3 == 2 {
		return 4
	}
	return groupSize(p)
}

// groupSize is the largest divisor of p up to 6, a group size that fits.
func groupSize(p int) int {
	g := 1
	for d := 1; d <= 6; d++ {
		if p%d == 0 {
			g = d
		}
	}
	return g
}

// ReferenceModel is the machine TightnessOf measures on: TestClosedForms
// MatchSimulation's (alpha 1.5 µs, beta 100 ps/B, gamma 30 ps/B, every
// message eager).
var ReferenceModel = Hockney{Alpha: 1.5e-6, Beta: 1e-10, Gamma: 30e-12}

// Tightness says how closely an algorithm's closed form pins its time on
// CheckGrid under ReferenceModel.
type Tightness struct {
	// Cases is how many calls of the grid the algorithm runs; Exact how
	// many of them its form prices exactly; NoForm how many it does not
	// price at all. The rest are bounded.
	Cases, Exact, NoForm int
	// Width is the largest upper/lower ratio of the bounded cases (+Inf
	// when one has no lower bound above 0), Median their median.
	Width, Median float64
	// Pattern names the calls that are exact, where Exact < Cases: "powers
	// of two", "equal blocks" (count a multiple of p), "powers of two with
	// equal blocks", or "" for none of these.
	Pattern string
}

// TightnessOf measures a's closed form on CheckGrid.
func TightnessOf(a collectives.Algorithm) Tightness {
	var t Tightness
	t.Width = 1
	var widths []float64
	pow2, blocks, both := true, true, true // each pattern holds so far
	for _, params := range CheckGrid() {
		if _, err := a.Build(params); err != nil {
			continue
		}
		t.Cases++
		pr, err := ReferenceModel.Predict(a, params)
		if errors.Is(err, ErrNoClosedForm) || err != nil {
			t.NoForm++
			continue
		}
		isPow2 := params.Ranks&(params.Ranks-1) == 0
		equal := params.Count%int64(params.Ranks) == 0
		if pr.Exact {
			t.Exact++
			continue
		}
		pow2 = pow2 && !isPow2
		blocks = blocks && !equal
		both = both && !(isPow2 && equal)
		w := 1.0
		if pr.Time > 0 {
			w = math.Inf(1)
			if pr.Lower > 0 {
				w = pr.Time / pr.Lower
			}
		}
		t.Width = max(t.Width, w)
		widths = append(widths, w)
	}
	t.Median = 1
	if len(widths) > 0 {
		slices.Sort(widths)
		t.Median = widths[len(widths)/2]
	}
	if t.Exact < t.Cases-t.NoForm {
		switch {
		case pow2:
			t.Pattern = "powers of two"
		case blocks:
			t.Pattern = "equal blocks"
		case both:
			t.Pattern = "powers of two with equal blocks"
		}
	}
	return t
}

// Class sorts a form into the README's list of closed forms: "exact",
// "exact for <pattern>" (bounds elsewhere), "bounds", or "no form for
// some calls".
func (t Tightness) Class() string {
	switch {
	case t.NoForm > 0:
		return "no form for some calls"
	case t.Exact == t.Cases:
		return "exact"
	case t.Pattern != "":
		return "exact for " + t.Pattern
	}
	return "bounds"
}

// String says it in a sentence, for collsim algos --forms.
func (t Tightness) String() string {
	bounds := func() string {
		if math.IsInf(t.Width, 1) {
			return fmt.Sprintf("a lower bound of 0 on some, upper/lower median %.3g", t.Median)
		}
		return fmt.Sprintf("upper/lower at most %.3g (median %.3g)", t.Width, t.Median)
	}
	switch t.Class() {
	case "exact":
		return fmt.Sprintf("exact on all %d checked calls", t.Cases)
	case "bounds":
		return fmt.Sprintf("bounds on %d of %d checked calls (exact on the rest): %s", t.Cases-t.Exact, t.Cases, bounds())
	case "no form for some calls":
		s := fmt.Sprintf("no form on %d of %d checked calls; exact on %d", t.NoForm, t.Cases, t.Exact)
		if b := t.Cases - t.NoForm - t.Exact; b > 0 {
			s += fmt.Sprintf(", bounds on %d: %s", b, bounds())
		}
		return s
	}
	phrase := map[string]string{"powers of two": "P a power of two", "equal blocks": "count a multiple of P",
		"powers of two with equal blocks": "P a power of two and count a multiple of P"}[t.Pattern]
	return fmt.Sprintf("exact on every call with %s (%d of %d checked); bounds on the rest: %s", phrase, t.Exact, t.Cases, bounds())
}
