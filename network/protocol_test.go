package network

import (
	"fmt"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// models are the analytic and the flow model over one topology.
func models(t *testing.T, top *topology.Topology, ranks int) map[string]sim.NetworkFactory {
	t.Helper()
	return modelsWithGap(t, top, ranks, 0)
}

// onBoth builds a's schedule for params and returns its makespan on the
// analytic network and on the flow network of nets (64 KiB eager limit,
// reductions at 50 ps/B).
func onBoth(t *testing.T, a collectives.Algorithm, params collectives.Params, nets map[string]sim.NetworkFactory) [2]sim.Time {
	t.Helper()
	s, err := a.Build(params)
	if err != nil {
		t.Fatal(err)
	}
	var times [2]sim.Time
	for i, name := range []string{"analytic", "flow"} {
		res, err := sim.Execute(sim.New(1), s, sim.Config{Network: nets[name], Host: sim.HostParams{EagerLimit: 64 << 10, ReducePsPerByte: 50}})
		if err != nil {
			t.Fatal(err)
		}
		times[i] = res.Makespan
	}
	return times
}

// modelsWithGap is models with NICs that charge gap per message.
func modelsWithGap(t *testing.T, top *topology.Topology, ranks int, gap sim.Time) map[string]sim.NetworkFactory {
	t.Helper()
	place, err := topology.Place(topology.PlaceBlock, ranks, top.Hosts(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	an, err := Analytic(AnalyticConfig{Topology: top, Placement: place, Gap: gap})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := Flow(FlowConfig{Topology: top, Placement: place, Gap: gap})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]sim.NetworkFactory{"analytic": an, "flow": fl}
}

// The executor's send queue, rendezvous handshake and concurrent sends,
// derived by hand on a crossbar of links with latency 1 µs and 100 ps/B
// (a route: L = 2 µs; 1 MB: G = 100 µs), with no host overheads. Rank 0
// sends 1 MB to rank 1 and 1 MB to rank 2, both ready at 0.
func TestSendQueueAndHandshake(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6}
	cross, err := topology.Crossbar(3, link)
	if err != nil {
		t.Fatal(err)
	}
	const mb = 1_000_000
	us := sim.Microsecond
	for _, c := range []struct {
		name       string
		eager      int64
		concurrent bool
		want       map[string][3]sim.Time
	}{{
		// Eager, one after another through rank 0's NIC on both models:
		// L + G and L + 2G; rank 0 is done when the second has left, 2G.
		name: "eager", eager: mb,
		want: map[string][3]sim.Time{"analytic": {200 * us, 102 * us, 202 * us}, "flow": {200 * us, 102 * us, 202 * us}},
	}, {
		// Rendezvous: both requests leave at 0 and are matched at L; the
		// replies are back at 2L, when the data go out one after another:
		// 3L + G and 3L + 2G; rank 0 done at 2L + 2G.
		name: "rendezvous", eager: mb - 1,
		want: map[string][3]sim.Time{"analytic": {204 * us, 106 * us, 206 * us}, "flow": {204 * us, 106 * us, 206 * us}},
	}, {
		// Concurrent eager sends share rank 0's link under the flow model
		// (both arrive at L + 2G, leaving at 2G); the analytic model's
		// single-port NIC still sends them one after another.
		name: "concurrent", eager: mb, concurrent: true,
		want: map[string][3]sim.Time{"analytic": {200 * us, 102 * us, 202 * us}, "flow": {200 * us, 202 * us, 202 * us}},
	}} {
		for name, net := range models(t, cross, 3) {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				progs := []sim.Program{
					{{Kind: sim.OpSend, Peer: 1, Bytes: mb, Concurrent: c.concurrent}, {Kind: sim.OpSend, Peer: 2, Bytes: mb, Concurrent: c.concurrent}},
					{{Kind: sim.OpRecv, Peer: 0, Bytes: mb}},
					{{Kind: sim.OpRecv, Peer: 0, Bytes: mb}},
				}
				res, err := sim.Execute(sim.New(1), sim.FromPrograms(c.name, progs, 0), sim.Config{Network: net, Host: sim.HostParams{EagerLimit: c.eager}})
				if err != nil {
					t.Fatal(err)
				}
				if got := [3]sim.Time(res.Finish); got != c.want[name] {
					t.Fatalf("finish %v, want %v", got, c.want[name])
				}
			})
		}
	}
}

