package redist

import (
	"cmp"
	"slices"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads"
)

// rankScript writes one rank's program a peer at a time.
type rankScript struct {
	p     *plan
	stage *staging
	r     int
	sends []group // by piece's receiver, in the schedule's order
	recvs []group // by piece's sender, in the schedule's order
	local *group  // the rank's own pieces
	step  int
	// copyLane runs the packs, unpacks and local copies: in the async
	// schedules a lane of its own (a runtime's worker thread beside its
	// communication thread), so that packing the next message overlaps
	// sending this one.
	copyLane uint16
	// recvAt is the item of each incoming message, by entry of in
	// (async schedules: unpacks follow all sends).
	recvAt map[int32]int32
}

func newRankScript(p *plan, st *staging, r int) *rankScript {
	rs := &rankScript{p: p, stage: st, r: r, recvAt: map[int32]int32{}}
	if p.j.Schedule != "scalapack" {
		rs.copyLane = 1
	}
	for _, g := range p.groups(p.out, p.outStart, r, func(pc *piece) int32 { return pc.to }) {
		if int(g.peer) == r {
			rs.local = &g
			continue
		}
		rs.sends = append(rs.sends, g)
	}
	for _, g := range p.groups(p.in, p.inStart, r, func(pc *piece) int32 { return pc.from }) {
		if int(g.peer) != r {
			rs.recvs = append(rs.recvs, g)
		}
	}
	// Both lists are by peer; rotate them to the schedule's order.
	R := p.ranks
	switch p.j.Schedule {
	case "caterpillar":
		rotate(rs.sends, func(peer int) int { return (peer - r + R) % R })
		rotate(rs.recvs, func(peer int) int { return (r - peer + R) % R })
	case "scalapack":
		// Step k pairs r with (R-1-r-k) mod R: the peer of distance d =
		// (R-1-r-peer) mod R comes in step d.
		R := p.scalapackRanks()
		order := func(peer int) int { return ((R-1-r-peer)%R + R) % R }
		rotate(rs.sends, order)
		rotate(rs.recvs, order)
	}
	return rs
}

// scalapackRanks is the ranks PxGEMR2D's steps pair: those of the larger
// layout (init_chenille's tot, the larger grid's size), whose ranks are
// 0 to that less 1. Ranks of the job beyond both layouts hold nothing and
// take no step (they paired with the others in every step, adding steps
// to theirs: an audit).
func (p *plan) scalapackRanks() int {
	return max(p.j.From.ranks(), p.j.To.ranks(), 1)
}

// rotate orders groups by key of their peer.
func rotate(gs []group, key func(peer int) int) {
	slices.SortFunc(gs, func(a, b group) int { return cmp.Compare(key(int(a.peer)), key(int(b.peer))) })
}

func (rs *rankScript) fill(w *workloads.Writer) bool {
	if rs.p.j.Schedule == "scalapack" {
		return rs.fillSteps(w)
	}
	// Async: receives (one phase per sender), the sends (one phase per
	// receiver), the local copy, the unpacks.
	n, m := len(rs.recvs), len(rs.sends)
	switch k := rs.step; {
	case k < n:
		rs.postRecvs(w, rs.recvs[k], true)
	case k < n+m:
		rs.send(w, rs.sends[k-n], true)
	case k == n+m:
		rs.copyLocal(w, true, 1)
	case k-n-m-1 < n:
		rs.unpack(w, rs.recvs[k-n-m-1], true)
	default:
		return false
	}
	rs.step++
	return true
}

