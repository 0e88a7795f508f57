package dnn

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads"
)

// Kinds of communication, as the breakdown names them.
const (
	KindTP      = "tp"      // tensor-parallel allreduces
	KindDP      = "dp"      // data-parallel gradient allreduces (and compression)
	KindPP      = "pp"      // pipeline sends and receives, and the tied weights' gradient allreduce between stages
	KindZeRO    = "zero"    // ZeRO-3 allgathers and reduce-scatters
	KindOffload = "offload" // activation copies to and from host memory
)

// Lanes of a rank: compute (and what blocks it), the data-parallel or
// ZeRO gather stream, a third for reduce-scatters and copies to the host,
// and a fourth for copies back: a host link (PCIe, NVLink-C2C) carries
// both directions at once, as CUDA's copy engines use it.
const (
	laneCompute = 0
	laneComm    = 1
	laneAux     = 2
	laneReload  = 3
	lanes       = 4
)

// Communicator contexts (pipeline messages are point-to-point: 0).
const (
	ctxTP = 1 + iota
	ctxDP
	ctxGather
	ctxScatter
	ctxTied
)

// FreeTags picks the messages of the kinds in free, by their context.
func FreeTags(free map[string]bool) func(tag int32) bool {
	var ctx [ctxTied + 1]bool
	ctx[0], ctx[ctxTied] = free[KindPP], free[KindPP]
	ctx[ctxTP] = free[KindTP]
	ctx[ctxDP] = free[KindDP]
	ctx[ctxGather], ctx[ctxScatter] = free[KindZeRO], free[KindZeRO]
	return func(tag int32) bool {
		c := collectives.ContextOf(tag)
		return c < len(ctx) && ctx[c]
	}
}

// Composition returns the step as per-rank programs. free lists kinds of
// communication that cost nothing (the breakdown's runs): their messages
// are the ones FreeTags picks, for sim.Instant to deliver at once; their
// device work (compression, host copies) takes no time.
func (j *Job) Composition(free map[string]bool) (collectives.Composition, error) {
	if err := j.Check(0); err != nil {
		return collectives.Composition{}, err
	}
	// A name that is no algorithm is an error here rather than in the
	// middle of a run (one a call cannot run with stops the run, naming
	// the call).
	for _, c := range []collectives.Collective{collectives.Allreduce, collectives.Allgather, collectives.ReduceScatter} {
		if name := j.algorithm(c); name != "" && !collectives.IsSelector(name) {
			if _, err := collectives.Lookup(c, name); err != nil {
				return collectives.Composition{}, fmt.Errorf("--algo %s=%s: %w", c, name, err)
			}
		}
	}
	bounds := j.stages()
	mp := j.mapping()
	tiedLayer, tiedStage := -1, -1
	if i := slices.IndexFunc(j.Model.Layers, func(l Layer) bool { return l.Tied > 0 }); i >= 0 {
		// The stage whose layers, from bounds[st], hold layer i.
		tiedLayer, tiedStage = i, sort.SearchInts(bounds, i+1)-1
	}
	return collectives.Composition{
		Name:  j.Model.Name,
		Ranks: j.Devices(),
		Lanes: lanes,
		Script: func(r int) collectives.Script {
			d, t, s := mp.coords(r)
			rs := &rankScript{j: j, mp: mp, free: free, d: d, t: t, s: s, lo: bounds[s], hi: bounds[s+1], bounds: bounds, tiedLayer: tiedLayer, tiedStage: tiedStage, calls: map[callKey]*collectives.Call{}, lastCompute: -1, prevCompute: -1, prev2Compute: -1, lastLayer: -1}
			rs.plan()
			rs.phased = &workloads.Phased{Fill: rs.fill}
			return rs.phased
		},
	}, nil
}

func (j *Job) algorithm(c collectives.Collective) string {
	if a, ok := j.Strategy.Algorithms[string(c)]; ok {
		return a
	}
	return ""
}

type callKey struct {
	ctx   int
	c     collectives.Collective
	count int64
}

