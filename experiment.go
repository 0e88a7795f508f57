package collsim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// Network models an Experiment can run on.
const (
	Analytic = "analytic" // LogGP per message on the machine's routes, no link sharing
	Flow     = "flow"     // max-min fair sharing of the machine's links
	LogGOPS  = "loggops"  // no machine: every message costs LogGOPS's L, o, g and G
)

// Verify says whether a run carries real data and checks every rank's
// result.
type Verify string

// Verify's values.
const (
	VerifyAuto Verify = ""    // when the data fits in memory
	VerifyOn   Verify = "on"  // always (a run too large for data mode fails)
	VerifyOff  Verify = "off" // never
)

// Shape is an algorithm's options; 0 or "" leaves each to the algorithm's
// default (the node and group sizes to the machine's).
type Shape struct {
	Segment   int64  // pipeline segment in elements
	NodeSize  int    // ranks per node, for hierarchical algorithms
	GroupSize int    // ranks per Dragonfly group, for group-aligned algorithms
	Inner     string // allreduce inside the subsets of hierarchical and suara
	Intra     string // hierarchical and smp: the reduce and bcast inside nodes
	Groups    int    // suara: G of the G x p/G grid
	Steps     int    // suara: serial steps
	Overlap   bool   // MPI_Sendrecv steps wait only for the previous receive

	// unevenNodes: the placement left the nodes unequal (placedNodes),
	// where NodeSize was derived from it.
	unevenNodes bool
}

// Check refuses negative counts and sizes (0 means the default in each).
func (s *Shape) Check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"segment", s.Segment}, {"node-size", int64(s.NodeSize)}, {"group-size", int64(s.GroupSize)}, {"groups", int64(s.Groups)}, {"steps", int64(s.Steps)}} {
		if f.v < 0 {
			return optionf("--%s %d: give 1 or more (or 0 for the default)", f.name, f.v)
		}
	}
	return nil
}

// Apply copies the options into p; the node and group sizes default to
// the machine's (when m is not nil).
func (s *Shape) Apply(p *collectives.Params, m *configs.Machine) {
	p.Segment, p.Inner, p.Intra, p.Groups, p.Steps, p.NodeSize, p.GroupSize = s.Segment, s.Inner, s.Intra, s.Groups, s.Steps, s.NodeSize, s.GroupSize
	p.Overlap, p.UnevenNodes = s.Overlap, s.unevenNodes
	if p.NodeSize == 0 && m != nil && m.NodeSize() > 1 {
		p.NodeSize = m.NodeSize()
	}
	if p.GroupSize == 0 && m != nil {
		p.GroupSize = m.GroupSize()
	}
}

// Experiment is one simulated collective call: a machine, the call, and
// how it runs. The zero value of each field is what `collsim run` does
// without the flag that sets it, except Size (0 bytes here, 1 MiB there)
// and Seed (0 here, 1 there).
type Experiment struct {
	// Machine runs the call (configs.Resolve loads one by name or file);
	// nil: configs.DefaultMachine. It is not changed.
	Machine *configs.Machine

	Collective collectives.Collective // "": allreduce
	// Algorithm is a name of collsim algos, or a library's choice
	// ("ompi", "mpich": collectives.Selectors); "": the collective's
	// default.
	Algorithm string
	Ranks     int   // 0: 64, or the machine's slots if fewer
	Size      int64 // bytes, as nccl-tests counts them (see Call)
	ElemSize  int64 // 0: DefaultElemSize
	Root      int
	Shape     Shape

	Network string       // Analytic (""), Flow or LogGOPS
	LogGOPS *sim.LogGOPS // the LogGOPS network's costs; nil: LogGOPSim's defaults
	// ReduceBandwidth is the hosts' reduction rate in bytes per second on
	// the LogGOPS network, which has none of its own (0: reductions
	// free); a machine's network takes its host.reduce_bandwidth.
	ReduceBandwidth float64
	// Routing overrides the machine's (Flow only: "minimal", "valiant",
	// "ugal", "ecmp").
	Routing   string
	Placement string          // "": the machine's; else topology.Placements
	Degrade   []string        // links at reduced bandwidth, "FROM->TO:FACTOR"
	Fail      []string        // failed links, "FROM->TO" (both directions)
	Jitter    *network.Jitter // per-message latency noise (Flow only)
	// Noise replaces the machine's noise (OS detours, stragglers). Run
	// does not change it: one Noise may serve Experiments that run at
	// once.
	Noise *sim.Noise
	Seed  uint64 // every random choice: placement, data, noise
	Verify
	// BusiestLinks, with Flow, reports that many of the busiest links.
	BusiestLinks int
	// LinkBins, with BusiestLinks, also reports each of those links'
	// utilization over time, averaged over that many equal spans of the
	// run (Link.OverTime).
	LinkBins int
	// Progress, if set, is called every so often during the run.
	Progress func(sim.Progress)
	// Trace, if set, is told when every op starts and completes (for a
	// trace file or a timeline); it changes nothing in the run.
	Trace func(sim.TraceEvent)
	// Inputs are costly inputs set outside the machine (the command
	// line's flags), for naming the likely cause of a run past the
	// clock's limit (ClockHint).
	Inputs []configs.Input
}

