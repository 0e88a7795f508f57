package network

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSweepMatchesWholeSolve drives the incremental solver through random
// batches of flows joining and leaving random links and checks, after each
// batch, that every flow's rate is bit for bit the rate MaxMinSolver gives
// over all the flows, and that no sweep had to fall back to solving from
// nothing. Capacities come from a short list and routes from few links, so
// that equal shares (the order of fills) and shared links (the repair's
// reach) are common.
func TestSweepMatchesWholeSolve(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		links := rapid.IntRange(1, 10).Draw(t, "links")
		caps := make([]int64, links)
		for i := range caps {
			bw := rapid.SampledFrom([]float64{1, 3, 1e9, 2e9, 3e9, 4.7e9, 5e9}).Draw(t, "bandwidth")
			caps[i], _ = capacityUnits(bw)
		}
		var m flowModel
		m.initSolver(caps)
		var active []int32
		var oracle MaxMinSolver
		for batch := rapid.IntRange(1, 30).Draw(t, "batches"); batch > 0; batch-- {
			for range rapid.IntRange(0, 4).Draw(t, "leave") {
				if len(active) == 0 {
					break
				}
				i := rapid.IntRange(0, len(active)-1).Draw(t, "which")
				m.leave(active[i])
				m.free = append(m.free, active[i])
				active = slices.Delete(active, i, i+1)
			}
			for range rapid.IntRange(0, 5).Draw(t, "join") {
				f := m.newFlow()
				fl := &m.flows[f]
				// A route may cross a link twice (a Valiant detour can).
				route := rapid.SliceOfN(rapid.Int32Range(0, int32(links-1)), 1, 4).Draw(t, "route")
				*fl = flow{route: append(fl.route[:0], route...), pos: fl.pos[:0], neck: -1}
				m.join(f)
				active = append(active, f)
			}
			m.rated = m.rated[:0]
			if !m.sweep() {
				t.Fatalf("batch %d: the repair met a link after its fill", batch)
			}
			for _, f := range m.rated {
				m.flows[f].timed = true
			}
			routes := make([][]int32, len(active))
			for i, f := range active {
				routes[i] = m.flows[f].route
			}
			want := oracle.Solve(caps, routes)
			for i, f := range active {
				if got := m.flows[f].units; got != want[i] {
					t.Fatalf("flow on %v: %d units, whole solve %d (all routes %v)", m.flows[f].route, got, want[i], routes)
				}
			}
		}
	})
}
