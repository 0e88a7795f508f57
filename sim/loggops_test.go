package sim_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

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
	// The last line marks the period: a duration there, which would be
	// dropped, is refused at its line.
	if _, err := sim.ParseNoise(strings.NewReader("0\t100\n# comment\n1000\t50\n# the end\n\n"), "last.txt"); err == nil || !strings.Contains(err.Error(), "last.txt:3:") || !strings.Contains(err.Error(), "<period><TAB>0") {
		t.Errorf("a trace whose last line has a duration (comments after it): %v, want an error at last.txt:3 saying how to end it", err)
	}
}

// TestStragglerSendsLeaveLate: a straggler's send takes Factor times o
// before its message leaves (it left after the usual o: the message
// reached its receiver before its sender had sent it, a new user's trial),
// while an OS detour is charged after, as LogGOPSim charges it. By hand,
// with LogGOPSim's defaults (L 2500 ns, o 1500 ns, G 6 ns/B), one 8-byte
// message: with both ranks 3x slow, it leaves at 3o = 4500 ns, arrives at
// 7000 ns, and its receiver takes 3o + 7G more: 11542 ns (8542 ns before).
// With one straggler, either way round, 8542 ns: the slow sender's
// 4500 + L + o + 7G, or the slow receiver's o + L + 3o + 7G (seed 1 makes
// rank 0 the straggler: sending in one file, receiving in the other).
func TestStragglerSendsLeaveLate(t *testing.T) {
	for _, text := range []string{
		"num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 5\n}\nrank 1 {\nl1: recv 8b from 0 tag 5\n}\n",
		"num_ranks 2\nrank 0 {\nl1: recv 8b from 1 tag 5\n}\nrank 1 {\nl1: send 8b to 0 tag 5\n}\n",
	} {
		g, err := sim.ParseGOAL(strings.NewReader(text), "t.goal")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			stragglers int
			want       sim.Time
		}{{2, 11542 * sim.Nanosecond}, {1, 8542 * sim.Nanosecond}} {
			var n sim.Noise
			if err := n.SetStragglers(c.stragglers, 3); err != nil {
				t.Fatal(err)
			}
			res, err := g.RunLogGOPS(sim.DefaultLogGOPS, &n, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Makespan != c.want {
				t.Errorf("%d stragglers, rank 0 %s: %v, want %v", c.stragglers, text[25:29], res.Makespan, c.want)
			}
			if c.stragglers == 1 && res.Finish[0] == res.Finish[1] {
				t.Errorf("rank 0 %s: both ranks finish at %v: which one straggled?", text[25:29], res.Finish[0])
			}
		}
	}
}