// Result is what an Experiment reports (and `collsim run --json` prints).
type Result struct {
	Collective string  `json:"collective"`
	Algorithm  string  `json:"algorithm"`
	ChosenBy   string  `json:"chosen_by,omitempty"`
	Tuned      string  `json:"tuned,omitempty"`
	Note       string  `json:"note,omitempty"` // how an alltoall's size was split, when not evenly; the machine's shared-memory settings that no rank of the run uses
	Machine    string  `json:"machine"`
	Topology   string  `json:"topology"`
	Network    string  `json:"network"`
	Placement  string  `json:"placement"`
	Seed       uint64  `json:"seed"`
	Ranks      int     `json:"ranks"`
	SizeBytes  int64   `json:"size_bytes"`
	ElemSize   int64   `json:"elem_size"`
	Count      int64   `json:"count"`
	Time       float64 `json:"time_s"`
	AlgBW      float64 `json:"algbw_GBps"`
	BusBW      float64 `json:"busbw_GBps"`
	FinishMin  float64 `json:"finish_min_s"`
	FinishMean float64 `json:"finish_mean_s"`
	FinishMax  float64 `json:"finish_max_s"`
	// DataVerified is set (true) when the run moved real data and it
	// checked out; nil when no data moved (Verify off, or VerifyAuto on
	// a run too large for memory). A wrong result is a CheckError.
	DataVerified *bool `json:"data_verified"`
	// Model is the closed form's time (model_lower_s its lower bound
	// where it gives a range); nil where there is none for the run: on
	// the Flow and LogGOPS networks, with noise, or for an algorithm
	// without a closed form.
	Model *float64 `json:"model_s"`
	// ModelExact: the closed form claims this run's time, exactly: its
	// formula is exact on a contention-free crossbar and nothing it leaves
	// out applies here (the routes are alike; no o, g, shared NICs, duplex
	// share or size bands that it does not price).
	ModelExact  bool     `json:"model_exact"`
	RoutesAlike bool     `json:"routes_alike"`
	HostCosts   bool     `json:"host_costs"`           // the machine charges o or g, which the closed form leaves out
	SharedNICs  bool     `json:"shared_nics"`          // ranks on one host share its NIC to others, which the closed form gives each rank alone
	LocalDuplex bool     `json:"local_duplex"`         // ranks share a host whose channels are partly or half duplex (host.local_duplex), which the closed form takes as full duplex
	LocalBands  bool     `json:"local_bands"`          // ranks share a host whose channels are priced by message size (host.local_by_size), which the closed form prices at host.local's bandwidth
	ModelKind   string   `json:"model_kind,omitempty"` // "Hockney" (alpha-beta-gamma) or "LogGP"
	ModelLower  *float64 `json:"model_lower_s,omitempty"`
	Events      uint64   `json:"events"`
	Ops         uint64   `json:"ops"`
	Messages    uint64   `json:"messages"`
	// Rendezvous counts the messages above the eager limit, each of which
	// waited for a request to reach its receiver and a reply to come back
	// before its data left (two latencies more than eagerly).
	Rendezvous uint64 `json:"rendezvous_messages"`
	// EagerLimit is the largest message sent eagerly, in bytes (the
	// machine's host.eager_limit, or LogGOPS's S); absent when every
	// message goes eagerly.
	EagerLimit *int64  `json:"eager_limit_bytes,omitempty"`
	Wall       float64 `json:"wall_s"`
	// WallTotal is the whole call's wall time in seconds: Wall, the
	// simulation's, and before it the schedule, the network and the data
	// buffers made, after it the data checked (a data-checked run took
	// 5.4 s whose wall time said 1.7: a new user's trial).
	WallTotal    float64  `json:"wall_total_s,omitempty"`
	OpsPerSecond float64  `json:"ops_per_s"`
	Noise        bool     `json:"noise"`
	NoiseModel   string   `json:"noise_model,omitempty"` // what the noise was (sim.Noise.Describe)
	Routing      string   `json:"routing"`               // how messages were routed
	Faults       []string `json:"faults,omitempty"`      // links failed or degraded, by the config and the options
	Links        []Link   `json:"busiest_links,omitempty"`
	Partitions   int      `json:"partitions,omitempty"` // GOAL runs split over cores
}

// Link is one link's load in a Flow run.
type Link struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	Bytes       float64 `json:"bytes"`
	Busy        float64 `json:"busy_s"`
	BusyShare   float64 `json:"busy_share"`  // of the run's time
	Utilization float64 `json:"utilization"` // bytes / (bandwidth x run time)
	PeakFlows   int32   `json:"peak_flows"`
	// OverTime is the utilization in each of Experiment.LinkBins equal
	// spans of the run, from its start (bytes carried in the span over
	// bandwidth x the span).
	OverTime []float64 `json:"utilization_over_time,omitempty"`
}

