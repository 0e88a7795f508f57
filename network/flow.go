package network

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// FlowConfig configures the flow model.
type FlowConfig struct {
	Topology  *topology.Topology
	Placement []int32 // host of each rank
	// Local is the shared-memory channel each rank sends through to ranks
	// placed on its host, priced by the analytic model's ports.
	Local topology.LinkSpec
	// LocalDuplexShare is AnalyticConfig's: how much of a message's time
	// on a rank's channel its other direction spends too (0 full duplex,
	// 1 half).
	LocalDuplexShare float64
	// LocalBands are AnalyticConfig's: the channel priced by message
	// size.
	LocalBands []LocalBand
	// Links, when not nil, is filled with each link's load during the run.
	Links *LinkLoad
	// Routing is RouteMinimal (or ""), RouteValiant or RouteUGAL.
	Routing string
	// Jitter, when its Sigma is positive, adds a random delay to every
	// message's latency.
	Jitter Jitter
	// Gap is LogGP's g, a NIC's time per message, added to its bytes'
	// time as on the analytic network. Sending, a NIC starts a message no
	// sooner than Gap after it started the one before, and after the last
	// byte of one has left (concurrent sends share its link, as without a
	// gap). Receiving, its port takes a message in for Gap plus its bytes'
	// time at the route's slowest link, one message at a time, as the
	// analytic network's port does: a message is handed over once its
	// bytes are in and the port has served the messages before it. Where
	// no two flows share a link the two networks agree to the picosecond.
	// Rendezvous control messages and messages between ranks on one host
	// pay none.
	Gap sim.Time
	// wholeNetwork solves every flow with MaxMinSolver at every change
	// instead of repairing the last solution: slower, and (tests check)
	// the same results.
	wholeNetwork bool
}

// Jitter is per-message latency noise, drawn from a seeded stream: a
// normal delay of mean 0 and deviation Sigma, cut at 0 (a message is never
// early), or with Lognormal a lognormal one whose median is Sigma and
// whose log has deviation 1 (a long tail of late messages).
type Jitter struct {
	Sigma     sim.Time
	Lognormal bool
}

func (j Jitter) draw(rng *rand.Rand) sim.Time {
	if j.Lognormal {
		return sim.Time(float64(j.Sigma) * math.Exp(rng.NormFloat64()))
	}
	return sim.Time(max(0, float64(j.Sigma)*rng.NormFloat64()))
}

// Routing policies of the flow model.
const (
	// RouteMinimal takes the topology's own routes.
	RouteMinimal = "minimal"
	// RouteValiant sends every message between two Dragonfly groups
	// through a third group drawn at random (from a seeded stream): twice
	// the global hops, but the load spread over every global link
	// (Valiant 1982; Kim et al. 2008 for the Dragonfly).
	RouteValiant = "valiant"
	// RouteUGAL chooses, per message, the minimal route or one Valiant
	// detour drawn at random, whichever is less loaded now: the cost of a
	// route is its hop count times one more than the most messages already
	// routed over any of its links, and ties go to the minimal route.
	// It is modelled on UGAL with global knowledge of the load (UGAL-G;
	// Singh 2005, Kim et al. 2008), whose cost is hops times the queue
	// itself, so that an idle detour always wins there; here an idle
	// detour costs its hops, and loses to a minimal route of 3 hops
	// carrying one message (3 x 2) when it has 6 hops or more. (Its label
	// claimed UGAL-G outright: an audit.)
	RouteUGAL = "ugal"
	// RouteECMP sends each message along one of the equal-cost shortest
	// paths, chosen by a hash of its source, destination, place in its
	// pair's sequence and the run's seed (equal-cost multi-path by flow
	// hash, as fat-tree switches do); available where the topology has
	// such paths (fat-trees, custom graphs).
	RouteECMP = "ecmp"
)

