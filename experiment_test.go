package collsim_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/dnn"
	"github.com/collsim/collsim/workloads/taskbench"
)

// TestExperimentLeavesTheMachine: routing, degraded links and jitter
// apply to the run's copy of the machine, never to the caller's (a
// built-in is shared by every run of the process).
func TestExperimentLeavesTheMachine(t *testing.T) {
	m, err := configs.Resolve("dragonfly-72")
	if err != nil {
		t.Fatal(err)
	}
	routing, bw := m.Routing, m.Topology.Links()[0].Bandwidth
	e := collsim.Experiment{Machine: m, Network: collsim.Flow, Routing: "valiant", Ranks: 8, Size: 64 << 10,
		Degrade: []string{m.Topology.Label(m.Topology.Links()[0].From) + "->" + m.Topology.Label(m.Topology.Links()[0].To) + ":0.5"}}
	if _, err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Routing != routing || m.Topology.Links()[0].Bandwidth != bw {
		t.Errorf("the caller's machine changed: routing %q (was %q), link 0 at %g B/s (was %g)", m.Routing, routing, m.Topology.Links()[0].Bandwidth, bw)
	}
	// A GOAL run too, on each network.
	for _, net := range []string{collsim.Flow, collsim.LogGOPS} {
		g, err := sim.ParseGOAL(strings.NewReader("num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 0\n}\nrank 1 {\nl0: recv 8b from 0 tag 0\n}\n"), "two.goal")
		if err != nil {
			t.Fatal(err)
		}
		e := collsim.Experiment{Machine: m, Network: net, Degrade: e.Degrade}
		if net == collsim.Flow {
			e.Routing = "valiant"
		}
		_, err = e.RunGOAL(g)
		if net == collsim.Flow && err != nil {
			t.Fatal(err)
		}
		if m.Routing != routing || m.Topology.Links()[0].Bandwidth != bw {
			t.Errorf("a GOAL run on %s changed the caller's machine: routing %q (was %q), link 0 at %g B/s (was %g)", net, m.Routing, routing, m.Topology.Links()[0].Bandwidth, bw)
		}
	}
}

// TestExperimentsShareANoise: one Noise given to Experiments that run at
// once, with different ranks, gives each run the times it gets alone (the
// runs wrote their offsets and stragglers into it: a data race, wrong
// times, and a panic where ranks of 64 met offsets for 4; a new user's
// trial). Run it under -race to see the race itself.
func TestExperimentsShareANoise(t *testing.T) {
	noise, err := sim.PeriodicNoise(100*sim.Microsecond, 5*sim.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := noise.SetStragglers(1, 2); err != nil {
		t.Fatal(err)
	}
	run := func(i int) (float64, error) {
		e := collsim.Experiment{Algorithm: "ring", Ranks: 4 + 60*(i%2), Size: 1 << 20, Seed: uint64(1 + i%3), Noise: noise}
		r, err := e.Run()
		if err != nil {
			return 0, err
		}
		return r.Time, nil
	}
	const runs = 12
	alone := make([]float64, runs)
	for i := range alone {
		if alone[i], err = run(i); err != nil {
			t.Fatal(err)
		}
	}
	if alone[0] == alone[1] || alone[0] == alone[2] {
		t.Fatalf("ranks or seeds changed nothing: %v", alone[:3])
	}
	together := make([]float64, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range together {
		wg.Go(func() { together[i], errs[i] = run(i) })
	}
	wg.Wait()
	for i := range together {
		if errs[i] != nil || together[i] != alone[i] {
			t.Errorf("run %d at once with the others: %v (%v), alone %v", i, together[i], errs[i], alone[i])
		}
	}
}

// TestExperimentErrors: options that do not go together are OptionErrors
// (the command line's usage errors); a bad machine-side input is not.
func TestExperimentErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		e      collsim.Experiment
		option bool
	}{
		{"routing on the analytic network", collsim.Experiment{Routing: "ugal", Size: 8}, true},
		{"jitter off the flow network", collsim.Experiment{Jitter: &network.Jitter{Sigma: 200 * sim.Nanosecond}, Size: 8}, true},
		{"links off the flow network", collsim.Experiment{BusiestLinks: 3, Size: 8}, true},
		{"a root outside the ranks", collsim.Experiment{Collective: "bcast", Root: 9, Ranks: 4, Size: 8}, true},
		{"an unknown network", collsim.Experiment{Network: "packet", Size: 8}, true},
		{"LogGOPS costs on the analytic network", collsim.Experiment{LogGOPS: &sim.DefaultLogGOPS, Size: 8}, true},
		{"a machine whose bandwidth the flow model cannot hold", collsim.Experiment{Machine: tiny(t), Network: collsim.Flow, Size: 8}, false},
		{"more ranks than slots", collsim.Experiment{Ranks: 65, Size: 8}, false},
		{"a schedule that cannot be built", collsim.Experiment{Collective: "alltoall", Algorithm: "two_procs", Ranks: 6, Size: 48}, false},
		{"data too large to verify", collsim.Experiment{Verify: collsim.VerifyOn, Ranks: 4, Size: 1 << 40}, false},
		// A zero configs.Machine panicked (a new user's trial).
		{"a machine not made by configs", collsim.Experiment{Machine: &configs.Machine{}, Ranks: 4, Size: 8}, true},
	} {
		_, err := tc.e.Run()
		var oe *collsim.OptionError
		if err == nil || errors.As(err, &oe) != tc.option {
			t.Errorf("%s: %v (an OptionError: %t), want an OptionError: %t", tc.name, err, errors.As(err, &oe), tc.option)
		}
		// A dry run finds each before simulating, as the same error.
		if dry := tc.e.Dry(); dry == nil || err == nil || dry.Error() != err.Error() {
			t.Errorf("%s: dry run %v, run %v", tc.name, dry, err)
		}
	}
	if err := (&collsim.Experiment{Ranks: 64, Size: 64}).Dry(); err != nil {
		t.Errorf("a dry run of a good experiment: %v", err)
	}
}