// A receive posted late holds a rendezvous send's data back: rank 1 posts
// its receive after a 50 µs calc. The request waits from L = 2 µs; the
// reply leaves at 50 and is back at 52, the data arrive at 52 + L + G =
// 154 µs. Eager data would have arrived at 102 µs and been taken at 102.
func TestRendezvousWaitsForTheReceive(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6}
	cross, err := topology.Crossbar(2, link)
	if err != nil {
		t.Fatal(err)
	}
	const mb = 1_000_000
	us := sim.Microsecond
	progs := []sim.Program{
		{{Kind: sim.OpSend, Peer: 1, Bytes: mb}},
		{{Kind: sim.OpCalc, Dur: 50 * us}, {Kind: sim.OpRecv, Peer: 0, Bytes: mb, After: []int32{0}}},
	}
	for name, net := range models(t, cross, 2) {
		for _, c := range []struct {
			eager            int64
			sender, receiver sim.Time
		}{{mb, 100 * us, 102 * us}, {mb - 1, 152 * us, 154 * us}} {
			res, err := sim.Execute(sim.New(1), sim.FromPrograms("late", progs, 0), sim.Config{Network: net, Host: sim.HostParams{EagerLimit: c.eager}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Finish[0] != c.sender || res.Finish[1] != c.receiver {
				t.Errorf("%s, eager limit %d: finish %v, want [%v %v]", name, c.eager, res.Finish, c.sender, c.receiver)
			}
		}
	}
}

// Rendezvous data leave in program order even where replies come back out
// of it. Host h0 reaches h2 over two switches (L = 3 µs, links of 1 µs and
// 100 ps/B: G = 100 µs for 1 MB) and h1 over one (L = 2 µs). Rank 0 sends
// 1 MB to rank 2, then 1 MB to rank 1, both by rendezvous; both requests
// leave at 0, the near reply is back at 4 µs, the far one at 6 µs. The
// far send was issued first, so its data go first: out at 6, at rank 2 at
// 6 + G + 3 = 109 µs; the near data leave when it has left, at 106, and
// arrive at 106 + G + 2 = 208 µs; rank 0 is done at 206 µs. (Letting the
// near data out at its reply, at 4 µs, would hold the far data back to
// 104 µs: rank 2 at 207 µs, a whole G late.)
func TestRendezvousDataInProgramOrder(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6}
	top, err := topology.Custom(3, []topology.Edge{
		{A: "h0", B: "s0", LinkSpec: link}, {A: "h1", B: "s0", LinkSpec: link},
		{A: "s0", B: "s1", LinkSpec: link}, {A: "h2", B: "s1", LinkSpec: link}})
	if err != nil {
		t.Fatal(err)
	}
	const mb = 1_000_000
	us := sim.Microsecond
	progs := []sim.Program{
		{{Kind: sim.OpSend, Peer: 2, Bytes: mb}, {Kind: sim.OpSend, Peer: 1, Bytes: mb}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: mb}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: mb}},
	}
	want := []sim.Time{206 * us, 208 * us, 109 * us}
	for name, net := range models(t, top, 3) {
		res, err := sim.Execute(sim.New(1), sim.FromPrograms("order", progs, 0), sim.Config{Network: net, Host: sim.HostParams{EagerLimit: mb - 1}})
		if err != nil {
			t.Fatal(err)
		}
		for r := range want {
			if res.Finish[r] != want[r] {
				t.Errorf("%s: finish %v, want %v", name, res.Finish, want)
				break
			}
		}
	}
}

