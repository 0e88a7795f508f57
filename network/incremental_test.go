package network

import (
	"fmt"
	"math"
	"math/big"
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

// TestAloneKeepsTheSolution runs two incremental solvers in lockstep over
// random batches, one freezing lone flows outside the heap (alone) and one
// filling every link through it, and requires the same solution after
// every sweep: each link's fill and each flow's bottleneck and rate. Rates
// alone would not tell: a lone flow between links of equal capacity gets
// the same rate whichever of them is called its bottleneck, but the next
// repairs start from that choice. Capacities repeat and routes are short,
// so that lone flows, ties between their links and flows later joining
// them are all common.
func TestAloneKeepsTheSolution(t *testing.T) {
	lone, loneTies := uint64(0), 0
	rapid.Check(t, func(t *rapid.T) {
		links := rapid.IntRange(1, 12).Draw(t, "links")
		caps := make([]int64, links)
		for i := range caps {
			caps[i] = rapid.Int64Range(1, 3).Draw(t, "capacity") * 1000
		}
		var m [2]flowModel
		m[0].initSolver(caps)
		m[1].initSolver(caps)
		m[1].noAlone = true
		var active []int32
		for batch := rapid.IntRange(1, 30).Draw(t, "batches"); batch > 0; batch-- {
			var leave []int
			for range rapid.IntRange(0, 4).Draw(t, "leave") {
				if len(active) > len(leave) {
					leave = append(leave, rapid.IntRange(0, len(active)-1).Draw(t, "which"))
				}
			}
			var routes [][]int32
			for range rapid.IntRange(0, 5).Draw(t, "join") {
				routes = append(routes, rapid.SliceOfN(rapid.Int32Range(0, int32(links-1)), 1, 4).Draw(t, "route"))
			}
			var joined []int32
			for k := range m {
				model := &m[k]
				act := slices.Clone(active)
				for _, i := range leave {
					i %= len(act)
					model.leave(act[i])
					model.free = append(model.free, act[i])
					act = slices.Delete(act, i, i+1)
				}
				for _, route := range routes {
					f := model.newFlow()
					fl := &model.flows[f]
					*fl = flow{route: append(fl.route[:0], route...), pos: fl.pos[:0], neck: -1}
					model.join(f)
					act = append(act, f)
				}
				model.rated = model.rated[:0]
				if !model.sweep() {
					t.Fatalf("model %d, batch %d: the repair met a link after its fill", k, batch)
				}
				slices.Sort(model.rated)
				for _, f := range model.rated {
					model.flows[f].timed = true
				}
				if k == 0 {
					joined = act
				} else if !slices.Equal(act, joined) {
					t.Fatalf("the models' flows differ: %v and %v", joined, act)
				}
			}
			active = joined
			if !slices.Equal(m[0].rated, m[1].rated) {
				t.Fatalf("batch %d: rates changed for flows %v, through the heap %v", batch, m[0].rated, m[1].rated)
			}
			for l := range m[0].links {
				if a, b := m[0].links[l].filled, m[1].links[l].filled; a != b {
					t.Fatalf("batch %d: link %d filled at %v, through the heap at %v", batch, l, a, b)
				}
			}
			for _, f := range active {
				a, b := &m[0].flows[f], &m[1].flows[f]
				if a.neck != b.neck || a.units != b.units {
					t.Fatalf("batch %d: flow on %v froze on link %d at %d units, through the heap on %d at %d", batch, a.route, a.neck, a.units, b.neck, b.units)
				}
				if a.sweep == m[0].epoch && loneTie(&m[0], a, caps) {
					loneTies++
				}
			}
		}
		lone += m[0].lone
		if m[1].lone != 0 {
			t.Fatalf("%d flows frozen alone with alone off", m[1].lone)
		}
	})
	if lone == 0 || loneTies == 0 {
		t.Fatalf("%d flows frozen alone, %d of them between links of equal capacity: the checks did not reach the path", lone, loneTies)
	}
}

// loneTie reports whether fl is alone on its route (no other flow on any
// of its links) and two distinct links of the route tie for its least
// capacity: which of them is its bottleneck is the tie rule's to decide.
func loneTie(m *flowModel, fl *flow, caps []int64) bool {
	least := int64(math.MaxInt64)
	for _, l := range fl.route {
		if len(m.links[l].on) != 1 {
			return false
		}
		least = min(least, caps[l])
	}
	var first int32 = -1
	for _, l := range fl.route {
		if caps[l] == least {
			if first >= 0 && l != first {
				return true
			}
			first = l
		}
	}
	return false
}

// The largest and smallest capacities capacityUnits accepts: 2^62 less a
// float64's spacing there (512), and one unit.
const (
	maxCapUnits = 1<<62 - 512
	minCapUnits = 1
)

// exactMaxMin is progressive filling written out from its definition, as
// an oracle that shares nothing with either solver (not even share.cmp):
// scan every link for the least capacity left per unfrozen crossing,
// compared as exact fractions with big integers, ties to the lower link;
// freeze that link's unfrozen flows at the share rounded down to a unit;
// take the rate off every crossing of their routes; repeat.
func exactMaxMin(caps []int64, routes [][]int32) []int64 {
	left := slices.Clone(caps)
	users := make([]int64, len(caps))
	for _, r := range routes {
		for _, e := range r {
			users[e]++
		}
	}
	rates := make([]int64, len(routes))
	frozen := make([]bool, len(routes))
	var a, b big.Int
	for {
		best := -1
		for e := range caps {
			if users[e] == 0 {
				continue
			}
			if best >= 0 {
				// left[e]/users[e] < left[best]/users[best]?
				a.Mul(big.NewInt(left[e]), big.NewInt(users[best]))
				b.Mul(big.NewInt(left[best]), big.NewInt(users[e]))
				if a.Cmp(&b) >= 0 {
					continue
				}
			}
			best = e
		}
		if best < 0 {
			return rates
		}
		rate := left[best] / users[best]
		for i, route := range routes {
			if frozen[i] || !slices.Contains(route, int32(best)) {
				continue
			}
			frozen[i], rates[i] = true, rate
			for _, e := range route {
				left[e] -= rate
				users[e]--
			}
		}
	}
}

// repairHarness drives the incremental solver directly: flows join and
// leave in batches, and solve sweeps once per batch.
type repairHarness struct {
	m      flowModel
	active []int32 // slots, in join order
}

func newRepairHarness(caps []int64) *repairHarness {
	h := &repairHarness{}
	h.m.initSolver(caps)
	return h
}

// join starts a flow on route, in a freed slot if there is one, and puts
// it last in active.
func (h *repairHarness) join(route []int32) {
	f := h.m.newFlow()
	fl := &h.m.flows[f]
	*fl = flow{route: append(fl.route[:0], route...), pos: fl.pos[:0], neck: -1}
	h.m.join(f)
	h.active = append(h.active, f)
}

// leave ends the i-th active flow and frees its slot.
func (h *repairHarness) leave(i int) {
	f := h.active[i]
	h.m.leave(f)
	h.m.free = append(h.m.free, f)
	h.active = slices.Delete(h.active, i, i+1)
}

// sweep repairs the solution and returns the active flows' rates; ok is
// false if the repair met a link after its fill (it would fall back).
func (h *repairHarness) sweep() (rates []int64, ok bool) {
	h.m.rated = h.m.rated[:0]
	if !h.m.sweep() {
		return nil, false
	}
	return h.rates(), true
}

// batch ends the flows at the places leave names in the active list (in
// that order), starts flows on the join routes, and sweeps.
func (h *repairHarness) batch(leave []int, join [][]int32) (rates []int64, ok bool) {
	for _, l := range leave {
		h.leave(l)
	}
	for _, r := range join {
		h.join(r)
	}
	return h.sweep()
}

// solveAgain solves every flow from nothing, as the repair's way out does.
func (h *repairHarness) solveAgain() []int64 {
	h.m.rated = h.m.rated[:0]
	h.m.solveAgain()
	return h.rates()
}

// rates marks the flows whose rate the last solve set as timed and
// returns the active flows' rates.
func (h *repairHarness) rates() (rates []int64) {
	for _, f := range h.m.rated {
		h.m.flows[f].timed = true
	}
	for _, f := range h.active {
		rates = append(rates, h.m.flows[f].units)
	}
	return rates
}

func (h *repairHarness) routes() [][]int32 {
	routes := make([][]int32, len(h.active))
	for i, f := range h.active {
		routes[i] = h.m.flows[f].route
	}
	return routes
}

// TestSweepHandDerived runs short batch sequences whose rates are worked
// out by hand in the comments: equal shares (the lower link fills first),
// a route crossing a link twice, a slot freed and reused in one batch, and
// capacities at both ends of the accepted range.
func TestSweepHandDerived(t *testing.T) {
	type batch struct {
		leave []int     // places in the active list, taken in this order
		join  [][]int32 // routes, appended to the active list
		want  []int64   // rates of the active flows after the batch
	}
	for _, c := range []struct {
		name    string
		caps    []int64
		batches []batch
	}{
		{"ties and a double crossing", []int64{6, 6}, []batch{
			// a:[0] b:[0 1] c:[1]: both links 6/2 = 3; link 0 fills first
			// (a, b at 3), then link 1 has 3 left for c.
			{join: [][]int32{{0}, {0, 1}, {1}}, want: []int64{3, 3, 3}},
			// a leaves: link 0 is 6/1, link 1 still 6/2 = 3, so link 1
			// fills first now (b, c at 3): b's bottleneck moves to link 1,
			// which fills after link 0's old fill.
			{leave: []int{0}, want: []int64{3, 3}},
			// c leaves: b alone on both links, 6/1 each; b gets 6.
			{leave: []int{1}, want: []int64{6}},
			// a:[0] and d:[1 1] join: link 0 is 6/2 = 3, link 1 6/3 = 2
			// (d counts twice); link 1 fills first (b, d at 2, d taking
			// 4 of it), then link 0 has 6-2 = 4 for a.
			{join: [][]int32{{0}, {1, 1}}, want: []int64{2, 4, 2}},
			// b leaves and e:[0 1] takes its slot in the same batch: the
			// same shares as before with e for b: a 4, d 2, e 2.
			{leave: []int{0}, join: [][]int32{{0, 1}}, want: []int64{4, 2, 2}},
		}},
		{"extreme capacities", []int64{maxCapUnits, minCapUnits}, []batch{
			// a:[0] b:[0 1] c:[1]: link 1's one unit over two flows is
			// the least share; b and c get it rounded down, 0, and a all
			// of link 0.
			{join: [][]int32{{0}, {0, 1}, {1}}, want: []int64{maxCapUnits, 0, 0}},
			// c leaves: link 1 is 1/1, least; b gets 1 and a the rest of
			// link 0, 2^62-513.
			{leave: []int{2}, want: []int64{maxCapUnits - 1, 1}},
			// Three more on [0]: link 1 fills first again (b 1); link 0
			// has 2^62-513 over 4 flows: 2^60-129 each (4(2^60-129) =
			// 2^62-516, 3 units over).
			{join: [][]int32{{0}, {0}, {0}}, want: []int64{1<<60 - 129, 1, 1<<60 - 129, 1<<60 - 129, 1<<60 - 129}},
		}},
	} {
		h := newRepairHarness(c.caps)
		for i, b := range c.batches {
			got, ok := h.batch(b.leave, b.join)
			if !ok {
				t.Fatalf("%s, batch %d: the repair fell back", c.name, i)
			}
			if !slices.Equal(got, b.want) {
				t.Errorf("%s, batch %d: rates %v, want %v", c.name, i, got, b.want)
			}
		}
	}
}

// drawCapacities draws link capacities in units from one of several
// families: all equal (every share ties), a short list of real bandwidths
// and tiny ones, only the extremes of the accepted range, anything in the
// range, or small multiples of 2^59 give or take a few units (so that
// shares on links of different capacities and users, k 2^59/u, differ by
// less than a float64 can tell: the heap must order them exactly).
func drawCapacities(t *rapid.T, links int) []int64 {
	caps := make([]int64, links)
	family := rapid.IntRange(0, 4).Draw(t, "capacity family")
	for i := range caps {
		switch family {
		case 0:
			caps[i] = 5e9 * rateUnitsPerByte
		case 1:
			caps[i] = rapid.SampledFrom([]int64{6, 12, 7, 3 * rateUnitsPerByte, 5e9 * rateUnitsPerByte, 4.7e9 * rateUnitsPerByte}).Draw(t, "capacity")
		case 2:
			caps[i] = rapid.SampledFrom([]int64{minCapUnits, 2, 3, maxCapUnits}).Draw(t, "capacity")
		case 3:
			caps[i] = rapid.Int64Range(1, 7).Draw(t, "multiple")<<59 + rapid.Int64Range(-3, 3).Draw(t, "units off")
		default:
			caps[i] = rapid.Int64Range(minCapUnits, maxCapUnits).Draw(t, "capacity")
		}
	}
	return caps
}

// TestSweepMatchesExactFilling is TestSweepMatchesWholeSolve on larger
// networks and longer runs, against exactMaxMin: up to 40 links, routes of
// up to 6 crossings drawn with repeats (a route may cross a link up to 6
// times) and often from a few hot links, many flows joining and leaving
// per batch (freed slots reused in the same batch), capacities from every
// family of drawCapacities; now and then a batch is solved from nothing
// by the repair's way out (solveAgain) instead. After every batch each
// flow's rate must be the oracle's, bit for bit, with no fallback;
// MaxMinSolver is held to the oracle too.
func TestSweepMatchesExactFilling(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		links := rapid.IntRange(1, 40).Draw(t, "links")
		caps := drawCapacities(t, links)
		hot := int32(rapid.IntRange(1, links).Draw(t, "hot links"))
		crossing := rapid.OneOf(rapid.Int32Range(0, hot-1), rapid.Int32Range(0, int32(links-1)))
		h := newRepairHarness(caps)
		var solver MaxMinSolver
		for batch := range rapid.IntRange(1, 60).Draw(t, "batches") {
			for range rapid.IntRange(0, 8).Draw(t, "leaves") {
				if len(h.active) == 0 {
					break
				}
				h.leave(rapid.IntRange(0, len(h.active)-1).Draw(t, "which"))
			}
			for range rapid.IntRange(0, 16).Draw(t, "joins") {
				h.join(rapid.SliceOfN(crossing, 1, 6).Draw(t, "route"))
			}
			var got []int64
			if rapid.IntRange(0, 9).Draw(t, "solve again") == 0 {
				// The repair's way out, never taken otherwise: the
				// batches after it repair what it found.
				got = h.solveAgain()
			} else if rates, ok := h.sweep(); ok {
				got = rates
			} else {
				t.Fatalf("batch %d: the repair fell back", batch)
			}
			routes := h.routes()
			want := exactMaxMin(caps, routes)
			if whole := solver.Solve(caps, routes); !slices.Equal(whole, want) {
				t.Fatalf("batch %d: MaxMinSolver %v, exact filling %v (routes %v)", batch, whole, want, routes)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("batch %d: repaired rates %v, exact filling %v (routes %v)", batch, got, want, routes)
			}
		}
	})
}

