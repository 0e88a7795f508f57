package sim_test

import (
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

func runLogGOPS(t *testing.T, progs []sim.Program, p sim.LogGOPS, noise *sim.Noise) *sim.Result {
	t.Helper()
	s := sim.FromPrograms("loggops", progs, 1<<30)
	res, err := sim.Execute(sim.New(1), s, sim.Config{LogGOPS: &p, Noise: noise})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The worked values of the LogGOPS reference (shared/reference), with
// LogGOPSim's default parameters.
func TestLogGOPSWorkedValues(t *testing.T) {
	p := sim.DefaultLogGOPS
	ns := sim.Nanosecond
	t.Run("eager 8B", func(t *testing.T) {
		// Sender: o = 1500. Receiver: 1500 (o) + 2500 (L) + 1500 (o) + 7*6 (G).
		res := runLogGOPS(t, []sim.Program{
			{{Kind: sim.OpSend, Peer: 1, Bytes: 8}},
			{{Kind: sim.OpRecv, Peer: 0, Bytes: 8}},
		}, p, nil)
		if res.Finish[0] != 1500*ns || res.Finish[1] != 5542*ns {
			t.Fatalf("finish %v, want [1.5µs 5.542µs]", res.Finish)
		}
	})
	t.Run("rendezvous 1MiB", func(t *testing.T) {
		// The receive is posted: the send completes at the match, when the
		// message arrives (1500+2500 = 4000); the receiver takes it in for
		// o + 1048575*6.
		res := runLogGOPS(t, []sim.Program{
			{{Kind: sim.OpSend, Peer: 1, Bytes: 1 << 20}},
			{{Kind: sim.OpRecv, Peer: 0, Bytes: 1 << 20}},
		}, p, nil)
		if res.Finish[0] != 4000*ns || res.Finish[1] != 6296950*ns {
			t.Fatalf("finish %v, want [4µs 6.29695ms]", res.Finish)
		}
	})
	t.Run("binomial bcast 8B on 64", func(t *testing.T) {
		// 6 levels of 5542 ns: the all-ones rank is reached through first
		// children only.
		a, _ := collectives.Lookup(collectives.Bcast, "binomial")
		s, err := a.Build(collectives.Params{Ranks: 64, Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Execute(sim.New(1), s, sim.Config{LogGOPS: &p})
		if err != nil {
			t.Fatal(err)
		}
		if res.Makespan != 33252*ns {
			t.Fatalf("makespan %v, want 33.252µs", res.Makespan)
		}
	})
	t.Run("zero bytes", func(t *testing.T) {
		// An empty message costs no per-byte time (no -G as in LogGOPSim).
		res := runLogGOPS(t, []sim.Program{
			{{Kind: sim.OpSend, Peer: 1}},
			{{Kind: sim.OpRecv, Peer: 0}},
		}, p, nil)
		if res.Finish[1] != 5500*ns {
			t.Fatalf("receiver %v, want 5.5µs", res.Finish[1])
		}
	})
}

// A NIC's gap spaces sends; o occupies the CPU; the second of two messages
// arriving at once waits for the receiving NIC and CPU.
func TestLogGOPSGapsAndIntake(t *testing.T) {
	p := sim.LogGOPS{L: 100, O: 10, G: 50}
	// Rank 0 sends to 1 and 2: second send at max(cpu 10, nic 50) = 50.
	// Rank 3 and 4 both send to 5 at 0: arrivals at 110; the first taken in
	// at 110 (cpu until 120, nic until 160), the second at 160, done 170.
	res := runLogGOPS(t, []sim.Program{
		{{Kind: sim.OpSend, Peer: 1}, {Kind: sim.OpSend, Peer: 2}},
		{{Kind: sim.OpRecv, Peer: 0}},
		{{Kind: sim.OpRecv, Peer: 0}},
		{{Kind: sim.OpSend, Peer: 5}},
		{{Kind: sim.OpSend, Peer: 5, Tag: 1}},
		{{Kind: sim.OpRecv, Peer: 3}, {Kind: sim.OpRecv, Peer: 4, Tag: 1}},
	}, p, nil)
	want := []sim.Time{60, 120, 170, 10, 10, 170}
	for r, w := range want {
		if res.Finish[r] != w {
			t.Errorf("rank %d finished at %v, want %v", r, res.Finish[r], w)
		}
	}
}

// irequires: B starts only after A starts (not after A completes); calcs
// on two CPUs run side by side, on one CPU one after the other.
func TestStartDependenciesAndCPUs(t *testing.T) {
	prog := sim.Program{
		{Kind: sim.OpCalc, Dur: 100},                                                  // 0: CPU 0, [0,100)
		{Kind: sim.OpCalc, Dur: 30, StartAfter: []int32{0}},                           // 1: CPU 0 too: [100,130)
		{Kind: sim.OpCalc, Dur: 40, CPU: 1, After: []int32{}},                         // 2: CPU 1: [0,40)
		{Kind: sim.OpCalc, Dur: 5, CPU: 1, StartAfter: []int32{1}, After: []int32{2}}, // 3: starts once 1 started (100) and 2 done: [100,105)
	}
	s := sim.FromPrograms("cpus", []sim.Program{prog}, 100)
	s.CPUs = 2
	res, err := sim.Execute(sim.New(1), s, sim.Config{LogGOPS: &sim.LogGOPS{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Makespan != 130 {
		t.Fatalf("makespan %v, want 130ps", res.Makespan)
	}
	s.CPUs = 1
	if _, err := sim.Execute(sim.New(1), s, sim.Config{LogGOPS: &sim.LogGOPS{}}); err == nil || !strings.Contains(err.Error(), "CPU 1") {
		t.Fatalf("an op on a CPU the schedule lacks: %v", err)
	}
}

// A wildcard receive takes the oldest message from anyone; a tag wildcard
// the oldest from its source.
func TestWildcardReceives(t *testing.T) {
	progs := []sim.Program{
		{{Kind: sim.OpSend, Peer: 2, Tag: 7, Bytes: 8, Data: sim.Region{Count: 1}}},
		{{Kind: sim.OpCalc, Dur: 1000}, {Kind: sim.OpSend, Peer: 2, Tag: 3, Bytes: 8, Data: sim.Region{Count: 1}, After: []int32{0}}},
		{
			{Kind: sim.OpRecv, Peer: sim.AnySource, Tag: sim.AnyTag, Bytes: 8, Data: sim.Region{Off: 0, Count: 1}},
			{Kind: sim.OpRecv, Peer: 1, Tag: sim.AnyTag, Bytes: 8, Data: sim.Region{Off: 1, Count: 1}},
		},
	}
	data := [][][]uint64{{{10}}, {{20}}, {{0, 0}}}
	s := sim.FromPrograms("wild", progs, 100)
	if _, err := sim.Execute(sim.New(1), s, sim.Config{Data: data, Network: sim.FixedLatency(5), Host: sim.HostParams{EagerLimit: 8}}); err != nil {
		t.Fatal(err)
	}
	if data[2][0][0] != 10 || data[2][0][1] != 20 {
		t.Fatalf("got %v, want [10 20]", data[2][0])
	}
}

// Noise stretches CPU intervals as the reference says, the same way for the
// same seed.
func TestNoiseTrace(t *testing.T) {
	// Detours of 10ns at 0 and 50ns, period 100ns. Co-scheduled so that
	// both ranks share one offset.
	trace := "# start\tduration\n0\t10\n50\t10\n100\t0\n"
	n, err := sim.ParseNoise(strings.NewReader(trace), "trace")
	if err != nil {
		t.Fatal(err)
	}
	n.CoScheduled = true
	calc := []sim.Program{{{Kind: sim.OpCalc, Dur: 200 * sim.Nanosecond}}}
	a := runLogGOPS(t, calc, sim.LogGOPS{}, n).Makespan
	b := runLogGOPS(t, calc, sim.LogGOPS{}, n).Makespan
	// 200ns spans two periods: 4 detours of 10ns, plus possibly the rest of
	// one running at the start: 240..250ns.
	if a != b || a < 240*sim.Nanosecond || a > 250*sim.Nanosecond {
		t.Fatalf("noisy calc took %v and %v, want one value in [240ns, 250ns]", a, b)
	}
	for _, bad := range []string{"", "0\t10\n", "0\t10\n5\t10\n100\t0\n", "x\t1\n2\t3\n", "0\t1\t2\n"} {
		if _, err := sim.ParseNoise(strings.NewReader(bad), "bad"); err == nil {
			t.Errorf("trace %q accepted", bad)
		}
	}
}