// Check refuses a network model or a Verify that is not one of the
// choices; Run checks the rest, which depends on the machine.
func (e *Experiment) Check() error {
	switch e.Network {
	case "", Analytic, Flow, LogGOPS:
	default:
		return optionf("network model %q is not available; valid: analytic, flow, loggops", e.Network)
	}
	switch e.Verify {
	case VerifyAuto, VerifyOn, VerifyOff:
	default:
		return optionf("--verify must be auto, on or off, not %q", e.Verify)
	}
	if e.Placement != "" && !slices.Contains(topology.Placements, e.Placement) {
		return optionf("--placement %q is not a policy; valid: %s", e.Placement, strings.Join(topology.Placements, ", "))
	}
	return nil
}

// Run simulates the experiment. Its options' errors are *OptionError; a
// deadlock or data that arrived wrong is a *CheckError; a run past the
// clock's limit names its costliest input (ClockHint).
func (e *Experiment) Run() (*Result, error) {
	r, err := e.resolve()
	if err != nil {
		return nil, err
	}
	return e.run(r.m, r.alg, r.params, r.chosenBy, r.note, true)
}

// prepared is what run simulates: the network's config and the ranks'
// placement, the options Tune chose, the schedule and the data.
type prepared struct {
	net         string
	cfg         sim.Config
	place       []int32
	load        *network.LinkLoad
	params      collectives.Params
	tuned, note string
	schedule    sim.Schedule
	data        *collectives.Data
}

// prepare makes ready to simulate alg with params on m (the experiment's
// copy); tune lets the cost model choose the options the call left open.
// A dry preparation checks the data's size without allocating it.
func (e *Experiment) prepare(m *configs.Machine, alg collectives.Algorithm, params collectives.Params, tune, dry bool) (pr prepared, err error) {
	pr.net, pr.params = cmp.Or(e.Network, Analytic), params
	if pr.cfg, pr.place, pr.load, err = e.onNetwork(m, pr.net, params.Ranks); err != nil {
		return pr, err
	}
	if pr.place != nil && tune && openOption(alg, pr.params) != openNothing {
		h, _ := Hockney(m, pr.place)
		pr.tuned = Tune(alg, &pr.params, TuneModelOf(m, h))
	} else if alg.Collective == collectives.Allreduce && alg.Name == "suara" {
		// What runs, where the closed forms did not choose it (a new
		// user's trial: the grid was said only where they did).
		why := "as given"
		if openOption(alg, pr.params) != openNothing {
			why = "the most square grid and the size's default, not chosen by the closed forms"
			if pr.place == nil {
				why += " (no placed machine to price them on)"
			}
		}
		pr.tuned = collectives.SuaraLayout(pr.params) + ", " + why
	}
	if pr.place != nil {
		pr.note = unusedLocal(m, pr.place, cmp.Or(e.Placement, m.Placement))
	}
	if pr.schedule, err = alg.Build(pr.params); err != nil {
		return pr, err
	}
	switch {
	case e.Verify == VerifyOff:
	case dry:
		if err := alg.CheckData(pr.params); err != nil && e.Verify == VerifyOn {
			return pr, err
		}
	default:
		pr.data, err = alg.Data(pr.params, e.Seed)
		if err != nil && e.Verify == VerifyOn {
			return pr, err
		}
		if pr.data != nil {
			pr.cfg.Data = pr.data.Buffers
		}
	}
	return pr, nil
}

// onNetwork applies the run's network options (routing, faults, jitter)
// to m, the experiment's copy (nil on the LogGOPS network, which has no
// machine), and builds the config of network net for ranks, counting link
// load where the busiest links are asked for.
func (e *Experiment) onNetwork(m *configs.Machine, net string, ranks int) (cfg sim.Config, place []int32, load *network.LinkLoad, err error) {
	if net == LogGOPS {
		if given := e.machineOptions(); len(given) > 0 {
			// Taken and ignored before (a new user's trial).
			return cfg, nil, nil, optionf("%s: the loggops network has no machine: every message costs L, o, g and G (use the analytic or flow network to run on the machine)", strings.Join(given, ", "))
		}
	} else if m != nil {
		if err := e.adjust(m, net); err != nil {
			return cfg, nil, nil, err
		}
	}
	switch {
	case e.BusiestLinks > 0:
		load = &network.LinkLoad{RecordRates: e.LinkBins > 0}
	case net == Analytic && m != nil:
		// Bytes alone: how far one link's load bounds the run (linkBound).
		load = &network.LinkLoad{Bytes: make([]float64, len(m.Topology.Links()))}
	}
	cfg, place, err = e.config(m, net, ranks, load)
	return cfg, place, load, err
}

// resolved is an experiment's call on its machine, before it runs.
type resolved struct {
	m              *configs.Machine
	alg            collectives.Algorithm
	params         collectives.Params
	chosenBy, note string
}

