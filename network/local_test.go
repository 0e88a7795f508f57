package network

import (
	"math"
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// injections records when each transfer was delivered and when its data
// left.
type injections struct {
	sink
	left map[uint32]sim.Time
}

func (s *injections) Injected(id uint32, at sim.Time) { s.left[id] = at }

// Ranks on one host send and take in through shared-memory channels of
// their own, one message at a time each way, in the analytic and the flow
// network alike (the analytic network's ports). Four ranks on host 0, a
// local channel of 10 GB/s (100 ps/B) and 1 µs: a message of 10,000
// bytes leaves in 1 µs, its head reaches the receiver 1 µs after it
// started, and the receiver takes it in in 1 µs, when it is free.
// Before, the analytic network passed a host's ranks through one channel
// ("two pairs" took 3 µs for the second) and the flow network took no
// turns at all (the second of "one sender" and of "one receiver" at 2 µs).
func TestLocalChannelPerRank(t *testing.T) {
	cross, err := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	local := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6}
	place := []int32{0, 0, 0, 0}
	const bytes = 10000
	us := sim.Microsecond
	none := sim.Time(-1) // no data left: a control message
	cases := []struct {
		name            string
		trs             []sim.Transfer
		arrive, dataOut []sim.Time
	}{
		// Two pairs at once, each rank on its core.
		{"two pairs", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 3, Bytes: bytes}},
			[]sim.Time{2 * us, 2 * us}, []sim.Time{us, us}},
		// Two senders, one receiver: it takes the second in after the
		// first.
		{"one receiver", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 1, Bytes: bytes}},
			[]sim.Time{2 * us, 3 * us}, []sim.Time{us, us}},
		// One rank's two messages: the second is copied after the first.
		{"one sender", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 0, Dst: 2, Bytes: bytes}},
			[]sim.Time{2 * us, 3 * us}, []sim.Time{us, 2 * us}},
		// A request waits for the data its sender queued before it; a
		// reply does not.
		{"control", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 0, Dst: 1, Control: sim.ControlRequest},
			{ID: 2, Src: 0, Dst: 2, Control: sim.ControlReply}},
			[]sim.Time{2 * us, 2 * us, us}, []sim.Time{us, none, none}},
	}
	models := map[string]func() (sim.NetworkFactory, error){
		"analytic": func() (sim.NetworkFactory, error) {
			return Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local})
		},
		"flow": func() (sim.NetworkFactory, error) {
			return Flow(FlowConfig{Topology: cross, Placement: place, Local: local})
		},
	}
	for model, build := range models {
		for _, tc := range cases {
			s := runTransfers(t, build, len(place), tc.trs)
			for i := range tc.trs {
				id := uint32(i)
				if s.at[id] != tc.arrive[i] {
					t.Errorf("%s, %s: transfer %d arrived at %v, want %v", model, tc.name, i, s.at[id], tc.arrive[i])
				}
				left, ok := s.left[id]
				if !ok {
					left = none
				}
				if left != tc.dataOut[i] {
					t.Errorf("%s, %s: transfer %d's data left at %v, want %v", model, tc.name, i, left, tc.dataOut[i])
				}
			}
		}
	}
}

// runTransfers injects trs at time 0 into the network build makes for
// ranks ranks, and runs it to the end.
func runTransfers(t *testing.T, build func() (sim.NetworkFactory, error), ranks int, trs []sim.Transfer) *injections {
	t.Helper()
	return runTransfersAt(t, build, ranks, trs, make([]sim.Time, len(trs)))
}

// runTransfersAt is runTransfers with trs[i] injected at at[i].
func runTransfersAt(t *testing.T, build func() (sim.NetworkFactory, error), ranks int, trs []sim.Transfer, at []sim.Time) *injections {
	t.Helper()
	factory, err := build()
	if err != nil {
		t.Fatal(err)
	}
	eng := sim.New(1)
	s := &injections{sink: sink{eng: eng, at: map[uint32]sim.Time{}}, left: map[uint32]sim.Time{}}
	net, err := factory(eng, s, ranks)
	if err != nil {
		t.Fatal(err)
	}
	inj := eng.Register(injector{net, trs})
	for i := range trs {
		eng.At(at[i], inj, uint64(i))
	}
	eng.Run()
	return s
}

// injector injects its transfers, one an event.
type injector struct {
	net sim.Network
	trs []sim.Transfer
}

func (j injector) Handle(i uint64) { j.net.Inject(j.trs[i]) }