// tiny is a crossbar whose links carry 1e-30 B/s.
func tiny(t *testing.T) *configs.Machine {
	m, err := configs.Parse("tiny.yaml", []byte("network:\n  crossbar:\n    hosts: 4\n    link: {bandwidth: 1e-30B/s, latency: 500ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestExperimentLogGOPS: on the LogGOPS network there is no machine; an
// 8-byte message from rank 0 to rank 1 (a 2-rank binomial bcast) costs
// o + L + o with LogGOPSim's defaults (o = 1.5 µs, L = 2.5 µs; G x 7 = 42
// ns for the bytes after the first): 5.5 µs + 42 ns = 5.542 µs.
func TestExperimentLogGOPS(t *testing.T) {
	e := collsim.Experiment{Network: collsim.LogGOPS, Collective: "bcast", Algorithm: "binomial", Ranks: 2, Size: 8}
	r, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	if r.Placement != "none" || r.Machine != "loggops" {
		t.Errorf("machine %q, placement %q; want loggops and none", r.Machine, r.Placement)
	}
	if want := 5.542e-6; r.Time < want*(1-1e-9) || r.Time > want*(1+1e-9) {
		t.Errorf("time %g s, want %g", r.Time, want)
	}
}

// TestModelExactOnlyWhereNothingIsLeftOut: the ring's closed form is exact
// on two ranks of a host with full-duplex channels of one bandwidth; a
// duplex share (the host's, or only a band's) or size bands make it an
// estimate, flagged in the result, and then model_exact is false (it was
// true beside the flags, while the text called the form an estimate).
func TestModelExactOnlyWhereNothingIsLeftOut(t *testing.T) {
	const base = "network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 1us}\n"
	for _, tc := range []struct {
		name, extra          string
		exact, duplex, bands bool
	}{
		{"plain", "", true, false, false},
		{"host duplex", "  local_duplex: 0.5\n", false, true, false},
		{"band without duplex", "  local_by_size:\n    - {from: 64KiB, bandwidth: 5GB/s}\n", false, false, true},
		{"band with duplex", "  local_by_size:\n    - {from: 64KiB, bandwidth: 5GB/s, duplex: 0.4}\n", false, true, true},
	} {
		m, err := configs.Parse(tc.name+".yaml", []byte(base+tc.extra))
		if err != nil {
			t.Fatal(err)
		}
		e := collsim.Experiment{Machine: m, Algorithm: "ring", Ranks: 2, Size: 1 << 20}
		r, err := e.Run()
		if err != nil {
			t.Fatal(err)
		}
		if r.Model == nil || r.ModelExact != tc.exact || r.LocalDuplex != tc.duplex || r.LocalBands != tc.bands {
			t.Errorf("%s: model %v exact %v, local_duplex %v, local_bands %v; want exact %v, %v, %v", tc.name, r.Model, r.ModelExact, r.LocalDuplex, r.LocalBands, tc.exact, tc.duplex, tc.bands)
		}
	}
}

// TestUnusedLocalNoted: a duplex share or size bands on a machine where no
// two of the run's ranks share a host change nothing, and the result's
// note says so (a new user's what-if on the small machine measured
// nothing without a word); where two ranks share a host there is no note.
func TestUnusedLocalNoted(t *testing.T) {
	const local = "  local: {bandwidth: 10GB/s, latency: 1us}\n  local_duplex: half\n  local_by_size:\n    - {from: 64KiB, bandwidth: 5GB/s}\n"
	for _, tc := range []struct {
		perHost string
		note    string
	}{
		{"1", "host.local_duplex and host.local_by_size change nothing here: no two of the 2 ranks share a host (spread has one rank per host)"},
		{"2", ""},
	} {
		m, err := configs.Parse("spread.yaml", []byte("name: spread\nnetwork:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: "+tc.perHost+"\n"+local))
		if err != nil {
			t.Fatal(err)
		}
		e := collsim.Experiment{Machine: m, Ranks: 2, Size: 1 << 20}
		r, err := e.Run()
		if err != nil {
			t.Fatal(err)
		}
		if r.Note != tc.note {
			t.Errorf("%s rank(s) per host: note %q, want %q", tc.perHost, r.Note, tc.note)
		}
	}
}

// TestCallRootOnlyWhereRooted: an allreduce has no root, so Call gives its
// algorithms root 0 whatever was asked (Open MPI 5.0's HAN allreduce,
// built of rooted parts, took --root 2 and ran twice as long: a helper's
// audit), and an Experiment refuses one; a bcast keeps its root.
func TestCallRootOnlyWhereRooted(t *testing.T) {
	for _, tc := range []struct {
		c    collectives.Collective
		want int
	}{{collectives.Allreduce, 0}, {collectives.Barrier, 0}, {collectives.Bcast, 2}, {collectives.Gather, 2}} {
		p, err := collsim.Call(tc.c, 4, 64, 8, 2)
		if err != nil || p.Root != tc.want {
			t.Errorf("%s: root %d, %v; want %d", tc.c, p.Root, err, tc.want)
		}
	}
	// An Experiment refuses the root of an allreduce outright, as the
	// command line does (TestExperimentRefusesWhatItWouldIgnore).
	m, err := configs.Resolve("small")
	if err != nil {
		t.Fatal(err)
	}
	e := collsim.Experiment{Machine: m, Algorithm: "ompi5", Ranks: 3, Size: 8, Root: 2, Shape: collsim.Shape{NodeSize: 2}}
	if _, err := e.Run(); err == nil {
		t.Error("ompi5's allreduce ran with root 2")
	}
}

// TestExperimentRefusesWhatItWouldIgnore: the API took what the command
// line refuses, and ignored it (a new user's trial): a root for an
// allreduce, a call's fields beside a GOAL schedule; RunGOAL(nil)
// panicked. Each is an OptionError now. A GOAL file's second NIC, which
// only the LogGOPS network models, is noted on the analytic network.
func TestExperimentRefusesWhatItWouldIgnore(t *testing.T) {
	var opt *collsim.OptionError
	if _, err := (&collsim.Experiment{Root: 3}).Run(); !errors.As(err, &opt) || !strings.Contains(err.Error(), "Root 3: allreduce has no root") {
		t.Errorf("Root 3 with an allreduce: %v", err)
	}
	if _, err := (&collsim.Experiment{Collective: collectives.Bcast, Root: 3, Ranks: 4, Size: 64}).Run(); err != nil {
		t.Errorf("Root 3 with a bcast: %v", err)
	}
	if _, err := (&collsim.Experiment{}).RunGOAL(nil); !errors.As(err, &opt) {
		t.Errorf("RunGOAL(nil): %v", err)
	}
	g, err := sim.ParseGOAL(strings.NewReader("num_ranks 3\nrank 0 {\nl0: send 8b to 1 tag 0\nl1: send 8b to 2 tag 0 cpu 0 nic 1\n}\nrank 1 {\nl0: recv 8b from 0 tag 0\n}\nrank 2 {\nl0: recv 8b from 0 tag 0\n}\n"), "nics.goal")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&collsim.Experiment{Ranks: 5}).RunGOAL(g); !errors.As(err, &opt) || !strings.Contains(err.Error(), "leave Collective") {
		t.Errorf("RunGOAL with Ranks 5: %v", err)
	}
	r, err := (&collsim.Experiment{Network: collsim.Analytic}).RunGOAL(g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Note, "2 NICs, which only the LogGOPS network models") {
		t.Errorf("note %q; want the NICs noted", r.Note)
	}
	if r, err := (&collsim.Experiment{}).RunGOAL(g); err != nil {
		t.Errorf("on LogGOPS: %v", err)
	} else if r.Note != "" {
		t.Errorf("on LogGOPS: note %q; want none", r.Note)
	}
}

// The API's other entry points refuse zero values with an error, where a
// new user's trial found panics (RunGOAL, RunDNN) and a NaN with no error
// (METG with no durations).
func TestZeroValuesAreRefused(t *testing.T) {
	var e collsim.Experiment
	for name, run := range map[string]func() error{
		"a zero GOAL":               func() error { _, err := e.RunGOAL(&sim.GOAL{}); return err },
		"a DNN job without a model": func() error { _, err := e.RunDNN(dnn.Job{}, false); return err },
		"a METG sweep of no durations": func() error {
			_, _, _, err := e.METG(taskbench.Job{}, nil, 0, nil)
			return err
		},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			if err := run(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}
}

// A deadlock in a GOAL file names each pending op's line, where the
// message's op index is the op's place after its rank's reordering: in
// rank 0, "a" (line 3) requires "b" (line 4), written after it, so a is
// op 1 of the program but the file's first op (a new user's trial).
func TestGOALDeadlockNamesTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dl.goal")
	if err := os.WriteFile(path, []byte("num_ranks 2\nrank 0 {\na: recv 8b from 1\nb: calc 5\na requires b\n}\nrank 1 {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := sim.ParseGOALFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, net := range []string{collsim.LogGOPS, collsim.Analytic} {
		_, err := (&collsim.Experiment{Network: net}).RunGOAL(g)
		if err == nil || !strings.Contains(err.Error(), "rank 0 op 1 ("+path+":3) recv 8B from 1") {
			t.Errorf("%s: %v; want rank 0 op 1 at %s:3", net, err, path)
		}
	}
	// Written in order, op 1 is the second op written: line 4.
	inOrder := filepath.Join(t.TempDir(), "io.goal")
	if err := os.WriteFile(inOrder, []byte("num_ranks 2\nrank 0 {\nx: calc 5\na: recv 8b from 1\na requires x\n}\nrank 1 {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, err = sim.ParseGOALFile(inOrder, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := (&collsim.Experiment{}).RunGOAL(g); err == nil || !strings.Contains(err.Error(), "rank 0 op 1 ("+inOrder+":4) recv 8B from 1") {
		t.Errorf("in order: %v; want rank 0 op 1 at %s:4", err, inOrder)
	}
}

// TestStrategiesSplitOnlyWhatSplits: a search offers tp > 1 only for a
// model with layers that split across tensor-parallel ranks (resnet50's
// tp 2, 4 and 8 were listed as refused and counted as strategies; a new
// user's trial). On 8 devices of a node of 8 with a batch of 8, resnet50
// has the 4 pipelines dp x pp = 8 (dp 1, 2, 4, 8), with both bucket sizes
// where dp > 1: 7 strategies, all tp 1; a GPT also has tp 2, 4 and 8.
func TestStrategiesSplitOnlyWhatSplits(t *testing.T) {
	resnet, err := dnn.Builtin("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	gpt, err := dnn.GPT(dnn.Transformer{Layers: 8, Hidden: 64, Heads: 8, Seq: 16, Vocab: 100})
	if err != nil {
		t.Fatal(err)
	}
	count := func(m *dnn.Model) (all, split int) {
		for _, s := range collsim.Strategies(dnn.Job{Model: m, NodeSize: 8}, 8, 8) {
			all++
			if s.TP > 1 {
				split++
			}
		}
		return all, split
	}
	if all, split := count(resnet); all != 7 || split != 0 {
		t.Errorf("resnet50: %d strategies, %d with tp > 1; want 7 and 0", all, split)
	}
	if _, split := count(gpt); split == 0 {
		t.Error("a GPT: no strategy with tp > 1")
	}
}

// TestLogGOPSRefusesTheMachinesOptions: the LogGOPS network has no machine;
// the API took --degrade, --placement and --fail there and ignored them,
// and refused --routing by the analytic model's reason, where the command
// line refuses them all (a new user's trial). A placement that is no
// policy is an OptionError on any network, as the command line's exit 2.
func TestLogGOPSRefusesTheMachinesOptions(t *testing.T) {
	var opt *collsim.OptionError
	for _, e := range []collsim.Experiment{
		{Network: collsim.LogGOPS, Routing: "ugal"},
		{Network: collsim.LogGOPS, Routing: "minimal"},
		{Network: collsim.LogGOPS, Degrade: []string{"h0->s0:0.5"}},
		{Network: collsim.LogGOPS, Fail: []string{"h0->s0"}},
		{Network: collsim.LogGOPS, Placement: "random"},
		{Network: collsim.LogGOPS, Jitter: &network.Jitter{}},
	} {
		if _, err := e.Run(); !errors.As(err, &opt) || !strings.Contains(err.Error(), "the loggops network has no machine") {
			t.Errorf("%+v: %v", e, err)
		}
	}
	if _, err := (&collsim.Experiment{Placement: "randum"}).Run(); !errors.As(err, &opt) || !strings.Contains(err.Error(), `--placement "randum" is not a policy`) {
		t.Errorf("placement randum: %v", err)
	}
	if _, err := (&collsim.Experiment{Network: collsim.LogGOPS}).Run(); err != nil {
		t.Errorf("loggops alone: %v", err)
	}
}

// TestNodeSizeFollowsThePlacement: the ranks per node a library's choice
// and the hierarchical algorithms see are what the placement puts on a
// node, not the machine's 8 whatever the placement (16 ranks round-robin
// on gpu-cluster, one on each of 16 nodes, ran Open MPI 5.0's han in
// groups of 8: an audit); an interleaving placement is said.
func TestNodeSizeFollowsThePlacement(t *testing.T) {
	m, err := configs.Resolve("gpu-cluster")
	if err != nil {
		t.Fatal(err)
	}
	run := func(placement string, ranks int) *collsim.Result {
		t.Helper()
		r, err := (&collsim.Experiment{Machine: m, Algorithm: "ompi5", Ranks: ranks, Size: 1 << 20, Placement: placement, Verify: collsim.VerifyOff}).Run()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run("block", 16); r.Algorithm != "han" {
		t.Errorf("16 ranks in blocks of 8: %s (%s), want han", r.Algorithm, r.ChosenBy)
	}
	if r := run("round_robin", 16); r.Algorithm != "rabenseifner" || !strings.Contains(r.ChosenBy, "one rank on each node") {
		t.Errorf("16 ranks round-robin: %s (%s), want coll/tuned's rabenseifner", r.Algorithm, r.ChosenBy)
	}
	if r := run("round_robin", 100); r.Algorithm != "han" || !strings.Contains(r.Note, "interleaves the nodes' ranks") {
		t.Errorf("100 ranks round-robin: %s, note %q; want han, and the interleaving said", r.Algorithm, r.Note)
	}
	// HAN's bcast and reduce hand over to coll/tuned where the nodes hold
	// unequal numbers of ranks, which 72 ranks round-robin leave them (2
	// on 8 nodes, 1 on 56) though 72 is a multiple of 8; 128 put 2 on
	// every node (an audit: collsim ran han for the 72).
	for _, c := range []collectives.Collective{collectives.Bcast, collectives.Reduce} {
		for _, k := range []struct {
			ranks int
			han   bool
		}{{72, false}, {128, true}} {
			r, err := (&collsim.Experiment{Machine: m, Collective: c, Algorithm: "ompi5", Ranks: k.ranks, Size: 1 << 20, Placement: "round_robin", Verify: collsim.VerifyOff}).Run()
			if err != nil {
				t.Fatal(err)
			}
			if han := r.Algorithm == "han"; han != k.han || !k.han && !strings.Contains(r.ChosenBy, "placement puts on the nodes unequally") {
				t.Errorf("%s on %d ranks round-robin: %s (%s); want han %t", c, k.ranks, r.Algorithm, r.ChosenBy, k.han)
			}
		}
	}
}