// fillSteps writes ScaLAPACK's steps, as Cpdgemr2d's loop over sens
// (REDIST/SRC/pdgemr.c) orders them: in step k the rank packs what it
// sends its partner of that step, then, blocking, the lower of the two
// sends and the higher receives, then the other way round, and each
// unpacks what it received; its own step packs, copies the buffer
// (Clacpy) and unpacks. (collsim had the higher rank send first and the
// lower rank receive and unpack before it packed: 4 copies and 2
// messages one after another where PxGEMR2D has 2 copies and 2 messages,
// 24 us against 22 for two ranks swapping 8000 bytes,
// TestScalapackStepsByHand; an audit.)
func (rs *rankScript) fillSteps(w *workloads.Writer) bool {
	R := rs.p.scalapackRanks()
	if rs.step == R || rs.r >= R {
		return false
	}
	k := rs.step
	rs.step++
	peer := ((R-1-rs.r-k)%R + R) % R
	if peer == rs.r {
		rs.copyLocal(w, false, 3)
		return true
	}
	var send, recv *group
	if len(rs.sends) > 0 && int(rs.sends[0].peer) == peer {
		send, rs.sends = &rs.sends[0], rs.sends[1:]
	}
	if len(rs.recvs) > 0 && int(rs.recvs[0].peer) == peer {
		recv, rs.recvs = &rs.recvs[0], rs.recvs[1:]
	}
	var packs []int32
	if send != nil {
		packs = rs.pack(w, *send, false)
	}
	doSend := func() {
		if send != nil {
			rs.sendPacked(w, *send, false, packs)
		}
	}
	doRecv := func() {
		if recv != nil {
			rs.postRecvs(w, *recv, false)
		}
	}
	if rs.r < peer {
		doSend()
		doRecv()
	} else {
		doRecv()
		doSend()
	}
	if recv != nil {
		rs.unpack(w, *recv, false)
	}
	return true
}

func (rs *rankScript) packTime(elems int64) sim.Time {
	return sim.FromSeconds(float64(elems*rs.p.j.Elem) / rs.p.j.CopyRate)
}

// copies adds, in data mode, a copy of each column of piece pc from one
// place to another (a layout's storage, or a staging buffer from fromAt
// or toAt), each after the items in after, and returns their items.
func (rs *rankScript) copies(w *workloads.Writer, pc *piece, fromBuf uint8, from *storage, fromAt int64, toBuf uint8, to *storage, toAt int64, async bool, after ...int32) []int32 {
	var items []int32
	if !rs.p.j.Data {
		return nil
	}
	h := int64(pc.r1 - pc.r0)
	for c := pc.c0; c < pc.c1; c++ {
		src := sim.Region{Buf: fromBuf, Off: fromAt + int64(c-pc.c0)*h, Count: h}
		if from != nil {
			src.Off, _ = from.column(pc, c)
		}
		dst := sim.Region{Buf: toBuf, Off: toAt + int64(c-pc.c0)*h, Count: h}
		if to != nil {
			dst.Off, _ = to.column(pc, c)
		}
		items = append(items, w.Add(collectives.Item{Kind: collectives.Copy, Lane: rs.copyLane, Async: async, Src: src, Data: dst, After: after}))
	}
	return items
}

// copyLocal copies the rank's own pieces from the source layout to the
// target's, at the cost of passes copies of them (the data moves once).
func (rs *rankScript) copyLocal(w *workloads.Writer, async bool, passes int64) {
	g := rs.local
	if g == nil {
		return
	}
	var elems int64
	var after []int32
	for k := g.lo; k < g.hi; k++ {
		pc := &rs.p.pieces[rs.p.out[k]]
		elems += pc.elems()
		after = append(after, rs.copies(w, pc, bufFrom, rs.p.src, 0, bufTo, rs.p.dst, 0, async)...)
	}
	w.Add(collectives.Item{Kind: collectives.Compute, Lane: rs.copyLane, Async: async, Dur: rs.packTime(passes * elems), After: after})
}

// send packs and sends what the rank sends one peer: one message, or one
// per piece.
func (rs *rankScript) send(w *workloads.Writer, g group, async bool) {
	rs.sendPacked(w, g, async, rs.pack(w, g, async))
}

// pack packs what the rank sends one peer, returning, for each message
// sendPacked sends, the item that packed it (-1 for a piece sent in
// place).
func (rs *rankScript) pack(w *workloads.Writer, g group, async bool) []int32 {
	if rs.p.j.Messages == "pair" {
		var elems int64
		var after []int32
		for k := g.lo; k < g.hi; k++ {
			i := rs.p.out[k]
			pc := &rs.p.pieces[i]
			elems += pc.elems()
			after = append(after, rs.copies(w, pc, bufFrom, rs.p.src, 0, bufOut, nil, rs.stage.outOff[i], async)...)
		}
		return []int32{w.Add(collectives.Item{Kind: collectives.Compute, Lane: rs.copyLane, Async: async, Dur: rs.packTime(elems), After: after})}
	}
	packs := make([]int32, 0, g.hi-g.lo)
	for k := g.lo; k < g.hi; k++ {
		i := rs.p.out[k]
		pc := &rs.p.pieces[i]
		pack := int32(-1)
		if at := rs.stage.outOff[i]; at >= 0 {
			after := rs.copies(w, pc, bufFrom, rs.p.src, 0, bufOut, nil, at, async)
			pack = w.Add(collectives.Item{Kind: collectives.Compute, Lane: rs.copyLane, Async: async, Dur: rs.packTime(pc.elems()), After: after})
		}
		packs = append(packs, pack)
	}
	return packs
}