// A half-duplex channel sends or takes in, one message at a time: an
// exchange between two ranks of one host takes a one-way message's time
// twice, where a full-duplex channel moves both at once; a share between
// them (0.5 here) makes each message keep its channel's other direction
// busy for that share of its time, from when it starts. Times by hand:
// 10000 B at 10 GB/s is 1µs on the channel, whose latency is 100ns.
func TestLocalDuplexShare(t *testing.T) {
	local := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-7}
	cross, _ := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	const bytes = 10000
	us := func(v float64) sim.Time { return sim.FromSeconds(v * 1e-6) }
	shares := []float64{0, 0.5, 1}
	cases := []struct {
		name string
		trs  []sim.Transfer
		want [3][]sim.Time // by share
	}{
		{"one way", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}},
			[3][]sim.Time{{us(1.1)}, {us(1.1)}, {us(1.1)}}},
		// Full: both messages at once. Half: each channel sends [0, 1µs],
		// then takes in [1µs, 2µs]. A share of 0.5: each channel's
		// receiving side is busy until 0.5µs with its own send, then
		// takes in [0.5µs, 1.5µs].
		{"exchange", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 1, Dst: 0, Bytes: bytes}},
			[3][]sim.Time{{us(1.1), us(1.1)}, {us(1.5), us(1.5)}, {us(2), us(2)}}},
		// Rank 0 sends to 1 and takes in from 2: its channel's receipt
		// waits for its send's share; ranks 1 and 2 do one thing each.
		{"in and out", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 0, Bytes: bytes}},
			[3][]sim.Time{{us(1.1), us(1.1)}, {us(1.1), us(1.5)}, {us(1.1), us(2)}}},
		// Rank 0's two sends queue on its channel, [0, 1µs] and [1µs,
		// 2µs]; each adds its share to the receiving side's work as it is
		// booked, so the receipt from 2 starts at 2 x 0.5µs (not after the
		// queued send's start, 1µs, plus its share).
		{"queued sends, then a receipt", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 0, Dst: 2, Bytes: bytes}, {ID: 2, Src: 2, Dst: 0, Bytes: bytes}},
			[3][]sim.Time{{us(1.1), us(2.1), us(1.1)}, {us(1.1), us(2.1), us(2)}, {us(1.1), us(2.1), us(3)}}},
		{"between hosts", []sim.Transfer{{ID: 0, Src: 0, Dst: 3, Bytes: bytes}, {ID: 1, Src: 3, Dst: 0, Bytes: bytes}},
			[3][]sim.Time{{us(12), us(12)}, {us(12), us(12)}, {us(12), us(12)}}},
	}
	place := []int32{0, 0, 0, 1}
	for k, share := range shares {
		builders := map[string]func() (sim.NetworkFactory, error){
			"analytic": func() (sim.NetworkFactory, error) {
				return Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local, LocalDuplexShare: share})
			},
			"flow": func() (sim.NetworkFactory, error) {
				return Flow(FlowConfig{Topology: cross, Placement: place, Local: local, LocalDuplexShare: share})
			},
		}
		for model, build := range builders {
			for _, tc := range cases {
				s := runTransfers(t, build, len(place), tc.trs)
				for i, w := range tc.want[k] {
					if got := s.at[uint32(i)]; got != w {
						t.Errorf("%s, duplex share %v, %s: transfer %d delivered at %v, want %v", model, share, tc.name, i, got, w)
					}
				}
			}
		}
	}
	// A receipt keeps the sending side busy too: rank 1 takes in from 0
	// [0.1µs, 1.1µs], and its send to 2, at 0.6µs, starts when its
	// channel's sending side is free of the receipt's share: at 0.6µs
	// (full), 0.6µs (0.5: busy until 0.1+0.5), 1.1µs (half); it reaches 2
	// 1.1µs later.
	for k, share := range shares {
		s := runTransfersAt(t, func() (sim.NetworkFactory, error) {
			return Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local, LocalDuplexShare: share})
		}, len(place), []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 1, Dst: 2, Bytes: bytes}}, []sim.Time{0, us(0.6)})
		want := []sim.Time{us(1.7), us(1.7), us(2.2)}[k]
		if got := s.at[1]; got != want {
			t.Errorf("duplex share %v: a send after a receipt delivered at %v, want %v", share, got, want)
		}
	}
	// Two receipts queue on rank 1's channel, [0.1µs, 1.1µs] and [1.1µs,
	// 2.1µs], each adding its share to the sending side's work when it
	// arrives (0.1µs); rank 1's send to 0 at 0.4µs starts once that work
	// is done: at 0.4µs (full), 0.1 + 2 x 0.5µs (0.5), 2.1µs (half). It
	// reaches 0 0.1µs later, whose channel is free by then (its own send,
	// [0, 1µs], left 0, 0.5 and 1µs of work), and is delivered 1µs after.
	for k, share := range shares {
		s := runTransfersAt(t, func() (sim.NetworkFactory, error) {
			return Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local, LocalDuplexShare: share})
		}, len(place), []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 1, Bytes: bytes}, {ID: 2, Src: 1, Dst: 0, Bytes: bytes}}, []sim.Time{0, 0, us(0.4)})
		want := []sim.Time{us(1.5), us(2.2), us(3.2)}[k]
		if got := s.at[2]; got != want {
			t.Errorf("duplex share %v: a send after two queued receipts delivered at %v, want %v", share, got, want)
		}
	}
	// An alltoall of four ranks, every message at once: each channel
	// queues three sends and takes in three. The last delivery grows
	// with the share, and a tiny share costs next to nothing (booked from
	// a queued send's start, the share 1e-9 made the receipts wait for
	// every queued send, as half duplex does).
	var all []sim.Transfer
	for src := range 4 {
		for k := 1; k < 4; k++ {
			all = append(all, sim.Transfer{ID: uint32(len(all)), Src: int32(src), Dst: int32((src + k) % 4), Bytes: bytes})
		}
	}
	fourLocal := []int32{0, 0, 0, 0}
	last := func(share float64) sim.Time {
		s := runTransfers(t, func() (sim.NetworkFactory, error) {
			return Analytic(AnalyticConfig{Topology: cross, Placement: fourLocal, Local: local, LocalDuplexShare: share})
		}, len(fourLocal), all)
		var end sim.Time
		for _, at := range s.at {
			end = max(end, at)
		}
		return end
	}
	full, tiny, part, half := last(0), last(1e-9), last(0.3), last(1)
	if !(full < part && part < half) || tiny-full > sim.Nanosecond {
		t.Errorf("four-rank alltoall: the last delivery at %v (full), %v (share 1e-9), %v (0.3), %v (half); want growing with the share, 1e-9 within 1ns of full", full, tiny, part, half)
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local, LocalDuplexShare: bad}); err == nil {
			t.Errorf("duplex share %v accepted", bad)
		}
	}
}