// resolve checks the experiment's choices and resolves its call on (a copy
// of) its machine.
func (e *Experiment) resolve() (resolved, error) {
	m, err := e.machine()
	if err != nil {
		return resolved{}, err
	}
	ranks := e.Ranks
	if ranks == 0 {
		ranks = min(64, m.Slots())
	}
	if ranks < 1 {
		return resolved{}, optionf("--ranks must be at least 1, not %d", ranks)
	}
	c := cmp.Or(e.Collective, collectives.Allreduce)
	if e.Root != 0 && slices.Contains(collectives.Collectives, c) && !collectives.Rooted(c) {
		// (The command line refuses --root there; the API took it.)
		return resolved{}, optionf("Root %d: %s has no root", e.Root, c)
	}
	elem := cmp.Or(e.ElemSize, DefaultElemSize)
	r := resolved{m: m}
	// The ranks per node are what the placement puts on a node (it was
	// the machine's, whatever the placement: 16 ranks round-robin on 16
	// nodes ran Open MPI 5.0's han in groups of 8; an audit).
	shape, interleaved := e.Shape, false
	if shape.NodeSize == 0 {
		shape.NodeSize, interleaved, shape.unevenNodes = placedNodes(m, ranks, e.Placement, e.Seed)
	}
	r.alg, r.chosenBy, r.params, r.note, err = Resolve(c, e.Algorithm, ranks, e.Size, elem, e.Root, shape, m)
	if err == nil && interleaved && collectives.GroupsNodes(r.alg) {
		r.note = joinNotes(r.note, fmt.Sprintf("the %s placement interleaves the nodes' ranks, where %s takes blocks of %d consecutive ranks as nodes, as block placement fills them: its node groups here are not the machine's nodes",
			cmp.Or(e.Placement, m.Placement), r.alg.ID(), r.params.NodeSize))
	}
	return r, err
}

// Dry checks what Run checks before it simulates: the machine and its
// settings, the call and its algorithm's options, the network's options
// and the placement of the ranks, that the algorithm builds its schedule,
// and the size of the data it would verify. nil means Run would start
// simulating (a deadlock, wrong data or the clock's limit show only then).
func (e *Experiment) Dry() error {
	r, err := e.resolve()
	if err != nil {
		return err
	}
	_, err = e.prepare(r.m, r.alg, r.params, true, true)
	return err
}

// machine checks the experiment's choices and returns a copy of its
// machine (the default machine if none): the options change the copy,
// never the caller's machine.
func (e *Experiment) machine() (*configs.Machine, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	m := e.Machine
	if m == nil {
		var err error
		if m, err = configs.Resolve(configs.DefaultMachine); err != nil {
			return nil, err
		}
	}
	if m.Topology == nil {
		return nil, optionf("Experiment.Machine has no network (a configs.Machine not made by configs.Parse, Load or Resolve); build it with one of them")
	}
	mc := *m
	return &mc, nil
}

// RunAlgorithm simulates algorithm a with params exactly as given: no
// library's choice, shape or tuning (the fields Collective to Shape do not
// apply). Studies and validation run the variants they compare with it.
func (e *Experiment) RunAlgorithm(a collectives.Algorithm, params collectives.Params) (*Result, error) {
	m, err := e.machine()
	if err != nil {
		return nil, err
	}
	return e.run(m, a, params, "", "", false)
}

// run simulates alg with params on m (the experiment's copy); tune lets
// the cost model choose the options the call left open.
func (e *Experiment) run(m *configs.Machine, alg collectives.Algorithm, params collectives.Params, chosenBy, note string, tune bool) (*Result, error) {
	begin := time.Now()
	pr, err := e.prepare(m, alg, params, tune, false)
	if err != nil {
		return nil, err
	}
	net, cfg, place, load, schedule, data := pr.net, pr.cfg, pr.place, pr.load, pr.schedule, pr.data
	params, tuned := pr.params, pr.tuned
	note = joinNotes(note, pr.note)
	c, ranks := alg.Collective, params.Ranks
	elem := cmp.Or(params.ElemSize, DefaultElemSize)
	cfg.Progress, cfg.Trace = e.Progress, e.Trace
	start := time.Now()
	res, err := sim.Execute(sim.New(e.Seed), schedule, cfg)
	wall := time.Since(start).Seconds()
	if err != nil {
		return nil, runError(ClockHint(err, params.SizeBytes(c), e.inputs(m, cfg)))
	}
	out := &Result{
		Collective: string(c), Algorithm: alg.Name, ChosenBy: chosenBy, Tuned: tuned, Note: note, Machine: m.Name, Topology: m.Topology.Name(),
		Network: net, Placement: cmp.Or(e.Placement, m.Placement), Seed: e.Seed, Ranks: ranks,
		SizeBytes: params.SizeBytes(c), ElemSize: elem, Count: params.Count, Noise: e.Noise != nil || m.Noise != nil,
	}
	if net == LogGOPS {
		out.Machine, out.Topology, out.Placement = "loggops", "no topology: every message costs L", "none"
		if collectives.Reduces(c) && e.ReduceBandwidth == 0 {
			out.Note = joinNotes(out.Note, "reductions are free here: the LogGOPS model has no reduction rate; give --reduce-bandwidth (e.g. 10GB/s) to charge them")
		}
	}
	e.conditions(out, m, net, cfg)
	if cfg.Noise != nil && !cfg.Noise.Detours() && !chargesCPU(c, cfg) {
		out.Note = joinNotes(out.Note, fmt.Sprintf("stragglers do their CPU work (the per-message overhead o, reductions) slower, and %s has none here: they change nothing", c))
	}
	out.Fill(res, wall)
	e.reportLinks(out, m, net, load, res.Makespan)
	if out.Time > 0 {
		out.AlgBW = float64(out.SizeBytes) / out.Time / 1e9
		out.BusBW = out.AlgBW * collectives.BusFactor(c, ranks)
	}
	if data != nil {
		ok := true
		if err := data.Verify(); err != nil {
			return nil, &CheckError{Err: fmt.Errorf("%s moved the wrong data: %w", alg.ID(), err)}
		}
		out.DataVerified = &ok
	}
	if cost.Has(alg) && net == Analytic && !out.Noise {
		pricing := NewPricing(m, place, collectives.TwoLevelSize(params))
		pred, kind, alike, err := pricing.ClosedForm(alg, params)
		if err == nil {
			out.Model, out.ModelExact, out.RoutesAlike = &pred.Time, pred.Exact, alike
			out.HostCosts = pricing.LeavesOutHostCosts(kind)
			g := pricing.Gaps
			out.SharedNICs, out.LocalDuplex, out.LocalBands = g.SharedNICs, g.LocalDuplex, g.LocalBands
			out.ModelExact = pricing.ExactHere(pred, kind, alike)
			out.ModelKind = kind
			if !pred.Exact {
				out.ModelLower = &pred.Lower
			}
		}
	}
	out.WallTotal = time.Since(begin).Seconds()
	return out, nil
}