// rankScript writes one rank's step, phase by phase: a forward or a
// backward pass of one microbatch, then the gradient exchange.
type rankScript struct {
	j       *Job
	phased  *workloads.Phased
	mp      mapping
	free    map[string]bool
	d, t, s int
	lo, hi  int // the stage's layers
	bounds  []int
	// The layer that ties its weights to the first layer's, and its
	// stage (-1: none).
	tiedLayer, tiedStage int
	calls                map[callKey]*collectives.Call
	// The rank's groups, built on first use.
	tpGroup, dpGroup collectives.Group
	phases           []phase
	next             int
	err              error

	// Per microbatch: the item that copied its activations to the host,
	// and the one that brought them back ahead of its backward pass; and
	// the copies out in order, so that a forward pass waits for the one
	// two back (no more than one being copied out beside the one in use).
	offloaded, reloaded map[int]int32
	outs                []int32
	// The backward compute item of each layer in the last backward pass,
	// and the bucket being filled.
	bucketBytes int64
	bucketLast  int32
	bucketEnds  []bool  // the layers at which a bucket is complete (buckets)
	held        []int64 // buckets waiting for the end of the backward pass
	// ZeRO: the compute items of the last two layers computed, in this
	// pass or the one before; a layer's gather waits for the one two
	// layers back, so that it runs while the layer before computes (one
	// layer prefetched, as DeepSpeed's stage 3 does), and no further
	// ahead, across passes too (memory holds one gathered layer more).
	prevCompute, prev2Compute int32
	// lastLayer is the layer computed last (-1: none): a pass that starts
	// with it (the backward after a forward; a stage of one layer) still
	// has it gathered, and does not gather it again.
	lastLayer int
	// The compute lane's last compute item (-1: none yet).
	lastCompute int32
}

type phase struct {
	backward bool
	mb       int
	last     bool // the last backward pass: gradients are exchanged in it
}

// plan orders the stage's passes: GPipe runs every forward pass then every
// backward pass; 1F1B runs pp-s-1 forward passes, then alternates one
// forward and one backward, then drains the backward passes.
func (rs *rankScript) plan() {
	st := rs.j.Strategy
	m := st.Microbatches
	if st.Inference {
		for k := range m {
			rs.phases = append(rs.phases, phase{mb: k})
		}
		return
	}
	fwd := func(k int) { rs.phases = append(rs.phases, phase{mb: k}) }
	bwd := func(k int) { rs.phases = append(rs.phases, phase{backward: true, mb: k, last: k == m-1}) }
	if st.Schedule == "gpipe" {
		for k := range m {
			fwd(k)
		}
		for k := range m {
			bwd(k)
		}
		return
	}
	warm := min(st.PP-rs.s-1, m)
	for k := range warm {
		fwd(k)
	}
	for i := range m - warm {
		fwd(warm + i)
		bwd(i)
	}
	for k := m - warm; k < m; k++ {
		bwd(k)
	}
}

func (rs *rankScript) fill(w *workloads.Writer) bool {
	if rs.next == len(rs.phases) {
		return false
	}
	ph := rs.phases[rs.next]
	rs.next++
	if ph.backward {
		rs.backward(w, ph)
	} else {
		rs.forward(w, ph)
	}
	return true
}

// peer is the rank of the same dp and tp coordinates in stage s.
func (rs *rankScript) peer(s int) int { return rs.mp.rank(rs.d, rs.t, s) }

// group is the rank's tensor- or data-parallel group and its position
// in it, built once per rank.
func (rs *rankScript) group(axis string) (collectives.Group, int) {
	if axis == "tp" {
		if rs.tpGroup == nil {
			for t := range rs.j.Strategy.TP {
				rs.tpGroup = append(rs.tpGroup, rs.mp.rank(rs.d, t, rs.s))
			}
		}
		return rs.tpGroup, rs.t
	}
	if axis == "tied" {
		if rs.s == 0 {
			return collectives.Group{rs.mp.rank(rs.d, rs.t, 0), rs.peer(rs.tiedStage)}, 0
		}
		return collectives.Group{rs.peer(0), rs.mp.rank(rs.d, rs.t, rs.s)}, 1
	}
	if rs.dpGroup == nil {
		for d := range rs.j.Strategy.DP {
			rs.dpGroup = append(rs.dpGroup, rs.mp.rank(d, rs.t, rs.s))
		}
	}
	return rs.dpGroup, rs.d
}

