package network

import (
	"math"
	"unsafe"
)

// The flow model's incremental solver re-solves only what a change can
// reach, and gets the rates MaxMinSolver would compute over every flow, bit
// for bit.
//
// Progressive filling (MaxMinSolver) fills links one at a time in the
// order of their shares. With integer rates and exact shares, that order
// is strict and each link's share only grows as others fill (a link gives
// a frozen flow at most its own share), so the whole solution is described
// by each link's fill (the share at which it froze its flows, or none) and
// each flow's bottleneck (the link that froze it): a flow is frozen by the
// first link of its route to fill, and a link's share at any point is its
// capacity less the rates of its flows frozen before, over the rest.
// Keeping that description between solves, a change is repaired as dynamic
// shortest paths are (Ramalingam and Reps 1996): the links whose flows
// changed become dirty and are filled again in share order, from a heap,
// as MaxMinSolver fills every link; every other link (clean) keeps its fill
// without being visited, and a dirty link's flows that froze on a clean one
// leave it when the sweep passes that fill. A dirty link that fills at a
// new share, or freezes a flow that froze elsewhere before, makes the other
// links of that flow's route dirty; a dirty link passing the share at which
// it filled before without freezing the same flows there (a check) makes
// the routes of the flows it froze then dirty, since they now stay unfrozen
// longer. A link cannot become dirty after the share at which it filled: if
// a repair ever met one, the whole network would be solved again from
// nothing (tests count these and find none).
//
// On an alltoall under Valiant routing, where the links and flows reachable
// from a change are most of the network, a change moves a handful of rates:
// the repair touches those, where a solve over the component touched
// hundreds.

// linkState is a link's part of the flow model: its flows, its fill in
// the solution, and a sweep's marks. A sweep reads most of it for each link
// it visits, so it is kept together, 64 bytes a link (one cache line), not
// in a slice per field: on a 512-rank alltoall under Valiant routing the
// separate slices' loads were the costliest lines of makeDirty.
type linkState struct {
	on      []int32 // the active flows crossing it, one entry a crossing
	filled  share   // its fill in the solution (users 0: none)
	newFill share   // in this sweep: its share now, or its fill once done
	// dirty and done are the sweeps (epochs) that made it dirty and that
	// filled it or found it empty.
	dirty, done uint32
}

// A link's state stays within a cache line (64 bytes today: this stops it
// growing past).
const _ = 64 - unsafe.Sizeof(linkState{})

// noFillSkips: a link that froze no flow in the solution (its fill has
// no users) is left clean, out of the sweep, where the sweep cannot make
// it fill:
//
//   - for a flow that leaves it, or freezes at no later share than
//     before. The link's flows froze on other links while its share was
//     above the level of the filling, or equal to it and after it in
//     order of links (a link's share is left/users). A flow that freezes
//     at a level no later than before, at a rate r no greater than that
//     level (its share rounded down), is off the link from then on, and
//     (left-r)/(users-1) >= left/users: the share does not fall. A flow
//     that leaves does the same. A flow that would freeze later than
//     before is still unfrozen when the sweep passes its old bottleneck's
//     fill, where check tests every link of its route (below). In fill,
//     a flow whose rate does not rise froze no later than before, or was
//     tested so.
//   - for any change, when the link has room (roomy): its capacity less
//     the most its n flows (crossings) may get in this sweep is at least
//     n units. At any level t of the filling, its u unfrozen flows get t
//     rounded down or more, over t-1 each, so its frozen flows have taken
//     less than capacity - n - u(t-1) <= capacity - ut: its share stays
//     above t, and it never fills. The most a flow may get is its new rate
//     once frozen in this sweep, its route's least capacity while it may
//     still rise (check), and its rate if the sweep has not reached it;
//     each change to one of the link's flows tests the link again.
//
// The link's state is recomputed from its flows whenever a sweep does
// visit it (makeDirty), so nothing of it goes stale. On the 512-rank
// dragonfly alltoall, most links of a route freeze nothing: its sweeps
// made 11.0 million links dirty under Valiant routing, 6.3 million with
// the first rule and 3.1 million with both (3.7, 1.9 and 1.0 million with
// minimal routing).

// startShare is the share before any link fills: below every link's.
var startShare = share{left: 0, users: 1, link: -1}

