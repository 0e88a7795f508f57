package cmdutil

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
)

// LogGOPSFlags are the LogGOPS model's parameters as flags, with
// LogGOPSim's defaults.
type LogGOPSFlags struct {
	L, O, G, GPerByte, OPerByte, S string
	// Reduce is the hosts' reduction rate, which LogGOPS has not ("":
	// reductions free).
	Reduce string
	flags  *pflag.FlagSet
}

// Changed reports whether any of the flags was given.
func (l *LogGOPSFlags) Changed() bool {
	for _, name := range []string{"L", "o", "g", "G", "O", "S", "reduce-bandwidth"} {
		if l.flags != nil && l.flags.Changed(name) {
			return true
		}
	}
	return false
}

// Register adds the flags to f.
func (l *LogGOPSFlags) Register(f *pflag.FlagSet) {
	l.flags = f
	f.StringVar(&l.L, "L", "2500ns", "loggops: latency L")
	f.StringVar(&l.O, "o", "1500ns", "loggops: CPU overhead o per message")
	f.StringVar(&l.G, "g", "1000ns", "loggops: gap g between messages at a NIC")
	f.StringVar(&l.GPerByte, "G", "6ns", "loggops: gap G per byte")
	f.StringVar(&l.OPerByte, "O", "0ns", "loggops: CPU overhead O per byte")
	f.StringVar(&l.S, "S", "65535", "loggops: eager/rendezvous threshold S in bytes")
	f.StringVar(&l.Reduce, "reduce-bandwidth", "", "loggops: the hosts' reduction rate, e.g. 10GB/s, charged on the receiving CPU (LogGOPS has none: default free; a machine's host.reduce_bandwidth sets it on the other networks)")
}

// ReduceBandwidth parses --reduce-bandwidth: bytes per second, 0 when not
// given.
func (l *LogGOPSFlags) ReduceBandwidth() (float64, error) {
	if l.Reduce == "" {
		return 0, nil
	}
	bw, err := configs.ParseBandwidth(l.Reduce)
	if err != nil {
		return 0, Flagf("--reduce-bandwidth: %v", err)
	}
	return bw, nil
}

// Params parses the flags.
func (l *LogGOPSFlags) Params() (*sim.LogGOPS, error) {
	var p sim.LogGOPS
	for _, d := range []struct {
		name, val string
		to        *sim.Time
	}{{"L", l.L, &p.L}, {"o", l.O, &p.O}, {"g", l.G, &p.G}} {
		v, err := configs.ParseDuration(d.val)
		if err != nil {
			return nil, Flagf("--%s: %v", d.name, err)
		}
		*d.to = v
	}
	for _, d := range []struct {
		name, val string
		to        *float64
	}{{"G", l.GPerByte, &p.GPerByte}, {"O", l.OPerByte, &p.OPerByte}} {
		v, err := configs.ParseDuration(d.val)
		if err != nil {
			return nil, Flagf("--%s (time per byte): %v", d.name, err)
		}
		*d.to = float64(v)
	}
	s, err := configs.ParseSize(l.S)
	if err != nil {
		return nil, Flagf("--S: %v", err)
	}
	p.S = s
	return &p, nil
}

// NoiseFlags select an OS-noise trace.
type NoiseFlags struct {
	File     string
	Periodic string // "PERIOD:DURATION"
	Random   string // "RATE:DURATION", RATE in detours per second
	Slow     string // "COUNT:FACTOR": stragglers
	CoSched  bool
	Seed     uint64 // of a random trace
}

// Register adds the flags to f.
func (n *NoiseFlags) Register(f *pflag.FlagSet) {
	f.StringVar(&n.File, "noise-trace", "", "OS-noise trace (lines start<TAB>duration in ns) stretching every CPU interval")
	f.StringVar(&n.Periodic, "noise-periodic", "", `periodic OS noise "PERIOD:DURATION", e.g. "1ms:25us": a detour of DURATION every PERIOD, each rank at its own seeded phase`)
	f.StringVar(&n.Random, "noise-random", "", `random OS noise "RATE:DURATION", e.g. "1000:25us": detours of DURATION, each followed by an exponential wait of mean 1/RATE, so 1/(1/RATE + DURATION) a second on average (1000:25us: 975)`)
	f.StringVar(&n.Slow, "stragglers", "", `slow ranks "COUNT:FACTOR", e.g. "2:3": COUNT ranks drawn from the seed do all their CPU work FACTOR times slower`)
	f.BoolVar(&n.CoSched, "noise-cosched", false, "all ranks share one offset into the noise trace (co-scheduled noise)")
}