// TestSweepEpochWrap runs batches across the wrap of the sweep counter
// (the epoch that marks the links and flows a sweep touched). Link 5 and
// its flow are touched only by the first sweep, at epoch 1; the counter is
// then set so that it wraps, back to 1, at the sweep of the batch that next
// touches link 5: a mark left from the first sweep must not pass for one of
// that sweep's. Every batch is held to exactMaxMin.
func TestSweepEpochWrap(t *testing.T) {
	caps := []int64{6, 6, 12, 7, 6, 10}
	h := newRepairHarness(caps)
	batches := []struct {
		leave []int
		join  [][]int32
	}{
		{join: [][]int32{{5}, {0, 1}, {1, 2}, {2, 3, 3}, {4}, {0, 4}}}, // epoch 1
		{leave: []int{2}, join: [][]int32{{1, 3}}},                     // epoch 2
		{join: [][]int32{{0}}},                                         // epoch 2^32-2
		{leave: []int{1}, join: [][]int32{{5, 0}, {2, 4}}},             // wraps: epoch 1
		{join: [][]int32{{1, 2, 3}, {5, 1}}},                           // epoch 2
		{leave: []int{0, 0}, join: [][]int32{{3}}},                     // epoch 3
	}
	for i, b := range batches {
		if i == 2 {
			h.m.epoch = math.MaxUint32 - 2
		}
		got, ok := h.batch(b.leave, b.join)
		if !ok {
			t.Fatalf("batch %d (epoch %d): the repair fell back", i, h.m.epoch)
		}
		if want := exactMaxMin(caps, h.routes()); !slices.Equal(got, want) {
			t.Fatalf("batch %d (epoch %d): rates %v, exact filling %v (routes %v)", i, h.m.epoch, got, want, h.routes())
		}
		if i == 3 && h.m.epoch != 1 {
			t.Fatalf("batch 3 ran at epoch %d: the counter did not wrap there", h.m.epoch)
		}
	}
}

