// Package cmdutil holds what collsim's verbs share: output streams, error
// kinds that map to exit codes, and flag parsing helpers.
package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
)

// IO is where a verb writes: results to Out, diagnostics to Err.
type IO struct {
	Out, Err io.Writer
	// Tables, when not nil, also receives every table written with
	// IO.Table (a study's --json collects them).
	Tables *[][][]string
}

// Table writes rows to Out as Table does, and keeps them in Tables.
func (s *IO) Table(rows [][]string) error {
	if s.Tables != nil {
		*s.Tables = append(*s.Tables, rows)
	}
	return Table(s.Out, rows)
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

// Workers is the number of simulations to run at once that a --workers
// flag of f says: n, or one per core when the flag is not given; a given
// value below 1 is a usage error (a literal 0 is not the default).
func Workers(f *pflag.FlagSet, n int) (int, error) {
	if !f.Changed("workers") {
		return runtime.GOMAXPROCS(0), nil
	}
	if n < 1 {
		return 0, Flagf("--workers %d: give at least 1, or leave it out for one per core", n)
	}
	return n, nil
}

// CollectiveNames lists the collectives, for flag help.
func CollectiveNames() string {
	var names []string
	for _, c := range collectives.Collectives {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// ProbeOverhead is the per-message CPU overhead o at which tune and model
// check a choice made on a machine that charges none: a modest MPI
// library's (LogGP fits of MPI over InfiniBand give o of a few hundred ns
// to 1 µs).
const ProbeOverhead = 500 * sim.Nanosecond

// MachineUsage is the help of every -m/--machine flag.
const MachineUsage = "built-in machine name or machine config file (read whole: at most 1 MiB; a FIFO blocks until it is written)"

// FlagError is a usage error: wrong or missing flags (an Experiment's
// option errors are the same kind).
type FlagError = collsim.OptionError

// Flagf returns a FlagError.
func Flagf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ValidationError is a run that finished wrongly: a deadlock or wrong data.
type ValidationError = collsim.CheckError

// ExitCode maps an error to collsim's exit status.
func ExitCode(err error) int {
	var fe *FlagError
	var ve *ValidationError
	var ie *Interrupted
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ie):
		return ie.status()
	case errors.As(err, &fe):
		return ExitUsage
	case errors.As(err, &ve):
		return ExitValidation
	}
	return ExitError
}

// NotRegular reports whether path exists and is not a regular file (a
// device such as /dev/null, a pipe, a directory): output to it must not
// be renamed into place, which would replace it.
func NotRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular()
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
// items may be ranges "8..64MiB" that double from their start and end at
// their end.
func Sizes(s string) ([]int64, error) { return list(s, configs.ParseSize) }

// Ints parses a comma-separated list of whole numbers whose items may be
// ranges "2..1000" that double from their start and end at their end.
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
		// A missing item or end of a range is named as such ("8.." said
		// `"" does not start with a number`; an audit).
		if strings.TrimSpace(part) == "" {
			return nil, fmt.Errorf("%q has an empty item; give values separated by single commas, e.g. 8,1KiB or 2..64", s)
		}
		if lo, hi, ok := strings.Cut(part, ".."); ok && (strings.TrimSpace(lo) == "" || strings.TrimSpace(hi) == "") {
			return nil, fmt.Errorf("range %q lacks an end; give both, e.g. 8..1MiB or 2..64", part)
		}
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
			// Doubling from a, and ending at b even where b is not a
			// doubling of a ("2..1000" ends 256, 512, 1000): a range never
			// stops short of what it names. The test against b/2 also
			// keeps the doubling from overflowing.
			for v := a; ; v *= 2 {
				out = append(out, v)
				if v >= b {
					break
				}
				if v > b/2 {
					out = append(out, b)
					break
				}
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
	enc.SetEscapeHTML(false) // "s0.0->s1.0", not "s0.0-\u003es1.0": this is no web page
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

// ElemSizeUsage is the --elem-size flag's help.
const ElemSizeUsage = "bytes per element (8 by default: a double, MPI_DOUBLE)"

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

// Simulate runs a on m for params (the machine's placement, seed 1, no
// data) on the analytic network and returns the simulated time in
// seconds: a collsim.Experiment's RunAlgorithm.
func Simulate(m *configs.Machine, a collectives.Algorithm, params collectives.Params) (float64, error) {
	return simulate(&collsim.Experiment{Machine: m}, a, params)
}

// SimulateNoisy is Simulate with OS noise stretching every CPU interval.
// seed sets the noise's phases (periodic) or intervals (random).
func SimulateNoisy(m *configs.Machine, a collectives.Algorithm, params collectives.Params, noise *sim.Noise, seed uint64) (float64, error) {
	return simulate(&collsim.Experiment{Machine: m, Noise: noise, Seed: seed}, a, params)
}

// SimulateNoisyOn is SimulateNoisy on the network model named (Analytic
// or Flow).
func SimulateNoisyOn(network string, m *configs.Machine, a collectives.Algorithm, params collectives.Params, noise *sim.Noise, seed uint64) (float64, error) {
	return simulate(&collsim.Experiment{Machine: m, Network: network, Noise: noise, Seed: seed}, a, params)
}

// SimulateFlow is Simulate on the flow network: messages that cross the
// same link at the same time share its bandwidth.
func SimulateFlow(m *configs.Machine, a collectives.Algorithm, params collectives.Params) (float64, error) {
	return simulate(&collsim.Experiment{Machine: m, Network: collsim.Flow}, a, params)
}

func simulate(e *collsim.Experiment, a collectives.Algorithm, params collectives.Params) (float64, error) {
	e.Seed, e.Verify = max(e.Seed, 1), collsim.VerifyOff
	r, err := e.RunAlgorithm(a, params)
	if err != nil {
		return 0, fmt.Errorf("%s p=%d: %w", a.ID(), params.Ranks, err)
	}
	return r.Time, nil
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
	if m.Slots() < 2 {
		return nil, nil, nil, fmt.Errorf("%s has %d slot for ranks, and this needs at least 2: use a larger machine", m.Name, m.Slots())
	}
	for _, p := range ps {
		// (The flag's value, which may be its default, is named whole: a
		// user who gave none sees where 5 came from.)
		switch {
		case p < 2:
			return nil, nil, nil, Flagf("--ranks %s: %d is too few; give rank counts from 2 to %d", ranks, p, m.Slots())
		case p > m.Slots():
			// Exit 1, as run's ranks that do not fit (README's exit codes).
			return nil, nil, nil, fmt.Errorf("--ranks %s: %d does not fit on %s; give rank counts from 2 to %d", ranks, p, m.Name, m.Slots())
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

// SI formats v to three significant digits with an SI prefix and unit
// ("14.8 ktasks/s"), the prefix chosen after rounding, so that 999,999
// reads "1 M", not "1e+03 k".
func SI(v float64, unit string) string {
	for _, p := range []struct {
		f float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if r, _ := strconv.ParseFloat(fmt.Sprintf("%.3g", v), 64); r >= p.f {
			return fmt.Sprintf("%.3g %s%s", r/p.f, p.s, unit)
		}
	}
	if unit == "" { // a bare count: no space left before a missing unit
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// Count writes n things: "1 strategy", "4 strategies".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// OutputFile refuses, before any work, a file that flag names for a
// command to write when it ends: one whose name does not end in one of
// exts (".png", ".svg"; none: any), or in a directory that does not
// exist. (A METG sweep ran its every kernel, then refused --plot x.jpg.)
func OutputFile(flag, path string, exts ...string) error {
	if len(exts) > 0 && !slices.Contains(exts, filepath.Ext(path)) {
		return Flagf("%s %s: give a %s file", flag, path, strings.Join(exts, " or "))
	}
	if dir := filepath.Dir(path); dir != "." {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return Flagf("%s %s: there is no directory %s to write it in", flag, path, dir)
		}
	}
	return nil
}

// pflagParse matches pflag's error for a value its parser refused, which
// shows Go's strconv in the message.
var pflagParse = regexp.MustCompile(`^(invalid argument "[^"]*" for "[^"]*" flag): strconv\.Parse(Int|Uint|Float|Bool)[^:]*: parsing "[^"]*": (invalid syntax|value out of range)$`)

// PlainFlagError says what pflag's parse errors mean without Go's names:
// "not a whole number", "not a number", "out of range".
func PlainFlagError(err error) error {
	m := pflagParse.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	what := map[string]string{"Int": "not a whole number", "Uint": "not a whole number of 0 or more", "Float": "not a number", "Bool": "not true or false"}[m[2]]
	if m[3] == "value out of range" {
		what = "out of range"
	}
	return fmt.Errorf("%s: %s", m[1], what)
}