// sendPacked sends what pack packed for one peer.
func (rs *rankScript) sendPacked(w *workloads.Writer, g group, async bool, packs []int32) {
	j := rs.p.j
	if j.Messages == "pair" {
		var elems int64
		for k := g.lo; k < g.hi; k++ {
			elems += rs.p.pieces[rs.p.out[k]].elems()
		}
		w.Add(collectives.Item{Kind: collectives.Send, Async: async, Peer: int(g.peer), Bytes: elems * j.Elem,
			Data: sim.Region{Buf: bufOut, Off: rs.stage.outOff[rs.p.out[g.lo]], Count: elems}, After: packs})
		return
	}
	for k := g.lo; k < g.hi; k++ {
		i := rs.p.out[k]
		pc := &rs.p.pieces[i]
		it := collectives.Item{Kind: collectives.Send, Async: async, Peer: int(g.peer), Tag: tileTag(k - g.lo), Bytes: pc.elems() * j.Elem}
		if pack := packs[k-g.lo]; pack >= 0 {
			it.After = []int32{pack}
			it.Data = sim.Region{Buf: bufOut, Off: rs.stage.outOff[i], Count: pc.elems()}
		} else {
			off, _ := rs.p.src.column(pc, pc.c0)
			it.Data = sim.Region{Buf: bufFrom, Off: off, Count: pc.elems()}
		}
		w.Add(it)
	}
}

// tileTag numbers the messages of one pair (matched in order anyway: the
// tag only keeps them apart in traces).
func tileTag(k int32) int { return int(k) % (collectives.MaxP2PTag + 1) }

// postRecvs posts the receives of what one peer sends the rank.
func (rs *rankScript) postRecvs(w *workloads.Writer, g group, async bool) {
	j := rs.p.j
	if j.Messages == "pair" {
		var elems int64
		for k := g.lo; k < g.hi; k++ {
			elems += rs.p.pieces[rs.p.in[k]].elems()
		}
		first := rs.stage.inOff[rs.p.in[g.lo]]
		rs.recvAt[g.lo] = w.Add(collectives.Item{Kind: collectives.Recv, Async: async, Peer: int(g.peer), Bytes: elems * j.Elem,
			Data: sim.Region{Buf: bufIn, Off: first, Count: elems}})
		return
	}
	for k := g.lo; k < g.hi; k++ {
		i := rs.p.in[k]
		pc := &rs.p.pieces[i]
		it := collectives.Item{Kind: collectives.Recv, Async: async, Peer: int(g.peer), Tag: tileTag(k - g.lo), Bytes: pc.elems() * j.Elem}
		if at := rs.stage.inOff[i]; at >= 0 {
			it.Data = sim.Region{Buf: bufIn, Off: at, Count: pc.elems()}
		} else {
			off, _ := rs.p.dst.column(pc, pc.c0)
			it.Data = sim.Region{Buf: bufTo, Off: off, Count: pc.elems()}
		}
		rs.recvAt[k] = w.Add(it)
	}
}

// unpack copies what arrived from one peer into the target layout's
// tiles, once it has: the copies of each packed message, then their cost.
func (rs *rankScript) unpack(w *workloads.Writer, g group, async bool) {
	pair := rs.p.j.Messages == "pair"
	var elems int64
	var after []int32
	for k := g.lo; k < g.hi; k++ {
		i := rs.p.in[k]
		at := rs.stage.inOff[i]
		if at < 0 {
			continue // received in place
		}
		pc := &rs.p.pieces[i]
		recv := rs.recvAt[k]
		if pair {
			recv = rs.recvAt[g.lo]
		}
		if !pair || k == g.lo {
			after = append(after, recv)
		}
		elems += pc.elems()
		after = append(after, rs.copies(w, pc, bufIn, nil, at, bufTo, rs.p.dst, 0, async, recv)...)
	}
	for k := g.lo; k < g.hi; k++ {
		delete(rs.recvAt, k)
	}
	if elems > 0 {
		w.Add(collectives.Item{Kind: collectives.Compute, Lane: rs.copyLane, Async: async, Dur: rs.packTime(elems), After: after})
	}
}