// Independent sends and receives in the LogGOPS model, derived by hand
// with LogGOPSim's defaults (L 2500 ns, o 1500 ns, g 1000 ns, G 6 ns/B, S
// 65535 B). A 1 MiB message keeps its NIC busy g + 1048575 G = 6292450 ns
// and its receiver's CPU o + 1048575 G = 6292950 ns; it arrives o + L =
// 4000 ns after its send starts. LogGOPSim (built from its public sources)
// gives the same finishing times for every case.
func TestLogGOPSIndependentSends(t *testing.T) {
	ns := sim.Nanosecond
	p := sim.DefaultLogGOPS
	const mib = 1 << 20
	send := func(peer int32, bytes int64) sim.Op { return sim.Op{Kind: sim.OpSend, Peer: peer, Bytes: bytes} }
	recv := func(peer int32, bytes int64) sim.Op { return sim.Op{Kind: sim.OpRecv, Peer: peer, Bytes: bytes} }
	onNIC := func(op sim.Op, nic uint16) sim.Op { op.NIC = nic; return op }
	cases := []struct {
		name  string
		progs []sim.Program
		nics  int
		want  []sim.Time
	}{{
		// The case the alltoall below reduces to. Rank 0's second send
		// waits for its NIC until 6292450; meanwhile rank 3's message,
		// arriving at 4000, is taken in at once (the CPU is free while a
		// send waits for its NIC): rank 0's receive is done at 4000 +
		// 6292950 = 6296950, and the waiting send starts only then, when
		// the CPU is free again; it reaches rank 2 at 6300950, which takes
		// it in until 12593900. Rendezvous sends complete when matched, on
		// arrival: rank 0's last at 6300950, rank 3's at 4000. (Before, the
		// waiting send booked the CPU at 6292450 and the receive waited:
		// rank 0 finished at 12586900.)
		name: "4 ranks",
		progs: []sim.Program{
			{send(1, mib), send(2, mib), recv(3, mib)},
			{recv(0, mib)},
			{recv(0, mib)},
			{send(0, mib)},
		},
		want: []sim.Time{6300950 * ns, 6296950 * ns, 12593900 * ns, 4000 * ns},
	}, {
		// Two NICs: the second send needs no NIC wait, only the CPU, free
		// at 1500; it arrives at 5500 and is taken in until 6298450. Rank
		// 0's sends complete at the matches, 4000 and 5500.
		name: "two NICs",
		progs: []sim.Program{
			{onNIC(send(1, mib), 0), onNIC(send(2, mib), 1)},
			{onNIC(recv(0, mib), 0)},
			{onNIC(recv(0, mib), 1)},
		},
		nics: 2,
		want: []sim.Time{5500 * ns, 6296950 * ns, 6298450 * ns},
	}, {
		// Mixed eager and rendezvous: the 8 B eager send waits for the
		// NIC behind the 1 MiB rendezvous send, until 6292450, then runs
		// its o (done at 6293950, eager), and rank 2 takes it in at 6296450
		// + 1500 + 7*6 = 6297992. Rank 3's 8 B message, arriving at 4000, is
		// taken in meanwhile: done at 4000 + 1542 = 5542.
		name: "eager behind rendezvous",
		progs: []sim.Program{
			{send(1, mib), send(2, 8), recv(3, 8)},
			{recv(0, mib)},
			{recv(0, 8)},
			{send(0, 8)},
		},
		want: []sim.Time{6293950 * ns, 6296950 * ns, 6297992 * ns, 1500 * ns},
	}, {
		// The oldest waiting request takes a CPU that frees: both sends and
		// both 2 ms calcs are ready at 0. The first send has the CPU for
		// [0, 1500); the second waits for the NIC until 1000 + 199999 G =
		// 1200994; the first calc has the CPU for [1500, 2001500). At
		// 2001500 the second send, ready as early as the second calc and
		// before it in the program, goes first: [2001500, 2003000); it
		// reaches rank 2 at 2005500, taken in until 2012994. The second
		// calc then runs until 4003000.
		name: "oldest request first",
		progs: []sim.Program{
			{send(1, 200000), send(2, 1000), {Kind: sim.OpCalc, Dur: 2000000 * ns}, {Kind: sim.OpCalc, Dur: 2000000 * ns}},
			{recv(0, 200000)},
			{recv(0, 1000)},
		},
		want: []sim.Time{4003000 * ns, 1205494 * ns, 2012994 * ns},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := sim.FromPrograms(c.name, c.progs, 1<<30)
			s.NICs = c.nics
			res, err := sim.Execute(sim.New(1), s, sim.Config{LogGOPS: &p})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Finish, c.want) {
				t.Fatalf("finish %v, want %v", res.Finish, c.want)
			}
			// The GOAL executor runs the same protocol.
			var text bytes.Buffer
			if err := sim.WriteGOAL(&text, s, sim.GOALOptions{}); err != nil {
				t.Fatal(err)
			}
			g, err := sim.ParseGOAL(&text, c.name)
			if err != nil {
				t.Fatal(err)
			}
			gres, err := g.RunLogGOPS(p, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gres.Finish, c.want) {
				t.Fatalf("GOAL run: finish %v, want %v", gres.Finish, c.want)
			}
		})
	}
}

// A linear alltoall of 1 MiB per pair on 8 ranks, every receive posted and
// then every send (to itself first, then to r+1, r+2, ...), in the LogGOPS
// model. Every rank does the same at the same times: its k-th send starts
// at R_k (R_0 = 0) and arrives at R_k + 4000, where it is taken in until
// R_k + 4000 + 6292950 = R_k + 6296950 (the CPU is free at R_k + 4000: the
// send's o ended at R_k + 1500). The next send may leave the NIC at R_k +
// 6292450 but needs the CPU, busy with that intake: R_(k+1) = R_k +
// 6296950. The eighth intake ends at 8 x 6296950 = 50375600 ns, as
// LogGOPSim gives. (Before the CPU was left free while sends wait for
// their NIC: 94.39 ms, 1.87x too slow.)
func TestLogGOPSLinearAlltoall(t *testing.T) {
	const p, mib = 8, 1 << 20
	progs := make([]sim.Program, p)
	for r := range int32(p) {
		for i := range int32(p) {
			progs[r] = append(progs[r], sim.Op{Kind: sim.OpRecv, Peer: (r - i + p) % p, Bytes: mib})
		}
		for i := range int32(p) {
			progs[r] = append(progs[r], sim.Op{Kind: sim.OpSend, Peer: (r + i) % p, Bytes: mib})
		}
	}
	lg := sim.DefaultLogGOPS
	res := runLogGOPS(t, progs, lg, nil)
	if want := 50375600 * sim.Nanosecond; res.Makespan != want {
		t.Fatalf("makespan %v, want %v", res.Makespan, want)
	}
}