// call adds this rank's part of a collective of bytes on axis's group.
func (rs *rankScript) call(w *workloads.Writer, c collectives.Collective, ctx int, axis string, bytes int64, lane uint16, after ...int32) int32 {
	const elem = 2 // 16-bit elements; odd byte counts round up
	count := (bytes + elem - 1) / elem
	g, pos := rs.group(axis)
	if c == collectives.Allgather || c == collectives.ReduceScatter {
		count = (count + int64(len(g)) - 1) / int64(len(g)) * int64(len(g)) // whole blocks
	}
	k := callKey{ctx, c, count}
	call, ok := rs.calls[k]
	if !ok {
		// The machine's nodes as the group's members see them (block
		// placement), for hierarchical algorithms.
		p := collectives.Params{Count: count, ElemSize: elem, NodeSize: collectives.SubHierarchy(g, rs.j.NodeSize)}
		var err error
		call, err = collectives.NewCall(c, rs.j.algorithm(c), g, p, ctx)
		if err != nil {
			rs.phased.Error = fmt.Errorf("%s of %d bytes on %d ranks: %w", c, bytes, len(g), err)
			return w.Add(collectives.Item{Kind: collectives.Compute, Lane: lane})
		}
		if tune := rs.j.Tune; tune != nil {
			p := call.Params
			tune(call.Algorithm, &p)
			if tuned, err := collectives.NewCall(c, call.Algorithm.Name, g, p, ctx); err == nil {
				tuned.Rule = call.Rule
				call = tuned
			}
		}
		rs.calls[k] = call
	}
	return w.Add(collectives.Item{Kind: collectives.CallItem, Call: call, Pos: pos, Lane: lane, After: after})
}

func (rs *rankScript) compute(w *workloads.Writer, d sim.Time, lane uint16, after ...int32) int32 {
	idx := w.Add(collectives.Item{Kind: collectives.Compute, Dur: d, Lane: lane, After: after})
	if lane == laneCompute {
		rs.lastCompute = idx
	}
	return idx
}

// p2p adds a pipeline send (asynchronous, as MPI_Isend) or receive.
func (rs *rankScript) p2p(w *workloads.Writer, send bool, peer, tag int, bytes int64) {
	it := collectives.Item{Kind: collectives.Recv, Peer: peer, Tag: tag, Bytes: bytes}
	if send {
		it.Kind, it.Async = collectives.Send, true
	}
	w.Add(it)
}

func (rs *rankScript) layer(i int) *Layer { return &rs.j.Model.Layers[i] }

func (rs *rankScript) outBytes(i int) int64 {
	return mulSat(rs.layer(i).OutBytes, int64(rs.j.Strategy.MicroBatch))
}

// stageActs are the activations one microbatch leaves on the device.
func (rs *rankScript) stageActs() int64 {
	var b int64
	for i := rs.lo; i < rs.hi; i++ {
		l := rs.layer(i)
		div := int64(1)
		if l.TP {
			div = int64(rs.j.Strategy.TP)
		}
		b = addSat(b, mulSat(ceilDiv(l.ActBytes-l.ActShared, div)+l.ActShared, int64(rs.j.Strategy.MicroBatch)))
	}
	return b
}

// layerPass adds one layer's forward or backward compute, cut where its
// tensor-parallel allreduces fall; it returns the last compute item.
func (rs *rankScript) layerPass(w *workloads.Writer, i int, backward bool, after ...int32) int32 {
	l := rs.layer(i)
	d := rs.j.layerTime(l, backward)
	n := l.TPFwd
	if backward {
		n = l.TPBwd
	}
	if rs.j.Strategy.TP == 1 || !l.TP {
		n = 0
	}
	part := d / sim.Time(n+1)
	last := rs.compute(w, d-part*sim.Time(n), laneCompute, after...)
	for range n {
		rs.call(w, collectives.Allreduce, ctxTP, "tp", mulSat(cmp.Or(l.TPBytes, l.OutBytes), int64(rs.j.Strategy.MicroBatch)), laneCompute)
		last = rs.compute(w, part, laneCompute)
	}
	return last
}

// params are the parameters of layer l the rank holds (heldParams).
func (rs *rankScript) params(l *Layer) int64 { return l.heldParams(rs.j.Strategy.TP, rs.lo) }

func (rs *rankScript) gather(w *workloads.Writer, i int) int32 {
	l := rs.layer(i)
	after := []int32{}
	if rs.prev2Compute >= 0 {
		after = append(after, rs.prev2Compute)
	}
	return rs.call(w, collectives.Allgather, ctxGather, "dp", 2*l.gathered(rs.j.Strategy.TP), laneComm, after...)
}