// CheckRouting reports whether t can be routed by routing, saying what to
// use instead if not.
func CheckRouting(routing string, t *topology.Topology) error {
	switch routing {
	case "", RouteMinimal:
		return nil
	case RouteValiant, RouteUGAL:
		if why := t.GroupsLost(); why != "" {
			return fmt.Errorf("%s routing detours through a third group of a dragonfly; %s has none: %s; use minimal", routing, t.Name(), why)
		}
		if t.Groups() < 3 {
			return fmt.Errorf("%s routing detours through a third group of a dragonfly; %s has %d groups: use minimal", routing, t.Name(), t.Groups())
		}
		return nil
	case RouteECMP:
		if !t.Hashes() {
			return fmt.Errorf("ecmp routing chooses among equal shortest paths of a fat-tree or a custom graph; %s has one route per pair: use minimal", t.Name())
		}
		return nil
	}
	return fmt.Errorf("unknown routing %q; valid: %s, %s, %s, %s", routing, RouteMinimal, RouteValiant, RouteUGAL, RouteECMP)
}

// LinkLoad is what each link carried during a run of the flow model,
// indexed by the topology's link IDs: enough to say which links were the
// bottleneck.
type LinkLoad struct {
	Bytes     []float64  // bytes of the flows routed over it
	Busy      []sim.Time // time during which at least one flow crossed it
	PeakFlows []int32    // the most flows crossing it at once
	Flows     []int32    // flows crossing it now (during the run)
	since     []sim.Time // when it last became busy
	// RecordRates, set before the run, records every change of a link's
	// carried rate in Rates (for utilization over time): an entry per
	// link of a flow's route each time the flow's rate changes.
	RecordRates bool
	Rates       []RateChange
}

// RateChange is a change of the rate a link carries: from At on, Delta
// more bytes per second (negative: less).
type RateChange struct {
	At    sim.Time
	Link  int32
	Delta float64
}

// MaxRateChanges bounds LinkLoad.Rates (24 bytes each): a run with more
// rate changes is too long to record over time.
const MaxRateChanges = 50_000_000

// rate records that flow route's rate went from old to now bytes/s.
func (l *LinkLoad) rate(route []int32, old, new float64, at sim.Time) {
	if old == new || len(l.Rates)+len(route) > MaxRateChanges {
		return
	}
	for _, e := range route {
		l.Rates = append(l.Rates, RateChange{At: at, Link: e, Delta: new - old})
	}
}

func (l *LinkLoad) reset(links int) {
	l.Bytes, l.Busy = make([]float64, links), make([]sim.Time, links)
	l.PeakFlows, l.Flows, l.since = make([]int32, links), make([]int32, links), make([]sim.Time, links)
}

func (l *LinkLoad) join(route []int32, bytes float64, now sim.Time) {
	for _, e := range route {
		l.Bytes[e] += bytes
		if l.Flows[e] == 0 {
			l.since[e] = now
		}
		l.Flows[e]++
		l.PeakFlows[e] = max(l.PeakFlows[e], l.Flows[e])
	}
}

func (l *LinkLoad) leave(route []int32, now sim.Time) {
	for _, e := range route {
		l.Flows[e]--
		if l.Flows[e] == 0 {
			l.Busy[e] += now - l.since[e]
		}
	}
}