// TestStragglerPerByteWork: a straggler does its per-byte CPU work O
// Factor times slower too (only o was slowed: an audit). By hand, with L
// 850 ns, o 200 ns, g and G 0, O 1 ns, a calc of 400 ns and then 1001
// bytes sent: the sender 3x slow finishes at 3 x (400 + 200 + 1000) =
// 4800 ns, and its receiver at 1800 + 850 + 200 + 1000 = 3850 ns; the
// receiver 3x slow at 1450 + 3 x (200 + 1000) = 5050 ns.
func TestStragglerPerByteWork(t *testing.T) {
	lg := sim.LogGOPS{L: 850 * sim.Nanosecond, O: 200 * sim.Nanosecond, OPerByte: 1000, S: 65535}
	for _, c := range []struct {
		text string
		want []sim.Time
	}{
		{"num_ranks 2\nrank 0 {\nl1: calc 400\nl2: send 1001b to 1 tag 0\nl2 requires l1\n}\nrank 1 {\nl1: recv 1001b from 0 tag 0\n}\n", []sim.Time{4800 * sim.Nanosecond, 3850 * sim.Nanosecond}},
		{"num_ranks 2\nrank 0 {\nl1: recv 1001b from 1 tag 0\n}\nrank 1 {\nl1: calc 400\nl2: send 1001b to 0 tag 0\nl2 requires l1\n}\n", []sim.Time{5050 * sim.Nanosecond, 1600 * sim.Nanosecond}},
	} {
		g, err := sim.ParseGOAL(strings.NewReader(c.text), "t.goal")
		if err != nil {
			t.Fatal(err)
		}
		var n sim.Noise
		if err := n.SetStragglers(1, 3); err != nil {
			t.Fatal(err)
		}
		res, err := g.RunLogGOPS(lg, &n, 1) // seed 1: rank 0 straggles
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Finish, c.want) {
			t.Errorf("finish %v, want %v", res.Finish, c.want)
		}
	}
}

// MPI's non-overtaking rule holds across a receiver's NICs: rank 0 sends
// 8 B (tag 1) then 16 B (tag 2) to rank 1, whose any-tag 8 B receive on
// NIC 1 is posted only later. The 8 B message, finding no receive posted,
// waits at NIC 0 behind rank 2's 1 MiB; the 16 B one arrives after the
// receive is posted. It must queue behind its sender's earlier message:
// taken in first through NIC 1, it matched the any-tag receive and was
// truncated (an audit). Now the 8 B message takes that receive and the
// 16 B one the tag-2 receive after it.
func TestLogGOPSNonOvertakingAcrossNICs(t *testing.T) {
	const src = `num_ranks 3
rank 0 {
c0: calc 100
m1: send 8b to 1 tag 1
m1 requires c0
c: calc 10000
c requires m1
m2: send 16b to 1 tag 2
m2 requires c
}
rank 1 {
big: recv 1048576b from 2 tag 9 cpu 1 nic 0
c: calc 5000 cpu 0
r1: recv 8b from 0 tag -1 cpu 0 nic 1
r1 requires c
r2: recv 16b from 0 tag 2 cpu 0 nic 1
r2 requires r1
}
rank 2 {
s: send 1048576b to 1 tag 9
}
`
	g, err := sim.ParseGOAL(strings.NewReader(src), "overtake.goal")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.RunLogGOPS(sim.DefaultLogGOPS, nil, 1); err != nil {
		t.Fatalf("the 16 B message overtook the 8 B one: %v", err)
	}
}