// machineOptions names, as collsim run's flags, the options given that
// act on the machine's network: routing, faults, jitter, placement, the
// busiest links.
func (e *Experiment) machineOptions() []string {
	var given []string
	for _, o := range []struct {
		flag string
		set  bool
	}{
		{"--routing", e.Routing != ""}, {"--degrade", len(e.Degrade) > 0}, {"--fail", len(e.Fail) > 0},
		{"--jitter", e.Jitter != nil}, {"--placement", e.Placement != ""}, {"--links", e.BusiestLinks > 0},
	} {
		if o.set {
			given = append(given, o.flag)
		}
	}
	return given
}

// adjust applies the routing, faults and jitter to m (a copy), refusing
// those the network model cannot honour.
func (e *Experiment) adjust(m *configs.Machine, net string) error {
	if e.Routing != "" {
		if net != Flow && e.Routing != network.RouteMinimal {
			return optionf("--routing %s needs --network flow: the analytic model prices each pair's minimal route", e.Routing)
		}
		if err := network.CheckRouting(e.Routing, m.Topology); err != nil {
			return &OptionError{Err: fmt.Errorf("--routing: %w", err)}
		}
		m.Routing = e.Routing
	}
	if len(e.Degrade) > 0 {
		c, err := m.Degrade(e.Degrade)
		if err != nil {
			return &OptionError{Err: fmt.Errorf("--degrade %w", err)}
		}
		*m = *c
	}
	if len(e.Fail) > 0 {
		c, err := m.Fail(e.Fail)
		if err != nil {
			return &OptionError{Err: fmt.Errorf("--fail: %w", err)}
		}
		*m = *c
	}
	if e.Jitter != nil {
		if net != Flow {
			return optionf("--jitter needs --network flow")
		}
		m.Jitter = *e.Jitter
	}
	if e.BusiestLinks < 0 || e.BusiestLinks > 0 && net != Flow {
		return optionf("--links needs --network flow (the analytic model shares no links) and a count of at least 1")
	}
	return nil
}

// config builds the execution config of the network model net (and the
// noise) for ranks ranks on m, and their placement (nil for LogGOPS).
func (e *Experiment) config(m *configs.Machine, net string, ranks int, load *network.LinkLoad) (sim.Config, []int32, error) {
	var cfg sim.Config
	noise := e.Noise
	if noise != nil && noise.Stragglers > ranks {
		return cfg, nil, optionf("--stragglers: %d slow ranks asked for, but the run has %d; ask for at most %d", noise.Stragglers, ranks, ranks)
	}
	if noise == nil && m != nil && m.Noise != nil {
		if err := m.Noise.CheckRanks(ranks); err != nil {
			return cfg, nil, err
		}
		noise = m.Noise.For(e.Seed)
	}
	cfg.Noise = noise
	switch net {
	case Analytic, Flow:
		if e.LogGOPS != nil || e.ReduceBandwidth != 0 {
			return cfg, nil, optionf("--L, --o, --g, --G, --O, --S and --reduce-bandwidth set the loggops network; with --network %s the machine config sets the costs", net)
		}
		place, err := m.Place(ranks, e.Placement, e.Seed)
		if err != nil {
			return cfg, nil, err
		}
		var nf sim.NetworkFactory
		switch {
		case net == Flow:
			nf, err = m.FlowLoad(place, load)
		case load != nil: // the analytic network, counting each link's bytes
			nf, err = m.AnalyticBytes(place, load.Bytes)
		default:
			nf, err = m.Analytic(place)
		}
		if err != nil {
			return cfg, nil, err
		}
		cfg.Host, cfg.Network = m.Host, nf
		return cfg, place, nil
	case LogGOPS:
		p := sim.DefaultLogGOPS
		if e.LogGOPS != nil {
			p = *e.LogGOPS
		}
		cfg.LogGOPS = &p
		if e.ReduceBandwidth < 0 || math.IsNaN(e.ReduceBandwidth) || math.IsInf(e.ReduceBandwidth, 0) {
			return cfg, nil, optionf("--reduce-bandwidth %g B/s: give a positive rate, or none for free reductions", e.ReduceBandwidth)
		}
		if e.ReduceBandwidth > 0 {
			cfg.Host.ReducePsPerByte = 1e12 / e.ReduceBandwidth
		}
		return cfg, nil, nil
	}
	return cfg, nil, e.Check() // an unknown network
}