// Flow returns a factory for the flow model: every message is a flow on
// its route that shares bandwidth with the other flows max-min fairly from
// the moment it is injected (progressive filling, as SimGrid's LMM does for
// its network models): each link's capacity is divided among the flows
// crossing it, a flow getting the least share along its route, and
// capacity a flow cannot use going to the others. When its last byte has
// left (the sender's NIC and buffer are free: the executor's send queue
// moves on), it reaches the receiver the route's latency later. Rates are
// recomputed whenever a flow starts or ends; a flow's completion is
// rescheduled when its rate changes (stale completions are skipped by
// generation). Host links are links too, so NIC injection and ejection are
// shared the same way. Messages between one pair of ranks go one after
// another, as on one MPI connection (a later message waits for the earlier
// one to finish before it shares bandwidth; sharing them would let a
// pipelined algorithm's many segments to one neighbour all finish
// together, at the end), and are delivered in the order they were sent.
// Rendezvous control messages take their route's latency and no
// bandwidth; a request is delivered in order with its pair's messages.
// Messages between ranks on one host are not flows: the analytic model's
// shared-memory channels (a port per rank) price them, as in that model.
//
// (The bandwidth phase comes first, then the latency, so that a send knows
// when its last byte has left, as the executor's send queue needs; SimGrid
// waits out the latency first. A lone message takes L + s/B either way.)
//
// Changes at one instant are solved together, once (a step of a collective
// starts and ends many flows at the same moment), and only as far as they
// reach: the solve repairs the last solution, refilling the links whose
// share changed in share order and leaving the others alone
// (incremental.go), and gets the rates progressive filling over every flow
// would (MaxMinSolver), bit for bit. Rates are whole units of 2^-16 B/s,
// so that sums of rates are exact. Only the flows whose rate changed have
// their completion rescheduled, and a flow's bytes left are brought up to
// date only then.
func Flow(cfg FlowConfig) (sim.NetworkFactory, error) {
	t := cfg.Topology
	if t == nil {
		return nil, fmt.Errorf("flow network: no topology")
	}
	if err := CheckRouting(cfg.Routing, t); err != nil {
		return nil, fmt.Errorf("flow network: %w", err)
	}
	if cfg.Gap < 0 {
		return nil, fmt.Errorf("flow network: gap must not be negative")
	}
	for r, h := range cfg.Placement {
		if h < 0 || int(h) >= t.Hosts() {
			return nil, fmt.Errorf("flow network: rank %d placed on host %d, which %s does not have", r, h, t.Name())
		}
	}
	links := len(t.Links())
	if links >= maxLinks {
		return nil, fmt.Errorf("flow network: %s has %d links; the flow model takes at most %d", t.Name(), links, maxLinks-1)
	}
	capUnits := make([]int64, links)
	for i, l := range t.Links() {
		u, err := capacityUnits(l.Bandwidth)
		if err != nil {
			return nil, fmt.Errorf("flow network: link %d of %s (%d to %d): %w", i, t.Name(), l.From, l.To, err)
		}
		capUnits[i] = u
	}
	localFactory, err := Analytic(AnalyticConfig{Topology: t, Placement: cfg.Placement, Local: cfg.Local, LocalDuplexShare: cfg.LocalDuplexShare, LocalBands: cfg.LocalBands})
	if err != nil {
		return nil, err
	}
	return func(eng *sim.Engine, sink sim.Sink, ranks int) (sim.Network, error) {
		if ranks > len(cfg.Placement) {
			return nil, fmt.Errorf("flow network: %d ranks but only %d placed", ranks, len(cfg.Placement))
		}
		if cfg.Links != nil {
			cfg.Links.reset(len(t.Links()))
		}
		m := &flowModel{eng: eng, sink: sink, topo: t, place: cfg.Placement, load: cfg.Links, routing: cfg.Routing, jitter: cfg.Jitter,
			lat: make([]sim.Time, len(t.Links())), whole: cfg.wholeNetwork, gap: cfg.Gap}
		if m.gap > 0 {
			m.txNext, m.rxNext = make([]sim.Time, t.Hosts()), make([]sim.Time, t.Hosts())
			m.psPerByte = make([]float64, len(t.Links()))
			for i, l := range t.Links() {
				m.psPerByte[i] = 1e12 / l.Bandwidth
			}
		}
		if sharesHost(cfg.Placement, t.Hosts()) {
			local, err := localFactory(eng, sink, ranks)
			if err != nil {
				return nil, err
			}
			m.local = local
		}
		m.initSolver(capUnits)
		for i, l := range t.Links() {
			m.lat[i] = sim.FromSeconds(l.Latency)
		}
		if m.jitter.Sigma > 0 {
			m.jrng = eng.NamedStream("network/jitter")
		}
		if m.routing == RouteValiant || m.routing == RouteUGAL {
			m.rng = eng.NamedStream("network/valiant")
			m.routed = make([]int32, len(t.Links()))
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
	local    sim.Network // between ranks on one host: the analytic network's channels
	capUnits []int64     // per link: its bandwidth in rate units
	lat      []sim.Time  // per link
	flows    []flow      // pool
	free     []int32
	links    []linkState // per link: its flows and its part of the solution
	// order indexes pairs, the pairs with a message in flight: flows
	// name theirs (flow.pair), so one lookup a message finds it.
	order     pairTable
	pairs     []pairOrder
	freePairs []int32
	solver    MaxMinSolver
	load      *LinkLoad // nil: not kept
	routing   string
	jitter    Jitter
	jrng      *rand.Rand // jitter's draws
	rng       *rand.Rand // Valiant's intermediate groups
	routed    []int32    // UGAL: messages routed over each link and not finished
	spare     []int32    // UGAL: the candidate detour being weighed
	// The next solve's changes: dirty links, a flow joined or left them.
	dirty   []int32
	isDirty []bool // per link: in dirty
	// A sweep's state: links made dirty in it and filled or found empty
	// (linkState.dirty, done, newFill), the flows it froze (flow.sweep),
	// and the flows whose rate changed.
	epoch      uint32
	heap       shareHeap
	sweepLinks []int32
	sweepFlows []int32
	rated      []int32
	fallbacks  int    // sweeps that met a link after its fill (tests: none)
	solves     uint64 // solves run, and the rates they changed (benchmarks
	rerated    uint64 // report the mean: how far a change reaches)
	whole      bool   // solve every flow with MaxMinSolver each time (tests: the same rates?)
	noAlone    bool   // fill lone flows through the heap too (tests: the same solution?)
	lone       uint64 // flows alone froze (tests: is the path taken?)
	comp       []int32
	routeBuf   [][]int32
	// pending: a solve is scheduled at the current time, after every
	// event already queued for it, so that flows starting and ending at
	// one instant cost one solve.
	pending bool
	// The NICs' gap (FlowConfig.Gap) and, per host, when its NIC may
	// start its next message and hand over its next received one.
	gap            sim.Time
	txNext, rxNext []sim.Time
	psPerByte      []float64 // per link, where there is a gap
}

type flow struct {
	id       uint32
	src, dst int32 // ranks
	route    []int32
	latency  sim.Time // of its route, with any jitter
	ser      sim.Time // with a gap: its bytes' time at its route's slowest link
	began    sim.Time // with a gap: when it started sharing bandwidth
	control  sim.Control
	rem      float64  // bytes left at since
	since    sim.Time // when rem was last brought up to date
	rate     float64  // bytes per second
	gen      uint32   // bumped when the completion is rescheduled; never reset
	timed    bool     // a completion is scheduled for the current rate
	seq      uint64   // order within its pair
	pair     int32    // its pair's index in pairs; -1 for a reply
	active   bool
	pos      []int32 // while active: its index in links[l].on of each link l of its route
	units    int64   // its rate in rate units
	neck     int32   // the link that froze it in the solution; -1: none yet
	// A sweep that froze it: the epoch, the link, the rate.
	sweep    uint32
	newNeck  int32
	newUnits int64
	// raised is the sweep (epoch) in which the flow stayed unfrozen past
	// its bottleneck's old fill (check), its rate then bound only by
	// least, its route's least capacity in rate units.
	raised uint32
	least  int64
}

// pairOrder holds back deliveries that overtook an earlier message of the
// same pair.
type pairOrder struct {
	sent, next uint64
	done       map[uint64]uint32 // finished early: seq -> transfer ID
	// Messages of one pair go one after another, as on one MPI
	// connection: busy while one of them shares bandwidth; waiting holds
	// those that have waited out their latency meanwhile, in order.
	busy    bool
	waiting []int32
}

const (
	flowSolve  = 0 // recompute the rates after this instant's changes
	flowArrive = 1 // the flow's last byte (or a control message) reaches its destination
	flowFinish = 2 // the flow may have finished (if its generation matches)
	flowStart  = 3 // the flow's NIC has waited out its gap: it starts sharing bandwidth
)

// gapServed, as a flowArrive event's generation, says that the receiving
// NIC's gap has been waited out.
const gapServed = 1

// tooLate is when a flow due past the clock's limit is found out: the
// last instant before MaxTime (which the engine refuses), which no flow
// that finishes in time reaches.
const tooLate = sim.MaxTime - 1

func flowArg(kind uint64, f int32, gen uint32) uint64 {
	return kind<<62 | uint64(gen)<<32 | uint64(uint32(f))
}

// Inject implements sim.Network.
func (m *flowModel) Inject(tr sim.Transfer) {
	src, dst := m.place[tr.Src], m.place[tr.Dst]
	if src == dst {
		// Same host: the ranks' shared-memory channels, not the network,
		// as the analytic network prices them.
		m.local.Inject(tr)
		return
	}
	f := m.newFlow()
	fl := &m.flows[f]
	// The generation carries over from the slot's last flow: a completion
	// event of that flow may still be queued, and must stay stale.
	*fl = flow{id: tr.ID, src: tr.Src, dst: tr.Dst, route: fl.route[:0], pos: fl.pos[:0], rem: float64(tr.Bytes), gen: fl.gen, control: tr.Control, neck: -1, pair: -1}
	if tr.Control != sim.ControlReply {
		fl.pair = m.pairOf(tr.Src, tr.Dst)
		po := &m.pairs[fl.pair]
		fl.seq = po.sent
		po.sent++
	}
	if m.routing == RouteECMP {
		fl.route = m.topo.RouteHashed(int(src), int(dst), flowHash(m.eng.Seed(), tr.Src, tr.Dst, fl.seq), fl.route)
	} else if tr.Control != sim.ControlNone {
		fl.route = m.topo.Route(int(src), int(dst), fl.route)
	} else {
		fl.route = m.route(int(src), int(dst), fl.route)
	}
	for _, l := range fl.route {
		fl.latency += m.lat[l]
	}
	if m.jrng != nil {
		fl.latency += m.jitter.draw(m.jrng)
	}
	if tr.Control != sim.ControlNone {
		// No bandwidth: it arrives a latency from now (a request is then
		// delivered after its pair's earlier messages).
		m.eng.After(fl.latency, m.id, flowArg(flowArrive, f, 0))
		return
	}
	if po := &m.pairs[fl.pair]; po.busy {
		po.waiting = append(po.waiting, f)
		return
	}
	m.activate(f)
	m.changed()
}

// Handle implements sim.Handler.
func (m *flowModel) Handle(arg uint64) {
	f := int32(uint32(arg))
	gen := uint32(arg >> 32 & (1<<30 - 1))
	switch arg >> 62 {
	case flowSolve:
		m.pending = false
		m.solve()
	case flowArrive:
		fl := &m.flows[f]
		if fl.control == sim.ControlReply {
			m.free = append(m.free, f)
			m.sink.Delivered(fl.id)
			return
		}
		if m.gap > 0 && fl.control == sim.ControlNone && gen != gapServed {
			// The receiving port takes the message in from when its head
			// arrived, once the port is free, for its bytes' time, and is
			// then busy for the gap too, as the analytic port; it hands
			// the message over then, or when its last byte is in, if the
			// link's sharing made that later (bytes shared with others
			// are not counted twice).
			dst, now := m.place[fl.dst], m.eng.Now()
			in := max(fl.began.Plus(fl.latency), m.rxNext[dst])
			m.rxNext[dst] = in.Plus(m.gap).Plus(fl.ser)
			if at := in.Plus(fl.ser); at > now {
				m.eng.At(at, m.id, flowArg(flowArrive, f, gapServed))
				return
			}
		}
		m.deliver(f)
	case flowStart:
		m.start(f)
		m.changed()
	case flowFinish:
		if !m.flows[f].active || m.flows[f].gen != gen {
			return // stale: the rate changed since this was scheduled
		}
		if fl := &m.flows[f]; m.eng.Now() == tooLate {
			m.eng.Fail(fmt.Errorf("flow network: the message from rank %d to rank %d (%.0f bytes left at %.4g B/s) would finish too late: %w", fl.src, fl.dst, fl.rem, fl.rate, sim.ErrClockLimit))
			return
		}
		m.finish(f)
		m.changed()
	}
}

// route appends the route of a message from host src to host dst under
// the routing policy.
func (m *flowModel) route(src, dst int, path []int32) []int32 {
	if m.routing != RouteValiant && m.routing != RouteUGAL {
		return m.topo.Route(src, dst, path)
	}
	sg, dg := m.topo.GroupOf(src), m.topo.GroupOf(dst)
	start := len(path)
	if sg == dg {
		path = m.topo.Route(src, dst, path)
	} else {
		// A third group, uniformly: draw among the g-2 others.
		mid := m.rng.IntN(m.topo.Groups() - 2)
		for _, skip := range []int{min(sg, dg), max(sg, dg)} {
			if mid >= skip {
				mid++
			}
		}
		if m.routing == RouteValiant {
			path = m.topo.RouteVia(src, dst, mid, path)
		} else {
			path = m.topo.Route(src, dst, path)
			m.spare = m.topo.RouteVia(src, dst, mid, m.spare[:0])
			if m.cost(m.spare) < m.cost(path[start:]) {
				path = append(path[:start], m.spare...)
			}
		}
	}
	for _, e := range path[start:] {
		m.routed[e]++
	}
	return path
}

// flowHash mixes a message's identity with the seed (splitmix64), for
// ECMP's choice of path.
func flowHash(seed uint64, src, dst int32, seq uint64) uint64 {
	z := seed ^ uint64(uint32(src))<<32 ^ uint64(uint32(dst)) ^ seq*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// cost is UGAL's price of a route: its hops times one more than the most
// messages routed over any of its links.
func (m *flowModel) cost(route []int32) int {
	most := int32(0)
	for _, e := range route {
		most = max(most, m.routed[e])
	}
	return len(route) * int(most+1)
}

// initSolver sizes the solver's per-link state for links of the given
// capacities in rate units.
func (m *flowModel) initSolver(capUnits []int64) {
	links := len(capUnits)
	m.capUnits, m.links, m.isDirty = capUnits, make([]linkState, links), make([]bool, links)
	m.heap.at = make([]int32, links)
}

// changed schedules one solve for the current instant.
func (m *flowModel) changed() {
	if !m.pending {
		m.pending = true
		m.eng.At(m.eng.Now(), m.id, flowArg(flowSolve, 0, 0))
	}
}

// markDirty puts link l in the next solve's part of the network.
func (m *flowModel) markDirty(l int32) {
	if !m.isDirty[l] {
		m.isDirty[l] = true
		m.dirty = append(m.dirty, l)
	}
}

// activate lets flow f share bandwidth once its NIC's gap allows, now
// if it has none; its pair is busy until it finishes.
func (m *flowModel) activate(f int32) {
	fl := &m.flows[f]
	m.pairs[fl.pair].busy = true
	if m.gap > 0 {
		src := m.place[fl.src]
		at := max(m.eng.Now(), m.txNext[src])
		worst := 0.0
		for _, l := range fl.route {
			worst = max(worst, m.psPerByte[l])
		}
		fl.ser = serialize(int64(fl.rem), worst)
		m.txNext[src] = at.Plus(m.gap)
		if at > m.eng.Now() {
			m.eng.At(at, m.id, flowArg(flowStart, f, 0))
			return
		}
	}
	m.start(f)
}

// start lets flow f share bandwidth from now on.
func (m *flowModel) start(f int32) {
	fl := &m.flows[f]
	fl.began = m.eng.Now()
	if m.load != nil {
		m.load.join(fl.route, fl.rem, m.eng.Now())
	}
	fl.since = m.eng.Now()
	m.join(f)
	if fl.rem <= 0 {
		m.finish(f)
	}
}

// finish takes flow f out of the sharing: its last byte has left, and
// reaches the destination a latency later.
func (m *flowModel) finish(f int32) {
	m.leave(f)
	if m.load != nil {
		m.load.leave(m.flows[f].route, m.eng.Now())
		if fl := &m.flows[f]; m.load.RecordRates && fl.timed {
			m.load.rate(fl.route, fl.rate, 0, m.eng.Now())
		}
	}
	if m.routed != nil {
		for _, e := range m.flows[f].route {
			m.routed[e]--
		}
	}
	if m.gap > 0 { // the NIC's next message waits a gap after this one's last byte
		src := m.place[m.flows[f].src]
		m.txNext[src] = max(m.txNext[src], m.eng.Now().Plus(m.gap))
	}
	i := m.flows[f].pair
	m.eng.After(m.flows[f].latency, m.id, flowArg(flowArrive, f, 0))
	// The pair stays busy while the sink hears of this message: what the
	// sink sends the same way then queues behind the messages waiting
	// already. Then the next goes out (after this one's report, also when
	// it is empty and finishes at once).
	m.sink.Injected(m.flows[f].id, m.eng.Now()) // may Inject: pairs may move
	if po := &m.pairs[i]; len(po.waiting) > 0 {
		next := po.waiting[0]
		po.waiting = po.waiting[1:]
		m.activate(next)
	} else {
		po.busy = false
	}
}

// join puts flow f on the links of its route: the next solve shares them
// with it.
func (m *flowModel) join(f int32) {
	fl := &m.flows[f]
	fl.active = true
	fl.least = maxLinkUnits
	for _, l := range fl.route {
		fl.least = min(fl.least, m.capUnits[l])
	}
	for _, l := range fl.route {
		fl.pos = append(fl.pos, int32(len(m.links[l].on)))
		m.links[l].on = append(m.links[l].on, f)
		m.markDirty(l)
	}
}

// leave takes flow f off the links of its route. A link that froze no
// flow in the solution (no fill) need not be solved again: its flows froze
// on other links before its share came up, and with f gone its share only
// rises (see fill, and noFillSkips in incremental.go).
func (m *flowModel) leave(f int32) {
	fl := &m.flows[f]
	for i, l := range fl.route {
		on := m.links[l].on
		n := int32(len(on) - 1)
		if p := fl.pos[i]; p != n { // the entry that sat last moves into f's place
			last := on[n]
			on[p] = last
			lf := &m.flows[last]
			for j, l2 := range lf.route { // its entry for l (a route may cross l twice)
				if last == f && j <= i {
					continue // f's own entries already taken off
				}
				if l2 == l && lf.pos[j] == n {
					lf.pos[j] = p
					break
				}
			}
		}
		m.links[l].on = on[:n]
		if m.links[l].filled.users > 0 {
			m.markDirty(l)
		}
	}
	fl.pos = fl.pos[:0]
	fl.active = false
}

// deliver reports flow f, holding it back if an earlier message of its pair
// is still on its way. A pair with nothing in flight keeps no state: with
// p^2 pairs, an entry each would cost more than the flows.
func (m *flowModel) deliver(f int32) {
	fl := &m.flows[f]
	i, id, seq, src, dst := fl.pair, fl.id, fl.seq, fl.src, fl.dst
	m.free = append(m.free, f)
	if po := &m.pairs[i]; seq != po.next {
		if po.done == nil {
			po.done = map[uint64]uint32{}
		}
		po.done[seq] = id
		return
	}
	// A delivery may start the receiver's next messages (Inject), which
	// may move pairs and reuse f: each step looks its pair up again.
	m.sink.Delivered(id)
	m.pairs[i].next++
	for po := &m.pairs[i]; len(po.done) > 0; po = &m.pairs[i] {
		id, ok := po.done[po.next]
		if !ok {
			break
		}
		delete(po.done, po.next)
		po.next++
		m.sink.Delivered(id)
	}
	if po := &m.pairs[i]; po.next == po.sent && !po.busy {
		m.order.remove(src, dst)
		m.freePairs = append(m.freePairs, i)
	}
}

// pairOf returns the index in pairs of the pair src -> dst, giving the
// pair an entry if it has none (nothing in flight). Entries freed by idle
// pairs are reused, their maps and queues emptied.
func (m *flowModel) pairOf(src, dst int32) int32 {
	if i, ok := m.order.get(src, dst); ok {
		return i
	}
	var i int32
	if n := len(m.freePairs); n > 0 {
		i = m.freePairs[n-1]
		m.freePairs = m.freePairs[:n-1]
		po := &m.pairs[i]
		clear(po.done)
		*po = pairOrder{done: po.done, waiting: po.waiting[:0]}
	} else {
		i = int32(len(m.pairs))
		m.pairs = append(m.pairs, pairOrder{})
	}
	m.order.put(src, dst, i)
	return i
}

// solve computes the max-min fair rates after this instant's changes and
// reschedules the completions whose rate changed.
func (m *flowModel) solve() {
	m.rated = m.rated[:0]
	if m.whole {
		m.solveWhole()
	} else if !m.sweep() {
		m.solveAgain()
	}
	now := m.eng.Now()
	n := 0
	m.solves++
	m.rerated += uint64(len(m.rated))
	for _, f := range m.rated {
		fl := &m.flows[f]
		// The bytes moved at the old rate, then the new rate from now.
		fl.rem -= fl.rate * (now - fl.since).Seconds()
		if fl.rem < 1e-6 { // SimGrid's double_update: below this it is done
			fl.rem = 0
		}
		fl.since = now
		old := fl.rate
		if !fl.timed {
			old = 0
		}
		fl.timed = true
		fl.rate = unitsRate(fl.units)
		if m.load != nil && m.load.RecordRates {
			m.load.rate(fl.route, old, fl.rate, now)
		}
		fl.gen = (fl.gen + 1) & (1<<30 - 1)
		if fl.gen == 0 {
			fl.gen = 1
		}
		if fl.rate == 0 {
			m.eng.Fail(m.starved(fl))
			return
		}
		m.rated[n] = f
		n++
	}
	// Completions at one instant run in the order they were scheduled;
	// scheduling them in slot order, not in the order the solve froze
	// them, keeps that order the same however the solve was bounded.
	rated := m.rated[:n]
	slices.Sort(rated)
	for _, f := range rated {
		fl := &m.flows[f]
		d := sim.FromPicoseconds(fl.rem * 1e12 / fl.rate)
		if d >= tooLate-now {
			// Past the clock at today's rate, which may still rise: the
			// flow is rescheduled at the next solve, and if none comes
			// before, it fails the run at tooLate (see Handle).
			d = tooLate - now
		}
		m.eng.At(now+d, m.id, flowArg(flowFinish, f, fl.gen))
	}
}

// starved explains why flow fl gets no bandwidth: its bottleneck's
// capacity, shared among its flows, is less than a rate unit each.
func (m *flowModel) starved(fl *flow) error {
	msg := fmt.Sprintf("flow network: the message from rank %d to rank %d gets no bandwidth", fl.src, fl.dst)
	if fl.neck >= 0 {
		l := m.topo.Links()[fl.neck]
		msg += fmt.Sprintf(": link %d (%d to %d) of %g B/s is shared by %d flows, less than %g B/s each (the flow model's unit); give it more bandwidth",
			fl.neck, l.From, l.To, l.Bandwidth, len(m.links[fl.neck].on), 1.0/rateUnitsPerByte)
	}
	return errors.New(msg)
}

// solveWhole solves every flow with MaxMinSolver, as a test's oracle and
// the incremental solver's last resort (it keeps no solution: every link
// with flows is dirty for the next sweep).
func (m *flowModel) solveWhole() {
	m.comp, m.routeBuf = m.comp[:0], m.routeBuf[:0]
	for f := range m.flows {
		if fl := &m.flows[f]; fl.active {
			m.comp = append(m.comp, int32(f))
			m.routeBuf = append(m.routeBuf, fl.route)
		}
	}
	units := m.solver.Solve(m.capUnits, m.routeBuf)
	for i, f := range m.comp {
		if fl := &m.flows[f]; units[i] != fl.units || !fl.timed {
			fl.units = units[i]
			m.rated = append(m.rated, f)
		}
	}
	for _, l := range m.dirty {
		m.isDirty[l] = false
	}
	m.dirty = m.dirty[:0]
	if !m.whole {
		m.forget()
	}
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
