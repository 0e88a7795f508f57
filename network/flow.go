package network

import (
	"fmt"
	"math"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// FlowConfig configures the flow model.
type FlowConfig struct {
	Topology  *topology.Topology
	Placement []int32 // host of each rank
	// Local is the channel between ranks placed on the same host.
	Local topology.LinkSpec
}

// Flow returns a factory for the flow model: every message is a flow on
// its route that waits out the route's latency, then shares bandwidth with
// the other flows max-min fairly (progressive filling, as SimGrid's LMM
// does for its network models): each link's capacity is divided among the
// flows crossing it, a flow getting the least share along its route, and
// capacity a flow cannot use going to the others. Rates are recomputed
// whenever a flow starts or ends; a flow's completion is rescheduled when
// its rate changes (stale completions are skipped by generation). Host
// links are links too, so NIC injection and ejection are shared the same
// way. Messages between one pair of ranks are delivered in the order they
// were sent, as MPI requires, even when a later, shorter one finishes first.
//
// This first version recomputes every active flow on each change: O(flows x
// route length) per start or end. Incremental recomputation of only the
// affected part of the network is the planned next step.
func Flow(cfg FlowConfig) (sim.NetworkFactory, error) {
	t := cfg.Topology
	if t == nil {
		return nil, fmt.Errorf("flow network: no topology")
	}
	for r, h := range cfg.Placement {
		if h < 0 || int(h) >= t.Hosts() {
			return nil, fmt.Errorf("flow network: rank %d placed on host %d, which %s does not have", r, h, t.Name())
		}
	}
	return func(eng *sim.Engine, sink sim.Sink, ranks int) (sim.Network, error) {
		if ranks > len(cfg.Placement) {
			return nil, fmt.Errorf("flow network: %d ranks but only %d placed", ranks, len(cfg.Placement))
		}
		m := &flowModel{eng: eng, sink: sink, topo: t, place: cfg.Placement, local: cfg.Local,
			capacity: make([]float64, len(t.Links())), lat: make([]sim.Time, len(t.Links())),
			order: map[[2]int32]*pairOrder{}}
		for i, l := range t.Links() {
			m.capacity[i], m.lat[i] = l.Bandwidth, sim.FromSeconds(l.Latency)
		}
		m.id = eng.Register(m)
		return m, nil
	}, nil
}

type flowModel struct {
	eng      *sim.Engine
	id       sim.HandlerID
	sink     sim.Sink
	topo     *topology.Topology
	place    []int32
	local    topology.LinkSpec
	capacity []float64  // bytes per second per link
	lat      []sim.Time // per link
	flows    []flow     // pool
	free     []int32
	active   []int32 // flows sharing bandwidth now
	last     sim.Time
	order    map[[2]int32]*pairOrder
	// scratch for the solver
	left   []float64
	users  []int32
	frozen []bool
}

type flow struct {
	id       uint32
	src, dst int32 // ranks
	route    []int32
	rem      float64 // bytes left
	rate     float64 // bytes per second
	gen      uint32  // bumped when the completion is rescheduled
	seq      uint64  // order within its pair
	active   bool
}

// pairOrder holds back deliveries that overtook an earlier message of the
// same pair.
type pairOrder struct {
	sent, next uint64
	done       map[uint64]uint32 // finished early: seq -> transfer ID
}

const (
	flowStart    = 1 // the latency has passed: the flow joins the sharing
	flowFinish   = 2 // the flow may have finished (if its generation matches)
	flowDelivery = 3 // a same-host message arrives
)

func flowArg(kind uint64, f int32, gen uint32) uint64 {
	return kind<<62 | uint64(gen)<<32 | uint64(uint32(f))
}

// Inject implements sim.Network.
func (m *flowModel) Inject(tr sim.Transfer) {
	src, dst := m.place[tr.Src], m.place[tr.Dst]
	pair := [2]int32{tr.Src, tr.Dst}
	po := m.order[pair]
	if po == nil {
		po = &pairOrder{done: map[uint64]uint32{}}
		m.order[pair] = po
	}
	f := m.newFlow()
	fl := &m.flows[f]
	*fl = flow{id: tr.ID, src: tr.Src, dst: tr.Dst, route: fl.route[:0], rem: float64(tr.Bytes), seq: po.sent}
	po.sent++
	if src == dst {
		// Same host: the local channel, not shared.
		d := sim.FromSeconds(m.local.Latency)
		if m.local.Bandwidth > 0 {
			d += sim.FromPicoseconds(float64(tr.Bytes) * 1e12 / m.local.Bandwidth)
		}
		m.eng.After(d, m.id, flowArg(flowDelivery, f, 0))
		return
	}
	fl.route = m.topo.Route(int(src), int(dst), fl.route)
	var latency sim.Time
	for _, l := range fl.route {
		latency += m.lat[l]
	}
	m.eng.After(latency, m.id, flowArg(flowStart, f, 0))
}

// Handle implements sim.Handler.
func (m *flowModel) Handle(arg uint64) {
	f := int32(uint32(arg))
	gen := uint32(arg >> 32 & (1<<30 - 1))
	switch arg >> 62 {
	case flowStart:
		m.advance()
		m.flows[f].active = true
		m.active = append(m.active, f)
		if m.flows[f].rem <= 0 {
			m.finish(f)
		}
		m.solve()
	case flowFinish:
		if !m.flows[f].active || m.flows[f].gen != gen {
			return // stale: the rate changed since this was scheduled
		}
		m.advance()
		m.finish(f)
		m.solve()
	case flowDelivery:
		m.deliver(f)
	}
}

// advance charges every active flow the bytes it moved since the last
// change.
func (m *flowModel) advance() {
	now := m.eng.Now()
	dt := (now - m.last).Seconds()
	m.last = now
	if dt <= 0 {
		return
	}
	for _, f := range m.active {
		fl := &m.flows[f]
		fl.rem -= fl.rate * dt
		if fl.rem < 1e-6 { // SimGrid's double_update: below this it is done
			fl.rem = 0
		}
	}
}

// finish takes flow f out of the sharing and delivers it.
func (m *flowModel) finish(f int32) {
	for i, a := range m.active {
		if a == f {
			m.active = append(m.active[:i], m.active[i+1:]...)
			break
		}
	}
	m.flows[f].active = false
	m.deliver(f)
}

// deliver reports flow f, holding it back if an earlier message of its pair
// is still on its way.
func (m *flowModel) deliver(f int32) {
	fl := &m.flows[f]
	po := m.order[[2]int32{fl.src, fl.dst}]
	po.done[fl.seq] = fl.id
	m.free = append(m.free, f)
	for {
		id, ok := po.done[po.next]
		if !ok {
			return
		}
		delete(po.done, po.next)
		po.next++
		m.sink.Injected(id, m.eng.Now())
		m.sink.Delivered(id)
	}
}

// solve computes max-min fair rates by progressive filling and reschedules
// the completions whose rate changed.
func (m *flowModel) solve() {
	rates := MaxMin(m.capacity, m.routes(), &m.left, &m.users, &m.frozen)
	now := m.eng.Now()
	for i, f := range m.active {
		fl := &m.flows[f]
		if rates[i] == fl.rate && fl.gen != 0 {
			continue
		}
		fl.rate = rates[i]
		fl.gen = (fl.gen + 1) & (1<<30 - 1)
		if fl.gen == 0 {
			fl.gen = 1
		}
		if fl.rate <= 0 {
			continue
		}
		m.eng.At(now+sim.FromPicoseconds(fl.rem*1e12/fl.rate), m.id, flowArg(flowFinish, f, fl.gen))
	}
}

func (m *flowModel) routes() [][]int32 {
	out := make([][]int32, len(m.active))
	for i, f := range m.active {
		out[i] = m.flows[f].route
	}
	return out
}

func (m *flowModel) newFlow() int32 {
	if n := len(m.free); n > 0 {
		f := m.free[n-1]
		m.free = m.free[:n-1]
		return f
	}
	m.flows = append(m.flows, flow{})
	return int32(len(m.flows) - 1)
}

// MaxMin returns the max-min fair rates of flows on the given routes over
// links of the given capacities (progressive filling: repeatedly find the
// link whose remaining capacity per unfrozen flow is least, give its flows
// that share and freeze them). Scratch slices may be passed to reuse
// memory; nil is fine.
func MaxMin(capacity []float64, routes [][]int32, left *[]float64, users *[]int32, frozen *[]bool) []float64 {
	n := len(routes)
	rates := make([]float64, n)
	if n == 0 {
		return rates
	}
	l := append((*left)[:0], capacity...)
	u := append((*users)[:0], make([]int32, len(capacity))...)
	fr := append((*frozen)[:0], make([]bool, n)...)
	*left, *users, *frozen = l, u, fr
	for _, route := range routes {
		for _, e := range route {
			u[e]++
		}
	}
	for remaining := n; remaining > 0; {
		best, share := int32(-1), math.Inf(1)
		for e, c := range u {
			if c > 0 {
				if s := l[e] / float64(c); s < share {
					best, share = int32(e), s
				}
			}
		}
		if best < 0 { // flows on no link: unconstrained; cannot happen on a route
			for i := range fr {
				if !fr[i] {
					rates[i], fr[i] = math.Inf(1), true
					remaining--
				}
			}
			break
		}
		for i, route := range routes {
			if fr[i] {
				continue
			}
			on := false
			for _, e := range route {
				on = on || e == best
			}
			if !on {
				continue
			}
			rates[i], fr[i] = share, true
			remaining--
			for _, e := range route {
				l[e] -= share
				u[e]--
			}
		}
	}
	return rates
}