// inputs are what costs the run's messages time, for ClockHint: the
// machine's values (--degrade's among them, see configs.Machine.Degrade)
// unless the LogGOPS network replaces them, the caller's, and a noise
// trace's longest detour.
func (e *Experiment) inputs(m *configs.Machine, cfg sim.Config) []configs.Input {
	var in []configs.Input
	if cfg.LogGOPS == nil {
		in = slices.Clone(m.Inputs)
	}
	in = append(in, e.Inputs...)
	if d, at := cfg.Noise.LongestDetour(); at != "" {
		in = append(in, configs.Input{Key: "the noise trace's longest detour", Value: d.String(), Where: at, Cost: configs.Fixed(d)})
	}
	return in
}

// Fill copies what every run reports from a simulation result and its
// wall time in seconds.
func (r *Result) Fill(res *sim.Result, wall float64) {
	r.Time, r.Events, r.Ops, r.Messages, r.Wall = res.Makespan.Seconds(), res.Events, res.Ops, res.Messages, wall
	r.Rendezvous = res.Rendezvous
	if wall > 0 {
		r.OpsPerSecond = float64(res.Ops) / wall
	}
	r.FinishMin = math.Inf(1)
	var sum float64
	for _, t := range res.Finish {
		s := t.Seconds()
		r.FinishMin, r.FinishMax = min(r.FinishMin, s), max(r.FinishMax, s)
		sum += s
	}
	r.FinishMean = sum / float64(len(res.Finish))
}

// unusedLocal says which of the machine's settings of the shared-memory
// channel (a duplex share, size bands) change nothing in a run whose ranks
// are placed on hosts by place, none of which holds two: a what-if study
// of them would otherwise measure nothing without a word.
func unusedLocal(m *configs.Machine, place []int32, policy string) string {
	if _, shared := placedOn(place); shared {
		return ""
	}
	var set []string
	if m.LocalDuplexShare > 0 {
		set = append(set, "host.local_duplex")
	}
	if len(m.LocalBands) > 0 {
		set = append(set, "host.local_by_size")
	}
	if len(set) == 0 {
		return ""
	}
	verb, why := "changes", fmt.Sprintf("the %s placement put each on a host of its own", cmp.Or(policy, "block"))
	if len(set) > 1 {
		verb = "change"
	}
	if m.RanksPerHost == 1 {
		why = m.Name + " has one rank per host"
	}
	return fmt.Sprintf("%s %s nothing here: no two of the %d ranks share a host (%s)", strings.Join(set, " and "), verb, len(place), why)
}

// reportLinks adds to out what load counted on the run's links: the
// busiest links (flow), or a note where one link's load alone needs more
// time than the run took (analytic: linkBound).
func (e *Experiment) reportLinks(out *Result, m *configs.Machine, net string, load *network.LinkLoad, makespan sim.Time) {
	switch {
	case load == nil:
	case net == Analytic:
		out.Note = joinNotes(out.Note, linkBound(m, load.Bytes, makespan))
	default:
		out.Links = busiest(m, load, e.BusiestLinks, makespan, e.LinkBins)
	}
}

// linkBound says, after a run on the analytic network (which shares no
// link), when some link carried more bytes than its bandwidth moves in
// the run's time: a bound the run broke, and that a network sharing links
// (flow) keeps. "" when none did.
func linkBound(m *configs.Machine, bytes []float64, makespan sim.Time) string {
	links := m.Topology.Links()
	worst, need := -1, 0.0
	for l, b := range bytes {
		if t := b / links[l].Bandwidth; t > need {
			worst, need = l, t
		}
	}
	if worst < 0 || need <= makespan.Seconds()*(1+1e-9) {
		return ""
	}
	l := links[worst]
	return fmt.Sprintf("the analytic network shares no link: %s->%s carried %s, %v at its %s, longer than the %v simulated; --network flow shares it",
		m.Topology.Label(l.From), m.Topology.Label(l.To), configs.FormatBytes(int64(bytes[worst])), sim.FromSeconds(need), configs.FormatBandwidth(l.Bandwidth), makespan)
}

// joinNotes joins notes, leaving out empty ones.
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// runError sorts a failed simulation: a deadlock, or a message larger
// than its receive, is a CheckError.
func runError(err error) error {
	var de *sim.DeadlockError
	var te *sim.TruncationError
	if errors.As(err, &de) || errors.As(err, &te) {
		return &CheckError{Err: err}
	}
	return err
}