// A sender's messages wait behind its earlier ones only while those wait:
// once they are in, the next goes to the NIC of the receive it matches
// again. Rank 0's 8 B message of tag 2, 5 ms in, is for a receive on NIC
// 1 (and CPU 1) while NIC 0 and CPU 0 take in rank 2's 1 MiB (about 6.3
// ms from 4 ms): it is in at once, and rank 1's 10 ms calc after it, on
// CPU 1, ends as it does without rank
// 0's earlier message (taken in through NIC 0 long before). Kept behind
// that earlier message's NIC, it waited for the 1 MiB (an audit's
// mutation).
func TestLogGOPSSenderReleasesItsNIC(t *testing.T) {
	const with = `num_ranks 3
rank 0 {
e: send 8b to 1 tag 1 cpu 1
c: calc 5000000
late: send 8b to 1 tag 2
late requires c
}
rank 1 {
r1: recv 8b from 0 tag 1 cpu 0 nic 0
big: recv 1048576b from 2 tag 9 cpu 0 nic 0
r2: recv 8b from 0 tag 2 cpu 1 nic 1
after: calc 10000000 cpu 1
after requires r2
}
rank 2 {
c2: calc 4000000
s: send 1048576b to 1 tag 9
s requires c2
}
`
	without := strings.NewReplacer("e: send 8b to 1 tag 1 cpu 1\n", "", "r1: recv 8b from 0 tag 1 cpu 0 nic 0\n", "").Replace(with)
	finish := func(text string) sim.Time {
		t.Helper()
		g, err := sim.ParseGOAL(strings.NewReader(text), "release.goal")
		if err != nil {
			t.Fatal(err)
		}
		res, err := g.RunLogGOPS(sim.DefaultLogGOPS, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		return res.Finish[1]
	}
	if a, b := finish(with), finish(without); a != b || b > 16*sim.Millisecond {
		t.Errorf("rank 1 ends at %v after an earlier message from rank 0, %v without; want the same, near 15 ms", a, b)
	}
}

// Non-overtaking across NICs on random schedules: rank 0 sends messages
// of growing sizes (8 B more each) to rank 1, between calcs, and rank 1
// takes them with any-tag receives of exactly those sizes on random NICs
// and CPUs, between calcs of its own, while rank 2 loads rank 1's NICs
// with large messages; a message taken by an earlier one's receive would
// be larger than it: MPI_ERR_TRUNCATE.
func TestLogGOPSNonOvertakingProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 6).Draw(rt, "messages")
		var r0, r1, r2 strings.Builder
		for i := range n {
			fmt.Fprintf(&r0, "c%d: calc %d\ns%d: send %db to 1 tag %d\ns%d requires c%d\n", i, rapid.IntRange(0, 3000).Draw(rt, "gap"), i, 8*(i+1), i+1, i, i)
			if i > 0 {
				fmt.Fprintf(&r0, "c%d requires s%d\n", i, i-1)
			}
			fmt.Fprintf(&r1, "w%d: calc %d cpu %d\nr%d: recv %db from 0 tag -1 cpu %d nic %d\nr%d requires w%d\n", i, rapid.IntRange(0, 5000).Draw(rt, "wait"), rapid.IntRange(0, 1).Draw(rt, "cpu"),
				i, 8*(i+1), rapid.IntRange(0, 1).Draw(rt, "rcpu"), rapid.IntRange(0, 1).Draw(rt, "nic"), i, i)
			if i > 0 {
				fmt.Fprintf(&r1, "w%d requires r%d\n", i, i-1)
			}
		}
		big := rapid.IntRange(0, 3).Draw(rt, "loads")
		for i := range big {
			fmt.Fprintf(&r2, "b%d: send %db to 1 tag 100\n", i, rapid.SampledFrom([]int{1000, 100000, 1 << 20}).Draw(rt, "load"))
			fmt.Fprintf(&r1, "l%d: recv 1048576b from 2 tag 100 nic %d\n", i, rapid.IntRange(0, 1).Draw(rt, "lnic"))
		}
		text := fmt.Sprintf("num_ranks 3\nrank 0 {\n%s}\nrank 1 {\n%s}\nrank 2 {\n%s}\n", r0.String(), r1.String(), r2.String())
		g, err := sim.ParseGOAL(strings.NewReader(text), "overtake.goal")
		if err != nil {
			rt.Fatal(err)
		}
		if _, err := g.RunLogGOPS(sim.DefaultLogGOPS, nil, 1); err != nil {
			rt.Fatalf("%v\n%s", err, text)
		}
	})
}
