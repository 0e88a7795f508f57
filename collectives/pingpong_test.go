package collectives_test

import (
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// TestPingPongTime: on a contention-free network of latency L and
// bandwidth B per hop, each of the 2*rounds eager messages of a ping-pong
// takes exactly its path's latency plus bytes/B, one after the other; as
// rendezvous messages, two latencies more each (the request and the
// reply).
func TestPingPongTime(t *testing.T) {
	const rounds, bytes = 5, 1000
	s, err := collectives.PingPong(4, 0, 3, bytes, rounds)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Validate(sim.Materialize(s)); err != nil {
		t.Fatal(err)
	}
	top, err := topology.Crossbar(4, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	net, err := network.Analytic(network.AnalyticConfig{Topology: top, Placement: []int32{0, 1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, eager := range []int64{bytes, bytes - 1} {
		res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: sim.HostParams{EagerLimit: eager}})
		if err != nil {
			t.Fatal(err)
		}
		perMessage := 2*sim.Microsecond + sim.FromSeconds(bytes/1e9)
		if eager < bytes {
			perMessage += 2 * 2 * sim.Microsecond
		}
		if want := 2 * rounds * perMessage; res.Makespan != want {
			t.Errorf("eager limit %d: makespan %v, want %v", eager, res.Makespan, want)
		}
	}
	for _, bad := range [][3]int{{0, 0, 1}, {0, 4, 1}, {0, 1, 0}} {
		if _, err := collectives.PingPong(4, bad[0], bad[1], 8, bad[2]); err == nil {
			t.Errorf("PingPong(4, %d, %d, 8, %d) accepted", bad[0], bad[1], bad[2])
		}
	}
}

// TestPingPongCarriesData: in data mode the ping-pong's words reach the
// peer and come back, and the check catches a word that did not.
func TestPingPongCarriesData(t *testing.T) {
	for _, bytes := range []int64{0, 7, 8, 1000, 1 << 16} {
		s, err := collectives.PingPong(3, 0, 2, bytes, 3)
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([][][]uint64, 3)
		checks := make([]func([][]uint64) error, 3)
		for r := range bufs {
			bufs[r], checks[r] = collectives.PingPongData(0, 2, bytes, 9, r)
		}
		if _, err := sim.Execute(sim.New(1), s, sim.Config{Network: sim.RandomLatency(sim.Microsecond), Data: bufs}); err != nil {
			t.Fatal(err)
		}
		for r := range bufs {
			if err := checks[r](bufs[r]); err != nil {
				t.Errorf("%d bytes, rank %d: %v", bytes, r, err)
			}
		}
		if words := bytes / 8; words > 0 {
			bufs[2][0][words-1]++
			if checks[2](bufs[2]) == nil {
				t.Errorf("%d bytes: a changed word at the peer passed the check", bytes)
			}
			bufs[0][1][0]++
			if checks[0](bufs[0]) == nil {
				t.Errorf("%d bytes: a changed echo passed the check", bytes)
			}
		}
	}
}

// TestExchangeTime: on a contention-free crossbar (full-duplex NICs) each
// round of an eager exchange takes one message's time, both directions at
// once: rounds * (2 hops of latency + bytes/B).
func TestExchangeTime(t *testing.T) {
	const rounds, bytes = 4, 1000
	top, err := topology.Crossbar(3, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	net, err := network.Analytic(network.AnalyticConfig{Topology: top, Placement: []int32{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, reduce := range []bool{false, true} {
		s, err := collectives.Exchange(3, 2, 0, bytes, rounds, reduce)
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.Validate(sim.Materialize(s)); err != nil {
			t.Fatal(err)
		}
		// Reducing 1000 B at 1 ps/B adds 1 ns a round. Eager, a round is
		// the message's latency (two links of 1 µs) and its 1 µs on the
		// NIC. Rendezvous, the request's latency, the reply's, then the
		// data's and its 1 µs: 7 µs, which only sends and receives issued
		// together make (a rank that waited for its send before posting
		// its receive would never answer the other's request).
		for _, eager := range []bool{true, false} {
			limit, round := int64(bytes), 2*sim.Microsecond+sim.FromSeconds(bytes/1e9)
			if !eager {
				limit, round = bytes-1, 6*sim.Microsecond+sim.FromSeconds(bytes/1e9)
			}
			if reduce {
				round += sim.Nanosecond
			}
			res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: sim.HostParams{EagerLimit: limit, ReducePsPerByte: 1}})
			if err != nil {
				t.Fatalf("reduce %v, eager %v: %v", reduce, eager, err)
			}
			if want := rounds * round; res.Makespan != want {
				t.Errorf("reduce %v, eager %v: makespan %v, want %v", reduce, eager, res.Makespan, want)
			}
		}
	}
	for _, bad := range [][3]int{{0, 0, 1}, {0, 3, 1}, {0, 1, 0}} {
		if _, err := collectives.Exchange(3, bad[0], bad[1], 8, bad[2], false); err == nil {
			t.Errorf("Exchange(3, %d, %d, 8, %d) accepted", bad[0], bad[1], bad[2])
		}
	}
}

// TestExchangeCarriesData: in data mode each side ends with the other's
// words, added up once a round where the receives reduce, and the check
// catches a word that is not so.
func TestExchangeCarriesData(t *testing.T) {
	for _, bytes := range []int64{0, 8, 1000, 1 << 16} {
		for _, reduce := range []bool{false, true} {
			const rounds = 3
			s, err := collectives.Exchange(3, 0, 2, bytes, rounds, reduce)
			if err != nil {
				t.Fatal(err)
			}
			bufs := make([][][]uint64, 3)
			checks := make([]func([][]uint64) error, 3)
			for r := range bufs {
				bufs[r], checks[r] = collectives.ExchangeData(0, 2, bytes, rounds, reduce, 9, r)
			}
			var sent uint64
			if bytes > 0 {
				sent = bufs[0][0][0]
			}
			if _, err := sim.Execute(sim.New(1), s, sim.Config{Network: sim.RandomLatency(sim.Microsecond), Data: bufs}); err != nil {
				t.Fatal(err)
			}
			for r := range bufs {
				if err := checks[r](bufs[r]); err != nil {
					t.Errorf("%d bytes, reduce %v, rank %d: %v", bytes, reduce, r, err)
				}
			}
			if words := bytes / 8; words > 0 {
				// Rank 2's first word is the first word rank 0 sent,
				// rounds times when reducing.
				want := sent
				if reduce {
					want *= rounds
				}
				if got := bufs[2][1][0]; got != want {
					t.Errorf("%d bytes, reduce %v: rank 2's word 0 is %#x, want %#x", bytes, reduce, got, want)
				}
				bufs[0][1][words-1]++
				if checks[0](bufs[0]) == nil {
					t.Errorf("%d bytes, reduce %v: a changed word passed the check", bytes, reduce)
				}
			}
		}
	}
}