// busiest returns the n links most utilized (bytes over bandwidth: the
// bottlenecks), then busy longest, then by ID, so that the order is stable.
func busiest(m *configs.Machine, load *network.LinkLoad, n int, makespan sim.Time, bins int) []Link {
	links := m.Topology.Links()
	ids := make([]int, len(links))
	for i := range ids {
		ids[i] = i
	}
	use := func(i int) float64 { return load.Bytes[i] / links[i].Bandwidth }
	slices.SortStableFunc(ids, func(a, b int) int {
		switch {
		case use(a) != use(b):
			return cmp.Compare(use(b), use(a))
		case load.Busy[a] != load.Busy[b]:
			return cmp.Compare(load.Busy[b], load.Busy[a])
		}
		return cmp.Compare(a, b)
	})
	var out []Link
	span := makespan.Seconds()
	for _, i := range ids[:min(n, len(ids))] {
		if load.Bytes[i] == 0 {
			break
		}
		l := Link{From: m.Topology.Label(links[i].From), To: m.Topology.Label(links[i].To), Bytes: load.Bytes[i], Busy: load.Busy[i].Seconds(), PeakFlows: load.PeakFlows[i]}
		if span > 0 {
			l.BusyShare, l.Utilization = l.Busy/span, l.Bytes/(links[i].Bandwidth*span)
		}
		out = append(out, l)
	}
	if bins > 0 && span > 0 {
		overTime(out, ids[:len(out)], links, load.Rates, bins, span)
	}
	return out
}

// overTime sets each link's utilization in bins equal spans of the run
// from the changes of the rates the links carried.
func overTime(out []Link, ids []int, links []topology.Link, changes []network.RateChange, bins int, span float64) {
	index := map[int32]int{}
	for i, id := range ids {
		index[int32(id)] = i
		out[i].OverTime = make([]float64, bins)
	}
	width := span / float64(bins)
	rate := make([]float64, len(ids))
	since := make([]float64, len(ids))
	carry := func(i int, from, to float64) { // rate[i] from..to into the bins
		if rate[i] == 0 || to <= from {
			return
		}
		first, last := min(int(from/width), bins-1), min(int(to/width), bins-1)
		for b := first; b <= last; b++ {
			lo, hi := max(from, float64(b)*width), min(to, float64(b+1)*width)
			if b == last {
				hi = to
			}
			if hi > lo {
				out[i].OverTime[b] += rate[i] * (hi - lo)
			}
		}
	}
	for _, c := range changes {
		i, ok := index[c.Link]
		if !ok {
			continue
		}
		at := c.At.Seconds()
		carry(i, since[i], at)
		rate[i] += c.Delta
		since[i] = at
	}
	for i, id := range ids {
		carry(i, since[i], span)
		for b := range out[i].OverTime {
			u := out[i].OverTime[b] / (links[id].Bandwidth * width)
			if u > 1 && u < 1+1e-9 {
				u = 1 // a full link, but for the rounding of summed rates
			}
			out[i].OverTime[b] = u
		}
	}
}

// RunGOAL runs a GOAL schedule instead of a collective call: on the
// LogGOPS network (the default for GOAL, with its own executor) or on the
// machine's analytic or flow network. The call's fields (Collective to
// Shape) and ReduceBandwidth do not apply: the schedule sets them, and
// setting one is an error; Result.Collective is "goal".
func (e *Experiment) RunGOAL(g *sim.GOAL) (*Result, error) {
	if g == nil || g.Ranks < 1 {
		return nil, optionf("RunGOAL: no schedule (a nil or zero *sim.GOAL); read one with sim.ParseGOAL")
	}
	if e.Collective != "" || e.Algorithm != "" || e.Ranks != 0 || e.Size != 0 || e.ElemSize != 0 || e.Root != 0 || e.Shape != (Shape{}) || e.ReduceBandwidth != 0 {
		return nil, optionf("RunGOAL: the GOAL schedule is the program (its ranks, sizes and dependencies); leave Collective, Algorithm, Ranks, Size, ElemSize, Root, Shape and ReduceBandwidth unset")
	}
	net := cmp.Or(e.Network, LogGOPS)
	m := e.Machine
	if net != LogGOPS || m != nil {
		// The machine's copy, to take the run's routing, faults and
		// jitter, as a collective's run does (they were dropped without a
		// word under --goal); the LogGOPS network takes only a given
		// machine's noise.
		var err error
		if m, err = e.machine(); err != nil {
			return nil, err
		}
	}
	cfg, _, load, err := e.onNetwork(m, net, g.Ranks)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var res *sim.Result
	if cfg.LogGOPS != nil {
		res, err = g.RunLogGOPSProgress(*cfg.LogGOPS, cfg.Noise, e.Seed, e.Progress)
	} else {
		cfg.Progress, cfg.Trace = e.Progress, e.Trace
		res, err = sim.Execute(sim.New(e.Seed), g.Run("goal"), cfg)
	}
	wall := time.Since(start).Seconds()
	if err != nil {
		return nil, runError(e.goalClockHint(g.Locate(err), g, cfg, m))
	}
	out := &Result{Collective: "goal", Network: net, Seed: e.Seed, Ranks: g.Ranks, Noise: cfg.Noise != nil, Partitions: res.Partitions}
	if net != LogGOPS && g.NICs > 1 {
		// (They were dropped without a word: a new user's trial.)
		out.Note = fmt.Sprintf("the file's ops use %d NICs, which only the LogGOPS network models: on the %s network each rank's messages share its host's one NIC", g.NICs, net)
	}
	e.conditions(out, m, net, cfg)
	out.Fill(res, wall)
	e.reportLinks(out, m, net, load, res.Makespan)
	return out, nil
}