// TestSweepAllocatesNothing: once the solver's slices have grown to their
// working size, a batch (a flow leaving, another taking its slot on a
// route of the same length, a sweep) allocates nothing.
func TestSweepAllocatesNothing(t *testing.T) {
	caps := []int64{5e9 * rateUnitsPerByte, 5e9 * rateUnitsPerByte, 4.7e9 * rateUnitsPerByte, 3e9 * rateUnitsPerByte}
	h := newRepairHarness(caps)
	routes := [][]int32{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}}
	for _, r := range routes {
		h.join(r)
	}
	h.sweep()
	next := 0
	batch := func() {
		h.m.leave(h.active[0])
		h.m.free = append(h.m.free, h.active[0])
		f := h.m.newFlow()
		fl := &h.m.flows[f]
		*fl = flow{route: append(fl.route[:0], routes[next]...), pos: fl.pos[:0], neck: -1}
		h.m.join(f)
		copy(h.active, h.active[1:])
		h.active[len(h.active)-1] = f
		next = (next + 1) % len(routes)
		h.m.rated = h.m.rated[:0]
		if !h.m.sweep() {
			t.Fatal("the repair fell back")
		}
		for _, f := range h.m.rated {
			h.m.flows[f].timed = true
		}
	}
	for range 2 * len(routes) { // warm up: every slice at its working size
		batch()
	}
	if allocs := testing.AllocsPerRun(100, batch); allocs != 0 {
		t.Errorf("%g allocations per batch, want 0", allocs)
	}
}