// Given reports whether any noise was asked for.
func (n *NoiseFlags) Given() bool {
	return n.File != "" || n.Periodic != "" || n.Random != "" || n.Slow != ""
}

// Load builds the noise asked for, or returns nil without any.
func (n *NoiseFlags) Load() (*sim.Noise, error) {
	given := 0
	for _, v := range []string{n.File, n.Periodic, n.Random} {
		if v != "" {
			given++
		}
	}
	switch {
	case given == 0 && n.CoSched:
		return nil, Flagf("--noise-cosched needs --noise-trace, --noise-periodic or --noise-random")
	case given == 0 && n.Slow == "":
		return nil, nil
	case given == 0:
		return n.stragglers(&sim.Noise{})
	case given > 1:
		return nil, Flagf("give one of --noise-trace, --noise-periodic and --noise-random")
	}
	var noise *sim.Noise
	var err error
	switch {
	case n.File != "":
		f, ferr := os.Open(n.File)
		if ferr != nil {
			return nil, fmt.Errorf("noise trace: %w", ferr)
		}
		defer f.Close()
		// A bad trace is bad input (exit 1), not a bad flag.
		if noise, err = sim.ParseNoise(configs.Bounded(f, configs.MaxTraceBytes, "a noise trace"), n.File); err != nil {
			return nil, err
		}
	case n.Periodic != "":
		var a, b sim.Time
		if a, b, err = durationPair("--noise-periodic", n.Periodic); err == nil {
			noise, err = sim.PeriodicNoise(a, b)
		}
	default:
		rate, d, perr := ratePair(n.Random)
		if perr != nil {
			return nil, perr
		}
		noise, err = sim.PoissonNoise(rate, d, n.Seed)
	}
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	noise.CoScheduled = n.CoSched
	return n.stragglers(noise)
}

// stragglers adds --stragglers to noise.
func (n *NoiseFlags) stragglers(noise *sim.Noise) (*sim.Noise, error) {
	if n.Slow == "" {
		return noise, nil
	}
	a, b, ok := strings.Cut(n.Slow, ":")
	count, err1 := strconv.Atoi(a)
	factor, err2 := strconv.ParseFloat(b, 64)
	if !ok || err1 != nil || err2 != nil {
		return nil, Flagf("--stragglers %q: want COUNT:FACTOR, e.g. 2:3 (two ranks three times slower)", n.Slow)
	}
	if err := noise.SetStragglers(count, factor); err != nil {
		return nil, &FlagError{Err: err}
	}
	return noise, nil
}

// durationPair parses "A:B", two durations with units.
func durationPair(flag, v string) (sim.Time, sim.Time, error) {
	a, b, ok := strings.Cut(v, ":")
	if !ok {
		return 0, 0, Flagf("%s %q: want PERIOD:DURATION, e.g. 1ms:25us", flag, v)
	}
	x, err := configs.ParseDuration(a)
	if err != nil {
		return 0, 0, Flagf("%s: %v", flag, err)
	}
	y, err := configs.ParseDuration(b)
	if err != nil {
		return 0, 0, Flagf("%s: %v", flag, err)
	}
	return x, y, nil
}

// ratePair parses "RATE:DURATION" for --noise-random.
func ratePair(v string) (float64, sim.Time, error) {
	a, b, ok := strings.Cut(v, ":")
	if !ok {
		return 0, 0, Flagf("--noise-random %q: want RATE:DURATION, e.g. 1000:25us (detours per second)", v)
	}
	rate, err := strconv.ParseFloat(a, 64)
	if err != nil {
		return 0, 0, Flagf("--noise-random: rate %q is not a number of detours per second", a)
	}
	d, err := configs.ParseDuration(b)
	if err != nil {
		return 0, 0, Flagf("--noise-random: %v", err)
	}
	return rate, d, nil
}