// TestLocalBands prices a rank's channel by message size: below the
// first band, the channel's own bandwidth and duplex; from each band's
// size up, the band's. Times worked by hand: latency 0.1µs, then bytes
// over the band's bandwidth, the receiving side first waiting out its own
// sends' shares.
func TestLocalBands(t *testing.T) {
	local := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-7}
	cross, _ := topology.Crossbar(1, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	bands := []LocalBand{{From: 20000, Bandwidth: 2e10, DuplexShare: 1}, {From: 100000, Bandwidth: 5e9, DuplexShare: 0.5}}
	us := func(v float64) sim.Time { return sim.FromSeconds(v * 1e-6) }
	cases := []struct {
		name string
		trs  []sim.Transfer
		want []sim.Time
	}{
		{"below the bands", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: 19999}}, []sim.Time{us(0.1 + 1.9999)}},
		{"the first band's smallest", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: 20000}}, []sim.Time{us(0.1 + 1)}},
		{"the last band", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: 100000}}, []sim.Time{us(0.1 + 20)}},
		// Half duplex in the first band: each channel sends [0, 1µs],
		// then takes in [1µs, 2µs].
		{"exchange, half", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: 20000}, {ID: 1, Src: 1, Dst: 0, Bytes: 20000}}, []sim.Time{us(2), us(2)}},
		// Share 0.5 in the last: sends of 20µs keep each receiving side
		// busy 10µs first.
		{"exchange, half a share", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: 100000}, {ID: 1, Src: 1, Dst: 0, Bytes: 100000}}, []sim.Time{us(30), us(30)}},
		// Each message keeps its own band's share: rank 0's large send
		// holds its receipt back to 10µs; rank 1's small one (full duplex
		// below the bands) holds nothing, so the large message is taken
		// in at once.
		{"exchange across bands", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: 100000}, {ID: 1, Src: 1, Dst: 0, Bytes: 10000}}, []sim.Time{us(20.1), us(11)}},
	}
	place := []int32{0, 0}
	builders := map[string]func() (sim.NetworkFactory, error){
		"analytic": func() (sim.NetworkFactory, error) {
			return Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local, LocalBands: bands})
		},
		"flow": func() (sim.NetworkFactory, error) {
			return Flow(FlowConfig{Topology: cross, Placement: place, Local: local, LocalBands: bands})
		},
	}
	for model, build := range builders {
		for _, tc := range cases {
			s := runTransfers(t, build, len(place), tc.trs)
			for i, w := range tc.want {
				if got := s.at[uint32(i)]; got != w {
					t.Errorf("%s, %s: transfer %d delivered at %v, want %v", model, tc.name, i, got, w)
				}
			}
		}
	}
	for _, bad := range [][]LocalBand{
		{{From: 0, Bandwidth: 1e9}},
		{{From: 100, Bandwidth: 1e9}, {From: 100, Bandwidth: 2e9}},
		{{From: 200, Bandwidth: 1e9}, {From: 100, Bandwidth: 2e9}},
		{{From: 100, Bandwidth: 0}},
		{{From: 100, Bandwidth: math.NaN()}},
		{{From: 100, Bandwidth: math.Inf(1)}},
		{{From: 100, Bandwidth: 1e9, DuplexShare: 1.5}},
		{{From: 100, Bandwidth: 1e9, DuplexShare: math.NaN()}},
	} {
		if _, err := Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local, LocalBands: bad}); err == nil {
			t.Errorf("bands %+v accepted", bad)
		}
		if _, err := Flow(FlowConfig{Topology: cross, Placement: place, Local: local, LocalBands: bad}); err == nil {
			t.Errorf("flow: bands %+v accepted", bad)
		}
	}
}