func (rs *rankScript) forward(w *workloads.Writer, ph phase) {
	st := rs.j.Strategy
	if rs.s > 0 {
		rs.p2p(w, false, rs.peer(rs.s-1), 2*ph.mb, rs.outBytes(rs.lo-1))
	}
	rs.prefetch(w)
	wait := rs.outWait()
	var last int32
	for i := rs.lo; i < rs.hi; i++ {
		after := wait
		wait = nil
		if st.ZeRO3 && st.DP > 1 && i != rs.lastLayer {
			after = append(after, rs.gather(w, i))
		}
		last = rs.layerPass(w, i, false, after...)
		rs.prevCompute, rs.prev2Compute, rs.lastLayer = last, rs.prevCompute, i
	}
	if next := rs.nextPhase(); st.Offload && !(next.backward && next.mb == ph.mb) {
		// (A microbatch whose backward pass comes right after, as on
		// 1F1B's last stage, stays on the device: out and back would
		// only stall it.)
		if rs.offloaded == nil {
			rs.offloaded = map[int]int32{}
		}
		cp := rs.copy(w, laneAux, last)
		rs.offloaded[ph.mb] = cp
		rs.outs = append(rs.outs, cp)
		if st.OffloadSerial { // the compute lane waits for the copy (not the copy's CPU: it is no compute)
			rs.compute(w, 0, laneCompute, cp)
		}
	}
	if rs.s < st.PP-1 {
		rs.p2p(w, true, rs.peer(rs.s+1), 2*ph.mb, rs.outBytes(rs.hi-1))
	}
}

// copy moves one microbatch's activations between device and host.
func (rs *rankScript) copy(w *workloads.Writer, lane uint16, after ...int32) int32 {
	d := sim.Time(0)
	if !rs.free[KindOffload] {
		d = sim.FromSeconds(float64(rs.stageActs()) / rs.j.Device.HostLink)
	}
	return rs.compute(w, d, lane, after...)
}

// reload copies microbatch mb's activations back from the host, once
// they are there and the items in after are done.
func (rs *rankScript) reload(w *workloads.Writer, mb int, after ...int32) int32 {
	after = append(after, rs.offloaded[mb])
	delete(rs.offloaded, mb)
	return rs.copy(w, laneReload, after...)
}

// outWait is what a phase's first compute waits for beside compute: every
// copy out but the last (so that one, at most, is on its way while the
// phase runs).
func (rs *rankScript) outWait() []int32 {
	if st := rs.j.Strategy; !st.Offload || st.OffloadSerial || len(rs.outs) < 2 {
		return nil
	}
	return []int32{rs.outs[len(rs.outs)-2]}
}

// nextPhase is the phase scripted after the one being scripted (a
// forward pass of microbatch -1 when none is).
func (rs *rankScript) nextPhase() phase {
	if rs.next < len(rs.phases) {
		return rs.phases[rs.next]
	}
	return phase{mb: -1}
}

// prefetch, at the start of a phase, brings back the activations of the
// backward pass that comes right after it, beside it: no sooner than the
// phase begins (the end of the compute before it), so that the device
// holds at most three microbatches' activations (Memory): the one in
// use, one being copied out and one being brought back.
func (rs *rankScript) prefetch(w *workloads.Writer) {
	st := rs.j.Strategy
	next := rs.nextPhase()
	if !st.Offload || st.OffloadSerial || !next.backward {
		return
	}
	if _, out := rs.offloaded[next.mb]; !out {
		return
	}
	if rs.reloaded == nil {
		rs.reloaded = map[int]int32{}
	}
	// Also after every copy out but the last, as the phase's compute: the
	// device holds the one in use, one going out and this one.
	rs.reloaded[next.mb] = rs.reload(w, next.mb, append(rs.outWait(), rs.lastCompute)...)
}

func (rs *rankScript) backward(w *workloads.Writer, ph phase) {
	st := rs.j.Strategy
	if rs.s < st.PP-1 {
		rs.p2p(w, false, rs.peer(rs.s+1), 2*ph.mb+1, rs.outBytes(rs.hi-1))
	}
	var reload []int32
	if st.Offload {
		r, ok := rs.reloaded[ph.mb]
		if _, out := rs.offloaded[ph.mb]; !ok && out {
			// Not brought back ahead (the serial copies are in the
			// compute's way: after what it did last).
			r, ok = rs.reload(w, ph.mb, rs.lastCompute), true
		}
		if ok {
			delete(rs.reloaded, ph.mb)
			reload = append(reload, r)
		}
	}
	rs.prefetch(w)
	reload = append(reload, rs.outWait()...)
	rs.bucketBytes, rs.bucketLast = 0, -1
	if ph.last && rs.bucketEnds == nil {
		rs.bucketEnds = rs.buckets()
	}
	for i := rs.hi - 1; i >= rs.lo; i-- {
		l := rs.layer(i)
		after := reload
		reload = nil
		if st.ZeRO3 && st.DP > 1 && i != rs.lastLayer {
			after = append(after, rs.gather(w, i))
		}
		if st.Recompute {
			rs.layerPass(w, i, false, after...)
			after = nil
		}
		done := rs.layerPass(w, i, true, after...)
		rs.prevCompute, rs.prev2Compute, rs.lastLayer = done, rs.prevCompute, i
		grads := rs.params(l) * st.GradBytes
		switch {
		case st.DP == 1:
		case st.ZeRO3:
			rs.call(w, collectives.ReduceScatter, ctxScatter, "dp", grads, laneAux, done)
		case ph.last:
			rs.bucketBytes += grads
			rs.bucketLast = done
			if rs.bucketEnds[i-rs.lo] && rs.bucketBytes > 0 {
				rs.closeBucket(w)
			}
		}
	}
	if ph.last && rs.bucketBytes > 0 {
		rs.closeBucket(w)
	}
	if rs.s > 0 {
		rs.p2p(w, true, rs.peer(rs.s-1), 2*ph.mb+1, rs.outBytes(rs.lo-1))
	}
	for _, b := range rs.held { // no overlap: after the whole backward pass, on the compute lane
		rs.exchange(w, b, laneCompute, nil)
	}
	rs.held = nil
	if ph.last {
		rs.tiedExchange(w)
	}
}

