package network

import (
	"fmt"
	"math"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// AnalyticConfig configures the analytic model.
type AnalyticConfig struct {
	Topology  *topology.Topology
	Placement []int32 // host of each rank
	// Gap is LogGP's g: after a message of s bytes starts through a NIC,
	// the next one in the same direction starts g + s/bandwidth later at
	// the earliest (g added to the serialization, as LogGOPSim and the PRTT
	// method of calibrate --prtt take it).
	Gap sim.Time
	// Local is the shared-memory channel each rank sends through to ranks
	// placed on its host (a port of its own, below): such messages never
	// touch the network.
	Local topology.LinkSpec
	// LocalDuplexShare, from 0 to 1, is how much of a message's time on a
	// rank's channel the channel's other direction spends too: 0 (the
	// default) is full duplex, sends and receipts at once; 1 is half
	// duplex, one message at a time either way, as a shared-memory
	// transport whose rank copies in what it sends and out what it
	// receives spends its own core on both. An exchange of b bytes
	// between two ranks of a host takes (1+share) b/bandwidth, or
	// latency + b/bandwidth where that is more.
	LocalDuplexShare float64
	// LinkBytes, when not nil, is filled with the bytes of data each
	// link carried (one entry per link; the run adds to it): the model
	// shares no link, so what they say is how far a link's load alone
	// bounds the run from below (see Experiment's note).
	LinkBytes []float64
	// LocalBands, when given, price the channel by message size: a
	// message of at least a band's From bytes (and less than the next
	// band's) moves at the band's bandwidth, with its duplex share, in
	// place of Local's bandwidth and LocalDuplexShare, which smaller
	// messages keep; the latency is Local's for every size. A core's
	// copies run faster where the data fits in its caches, so one line
	// fitted over all sizes misprices some (SimGrid's SMPI corrects the
	// same way, with bandwidth factors by message size).
	LocalBands []LocalBand
}

// LocalBand is the channel between ranks on one host for messages of From
// bytes or more (AnalyticConfig.LocalBands).
type LocalBand struct {
	From        int64
	Bandwidth   float64 // bytes per second
	DuplexShare float64 // as AnalyticConfig.LocalDuplexShare
}

// BandOf returns the index of the band, of bands in increasing order of
// their start (from gives it), that a message of bytes takes: the last
// that starts at bytes or below; -1 when bytes is below the first, which
// then takes the channel's own bandwidth. The one rule for which band
// prices a size: the networks and validate's notes on the fitted bands
// all follow it.
func BandOf[B any](bands []B, from func(B) int64, bytes int64) int {
	i := len(bands) - 1
	for i >= 0 && bytes < from(bands[i]) {
		i--
	}
	return i
}

// checkBands reports what is wrong with bands, if anything.
func checkBands(bands []LocalBand) error {
	for i, b := range bands {
		switch {
		case b.From <= 0:
			return fmt.Errorf("local band %d starts at %d bytes: a band starts at 1 byte or more (smaller messages take the channel's own bandwidth)", i, b.From)
		case i > 0 && b.From <= bands[i-1].From:
			return fmt.Errorf("local band %d starts at %d bytes, not above the band before it (%d): give the bands in increasing order of size", i, b.From, bands[i-1].From)
		case !(b.Bandwidth > 0) || math.IsInf(b.Bandwidth, 0):
			return fmt.Errorf("local band %d (from %d bytes): bandwidth %v is not a positive number", i, b.From, b.Bandwidth)
		case !(b.DuplexShare >= 0 && b.DuplexShare <= 1):
			return fmt.Errorf("local band %d (from %d bytes): duplex share %v is not between 0 (full duplex) and 1 (half)", i, b.From, b.DuplexShare)
		}
	}
	return nil
}

// Analytic returns a factory for the analytic model: LogGP without
// contention (Alexandrov et al. 1995). A message of s bytes on a route with
// latencies l_i and bandwidths b_i takes L = sum l_i and G = s / min b_i.
// Each host's NIC sends one message at a time and receives one at a time
// (single-port, full duplex): a message starts leaving when the sender's
// NIC is free, its head reaches the receiver L later, and it is taken in
// when the receiver's NIC is free, G after which it is delivered. Links are
// never shared between messages: this model prices algorithms exactly as
// the alpha-beta closed forms do (alpha = L, beta = 1/min b_i), and cannot
// show contention; the flow model does. Between ranks on one host, each
// rank's shared-memory channel (cfg.Local) works as a NIC of its own, with
// no gap, full duplex unless cfg.LocalDuplexShare (or, for the sizes of
// a band of cfg.LocalBands, the band's share) is above 0 (partly or half
// duplex); the flow model hands such messages to this one.
//
// Rendezvous control messages take their route's latency and no port time.
// A request leaves no earlier than the data its port (NIC or channel) last
// started sending, and is delivered no earlier than the data from its own
// sender that its receiving port is still taking in, so that it never
// overtakes data sent before it (MPI's order); a reply keeps no order.
//
// Serialization times are rounded up to whole picoseconds per message.
func Analytic(cfg AnalyticConfig) (sim.NetworkFactory, error) {
	t := cfg.Topology
	if t == nil {
		return nil, fmt.Errorf("analytic network: no topology")
	}
	for r, h := range cfg.Placement {
		if h < 0 || int(h) >= t.Hosts() {
			return nil, fmt.Errorf("analytic network: rank %d placed on host %d, which %s does not have", r, h, t.Name())
		}
	}
	if cfg.Gap < 0 {
		return nil, fmt.Errorf("analytic network: gap must not be negative")
	}
	if !(cfg.LocalDuplexShare >= 0 && cfg.LocalDuplexShare <= 1) {
		return nil, fmt.Errorf("analytic network: local duplex share %v is not between 0 (full duplex) and 1 (half)", cfg.LocalDuplexShare)
	}
	if err := checkBands(cfg.LocalBands); err != nil {
		return nil, fmt.Errorf("analytic network: %w", err)
	}
	links := t.Links()
	lat := make([]sim.Time, len(links))
	psPerByte := make([]float64, len(links))
	for i, l := range links {
		lat[i] = sim.FromSeconds(l.Latency)
		psPerByte[i] = 1e12 / l.Bandwidth
	}
	localPs := 0.0 // no bandwidth given: local data costs nothing
	if cfg.Local.Bandwidth > 0 {
		localPs = 1e12 / cfg.Local.Bandwidth
	}
	bands := []localBand{{psPerByte: localPs, share: cfg.LocalDuplexShare}}
	for _, b := range cfg.LocalBands {
		bands = append(bands, localBand{from: b.From, psPerByte: 1e12 / b.Bandwidth, share: b.DuplexShare})
	}
	return func(eng *sim.Engine, sink sim.Sink, ranks int) (sim.Network, error) {
		if ranks > len(cfg.Placement) {
			return nil, fmt.Errorf("analytic network: %d ranks but only %d placed", ranks, len(cfg.Placement))
		}
		ports := t.Hosts() // the hosts' NICs, then the ranks' local channels, if any
		if sharesHost(cfg.Placement, t.Hosts()) {
			ports += len(cfg.Placement)
		}
		if cfg.LinkBytes != nil && len(cfg.LinkBytes) != len(links) {
			return nil, fmt.Errorf("analytic network: %d link byte counters for %d links", len(cfg.LinkBytes), len(links))
		}
		m := &analytic{
			eng: eng, sink: sink, topo: t, place: cfg.Placement, gap: cfg.Gap, linkBytes: cfg.LinkBytes,
			lat: lat, psPerByte: psPerByte, localLat: sim.FromSeconds(cfg.Local.Latency), local: bands, hosts: int32(t.Hosts()),
			txFree: make([]sim.Time, ports), rxFree: make([]sim.Time, ports),
			txLast: make([]sim.Time, ports), rxQueue: make([][]intake, ports),
			free: -1,
		}
		m.id = eng.Register(m)
		return m, nil
	}, nil
}

type analytic struct {
	eng       *sim.Engine
	id        sim.HandlerID
	sink      sim.Sink
	topo      *topology.Topology
	place     []int32
	gap       sim.Time
	lat       []sim.Time
	psPerByte []float64
	localLat  sim.Time
	// local prices a rank's channel by message size: the channel's own
	// bandwidth and duplex share from 0 bytes, then the config's bands.
	local []localBand
	hosts int32
	// By port: each host's NIC, then each rank's shared-memory channel
	// to the ranks on its host (port hosts+r for rank r), which works as
	// a NIC does, without the gap: ranks on a host send and take in at
	// once, each one message at a time, as an MPI library's shared-memory
	// transport copies with each rank's core.
	txFree  []sim.Time // the sending side is busy until then
	rxFree  []sim.Time // the receiving side is busy until then
	txLast  []sim.Time // when the data it last started sending left
	rxQueue [][]intake // data it is taking in, in order of delivery
	flights []flight
	free    int32
	path    []int32
	// linkBytes, when not nil, counts each link's bytes of data.
	linkBytes []float64
}

// OneAtATime implements sim.SinglePort: each NIC sends one message at a
// time.
func (m *analytic) OneAtATime() bool { return true }

// flight is a message whose head is on its way to the receiving port.
type flight struct {
	id      uint32
	src     int32 // port
	dst     int32 // port
	ser     sim.Time
	share   float64 // the duplex share of the receiving channel's band
	request bool    // a rendezvous request: no data
	next    int32   // free list
}

// localBand is a LocalBand as the model uses it.
type localBand struct {
	from      int64
	psPerByte float64
	share     float64 // the duplex share
}

// band is the band of m.local that prices a message of bytes.
func (m *analytic) band(bytes int64) localBand {
	// m.local[0] is the channel's own, from 0 bytes; the config's bands follow.
	return m.local[1+BandOf(m.local[1:], func(b localBand) int64 { return b.from }, bytes)]
}

// intake is data a port is taking in: from which port, delivered when.
type intake struct {
	src int32
	at  sim.Time
}

const (
	evArrived   = 1
	evDelivered = 2
)

func serialize(bytes int64, psPerByte float64) sim.Time {
	return sim.FromPicoseconds(float64(bytes) * psPerByte)
}

// Inject implements sim.Network.
func (m *analytic) Inject(tr sim.Transfer) {
	now := m.eng.Now()
	src, dst := m.place[tr.Src], m.place[tr.Dst]
	var latency sim.Time
	worst, share := 0.0, 0.0 // NICs are full duplex
	if src == dst {
		m.path = m.path[:0] // no link of the network
		src, dst = m.hosts+tr.Src, m.hosts+tr.Dst
		b := m.band(tr.Bytes)
		latency, worst, share = m.localLat, b.psPerByte, b.share
	} else {
		m.path = m.topo.Route(int(src), int(dst), m.path[:0])
		for _, l := range m.path {
			latency = latency.Plus(m.lat[l])
			worst = max(worst, m.psPerByte[l])
		}
	}
	switch tr.Control {
	case sim.ControlReply:
		m.eng.At(now.Plus(latency), m.id, evDelivered<<62|uint64(tr.ID))
		return
	case sim.ControlRequest:
		f := m.newFlight()
		m.flights[f] = flight{id: tr.ID, src: src, dst: dst, request: true, next: -1}
		m.eng.At(max(now, m.txLast[src]).Plus(latency), m.id, evArrived<<62|uint64(f))
		return
	}
	if m.linkBytes != nil {
		for _, l := range m.path {
			m.linkBytes[l] += float64(tr.Bytes)
		}
	}
	ser := serialize(tr.Bytes, worst)
	start := max(now, m.txFree[src])
	m.txFree[src] = start.Plus(m.portGap(src)).Plus(ser)
	m.txLast[src] = start
	m.share(&m.rxFree[src], share, ser)
	f := m.newFlight()
	m.flights[f] = flight{id: tr.ID, src: src, dst: dst, ser: ser, share: share, next: -1}
	m.eng.At(start.Plus(latency), m.id, evArrived<<62|uint64(f))
	// The model knows now when the last byte will leave: it says so at
	// once, which spares the executor an event per message. (After the
	// arrival is queued: a message the sink sends in reply, which may
	// arrive at the same instant, arrives after this one.)
	m.sink.Injected(tr.ID, start.Plus(ser))
}

// Handle implements sim.Handler.
func (m *analytic) Handle(arg uint64) {
	v := arg & (1<<62 - 1)
	switch arg >> 62 {
	case evDelivered:
		m.sink.Delivered(uint32(v))
	case evArrived:
		f := m.flights[v]
		m.flights[v].next, m.free = m.free, int32(v)
		now := m.eng.Now()
		// Data delivered before now no longer holds anything back (data
		// delivered now may still be reported after this event).
		q := m.rxQueue[f.dst]
		k := 0
		for k < len(q) && q[k].at < now {
			k++
		}
		q = q[k:]
		if f.request {
			// After the data from the same sender still being taken in
			// (which arrived first: same route, sent first), reported
			// after it.
			at, wait := now, false
			for _, d := range q {
				if d.src == f.src {
					at, wait = d.at, true
				}
			}
			m.rxQueue[f.dst] = q
			if wait {
				m.eng.At(at, m.id, evDelivered<<62|uint64(f.id))
			} else {
				m.sink.Delivered(f.id)
			}
			return
		}
		start := max(now, m.rxFree[f.dst])
		m.rxFree[f.dst] = start.Plus(m.portGap(f.dst)).Plus(f.ser)
		m.share(&m.txFree[f.dst], f.share, f.ser)
		if len(q) == 0 {
			q = m.rxQueue[f.dst][:0] // reuse the slice from its start
		}
		m.rxQueue[f.dst] = append(q, intake{src: f.src, at: start.Plus(f.ser)})
		m.eng.At(start.Plus(f.ser), m.id, evDelivered<<62|uint64(f.id))
	}
}

// share books, on the other direction of a rank's channel one of whose
// directions has just booked a message of ser, the share of ser that the
// channel's duplex gives it (share, that of the message's band; 0 for a
// NIC): the other direction has that much
// more work, from now or from when it comes free. (Not from when the
// message starts: a send queued behind others would push the other
// direction's free time past all of them, and a receipt would wait for
// every queued send however small the share.) With the share 1 both
// directions keep one timeline (they start equal and every booking adds
// the same to both): half duplex, one message at a time.
func (m *analytic) share(other *sim.Time, share float64, ser sim.Time) {
	if share == 0 {
		return
	}
	*other = max(*other, m.eng.Now()).Plus(sim.FromPicoseconds(float64(ser) * share))
}

// portGap is the gap g of a port: a NIC's; none for a rank's channel.
func (m *analytic) portGap(port int32) sim.Time {
	if port >= m.hosts {
		return 0
	}
	return m.gap
}

func (m *analytic) newFlight() int32 {
	if m.free >= 0 {
		f := m.free
		m.free = m.flights[f].next
		return f
	}
	m.flights = append(m.flights, flight{})
	return int32(len(m.flights) - 1)
}

// sharesHost reports whether two ranks of place are on one of the hosts
// (numbered from 0).
func sharesHost(place []int32, hosts int) bool {
	seen := make([]bool, hosts)
	for _, h := range place {
		if seen[h] {
			return true
		}
		seen[h] = true
	}
	return false
}