// ShapeFlags are the algorithm options as flags (collsim.Shape: its
// Check and Apply are the flags').
type ShapeFlags struct{ collsim.Shape }

// Register adds the flags to f.
func (s *ShapeFlags) Register(f *pflag.FlagSet) {
	f.Int64Var(&s.Segment, "segment", 0, "pipeline segment in elements for pipelined algorithms (0: the algorithm's default)")
	f.IntVar(&s.NodeSize, "node-size", 0, "ranks per node for hierarchical algorithms (0: from the machine)")
	f.IntVar(&s.GroupSize, "group-size", 0, "ranks per Dragonfly group for group-aligned algorithms (0: from the machine)")
	f.StringVar(&s.Inner, "inner", "", "allreduce algorithm inside the subsets of hierarchical and suara, and among smp's node roots (default: by size; smp: MPICH's rules)")
	f.StringVar(&s.Intra, "intra", "", "hierarchical and the smp allreduce: the reduce and bcast pair inside nodes (default binomial; smp: MPICH's rules)")
	f.IntVar(&s.Groups, "groups", 0, "suara: G of the G x p/G grid (0: the grid the closed forms price fastest on the machine)")
	f.IntVar(&s.Steps, "steps", 0, "suara: number of serial steps L (0: 2)")
	f.BoolVar(&s.Overlap, "overlap", false, "steps written as MPI_Sendrecv wait only for the previous step's receive, not its send (as MPI_Isend with a later wait)")
}

// librarySet are the options a library's choice sets itself, whatever
// was asked: its segments, and the algorithms inside its compositions
// (--segment 4 and --inner ring with -a ompi changed nothing, silently;
// a new user's trial). --overlap and --root still apply to what it runs.
var librarySet = []string{"segment", "inner", "intra", "groups", "steps"}

// OptionsApply refuses the algorithm options among f's flags that were set
// and that none of algos (a comma-separated list of collective c's
// algorithms; "" its default) takes: a flag that changes nothing must say
// so. A library's choice (-a ompi) picks its algorithm as the call comes:
// with libraries alone, the options they set themselves are refused, and
// the others let through; names that are neither algorithms nor
// libraries are let through too (their own error says so).
func OptionsApply(f *pflag.FlagSet, c collectives.Collective, algos string) error {
	var list []collectives.Algorithm
	var libraries []string
	for _, name := range strings.Split(cmp.Or(algos, collectives.DefaultAlgorithm(c)), ",") {
		name = strings.TrimSpace(name)
		if collectives.IsSelector(name) {
			libraries = append(libraries, name)
			continue
		}
		a, err := collectives.Lookup(c, name)
		if err != nil {
			return nil
		}
		list = append(list, a)
	}
	if len(list) == 0 {
		for _, opt := range librarySet {
			if fl := f.Lookup(opt); fl != nil && fl.Changed && fl.Value.String() != fl.DefValue {
				return Flagf("--%s does not apply with -a %s: the library's rules choose it themselves (name an algorithm to set it)", opt, strings.Join(libraries, ","))
			}
		}
		return nil
	}
	for _, opt := range collectives.Options {
		// The node and group sizes describe the machine, as a machine
		// config does; like its other facts they hold for every algorithm.
		if opt == "node-size" || opt == "group-size" {
			continue
		}
		// A flag given its default (--root 0, --segment 0) asks for
		// nothing: scripts pass one to every collective alike.
		if fl := f.Lookup(opt); fl == nil || !fl.Changed || fl.Value.String() == fl.DefValue || slices.ContainsFunc(list, func(a collectives.Algorithm) bool { return a.Takes(opt) }) {
			continue
		}
		what := list[0].ID()
		if len(list) > 1 {
			var names []string
			for _, a := range list {
				names = append(names, a.Name)
			}
			what = "any of " + strings.Join(names, ", ")
		}
		takers := collectives.Takers(c, opt)
		if len(takers) == 0 {
			return Flagf("--%s does not apply to %s: no %s algorithm takes it", opt, what, c)
		}
		return Flagf("--%s does not apply to %s: its schedule is the same without it; the %s algorithms that take it: %s", opt, what, c, strings.Join(takers, ", "))
	}
	return nil
}

