package cost

import (
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
)

// TestCostTextsBoundTheForms checks the "at most" costs collsim algos
// prints (collectives' Cost texts, derived by hand from the trees) against
// the closed forms, which TestClosedFormsMatchSimulation checks against
// the simulation: a text that claims a bound the form exceeds would
// mislead its reader.
func TestCostTextsBoundTheForms(t *testing.T) {
	type bound func(m Hockney, p int, n, c float64, root int) float64
	log4Ceil := func(p int) float64 {
		levels := 0
		for span := 1; span < p; span *= 4 {
			levels++
		}
		return float64(levels)
	}
	texts := []struct {
		id    string
		roots bool
		at    bound
	}{
		{"bcast/binary", false, func(m Hockney, p int, n, c float64, root int) float64 {
			return float64(log2Floor(p)) * (m.Alpha + 2*n*m.Beta)
		}},
		{"bcast/knomial", false, func(m Hockney, p int, n, c float64, root int) float64 {
			return log4Ceil(p) * (m.Alpha + 3*n*m.Beta)
		}},
		{"reduce/in_order_binary", true, func(m Hockney, p int, n, c float64, root int) float64 {
			t := float64(log2Floor(p)) * (m.Alpha + 2*n*m.Beta + 2*n*m.Gamma)
			if root != p-1 {
				t += m.Alpha + n*m.Beta
			}
			return t
		}},
		{"bcast/scatter_allgather", false, func(m Hockney, p int, n, c float64, root int) float64 {
			return m.Alpha + float64(p-1)*c*m.Beta + float64(p-1)*(m.Alpha+c*m.Beta)
		}},
	}
	models := []Hockney{
		{Alpha: 1.5e-6, Beta: 1e-10, Gamma: 3e-11},
		{Alpha: 1e-6, Beta: 8e-11, Gamma: 1e-10}, // reducing slower than moving
		{Alpha: 2e-5, Beta: 1e-9, Gamma: 0},
	}
	for _, tc := range texts {
		coll, name, _ := strings.Cut(tc.id, "/")
		a, err := collectives.Lookup(collectives.Collective(coll), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range models {
			for p := 1; p <= 70; p++ {
				for _, count := range []int64{0, 1, 7, 1000, 8193} {
					roots := []int{0}
					if tc.roots && p > 1 {
						roots = append(roots, p-1, p/2)
					}
					for _, root := range roots {
						params := collectives.Params{Ranks: p, Count: count, ElemSize: 8, Root: root}
						pred, err := m.Predict(a, params)
						if err != nil {
							t.Fatalf("%s p=%d count=%d: %v", tc.id, p, count, err)
						}
						n := float64(count * 8)
						c := float64((count + int64(p) - 1) / int64(p) * 8)
						if at := tc.at(m, p, n, c, root); pred.Time > at*(1+1e-12)+1e-18 {
							t.Errorf("%s p=%d count=%d root=%d: the form's %v exceeds the text's bound %v", tc.id, p, count, root, pred.Time, at)
						}
					}
				}
			}
		}
	}
}
