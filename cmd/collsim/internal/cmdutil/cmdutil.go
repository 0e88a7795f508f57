// Package cmdutil holds what collsim's verbs share: output streams, error
// kinds that map to exit codes, and flag parsing helpers.
package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
)

// IO is where a verb writes: results to Out, diagnostics to Err.
type IO struct {
	Out, Err io.Writer
}

// Exit codes.
const (
	ExitOK         = 0
	ExitError      = 1 // bad input or a failed run
	ExitUsage      = 2 // bad flags or arguments
	ExitValidation = 3 // a schedule that deadlocks or moves the wrong data
	// ExitInternal is a defect of collsim's own (a panic): sysexits.h's
	// EX_SOFTWARE.
	ExitInternal = 70
)

// MachineUsage is the help of every -m/--machine flag.
const MachineUsage = "built-in machine name or machine config file (read whole: at most 1 MiB; a FIFO blocks until it is written)"

// FlagError is a usage error: wrong or missing flags.
type FlagError struct{ Err error }

// Error returns the wrapped error's message.
func (e *FlagError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *FlagError) Unwrap() error { return e.Err }

// Flagf returns a FlagError.
func Flagf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ValidationError is a run that finished wrongly: a deadlock or wrong data.
type ValidationError struct{ Err error }

// Error returns the wrapped error's message.
func (e *ValidationError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ValidationError) Unwrap() error { return e.Err }

// ExitCode maps an error to collsim's exit status.
func ExitCode(err error) int {
	var fe *FlagError
	var ve *ValidationError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &fe):
		return ExitUsage
	case errors.As(err, &ve):
		return ExitValidation
	}
	return ExitError
}

// NotApplicable returns a usage error naming those of flags that were set,
// and why they do not apply; nil if none was.
func NotApplicable(f *pflag.FlagSet, why string, flags ...string) error {
	var set []string
	for _, name := range flags {
		if fl := f.Lookup(name); fl != nil && fl.Changed {
			n := "--" + name
			if fl.Shorthand != "" {
				n = "-" + fl.Shorthand + "/" + n
			}
			set = append(set, n)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return Flagf("%s does not apply: %s", set[0], why)
	}
	return Flagf("%s do not apply: %s", strings.Join(set, ", "), why)
}

// Sizes parses a comma-separated list of byte sizes ("8,1KiB,1MiB") whose
// items may be ranges "8..64MiB" that double from their start to their end.
func Sizes(s string) ([]int64, error) { return list(s, configs.ParseSize) }

// Ints parses a comma-separated list of whole numbers whose items may be
// ranges "2..1024" that double from their start to their end.
func Ints(s string) ([]int, error) {
	return list(s, func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", v)
		}
		return n, nil
	})
}

