package tiles

import (
	"container/heap"
	"math"
	"math/bits"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

// planner turns the DAG into per-rank items: it takes ready tasks in
// order of estimated ready time, places each, brings its tiles, evicts
// (writing back what only the device holds), and estimates when
// everything happens from kernel times and the machine's bandwidths.
type planner struct {
	j     *Job
	d     *dag
	D, R  int
	bytes int64
	alpha []float64 // R x R
	beta  []float64
	items [][]collectives.Item
	stats Stats

	devFree []float64 // estimated end of each device's last kernel
	// outFree and inFree are when each rank's outgoing and incoming
	// copies are estimated to be done: a rank's sends leave one after
	// another (its send queue), and so, the plan assumes, do its
	// receives (its link in).
	outFree, inFree []float64
	finish          []float64 // by task
	lastOn          []int32   // by device: its last compute item (bsp tokens)

	// The current version of each tile: which devices hold it (a bit
	// each), whether host memory does and behind which port (-1: every
	// port, the initial matrices), and per rank the item that made it
	// available there and when.
	where    []uint64
	hostHas  []bool
	hostPort []int32
	itemAt   []int32 // tile*R + rank
	availAt  []float64
	sends    [][]sendRec // sends of the current version from devices

	// LRU per device, linked by tile: most recently used at head.
	prev, next []int32 // d*tiles + tile
	head, tail []int32
	count      []int
	inCache    []bool

	tag      int
	goItem   []int32 // bsp: each rank's last barrier release (-1 none)
	curStep  int32
	in       []int32 // the tiles of the task being placed: not evicted
	writeBck []int32 // per device: the write-back send a new tile's receive waits for (-1)
}

type sendRec struct{ rank, item int32 }

func newPlanner(j *Job, d *dag) *planner {
	D, R := j.Devices, j.Ranks()
	p := &planner{j: j, d: d, D: D, R: R, bytes: j.tileBytes(),
		alpha: make([]float64, R*R), beta: make([]float64, R*R), items: make([][]collectives.Item, R),
		devFree: make([]float64, D), outFree: make([]float64, R), inFree: make([]float64, R), finish: make([]float64, len(d.tasks)), lastOn: make([]int32, D),
		where: make([]uint64, d.tiles), hostHas: make([]bool, d.tiles), hostPort: make([]int32, d.tiles),
		itemAt: make([]int32, d.tiles*R), availAt: make([]float64, d.tiles*R), sends: make([][]sendRec, d.tiles),
		prev: make([]int32, D*d.tiles), next: make([]int32, D*d.tiles), head: make([]int32, D), tail: make([]int32, D),
		count: make([]int, D), inCache: make([]bool, D*d.tiles), goItem: make([]int32, R), writeBck: make([]int32, D)}
	for s := range R {
		for t := range R {
			if s != t {
				p.alpha[s*R+t], p.beta[s*R+t] = j.Cost(s, t)
			}
		}
	}
	for i := range p.hostHas {
		p.hostHas[i], p.hostPort[i] = true, -1
	}
	for i := range p.itemAt {
		p.itemAt[i] = -1
	}
	for i := range D {
		p.head[i], p.tail[i], p.lastOn[i], p.writeBck[i] = -1, -1, -1, -1
	}
	for i := range p.goItem {
		p.goItem[i] = -1
	}
	p.stats.DeviceIn, p.stats.DeviceOut = make([]int64, D), make([]int64, D)
	return p
}

func (p *planner) add(r int, it collectives.Item) int32 {
	p.items[r] = append(p.items[r], it)
	return int32(len(p.items[r]) - 1)
}

func (p *planner) xfer(s, t int) float64 {
	return p.alpha[s*p.R+t] + float64(p.bytes)*p.beta[s*p.R+t]
}

// run plans every task, then writes back what only devices hold.
func (p *planner) run() error {
	n := len(p.d.tasks)
	pending := make([]int32, n)
	ready := make([]float64, n)
	q := &readyQueue{at: ready, step: make([]int32, n), byStp: p.j.Scheduler == "bsp"}
	for i := range n {
		pending[i] = int32(len(p.d.deps[i]))
		q.step[i] = p.d.tasks[i].step
		if pending[i] == 0 {
			heap.Push(q, int32(i))
		}
	}
	for q.Len() > 0 {
		id := heap.Pop(q).(int32)
		tk := &p.d.tasks[id]
		if q.byStp && tk.step != p.curStep {
			p.barrier()
			p.curStep = tk.step
		}
		p.place(id, ready[id])
		p.stats.Tasks++
		for _, s := range p.d.succ[id] {
			ready[s] = math.Max(ready[s], p.finish[id])
			if pending[s]--; pending[s] == 0 {
				heap.Push(q, s)
			}
		}
	}
	end := 0.0
	for _, f := range p.devFree {
		end = max(end, f)
	}
	for x := range p.d.tiles {
		if !p.hostHas[x] {
			a := bits.TrailingZeros64(p.where[x])
			at := p.writeBack(int32(x), a)
			end = max(end, at)
		}
	}
	p.stats.Estimate = end
	return nil
}

// arrival estimates when tile x could be on device e, and from where.
func (p *planner) arrival(x int32, e int) (at float64, src int, staged bool) {
	R := p.R
	if p.where[x]&(1<<e) != 0 {
		return p.availAt[int(x)*R+e], e, false
	}
	if p.j.PeerFirst {
		// The nearest device whose copy is in place by the time this
		// device could take a tile in (its link in is free).
		peer, cost := -1, math.Inf(1)
		for m := p.where[x]; m != 0; m &= m - 1 {
			a := bits.TrailingZeros64(m)
			if c := p.xfer(a, e); p.availAt[int(x)*R+a] <= p.inFree[e] && c < cost {
				peer, cost = a, c
			}
		}
		if peer >= 0 {
			return p.fromPeer(x, peer, e), peer, p.j.Staged
		}
	}
	at, src = math.Inf(1), -1
	if p.hostHas[x] {
		port := int(p.hostPort[x])
		if port < 0 {
			port = p.D + e
		}
		at, src = p.hop(p.availAt[int(x)*R+port], port, e), port
	}
	for m := p.where[x]; m != 0; m &= m - 1 {
		a := bits.TrailingZeros64(m)
		if t := p.fromPeer(x, a, e); t <= at { // a peer over host memory on a tie: BLASX's second-level cache
			at, src, staged = t, a, p.j.Staged
		}
	}
	return at, src, staged
}

// fromPeer estimates when tile x, held by device a, could land on device
// e: peer to peer, or through a's host memory port when Staged.
func (p *planner) fromPeer(x int32, a, e int) float64 {
	t := p.availAt[int(x)*p.R+a]
	if p.j.Staged {
		return p.hop(p.hop(t, a, p.D+a), p.D+a, e)
	}
	return p.hop(t, a, e)
}

// hop estimates when a tile ready on s at ready lands on t: once both
// ranks' queues are free, after the latency and its bytes at the path's
// bandwidth.
func (p *planner) hop(ready float64, s, t int) float64 {
	return max(ready, p.outFree[s], p.inFree[t]) + p.xfer(s, t)
}

// inputs are a task's tiles: what it reads and the tile it updates.
func inputs(tk *task, buf []int32) []int32 {
	return append(append(buf[:0], tk.reads...), tk.write)
}

// place chooses task id's device and plans its transfers and kernel.
func (p *planner) place(id int32, depsReady float64) {
	tk := &p.d.tasks[id]
	p.in = inputs(tk, p.in)
	in := p.in
	kt := p.j.kernelTime(tk.kind)
	best, bestAt := 0, math.Inf(1)
	switch p.j.Scheduler {
	case "bsp":
		best = p.owner(tk.write)
	case "dynamic":
		for e := range p.D {
			if p.devFree[e] < p.devFree[best] {
				best = e
			}
		}
	default:
		// The device holding the tile the task writes (it stays where it
		// was last written: owner computes, the owners found at first
		// touch); for a tile on no device, or on several, the device
		// among them estimated to finish the task first, counting the
		// fetches (StarPU's dmda).
		holders := p.where[tk.write]
		if holders == 0 {
			holders = 1<<p.D - 1
		}
		for m := holders; m != 0; m &= m - 1 {
			e := bits.TrailingZeros64(m)
			start := math.Max(p.devFree[e], depsReady)
			for _, x := range in {
				a, _, _ := p.arrival(x, e)
				start = math.Max(start, a)
			}
			if start+kt < bestAt {
				best, bestAt = e, start+kt
			}
		}
	}
	e := best
	R := p.R
	var after []int32
	start := math.Max(p.devFree[e], depsReady)
	for _, x := range in {
		if p.where[x]&(1<<e) != 0 {
			p.stats.Hits++
			p.touch(e, x)
		} else {
			p.stats.Misses++
			p.bring(x, e)
		}
		if it := p.itemAt[int(x)*R+e]; it >= 0 {
			after = append(after, it)
		}
		start = math.Max(start, p.availAt[int(x)*R+e])
	}
	// Write after read: sends of the tile's current version from this
	// device must have taken it before the kernel overwrites it.
	for _, s := range p.sends[tk.write] {
		if int(s.rank) == e {
			after = append(after, s.item)
		}
	}
	if g := p.goItem[e]; g >= 0 {
		after = append(after, g)
	}
	if p.j.Data {
		// Each task copies what it reads of each tile (its version's
		// token) when it starts, and writes its own token when it ends:
		// the run then shows which version every task saw.
		var seen []int32
		for k, y := range in {
			seen = append(seen, p.add(e, collectives.Item{Kind: collectives.Copy, Lane: laneCompute, Async: true, After: after,
				Src: sim.Region{Buf: bufTiles, Off: int64(y), Count: 1}, Data: sim.Region{Buf: bufSeen, Off: int64(3*int(id) + k), Count: 1}}))
		}
		after = append(after, seen...)
	}
	item := p.add(e, collectives.Item{Kind: collectives.Compute, Lane: laneCompute, Dur: seconds(kt), After: after})
	if p.j.Data {
		item = p.add(e, collectives.Item{Kind: collectives.Copy, Lane: laneCompute, After: []int32{item},
			Src: sim.Region{Buf: bufTokens, Off: int64(id), Count: 1}, Data: sim.Region{Buf: bufTiles, Off: int64(tk.write), Count: 1}})
	}
	end := start + kt
	p.devFree[e], p.finish[id], p.lastOn[e] = end, end, item
	// The new version: on e alone.
	x := tk.write
	for m := p.where[x] &^ (1 << e); m != 0; m &= m - 1 {
		p.drop(bits.TrailingZeros64(m), x)
	}
	p.where[x], p.hostHas[x], p.sends[x] = 1<<e, false, p.sends[x][:0]
	p.itemAt[int(x)*R+e], p.availAt[int(x)*R+e] = item, end
}

// owner is the bsp scheduler's device for a tile: 1D block-cyclic by tile
// column (GEMM: tiles dealt in turn).
func (p *planner) owner(x int32) int {
	t := p.j.Tiles
	if p.j.Algorithm == "gemm" {
		return int(x) % (t * t) % p.D
	}
	return int(x) % t % p.D
}

// bring moves tile x's current version to device e, making room first.
func (p *planner) bring(x int32, e int) {
	at, src, staged := p.arrival(x, e)
	if staged {
		p.writeBack(x, src)
		src = int(p.hostPort[x])
		at = p.hop(p.availAt[int(x)*p.R+src], src, e)
	}
	if src < 0 {
		src = p.D + e
	}
	p.makeRoom(e)
	p.transfer(x, src, e, at)
	p.insert(e, x)
	p.where[x] |= 1 << e
}

// transfer sends tile x from rank s to device or port t, arriving (by the
// estimate) at at.
func (p *planner) transfer(x int32, s, t int, at float64) {
	R := p.R
	tag := p.tag % (collectives.MaxP2PTag + 1)
	p.tag++
	send := collectives.Item{Kind: collectives.Send, Lane: laneOut, Async: true, Peer: t, Tag: tag, Bytes: p.bytes}
	if p.j.Data {
		send.Data = sim.Region{Buf: bufTiles, Off: int64(x), Count: 1}
	}
	if it := p.itemAt[int(x)*R+s]; it >= 0 {
		send.After = []int32{it}
	}
	if g := p.goItem[s]; g >= 0 {
		send.After = append(send.After, g)
	}
	si := p.add(s, send)
	recv := collectives.Item{Kind: collectives.Recv, Lane: laneIn, Async: true, Peer: s, Tag: tag, Bytes: p.bytes, Data: send.Data}
	if t < p.D && p.writeBck[t] >= 0 {
		recv.After = []int32{p.writeBck[t]}
	}
	ri := p.add(t, recv)
	p.itemAt[int(x)*R+t], p.availAt[int(x)*R+t] = ri, at
	p.outFree[s], p.inFree[t] = at, at
	if s < p.D {
		p.sends[x] = append(p.sends[x], sendRec{int32(s), si})
		p.stats.DeviceOut[s] += p.bytes
	}
	if t < p.D {
		p.stats.DeviceIn[t] += p.bytes
	}
	switch {
	case s < p.D && t < p.D:
		p.stats.PeerToPeer += p.bytes
	case s < p.D:
		p.stats.DeviceToHost += p.bytes
	default:
		p.stats.HostToDevice += p.bytes
	}
}

// writeBack copies tile x's current version from device a to host memory
// behind port D+a and returns when it lands.
func (p *planner) writeBack(x int32, a int) float64 {
	port := p.D + a
	at := p.hop(p.availAt[int(x)*p.R+a], a, port)
	p.transfer(x, a, port, at)
	p.hostHas[x], p.hostPort[x] = true, int32(port)
	return at
}

// makeRoom evicts device e's least recently used tile that the current
// task does not use, writing it back first when no one else holds it.
func (p *planner) makeRoom(e int) {
	if p.j.Capacity == 0 || p.count[e] < p.j.Capacity {
		return
	}
	for x := p.tail[e]; x >= 0; x = p.prev[e*p.d.tiles+int(x)] {
		if pinned(p.in, x) {
			continue
		}
		if p.where[x] == 1<<e && !p.hostHas[x] {
			p.writeBack(x, e)
			// The tile that takes its place lands once it has left.
			p.writeBck[e] = p.sends[x][len(p.sends[x])-1].item
		}
		p.drop(e, x)
		return
	}
}

func pinned(in []int32, x int32) bool {
	for _, y := range in {
		if y == x {
			return true
		}
	}
	return false
}

// drop removes tile x from device e's cache.
func (p *planner) drop(e int, x int32) {
	i := e*p.d.tiles + int(x)
	if !p.inCache[i] {
		p.where[x] &^= 1 << e
		return
	}
	p.unlink(e, x)
	p.inCache[i] = false
	p.count[e]--
	p.where[x] &^= 1 << e
}

func (p *planner) insert(e int, x int32) {
	i := e*p.d.tiles + int(x)
	p.inCache[i] = true
	p.count[e]++
	p.pushFront(e, x)
}

func (p *planner) touch(e int, x int32) {
	if !p.inCache[e*p.d.tiles+int(x)] {
		// Written here (a kernel's output): cached from now on.
		p.makeRoom(e)
		p.insert(e, x)
		return
	}
	p.unlink(e, x)
	p.pushFront(e, x)
}

func (p *planner) unlink(e int, x int32) {
	base := e * p.d.tiles
	pv, nx := p.prev[base+int(x)], p.next[base+int(x)]
	if pv >= 0 {
		p.next[base+int(pv)] = nx
	} else {
		p.head[e] = nx
	}
	if nx >= 0 {
		p.prev[base+int(nx)] = pv
	} else {
		p.tail[e] = pv
	}
}

func (p *planner) pushFront(e int, x int32) {
	base := e * p.d.tiles
	p.prev[base+int(x)], p.next[base+int(x)] = -1, p.head[e]
	if h := p.head[e]; h >= 0 {
		p.prev[base+int(h)] = x
	} else {
		p.tail[e] = x
	}
	p.head[e] = x
}

// barrier ends a bsp step: every device tells host port D it is done
// with its kernels, and D tells every device and port to go on.
func (p *planner) barrier() {
	hub := p.D
	var got []int32
	at := 0.0
	for e := range p.D {
		tok := collectives.Item{Kind: collectives.Send, Lane: laneOut, Async: true, Peer: hub, Tag: p.nextTag()}
		if p.lastOn[e] >= 0 {
			tok.After = []int32{p.lastOn[e]}
		}
		p.add(e, tok)
		got = append(got, p.add(hub, collectives.Item{Kind: collectives.Recv, Lane: laneIn, Async: true, Peer: e, Tag: tok.Tag}))
		at = max(at, p.devFree[e]+p.alpha[e*p.R+hub])
	}
	for r := range p.R {
		if r == hub {
			continue
		}
		tag := p.nextTag()
		p.add(hub, collectives.Item{Kind: collectives.Send, Lane: laneOut, Async: true, Peer: r, Tag: tag, After: got})
		p.goItem[r] = p.add(r, collectives.Item{Kind: collectives.Recv, Lane: laneCompute, Peer: hub, Tag: tag})
		if r < p.D {
			p.devFree[r] = at + p.alpha[hub*p.R+r]
		}
	}
	p.goItem[hub] = p.add(hub, collectives.Item{Kind: collectives.Compute, Lane: laneCompute, After: got})
}

func (p *planner) nextTag() int {
	t := p.tag % (collectives.MaxP2PTag + 1)
	p.tag++
	return t
}