// SizeApplies refuses a size given to barriers alone (cs: the
// collectives the command runs), whose messages are empty, as
// OptionsApply refuses options: a size flag (--size, --sizes) set to other
// than its default or 0. (With other collectives the size is theirs; a
// sweep may still cross barrier with sizes: the rows say size 0.)
func SizeApplies(f *pflag.FlagSet, cs ...collectives.Collective) error {
	if len(cs) == 0 || slices.ContainsFunc(cs, func(c collectives.Collective) bool { return c != collectives.Barrier }) {
		return nil
	}
	for _, name := range []string{"size", "sizes"} {
		fl := f.Lookup(name)
		if fl == nil || !fl.Changed || fl.Value.String() == fl.DefValue {
			continue
		}
		if sizes, err := Sizes(fl.Value.String()); err == nil && !slices.ContainsFunc(sizes, func(s int64) bool { return s != 0 }) {
			continue // 0: what a barrier sends
		}
		return Flagf("--%s does not apply to barrier: its messages are empty", name)
	}
	return nil
}

// Request names one collective call as flags give it.
type Request struct {
	Collective, Algorithm, Size string
	Ranks, Root                 int
	ElemSize                    int64
	Shape                       ShapeFlags
	// Note is what Resolve found of the size that does not move (an
	// alltoall's remainder; collsim.Shortfall), "" when all of it does.
	Note string
}

// Resolve turns the request into an algorithm and its parameters on m (m
// may be nil: then no option defaults from a machine). chosenBy names the
// selector and rule when the algorithm is a library's choice.
func (q *Request) Resolve(m *configs.Machine) (a collectives.Algorithm, chosenBy string, p collectives.Params, err error) {
	if q.Ranks < 1 || q.Ranks > sim.MaxRanks {
		return a, "", p, Flagf("--ranks must be 1..%d, not %d", sim.MaxRanks, q.Ranks)
	}
	bytes, err := configs.ParseSize(q.Size)
	if err != nil {
		return a, "", p, &FlagError{Err: fmt.Errorf("--size: %w", err)}
	}
	a, chosenBy, p, q.Note, err = collsim.Resolve(collectives.Collective(q.Collective), q.Algorithm, q.Ranks, bytes, q.ElemSize, q.Root, q.Shape.Shape, m)
	return a, chosenBy, p, err
}

// Inputs are the LogGOPS parameters as inputs that cost time, named by
// their flags (for ClockHint).
func (l *LogGOPSFlags) Inputs(p *sim.LogGOPS) []configs.Input {
	if p == nil {
		return nil
	}
	perByte := func(ps float64) func(float64) float64 { return func(n float64) float64 { return n * ps / 1e12 } }
	// A flag left alone is its default, not something the command line
	// said.
	flag := func(name, value string, cost func(float64) float64) configs.Input {
		in := FlagInput("--"+name, value, cost)
		if l.flags != nil && !l.flags.Changed(name) {
			in.Where = "its default"
		}
		return in
	}
	in := []configs.Input{
		flag("L", l.L, configs.Fixed(p.L)),
		flag("o", l.O, configs.Fixed(p.O)),
		flag("g", l.G, configs.Fixed(p.G)),
		flag("G", l.GPerByte, perByte(p.GPerByte)),
		flag("O", l.OPerByte, perByte(p.OPerByte)),
	}
	if bw, err := l.ReduceBandwidth(); err == nil && bw > 0 {
		red := FlagInput("--reduce-bandwidth", l.Reduce, func(n float64) float64 { return n / bw })
		red.Reduces = true
		in = append(in, red)
	}
	return in
}

// FlagInput is the value of a flag that costs time, as an input for
// ClockHint.
func FlagInput(flag, value string, cost func(n float64) float64) configs.Input {
	return configs.Input{Key: flag, Value: value, Where: "the command line", Cost: cost}
}