// sweep re-solves the rates after the changes on the dirty links. It
// reports false if the repair met a link that had to change after its fill
// (see above); nothing is committed then.
func (m *flowModel) sweep() bool {
	m.epoch++
	if m.epoch == math.MaxUint32 { // marks wrap: clear them
		for l := range m.links {
			m.links[l].dirty, m.links[l].done = 0, 0
		}
		for i := range m.flows {
			m.flows[i].sweep, m.flows[i].raised = 0, 0
		}
		m.epoch = 1
	}
	m.heap.reset()
	m.sweepLinks, m.sweepFlows = m.sweepLinks[:0], m.sweepFlows[:0]
	for _, l := range m.dirty {
		m.isDirty[l] = false
		if on := m.links[l].on; len(on) == 1 && m.links[l].dirty != m.epoch && !m.noAlone {
			m.alone(on[0])
		}
		m.makeDirty(l, startShare) // below every fill: cannot fail (nor run, if l was alone's)
	}
	m.dirty = m.dirty[:0]
	at := startShare
	for m.heap.len() > 0 {
		top := m.heap.pop()
		switch top.kind() {
		case entryCheck:
			at = top.share
			if !m.check(top.link, at) {
				return false
			}
		case entryFreeze:
			l := top.on()
			if m.links[top.link].dirty == m.epoch || m.links[l].done == m.epoch {
				continue // its bottleneck changed: it freezes anew in this sweep
			}
			at = top.share
			m.leaveShare(l, m.flows[top.flow].units)
		default:
			e := top.link
			if m.links[e].done == m.epoch {
				continue // stale: the link is done (setFill keeps one entry a link)
			}
			if now := m.links[e].newFill; top.users != now.users {
				m.heap.setFill(heapEntry{share: now}) // its share rose (leaveShare)
				continue
			}
			if top.cmp(at) < 0 {
				return false
			}
			at = top.share
			if !m.fill(e, top.share) {
				return false
			}
		}
	}
	m.commit()
	return true
}

// alone freezes flow f in this sweep, outside the heap, if no other flow
// shares a link of its route: filling would then freeze it at its route's
// least capacity (ties to the lower link), its bottleneck filling at that
// share, and leave its other links empty, as this does. A permutation on a
// non-blocking fat-tree (each step of a pairwise alltoall or a ring, D-mod-k
// routes) is all such flows. Any other flow is left to the heap.
func (m *flowModel) alone(f int32) {
	fl := &m.flows[f]
	neck := int32(-1)
	for _, l := range fl.route {
		if len(m.links[l].on) != 1 {
			return // shared, or crossed twice
		}
		if neck < 0 || m.capUnits[l] < m.capUnits[neck] || m.capUnits[l] == m.capUnits[neck] && l < neck {
			neck = l
		}
	}
	if neck < 0 {
		return
	}
	for _, l := range fl.route {
		m.links[l].dirty, m.links[l].done, m.links[l].newFill = m.epoch, m.epoch, share{}
		m.sweepLinks = append(m.sweepLinks, l)
	}
	m.links[neck].newFill = share{left: m.capUnits[neck], users: 1, link: neck}
	fl.sweep, fl.newNeck, fl.newUnits = m.epoch, neck, m.capUnits[neck]
	m.sweepFlows = append(m.sweepFlows, f)
	m.lone++
}

// makeDirty puts link l in this sweep, its state changing from share at
// on. It reports false if l filled before that.
func (m *flowModel) makeDirty(l int32, at share) bool {
	if m.links[l].dirty == m.epoch {
		return true
	}
	old := m.links[l].filled
	if old.users > 0 && old.cmp(at) < 0 {
		return false
	}
	m.links[l].dirty = m.epoch
	m.sweepLinks = append(m.sweepLinks, l)
	// Its share now: the flows frozen so far are off it; those to freeze
	// on clean links later leave it then.
	s := share{left: m.capUnits[l], link: l}
	check := false // it froze flows that are still here
	for _, f := range m.links[l].on {
		fl := &m.flows[f]
		check = check || fl.neck == l
		switch {
		case fl.sweep == m.epoch:
			s.left -= fl.newUnits
			continue
		case m.cleanNeck(fl):
			if c := m.links[fl.neck].filled; c.cmp(at) < 0 {
				s.left -= fl.units
				continue
			}
			m.heap.push(entry(m.links[fl.neck].filled, entryFreeze, f, l))
		}
		s.users++
	}
	if check && old.users > 0 {
		m.heap.push(entry(old, entryCheck, 0, 0))
	}
	m.setShare(l, s)
	return true
}

// cleanNeck reports whether flow fl froze on a link that this sweep has
// not made dirty: it freezes there again, at that link's fill.
func (m *flowModel) cleanNeck(fl *flow) bool {
	return fl.neck >= 0 && m.links[fl.neck].dirty != m.epoch
}

// setShare records dirty link l's share now and queues its fill; a link
// whose flows are all frozen is done.
func (m *flowModel) setShare(l int32, s share) {
	m.links[l].newFill = s
	if s.users == 0 {
		m.links[l].done, m.links[l].newFill = m.epoch, share{}
		m.heap.dropFill(l)
		return
	}
	m.heap.setFill(heapEntry{share: s})
}