// TestSweepExhaustiveSmall repairs every small case there is and compares
// the rates with MaxMinSolver's and the stored solution (each link's fill,
// each flow's bottleneck) with a solve from nothing of the same flows: 3
// links of capacity 1, 2 or 3 units (shares tie and round down often), every
// route of 1 to 3 crossings (repeats allowed), every set of up to 2 flows,
// then every subset of them leaving and up to one flow joining, with and
// without alone. The rules that leave links out of a sweep (noFillSkips)
// must keep the very solution filling would find, not just its rates.
func TestSweepExhaustiveSmall(t *testing.T) {
	const links = 3
	var routes [][]int32
	var grow func(r []int32)
	grow = func(r []int32) { // non-decreasing link sequences: each multiset once
		if len(r) > 0 {
			routes = append(routes, slices.Clone(r))
		}
		if len(r) == 3 {
			return
		}
		from := int32(0)
		if len(r) > 0 {
			from = r[len(r)-1]
		}
		for l := from; l < links; l++ {
			grow(append(r, l))
		}
	}
	grow(nil)
	// Sets of up to n routes (indices, non-decreasing: each multiset once).
	sets := func(n int) [][]int {
		out := [][]int{nil}
		for range n {
			for _, s := range out {
				if len(s) < n {
					from := 0
					if len(s) > 0 {
						from = s[len(s)-1]
					}
					for i := from; i < len(routes); i++ {
						if c := append(slices.Clone(s), i); !slices.ContainsFunc(out, func(o []int) bool { return slices.Equal(o, c) }) {
							out = append(out, c)
						}
					}
				}
			}
		}
		return out
	}
	starts, joins := sets(2), sets(1)
	var oracle MaxMinSolver
	solved := func(caps []int64, rs [][]int32, noAlone bool) *repairHarness {
		h := newRepairHarness(caps)
		h.m.noAlone = noAlone
		for _, r := range rs {
			h.join(r)
		}
		if _, ok := h.sweep(); !ok {
			t.Fatalf("caps %v routes %v: a sweep from nothing met a link after its fill", caps, rs)
		}
		return h
	}
	cases := 0
	for c := range 27 {
		caps := []int64{int64(c%3 + 1), int64(c/3%3 + 1), int64(c/9 + 1)}
		for _, start := range starts {
			var first [][]int32
			for _, i := range start {
				first = append(first, routes[i])
			}
			for mask := range 1 << len(start) {
				for _, join := range joins {
					for _, noAlone := range []bool{false, true} {
						cases++
						h := solved(caps, first, noAlone)
						for j := len(start) - 1; j >= 0; j-- {
							if mask>>j&1 == 1 {
								h.leave(j)
							}
						}
						for _, i := range join {
							h.join(routes[i])
						}
						got, ok := h.sweep()
						what := fmt.Sprintf("caps %v, flows %v, leaving %b, joining %v, alone %v", caps, first, mask, join, !noAlone)
						if !ok {
							t.Fatalf("%s: the repair met a link after its fill", what)
						}
						rs := h.routes()
						if want := oracle.Solve(caps, rs); !slices.Equal(got, want) {
							t.Fatalf("%s: rates %v, filling gives %v", what, got, want)
						}
						fresh := solved(caps, rs, noAlone)
						for l := range caps {
							if a, b := h.m.links[l].filled, fresh.m.links[l].filled; (a.users != 0 || b.users != 0) && a != b {
								t.Fatalf("%s: link %d's fill %+v, from nothing %+v", what, l, a, b)
							}
						}
						for i, f := range h.active {
							if a, b := h.m.flows[f].neck, fresh.m.flows[fresh.active[i]].neck; a != b {
								t.Fatalf("%s: flow %d's bottleneck is link %d, from nothing %d", what, i, a, b)
							}
						}
					}
				}
			}
		}
	}
	if cases < 100000 {
		t.Fatalf("only %d cases", cases)
	}
}