// chargesCPU reports whether a call of c costs its ranks' CPUs anything
// under cfg, which is all that stragglers stretch.
func chargesCPU(c collectives.Collective, cfg sim.Config) bool {
	overhead := cfg.Host.Overhead
	if cfg.LogGOPS != nil {
		overhead = cfg.LogGOPS.O
	}
	return overhead > 0 || collectives.Reduces(c) && cfg.Host.ReducePsPerByte > 0
}

// conditions records what the run ran under: its routing, the links
// failed (by the machine's config or Fail) or degraded (by Degrade), its
// noise and its eager limit.
func (e *Experiment) conditions(out *Result, m *configs.Machine, net string, cfg sim.Config) {
	eager := cfg.Host.EagerLimit
	if cfg.LogGOPS != nil {
		eager = cfg.LogGOPS.S
	}
	if eager < math.MaxInt64 {
		out.EagerLimit = &eager
	}
	switch {
	case net == LogGOPS || m == nil:
		out.Routing = "none"
	case net == Flow:
		out.Routing = cmp.Or(m.Routing, network.RouteMinimal)
	default:
		out.Routing = network.RouteMinimal // the analytic model prices each pair's own route
	}
	if m != nil && net == Analytic {
		// What the config asks for that only the flow network does: said,
		// as the flags that ask for it are refused.
		var flowOnly []string
		if m.Routing != "" && m.Routing != network.RouteMinimal {
			flowOnly = append(flowOnly, m.Routing+" routing")
		}
		if m.Jitter.Sigma > 0 {
			flowOnly = append(flowOnly, "link jitter")
		}
		if len(flowOnly) > 0 {
			out.Note = joinNotes(out.Note, fmt.Sprintf("%s asks for %s, which only --network flow models: this analytic run has minimal routes and no jitter", m.Name, strings.Join(flowOnly, " and ")))
		}
	}
	if m != nil && net != LogGOPS {
		links := m.Topology.Links()
		for _, id := range m.Topology.Failed() {
			l := links[id]
			if l.From < l.To { // a failed link is failed both ways: name it once
				out.Faults = append(out.Faults, "failed "+m.Topology.Label(l.From)+"->"+m.Topology.Label(l.To))
			}
		}
		// The config's degraded links and --degrade's, as they stand.
		for _, id := range m.Topology.DegradedLinks() {
			l := links[id]
			out.Faults = append(out.Faults, fmt.Sprintf("degraded %s->%s to %s", m.Topology.Label(l.From), m.Topology.Label(l.To), configs.FormatBandwidth(l.Bandwidth)))
		}
	}
	out.NoiseModel = cfg.Noise.Describe()
	if net == Flow && m != nil && m.Jitter.Sigma > 0 {
		// Link jitter is noise too: said, so that runs with and without
		// it are told apart.
		kind := "normal, sigma"
		if m.Jitter.Lognormal {
			kind = "lognormal, median"
		}
		jitter := fmt.Sprintf("link jitter (%s %s per message)", kind, m.Jitter.Sigma)
		if out.NoiseModel != "" {
			jitter = out.NoiseModel + "; " + jitter
		}
		out.NoiseModel, out.Noise = jitter, true
	}
}

// goalClockHint names what likely made a GOAL run pass the clock: the
// input (a LogGOPS flag, a machine's value, the noise trace's longest
// detour) that costs the schedule's largest send the most, or its
// largest calc when that costs more, each at its file and line.
func (e *Experiment) goalClockHint(err error, g *sim.GOAL, cfg sim.Config, m *configs.Machine) error {
	if !errors.Is(err, sim.ErrClockLimit) {
		return err
	}
	send, sendAt, calc, calcAt := g.Largest()
	var best configs.Input
	most := -1.0
	if sendAt != "" {
		for _, in := range e.inputs(m, cfg) {
			if c := in.Cost(float64(send)); c > most && !in.Reduces {
				best, most = in, c
			}
		}
	}
	calcCost := float64(calc) * 1e-9
	switch {
	case most >= 0 && most >= calcCost:
		return fmt.Errorf("%w; the costliest input is %s %s (%s): %s for the largest send, of %d bytes at %s", err, best.Key, best.Value, best.Where, ClockCost(most), send, sendAt)
	case calcAt != "":
		// In whole nanoseconds, not through float seconds, which round a
		// calc near the clock's end past it.
		alone := "more than the whole clock"
		if calc <= int64(sim.MaxTime/sim.Nanosecond) {
			alone = (sim.Time(calc) * sim.Nanosecond).String()
		}
		return fmt.Errorf("%w; the costliest op is the calc of %d ns at %s: %s by itself", err, calc, calcAt, alone)
	}
	return err
}

// placedOn returns how many hosts ranks placed by place (rank to host)
// are on, and whether two share one.
func placedOn(place []int32) (hosts int, shared bool) {
	count := map[int32]int{}
	for _, h := range place {
		count[h]++
		shared = shared || count[h] > 1
	}
	return len(count), shared
}