// leaveShare takes a flow frozen at a rate of units off dirty link l.
// Its share only rises so (a flow freezes at a rate no greater than the
// share of any link it crosses), so its fill entry may stay where it is,
// at a share lower than the link's now: the sweep finds it out of date
// when it is popped, and queues the link again at its share then. Moving
// the entry at every change cost more (the 512-rank dragonfly alltoall's
// benchmarks: 2% more time under Valiant routing, 4% more under minimal).
func (m *flowModel) leaveShare(l int32, units int64) {
	s := m.links[l].newFill
	s.left -= units
	s.users--
	if s.users == 0 {
		m.setShare(l, s) // done: its entry goes
		return
	}
	m.links[l].newFill = s
}

// fill freezes link e's unfrozen flows at its share s.
func (m *flowModel) fill(e int32, s share) bool {
	m.links[e].done = m.epoch
	rate := s.rate()
	same := m.links[e].filled == s
	for _, f := range m.links[e].on {
		fl := &m.flows[f]
		if fl.sweep == m.epoch {
			continue // frozen before, or a route crossing e twice
		}
		if m.cleanNeck(fl) && m.links[fl.neck].filled.cmp(s) < 0 {
			continue // frozen before on a clean link
		}
		// Off the dirty links of its route first, then dirty the clean
		// ones (their share now counts it frozen).
		for _, l := range fl.route {
			if l != e && m.links[l].dirty == m.epoch && m.links[l].done != m.epoch {
				m.leaveShare(l, rate)
			}
		}
		fl.sweep, fl.newNeck, fl.newUnits = m.epoch, e, rate
		m.sweepFlows = append(m.sweepFlows, f)
		if same && fl.neck == e {
			continue // frozen as before: its other links see no change
		}
		// A clean link that froze no flow (no fill) sees no change that
		// matters when the flow's rate does not rise, or when it has room
		// for what its flows may take (noFillSkips).
		lower := fl.neck >= 0 && rate <= fl.units
		for _, l := range fl.route {
			if l != e && m.links[l].filled.users == 0 && m.links[l].dirty != m.epoch && (lower || m.roomy(l)) {
				continue
			}
			if !m.makeDirty(l, s) {
				return false
			}
		}
	}
	return true
}

// check runs when the sweep passes dirty link b's old fill: the flows b
// froze there and that are still unfrozen now stay unfrozen longer than
// before on every link of their routes.
func (m *flowModel) check(b int32, old share) bool {
	for _, f := range m.links[b].on {
		fl := &m.flows[f]
		if fl.neck != b || fl.sweep == m.epoch {
			continue
		}
		fl.raised = m.epoch
		for _, l := range fl.route {
			if m.links[l].filled.users == 0 && m.links[l].dirty != m.epoch && m.roomy(l) {
				continue // it cannot fill (noFillSkips)
			}
			if !m.makeDirty(l, old) {
				return false
			}
		}
	}
	return true
}

// roomy reports whether clean link l, which froze no flow, keeps more room
// than its flows can take in this sweep: its capacity less the most they
// may get (their new rates if this sweep froze them, their routes' least
// capacity if it let them rise, else their rates) is at least one unit for
// each of them. Such a link fills in no sweep in which that holds
// (noFillSkips).
func (m *flowModel) roomy(l int32) bool {
	on := m.links[l].on
	left := m.capUnits[l]
	for _, f := range on {
		fl := &m.flows[f]
		switch {
		case fl.sweep == m.epoch:
			left -= fl.newUnits
		case fl.raised == m.epoch:
			left -= fl.least
		default:
			left -= fl.units
		}
		if left < int64(len(on)) { // rates are never negative: it stays short
			return false
		}
	}
	return true
}

// commit makes this sweep's fills and rates the solution.
func (m *flowModel) commit() {
	for _, l := range m.sweepLinks {
		m.links[l].filled = m.links[l].newFill
	}
	for _, f := range m.sweepFlows {
		fl := &m.flows[f]
		fl.neck = fl.newNeck
		if fl.units != fl.newUnits || !fl.timed {
			fl.units = fl.newUnits
			m.rated = append(m.rated, f)
		}
	}
}

// solveAgain forgets the solution and solves every flow from nothing: the
// repair's way out. A sweep from nothing has no old fills to meet.
func (m *flowModel) solveAgain() {
	m.fallbacks++
	m.rated = m.rated[:0]
	m.forget()
	if !m.sweep() {
		m.solveWhole() // cannot happen; if it did, rates stay right
	}
}

// forget drops the solution: no link has a fill, no flow a bottleneck, and
// every link with flows is dirty, so that the next sweep solves from
// nothing.
func (m *flowModel) forget() {
	for l := range m.links {
		m.links[l].filled = share{}
		on := m.links[l].on
		for _, f := range on {
			m.flows[f].neck = -1
		}
		if len(on) > 0 {
			m.markDirty(int32(l))
		}
	}
}