// tiedExchange allreduces the gradients of the tied weights between the
// first stage and the stage that keeps a copy of them, on ranks of the
// same dp and tp coordinates, after the stage's data-parallel exchange:
// Megatron-LM's finalize_model_grads syncs the data-parallel gradients,
// then allreduces the embedding group's.
func (rs *rankScript) tiedExchange(w *workloads.Writer) {
	if rs.tiedStage <= 0 || rs.s != 0 && rs.s != rs.tiedStage {
		return
	}
	st := rs.j.Strategy
	lane := uint16(laneComm)
	switch {
	case st.NoOverlap:
		lane = laneCompute
	case st.ZeRO3 && st.DP > 1:
		lane = laneAux
	}
	bytes := rs.layer(rs.tiedLayer).tiedCopy(st.TP, rs.bounds[rs.tiedStage]) * st.GradBytes
	rs.call(w, collectives.Allreduce, ctxTied, "tied", bytes, lane, rs.lastCompute)
}

// buckets marks the stage's layers at which the backward pass completes
// a gradient bucket, as DDP assigns them once it has rebuilt its buckets
// in the order gradients become ready (Reducer::rebuild_buckets, the
// steady state of a training run): from the last layer down, the first
// bucket closing once it holds FirstBucketBytes (1 MiB), each later one
// once it holds BucketBytes, what is left over, the first layers', last.
// (For one step collsim filled them in layer order instead, leaving the
// small bucket for last, which is DDP's only with DDP_SET_LAST_BUCKET_CAP
// set: a test audit read the reducer.)
func (rs *rankScript) buckets() []bool {
	st := rs.j.Strategy
	ends := make([]bool, rs.hi-rs.lo)
	limit, held := st.FirstBucketBytes, int64(0)
	for i := rs.hi - 1; i >= rs.lo; i-- {
		l := rs.layer(i)
		held += rs.params(l) * st.GradBytes
		if held >= limit {
			ends[i-rs.lo] = true
			held, limit = 0, st.BucketBytes
		}
	}
	return ends
}

// closeBucket exchanges the bucket's gradients on the communication lane
// once its last gradient is computed (DDP), or holds it for the end of
// the backward pass (no overlap).
func (rs *rankScript) closeBucket(w *workloads.Writer) {
	if rs.j.Strategy.NoOverlap {
		rs.held = append(rs.held, rs.bucketBytes)
	} else {
		rs.exchange(w, rs.bucketBytes, laneComm, []int32{rs.bucketLast})
	}
	rs.bucketBytes, rs.bucketLast = 0, -1
}

// exchange allreduces bytes of gradients on lane after the items in
// after, compressed first when the strategy says so.
func (rs *rankScript) exchange(w *workloads.Writer, bytes int64, lane uint16, after []int32) {
	st := rs.j.Strategy
	c := st.Compression
	if c.Ratio == 1 {
		rs.call(w, collectives.Allreduce, ctxDP, "dp", bytes, lane, after...)
		return
	}
	free := rs.free[KindDP]
	coded := int64(float64(bytes)/c.Ratio + 0.5)
	codec := func(b float64) sim.Time {
		if free {
			return 0
		}
		return sim.FromSeconds(b / c.Throughput)
	}
	rs.compute(w, codec(float64(bytes)), lane, after...)
	if c.Exchange == "allgather" {
		rs.call(w, collectives.Allgather, ctxDP, "dp", coded*int64(st.DP), lane)
		rs.compute(w, codec(float64(bytes)*float64(st.DP)), lane)
		return
	}
	rs.call(w, collectives.Allreduce, ctxDP, "dp", coded, lane)
	rs.compute(w, codec(float64(bytes)), lane)
}