// list parses a comma-separated list whose items are values or doubling
// ranges "lo..hi", with parse.
func list[T int | int64](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, part := range strings.Split(s, ",") {
		if lo, hi, ok := strings.Cut(part, ".."); ok {
			a, err := parse(strings.TrimSpace(lo))
			if err != nil {
				return nil, err
			}
			b, err := parse(strings.TrimSpace(hi))
			if err != nil {
				return nil, err
			}
			if a < 1 || b < a {
				return nil, fmt.Errorf("range %q must go up from at least 1", part)
			}
			for v := a; v <= b; v *= 2 {
				out = append(out, v)
			}
			continue
		}
		v, err := parse(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Table writes aligned columns.
func Table(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// JSON writes v as indented JSON.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Seconds formats seconds with an SI prefix and 4 significant digits.
func Seconds(s float64) string {
	switch a := max(s, -s); {
	case s == 0:
		return "0s"
	case a >= 1:
		return strconv.FormatFloat(s, 'g', 4, 64) + "s"
	case a >= 1e-3:
		return strconv.FormatFloat(s*1e3, 'g', 4, 64) + "ms"
	case a >= 1e-6:
		return strconv.FormatFloat(s*1e6, 'g', 4, 64) + "µs"
	}
	return strconv.FormatFloat(s*1e9, 'g', 4, 64) + "ns"
}

// Call turns a message size in bytes into collective parameters, as
// nccl-tests counts sizes (see collectives.Params.SizeBytes): the vector
// for allreduce and bcast, the whole gathered vector for allgather and
// reduce_scatter, everything a rank sends for alltoall (split evenly over
// the ranks; a remainder that does not divide is dropped and the smaller
// size reported).
func Call(c collectives.Collective, ranks int, size, elemSize int64, root int) (collectives.Params, error) {
	if elemSize < 1 {
		return collectives.Params{}, Flagf("--elem-size must be at least 1 byte, not %d", elemSize)
	}
	if size < 0 {
		return collectives.Params{}, Flagf("--size must not be negative")
	}
	p := collectives.Params{Ranks: ranks, ElemSize: elemSize, Root: root}
	switch c {
	case collectives.Barrier:
	case collectives.Alltoall:
		p.Count = size / elemSize / int64(max(ranks, 1))
	default:
		if size%elemSize != 0 {
			return p, Flagf("size %dB is not a whole number of %d-byte elements; use a multiple of %d or --elem-size 1", size, elemSize, elemSize)
		}
		p.Count = size / elemSize
	}
	return p, nil
}

// Shortfall says how much of an alltoall's asked size Call's params p
// move, when that is less: -s is each rank's whole send buffer, split
// evenly over the ranks in whole elements, and the rest is not sent (as
// nccl-tests rounds its alltoall count down to a multiple of the ranks).
// note is "" when all of it moves; err refuses a size of which nothing
// would move.
func Shortfall(c collectives.Collective, p collectives.Params, asked int64) (note string, err error) {
	moved := p.SizeBytes(c)
	if c != collectives.Alltoall || moved == asked {
		return "", nil
	}
	per := p.ElemSize * int64(p.Ranks)
	note = fmt.Sprintf("alltoall splits each rank's %s evenly over %d ranks in whole %d-byte elements: %d elements to each, %s in all (%s is not sent; a multiple of %s moves everything)",
		configs.FormatBytes(asked), p.Ranks, p.ElemSize, p.Count, configs.FormatBytes(moved), configs.FormatBytes(asked-moved), configs.FormatBytes(per))
	if p.Count == 0 {
		return "", Flagf("--size: nothing would be sent: %s", note)
	}
	return note, nil
}

// Hockney derives alpha-beta-gamma parameters for closed forms from a
// machine and a placement: the latency and bottleneck of the slowest route
// between placed hosts, and the host's reduction rate. uniform reports
// whether every route checked has the same latency and bottleneck, in which
// case the closed forms price every message right; otherwise they price
// every message as the slowest one, an estimate. All pairs are checked up
// to 512 ranks; above that, the pairs among 64 ranks spread over the job.
func Hockney(m *configs.Machine, place []int32) (h cost.Hockney, uniform bool) {
	return hockneyOver(m, place, func(i, j int) bool { return true })
}

// hockneyOver is Hockney over the pairs of ranks that keep says to.
func hockneyOver(m *configs.Machine, place []int32, keep func(i, j int) bool) (h cost.Hockney, uniform bool) {
	uniform = true
	first := true
	var a0, b0 float64
	stride := max(1, len(place)/64)
	if len(place) <= 512 {
		stride = 1
	}
	for i := 0; i < len(place); i += stride {
		for j := 0; j < len(place); j += stride {
			if i == j || !keep(i, j) {
				continue
			}
			a, b := m.PathParams(int(place[i]), int(place[j]))
			if first {
				a0, b0, first = a, b, false
			}
			uniform = uniform && a == a0 && b == b0
			h.Alpha, h.Beta = max(h.Alpha, a), max(h.Beta, b)
		}
	}
	h.Gamma = m.Host.ReducePsPerByte * 1e-12
	// Above the eager limit a message waits for its request to reach the
	// receiver and the reply to come back: two route latencies.
	h.Handshake, h.EagerLimit = 2*h.Alpha, float64(m.Host.EagerLimit)
	return h, uniform
}

// Pricing is what the closed forms need of a machine and a placement,
// worked out once: the alpha-beta-gamma model of the slowest route, and
// the two levels of blocks of consecutive ranks (a node's, or a Dragonfly
// group's) for the algorithms priced level by level.
type Pricing struct {
	Machine *configs.Machine
	Flat    cost.Hockney
	Levels  cost.Levels
	// Uniform reports whether every route is alike (Flat prices every
	// message right); LevelsUniform whether the routes inside blocks are
	// alike, and those between blocks.
	Uniform, LevelsUniform bool
	// Blocks says the placement has blocks to price level by level (else
	// Levels is Flat at both levels).
	Blocks bool
}

// NewPricing works out the pricing of m for ranks placed by place, in
// blocks of block consecutive ranks (1: no levels).
func NewPricing(m *configs.Machine, place []int32, block int) Pricing {
	pr := Pricing{Machine: m}
	pr.Flat, pr.Uniform = Hockney(m, place)
	pr.Levels.Global, pr.LevelsUniform = pr.Flat, pr.Uniform
	pr.Levels.Local = pr.Flat
	if block > 1 && block < len(place) {
		pr.Blocks = true
		var localSame, globalSame bool
		pr.Levels.Local, localSame = hockneyOver(m, place, func(i, j int) bool { return i/block == j/block })
		pr.Levels.Global, globalSame = hockneyOver(m, place, func(i, j int) bool { return i/block != j/block })
		pr.LevelsUniform = localSame && globalSame
	}
	return pr
}

// ClosedForm prices a for p. kind names the model: "LogGP" when the hosts
// charge an overhead or a gap and a has a LogGP form; "levels" for the
// algorithms priced level by level (cost.Levels); else "Hockney", the
// alpha-beta-gamma form of the slowest route, which leaves o and g out.
// alike reports whether the routes the form assumes alike are (else the
// form is an estimate).
func (pr Pricing) ClosedForm(a collectives.Algorithm, p collectives.Params) (pred cost.Prediction, kind string, alike bool, err error) {
	m := pr.Machine
	o, g := m.Host.Overhead.Seconds(), m.Gap.Seconds()
	switch {
	case (o > 0 || g > 0) && cost.HasLogGP(a):
		pred, err = pr.Flat.PredictLogGP(a, p, o, g)
		return pred, "LogGP", pr.Uniform, err
	case cost.HasLevels(a) && pr.Blocks:
		pred, err = pr.Levels.Predict(a, p)
		return pred, "levels", pr.LevelsUniform, err
	}
	pred, err = pr.Flat.Predict(a, p)
	return pred, "Hockney", pr.Uniform, err
}

// DefaultElemSize is the element size every command takes by default: 8
// bytes, a double (MPI_DOUBLE), the type the MPI libraries' choices are
// usually compared on, and the size of the elements the data checker moves.
const DefaultElemSize = 8

// ElemSizeUsage is the --elem-size flag's help.
const ElemSizeUsage = "bytes per element (8 by default: a double, MPI_DOUBLE)"

// Algorithm resolves an algorithm name, or a library selector
// (collectives.Selectors) to the algorithm it picks for params, and then
// sets params to the library's (its segment, its parts); chosenBy then
// says which selector and rule chose it.
func Algorithm(c collectives.Collective, name string, params *collectives.Params) (a collectives.Algorithm, chosenBy string, err error) {
	if collectives.IsSelector(name) {
		s, err := collectives.Select(name, c, *params)
		if err != nil {
			return a, "", err
		}
		*params = s.Params
		return s.Algorithm, name + " (" + collectives.SelectorVersion(name) + "): " + s.Rule, nil
	}
	a, err = collectives.Lookup(c, name)
	if err != nil {
		return a, "", &FlagError{Err: fmt.Errorf("%w (or a library's choice: %s)", err, strings.Join(collectives.Selectors, ", "))}
	}
	return a, "", nil
}

// Wrap breaks text into lines of at most width characters, each indented.
func Wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line)+len(w)+1 > width && line != indent {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

// innerCandidates are the allreduce algorithms SUARA may run in a subset.
var innerCandidates = []string{"ring", "recursive_doubling", "rabenseifner", "reduce_bcast"}

// SuaraPlan chooses SUARA2's grid and inner algorithm by the closed
// forms: the G x p/G grid and the algorithm whose two steps (an allreduce
// on p/G ranks, then one on G ranks) cost least; among equal costs, the
// squarest grid (SUARA2's intent). It returns the params and the
// predicted time.
func SuaraPlan(h cost.Hockney, params collectives.Params) (collectives.Params, float64) {
	best, plan := math.Inf(1), params
	for g := 2; g <= params.Ranks/2; g++ {
		if params.Ranks%g != 0 {
			continue
		}
		for _, name := range innerCandidates {
			a, _ := collectives.Lookup(collectives.Allreduce, name)
			t := 0.0
			for _, d := range []int{params.Ranks / g, g} {
				q := params
				q.Ranks = d
				t += predictOrInf(h, a, q)
			}
			squarer := math.Abs(math.Log(float64(g*g)/float64(params.Ranks))) < math.Abs(math.Log(float64(plan.Groups*plan.Groups)/float64(params.Ranks)))
			if t < best*(1-1e-9) || t <= best*(1+1e-9) && squarer {
				best = min(best, t)
				plan.Groups, plan.Inner, plan.Steps = g, name, 2
			}
		}
	}
	return plan, best
}

// predictOrInf prices a by its closed form, or +Inf if it has none.
func predictOrInf(h cost.Hockney, a collectives.Algorithm, p collectives.Params) float64 {
	pr, err := h.Predict(a, p)
	if err != nil {
		return math.Inf(1)
	}
	return pr.Time
}

// OptimalSegment is Linear Pipelining's alpha-beta optimal segment for n
// bytes over a chain of p ranks, sqrt(n alpha / ((p-2) beta)), in elements.
func OptimalSegment(h cost.Hockney, p int, bytes, elem int64) int64 {
	s := math.Sqrt(float64(bytes) * h.Alpha / (float64(max(p-2, 1)) * h.Beta))
	return max(1, int64(s)/elem)
}

// Tune fills in the options of a that are best chosen from the machine's
// closed forms when the user left them: Linear Pipelining's segment, and
// SUARA's grid and subsets' algorithm. It says what it chose.
func Tune(a collectives.Algorithm, p *collectives.Params, h cost.Hockney) string {
	switch {
	case (a.Name == "chain" || a.Name == "linear_pipeline") && p.Segment == 0:
		p.Segment = min(max(p.Count, 1), OptimalSegment(h, p.Ranks, p.SizeBytes(a.Collective), max(p.ElemSize, 1)))
		return fmt.Sprintf("segment %d elements, the alpha-beta optimum", p.Segment)
	case a.Name == "suara" && p.Groups == 0 && p.Inner == "" && p.Steps <= 2:
		plan, _ := SuaraPlan(h, *p)
		if plan.Groups > 0 {
			*p = plan
			return fmt.Sprintf("grid %dx%d with %s in each subset, chosen by the closed forms", p.Groups, p.Ranks/p.Groups, p.Inner)
		}
	}
	return ""
}

// Simulate runs a on m for params (block placement, no data) on the
// analytic network and returns the simulated time in seconds.
func Simulate(m *configs.Machine, a collectives.Algorithm, params collectives.Params) (float64, error) {
	return simulate(m, a, params, m.Analytic, nil)
}

// SimulateNoisy is Simulate with OS noise stretching every CPU interval.
func SimulateNoisy(m *configs.Machine, a collectives.Algorithm, params collectives.Params, noise *sim.Noise) (float64, error) {
	return simulate(m, a, params, m.Analytic, noise)
}

// SimulateFlow is Simulate on the flow network: messages that cross the
// same link at the same time share its bandwidth.
func SimulateFlow(m *configs.Machine, a collectives.Algorithm, params collectives.Params) (float64, error) {
	return simulate(m, a, params, m.Flow, nil)
}

func simulate(m *configs.Machine, a collectives.Algorithm, params collectives.Params, network func([]int32) (sim.NetworkFactory, error), noise *sim.Noise) (float64, error) {
	place, err := m.Place(params.Ranks, "", 1)
	if err != nil {
		return 0, err
	}
	net, err := network(place)
	if err != nil {
		return 0, err
	}
	s, err := a.Build(params)
	if err != nil {
		return 0, err
	}
	if noise == nil && m.Noise != nil {
		if err := m.Noise.CheckRanks(params.Ranks); err != nil {
			return 0, err
		}
		noise = m.Noise.For(1)
	}
	res, err := sim.Execute(sim.New(1), s, sim.Config{Host: m.Host, Network: net, Noise: noise})
	if err != nil {
		return 0, fmt.Errorf("%s p=%d: %w", a.ID(), params.Ranks, ClockHint(err, params.SizeBytes(a.Collective), m.Inputs))
	}
	return res.Makespan.Seconds(), nil
}

// Grid resolves a machine and parses the rank counts and message sizes of a
// sweep (lists or doubling ranges), checking that every rank count fits.
func Grid(machine, ranks, sizes string) (*configs.Machine, []int, []int64, error) {
	m, err := configs.Resolve(machine)
	if err != nil {
		return nil, nil, nil, err
	}
	ps, err := Ints(ranks)
	if err != nil {
		return nil, nil, nil, &FlagError{Err: fmt.Errorf("--ranks: %w", err)}
	}
	ss, err := Sizes(sizes)
	if err != nil {
		return nil, nil, nil, &FlagError{Err: fmt.Errorf("--sizes: %w", err)}
	}
	for _, p := range ps {
		if p < 2 || p > m.Slots() {
			return nil, nil, nil, Flagf("--ranks %d does not fit on %s (2..%d)", p, m.Name, m.Slots())
		}
	}
	return m, ps, ss, nil
}

// CrossbarYAML writes the config of a machine of hosts hosts on one switch
// whose host-to-host path has latency alpha seconds (two links of alpha/2)
// and bandwidth bw bytes per second, one rank per host, hosts reducing at
// reduceBW (a bandwidth with its unit). source says where the numbers came
// from, for the file's comment and description.
func CrossbarYAML(name, source string, hosts int, alpha, bw float64, reduceBW, eagerLimit string) []byte {
	return CrossbarLogGPYAML(name, source, hosts, alpha, 0, 0, bw, reduceBW, eagerLimit)
}

// CrossbarLogGPYAML is CrossbarYAML with LogGP's host costs: overhead o
// per send and per receive, and gap g between messages through a NIC.
// eagerLimit is the config's eager_limit: a size, or "none" for no
// rendezvous.
func CrossbarLogGPYAML(name, source string, hosts int, alpha, o, g, bw float64, reduceBW, eagerLimit string) []byte {
	var b bytes.Buffer
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	fmt.Fprintf(&b, "# Written by %s.\nname: %s\n", source, strconv.Quote(name))
	fmt.Fprintf(&b, "description: >-\n  %d hosts on one switch, calibrated by %s: %s host to\n  host, %s.\n",
		hosts, source, Seconds(alpha), configs.FormatBandwidth(bw))
	fmt.Fprintf(&b, "network:\n  crossbar:\n    hosts: %d\n    link: {bandwidth: %sB/s, latency: %sns}\n", hosts, num(bw), num(alpha/2*1e9))
	fmt.Fprintf(&b, "host:\n  ranks_per_host: 1\n  overhead: %sns\n  gap: %sns\n  reduce_bandwidth: %s\n  eager_limit: %s\nplacement: block\n", num(o*1e9), num(g*1e9), reduceBW, eagerLimit)
	return b.Bytes()
}

// Collectives parses a list of collectives: one, comma-separated, or
// "all".
func Collectives(spec string) ([]collectives.Collective, error) {
	if spec == "all" {
		return collectives.Collectives, nil
	}
	var out []collectives.Collective
	for _, name := range strings.Split(spec, ",") {
		c := collectives.Collective(strings.TrimSpace(name))
		if !slices.Contains(collectives.Collectives, c) {
			return nil, Flagf("unknown collective %q; use one of %v, or all", name, collectives.Collectives)
		}
		out = append(out, c)
	}
	return out, nil
}