// Broadcast trees take the same time under the flow model as under the
// analytic one on a contention-free crossbar: every rank sends to its
// children one after another through its NIC, and each rank takes in one
// message at a time, so no link is ever shared; eager and rendezvous
// sizes, roots 0 and others, prime and power-of-two rank counts.
//
// Reduce trees whose parents take in two children's data at once differ,
// and must: the analytic model's NIC takes in one message at a time (the
// first is reduced while the second arrives), while the flow model shares
// the parent's link between them (both arrive at the end); the flow model
// is then never faster. The chain, where every rank has one child, agrees.
func TestTreesFlowEqualsAnalytic(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 12.5e9, Latency: 0.5e-6}
	equal := [][2]string{{"bcast", "binomial"}, {"bcast", "knomial"}, {"bcast", "binary"}, {"bcast", "split_binary"},
		{"bcast", "segmented_binary"}, {"bcast", "pipelined_binary"}, {"bcast", "adapt"}, {"bcast", "chain"}, {"reduce", "chain"}}
	slower := [][2]string{{"reduce", "binomial"}, {"reduce", "in_order_binary"}, {"reduce", "segmented_binary"}, {"reduce", "adapt"}}
	for _, group := range []struct {
		ids   [][2]string
		equal bool
	}{{equal, true}, {slower, false}} {
		for _, id := range group.ids {
			a, err := collectives.Lookup(collectives.Collective(id[0]), id[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []int{2, 7, 16, 31} {
				cross, err := topology.Crossbar(p, link)
				if err != nil {
					t.Fatal(err)
				}
				nets := models(t, cross, p)
				for _, n := range []int64{1, 1000, 1 << 16, 1<<17 + 3} { // 8 B to 1 MiB of 8-byte elements
					params := collectives.Params{Ranks: p, Count: n, Root: (p / 3) * (int(n) % 2)}
					times := onBoth(t, a, params, nets)
					what := fmt.Sprintf("%s p=%d n=%d root=%d: analytic %v, flow %v", a.ID(), p, n, params.Root, times[0], times[1])
					if group.equal && times[0] != times[1] {
						t.Error(what)
					}
					if !group.equal && times[1] < times[0] {
						t.Error(what + ": the flow model is faster")
					}
				}
			}
		}
	}
}

// TestGapFlowEqualsAnalytic: the flow model charges a NIC's gap per
// message as the analytic model does (FlowConfig.Gap), so where no two
// flows share a link the two agree to the picosecond, with no gap,
// gap-bound (3 µs a message) or not (50 ns), eager or by rendezvous.
// (Recursive doubling on 7 ranks is left out: a folding rank takes in two
// messages at once, which the models treat differently with or without a
// gap, as TestTreesFlowEqualsAnalytic's reduces; so is the linear bcast,
// whose concurrent sends share the root's link on the flow network and
// leave one after another on the analytic one.)
func TestGapFlowEqualsAnalytic(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 12.5e9, Latency: 0.5e-6}
	ids := [][2]string{{"bcast", "binomial"}, {"bcast", "binary"}, {"bcast", "chain"},
		{"allreduce", "ring"}, {"allreduce", "recursive_doubling"}, {"allgather", "ring"}, {"alltoall", "pairwise"}}
	for _, gap := range []sim.Time{0, 50 * sim.Nanosecond, 3 * sim.Microsecond} {
		for _, id := range ids {
			a, err := collectives.Lookup(collectives.Collective(id[0]), id[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []int{2, 7, 16} {
				if id[1] == "recursive_doubling" && p == 7 {
					continue
				}
				cross, err := topology.Crossbar(p, link)
				if err != nil {
					t.Fatal(err)
				}
				nets := modelsWithGap(t, cross, p, gap)
				for _, n := range []int64{1, 1000, 1<<17 + 3} {
					params := collectives.Params{Ranks: p, Count: n}
					times := onBoth(t, a, params, nets)
					if times[0] != times[1] {
						t.Errorf("%s p=%d n=%d gap %v: analytic %v, flow %v", a.ID(), p, n, gap, times[0], times[1])
					}
				}
			}
		}
	}
}
