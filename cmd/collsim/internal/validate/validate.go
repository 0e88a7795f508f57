// Package validate implements `collsim validate`: a model's predictions
// beside measured times, with their errors, as a table and plots, and
// optionally as a check that fails past a given error.
package validate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/cmd/collsim/internal/realcmd"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

type options struct {
	realcmd.Launcher
	real       bool
	collective string
	algos      string
	sizes      string
	pingpong   string
	exchange   string
	// fitSizes are --pingpong's sizes, the only ones alpha and beta are
	// fitted to; timedPings are the sizes the ping-pong is timed at, the
	// exchanges' too on one host (their bands need a one-way time each).
	fitSizes   map[int64]bool
	timedPings string
	transport  string
	singleCopy string
	// singleCopySet: --single-copy was given (else, over TCP, real is
	// not told: it refuses the flag there).
	singleCopySet bool
	iterations    int
	warmup        int
	timeout       time.Duration
	maxError      float64
	maxSpread     float64
	maxDrift      float64
	interleave    bool
	plotDir       string
	json          bool
	quiet         bool // no progress line
	progress      bool // a progress line even in a log
	machine       string
	ranks         string
	networks      string
	points        bool
	rootArgs      []string // the root's flags the user set, for the ranks (RootArgs)
}

// New returns the validate command.
func New(streams *cmdutil.IO) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Closed forms against the simulation, or the simulation against real runs, point by point",
		Long: `validate puts a model beside a reference, point by point, and says where the
model's assumptions break.

Without --real, the reference is the simulation: for a machine (-m), every
algorithm with a closed form (or those named by -a) at every rank count (-n)
and size (-s) is priced by its Hockney alpha-beta-gamma closed form and
simulated on the analytic and/or flow network (--network). It prints each
algorithm's median and worst relative error ((closed form - simulated) /
simulated; --points for every point), notes on what the closed forms do not
know (contention, a tapered network, routes of different lengths, per-message
overheads, bounds rather than exact forms), and with --plot writes time
against size, time against ranks and an error heat map.

With --real, the reference is reality. validate starts --np rank processes
(on this machine, or with --netns in an emulated cluster of shaped links),
times a ping-pong between rank 0 and the last rank at --pingpong sizes and
fits alpha and beta to it (the median one-way times, as osu_latency gives
them: beta from the large sizes' pairwise slopes, alpha from the small
sizes; it refuses to predict when those slopes spread by more than
--max-fit-spread), and runs every algorithm asked for, for real, with its
data checked. On one host it times all of them in rounds, one iteration
of each call and then the next, so that a machine whose speed changes
during the run slows the ping-pong and the collectives alike, and fits the
first half of the rounds and the second apart: a note says when the
machine changed during the run (beta moved by more than 10%, or the duplex
share by more than 0.2), and --max-drift refuses such runs. Between
--netns hosts (or with --interleave=false) it times each call's
iterations one after another, as the OSU benchmarks do, and the ping-pong
again after the collectives, against which the drift is measured. It then writes the fitted machine: between
--netns hosts, one rank per host on one switch, gamma from this host's
reduction kernel; on one host, every rank on it, each rank's channel priced
by message size in bands, one from each --exchange size up: the band's
bandwidth gives the one-way time the ping-pong measured at its size, and
its duplex share the time of an exchange between rank 0 and the last rank
(an exchange of b bytes that takes (1+s) b/bandwidth gives a share of s: 0
full duplex, 1 half); gamma is what a reducing exchange adds per byte. It
simulates every algorithm on that machine, prices it with its closed form,
and reports each point: the real median time (of the slowest rank, over the
timed iterations), the simulated and the closed-form times, and their
relative errors.

Its table's "real min..max (rank avg)" is the least and greatest of the
ranks' average times, as OSU's benchmarks report them; the real median is
of the slowest rank's time in each iteration, what a simulation's makespan
predicts, and an iteration or two that a rank waited long in raise the
averages, not the median: the median can lie below that range.

--max-error turns the report into a check: collsim exits with status 3 if
any error is larger than that fraction.`,
		Example: `  collsim validate -m fattree-1024 -n 16..1024 -s 8..64MiB --network analytic,flow
  collsim validate -c alltoall -m xc40 -n 64,512 --network flow --plot .
  collsim validate --real --np 4 -s 1MiB..16MiB
  collsim validate --real --np 8 --netns --link-bandwidth 200Mbps \
      -a ring,recursive_doubling,rabenseifner -s 1MiB..64MiB --plot . --max-error 0.15`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.CheckFlags(cmd.Flags()); err != nil {
				return err
			}
			if !(o.maxSpread >= 0 && o.maxSpread < math.Inf(1)) {
				return cmdutil.Flagf("--max-fit-spread %v: a fraction of beta, 0 or more", o.maxSpread)
			}
			if !(o.maxDrift >= 0 && o.maxDrift < math.Inf(1)) {
				return cmdutil.Flagf("--max-drift %v: a fraction of beta, 0 or more (0 reports only)", o.maxDrift)
			}
			if o.Netns.Enabled() && !cmd.Flags().Changed("interleave") {
				// Between emulated hosts each call leaves the shaped links
				// in a state the next one starts from: interleaved, the
				// model was fast by up to 24% where the OSU order was within
				// 6% but for one point (one run each on 8 hosts).
				o.interleave = false
			}
			if o.maxDrift > 0 && o.interleave && o.iterations < 2 {
				return cmdutil.Flagf("--max-drift with --iterations %d: the drift is between the first and the second half of the rounds, which takes 2 or more", o.iterations)
			}
			if o.real {
				if err := cmdutil.NotApplicable(cmd.Flags(), "they show the progress of a grid of simulations, which --real does not run", "quiet", "progress"); err != nil {
					return err
				}
				// (They were ignored without a word: a new user's trial.)
				if err := cmdutil.NotApplicable(cmd.Flags(), "--real runs --np ranks on a machine it fits to their own ping-pong, and simulates it on both networks", "machine", "ranks", "network"); err != nil {
					return err
				}
			}
			if !o.real {
				if err := cmdutil.NotApplicable(cmd.Flags(), "they apply to real runs: give --real", "interleave", "max-drift", "max-fit-spread", "pingpong", "exchange", "iterations", "warmup", "timeout", "transport", "single-copy"); err != nil {
					return err
				}
			}
			if colls, err := cmdutil.Collectives(o.collective); err == nil {
				if err := cmdutil.SizeApplies(cmd.Flags(), colls...); err != nil {
					return err
				}
			}
			if !(o.maxError >= 0 && o.maxError < math.Inf(1)) {
				return cmdutil.Flagf("--max-error %v: give a fraction of 0 or more (0.1 is 10%%; 0 reports only)", o.maxError)
			}
			o.rootArgs = realcmd.RootArgs(cmd)
			o.singleCopySet = cmd.Flags().Changed("single-copy")
			if o.transport == realrun.TCP.String() {
				if err := cmdutil.NotApplicable(cmd.Flags(), "it chooses how ranks that share memory move large messages, and with --transport tcp none do", "single-copy"); err != nil {
					return err
				}
			}
			return run(streams, o)
		},
	}
	f := cmd.Flags()
	o.AddFlags(f)
	f.BoolVar(&o.real, "real", false, "validate the simulation against real runs (without it: the closed forms against the simulation)")
	f.StringVarP(&o.collective, "collective", "c", "allreduce", `collectives: one, a comma-separated list, or "all"`)
	f.StringVarP(&o.algos, "algo", "a", "", `algorithms, comma-separated, or "all" (default: every one with a closed form; ring,recursive_doubling,rabenseifner with --real)`)
	f.StringVarP(&o.sizes, "sizes", "s", "", `message sizes: a list "8,1KiB" whose items may be doubling ranges "8..64MiB" (default 8..16MiB; 1MiB..16MiB with --real)`)
	f.StringVarP(&o.machine, "machine", "m", "small", "machine: a built-in name or a YAML file (not with --real)")
	f.StringVarP(&o.ranks, "ranks", "n", "5,16,64", "rank counts (not with --real: --np)")
	f.StringVar(&o.networks, "network", "analytic", "network models to simulate: analytic, flow, or analytic,flow (not with --real: both)")
	f.BoolVar(&o.points, "points", false, "print every point, not only each algorithm's summary")
	f.StringVar(&o.pingpong, "pingpong", "8,512,1MiB..16MiB", "ping-pong sizes the fit uses: small ones pin alpha, large ones beta (mid sizes ride a shaped link's token bucket burst and would bias beta)")
	f.StringVar(&o.exchange, "exchange", autoExchange, "without --netns: exchange sizes (rank 0 and the last rank both send and receive at once, plainly and reducing; the ping-pong is timed at them too) that say how fast and how duplex a rank's channel is at each size (a band of the fitted machine from each size up) and what a reduction costs in the transport, for the fitted machine of ranks on one host; auto: each power of two from the smallest message a collective sends (the smallest -s size over --np, at least 4KiB) up to the largest -s size")
	f.StringVar(&o.singleCopy, "single-copy", "off", `with --real: which messages ranks that share memory copy once, as collsim real's --single-copy (off, auto, ring, or a size). off, the default here, sends every message through the rings, so that every run measures the same channel: auto times both ways before the run and may choose differently from one run to the next, and messages copied once made exchanges faster than a one-way message (0.73-0.81x on this project's machine), which a duplex share of 0 to 1 cannot express`)
	f.StringVar(&o.transport, "transport", "shm", `with --real: how ranks on one host talk, as collsim real's --transport ("shm" or "tcp"); ranks on separate --netns hosts use TCP`)
	f.IntVar(&o.iterations, "iterations", 5, "timed iterations per call")
	f.IntVar(&o.warmup, "warmup", 3, "untimed iterations (rounds, interleaved) before them: after one warm-up round, the first timed rounds ran slower than the last on this project's machine, and the drift between the halves of 6 rounds was -10.6% on average in 5 runs, against -3.6% after three")
	f.DurationVar(&o.timeout, "timeout", 60*time.Second, "give up when a rank waits this long without progress")
	f.BoolVar(&o.interleave, "interleave", true, "with --real: time the calls in rounds (collsim real --interleave), one iteration of every call and then the next, so that a machine whose speed changes during the run slows the pairs the model is fitted to and every collective alike; the drift notes compare the first half of the rounds with the second. --interleave=false times each call's iterations one after another, as the OSU benchmarks do, and the pairs again after the collectives; that is the default with --netns, where each call leaves the shaped links in a state the next one starts from")
	f.Float64Var(&o.maxDrift, "max-drift", 0, "with --real: refuse the run when the ping-pong's beta moved by more than this fraction between the first and the second half of the rounds (with --interleave=false: between before and after the collectives), the machine having changed during the run; 0 reports it only")
	f.Float64Var(&o.maxSpread, "max-fit-spread", cost.MaxRelSpread, "with --real: refuse to predict when beta's robust spread over the large ping-pongs' pairwise slopes is above this fraction of beta (an unstable fit); 1e9 accepts any fit")
	f.Float64Var(&o.maxError, "max-error", 0, "fail (exit 3) when a model is off its reference by more than this fraction (0: report only; with --real, either network's simulated time off the real one); a closed form that is a bound passes where the simulation lies within it")
	f.StringVar(&o.plotDir, "plot", "", "write validate-real.png and .svg (time against size, real and simulated) and validate-real-error.png and .svg into this directory")
	f.BoolVar(&o.json, "json", false, "write JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress line on stderr (points simulated, shown when stderr is a terminal)")
	f.BoolVar(&o.progress, "progress", false, "a progress line on stderr every 10 s even when stderr is not a terminal")
	return cmd
}

// realArgs are collsim real's verb and flags for what o asks.
func (o *options) realArgs() []string {
	args := []string{"real", "-c", o.collective, "-a", o.algos, "-s", o.sizes, "--pingpong", cmp.Or(o.timedPings, o.pingpong), "--transport", o.transport,
		"--iterations", fmt.Sprint(o.iterations), "--warmup", fmt.Sprint(o.warmup), "--timeout", o.timeout.String()}
	if o.transport != realrun.TCP.String() || o.singleCopySet {
		args = append(args, "--single-copy", o.singleCopy)
	}
	if !o.Netns.Enabled() {
		args = append(args, "--exchange", o.exchange)
	}
	// Interleaved, the pairs are timed in every round, and the drift is
	// between the rounds' halves; else they are timed again after the
	// collectives.
	if o.interleave {
		args = append(args, "--interleave")
	} else {
		args = append(args, "--pairs-again")
	}
	return args
}

// pairSizes reads --pingpong's sizes into o.fitSizes, and sets
// o.timedPings: those and, on one host, --exchange's.
func (o *options) pairSizes() error {
	pings, err := cmdutil.Sizes(o.pingpong)
	if err != nil {
		return cmdutil.Flagf("--pingpong: %v", err)
	}
	o.fitSizes = map[int64]bool{}
	for _, b := range pings {
		o.fitSizes[b] = true
	}
	timed := slices.Clone(pings)
	if !o.Netns.Enabled() {
		exchanges, err := cmdutil.Sizes(o.exchange)
		if err != nil {
			return cmdutil.Flagf("--exchange: %v", err)
		}
		for _, b := range exchanges {
			if b%8 == 0 && b <= realrun.MaxMessageBytes { // real refuses the others under --exchange, in its words
				timed = append(timed, b)
			}
		}
	}
	var list []string
	for _, b := range slices.Compact(slices.Sorted(slices.Values(timed))) {
		list = append(list, strconv.FormatInt(b, 10))
	}
	o.timedPings = strings.Join(list, ",")
	return nil
}

// fitPingPong fits alpha and beta to the ping-pongs among sums at
// --pingpong's sizes (keep; nil for every size): those timed only for
// the channel's bands are not the fit's.
func fitPingPong(sums []realrun.Summary, keep map[int64]bool) (cost.HockneyFit, error) {
	var fit []realrun.Summary
	for _, s := range sums {
		if !realcmd.IsPingPong(s) || keep == nil || keep[s.Bytes] {
			fit = append(fit, s)
		}
	}
	return realcmd.FitPingPong(fit)
}

// point is one algorithm at one size, measured and predicted.
type point struct {
	Algorithm string  `json:"algorithm"`
	Bytes     int64   `json:"bytes"`
	Real      float64 `json:"real_median_s"`
	RealMin   float64 `json:"real_min_s"`
	RealMax   float64 `json:"real_max_s"`
	Simulated float64 `json:"simulated_s"`
	SimError  float64 `json:"simulated_error"`
	Flow      float64 `json:"flow_s"`
	FlowError float64 `json:"flow_error"`
	Closed    float64 `json:"closed_form_s,omitempty"`
	CFError   float64 `json:"closed_form_error,omitempty"`
}

func run(streams *cmdutil.IO, o *options) error {
	if !o.real {
		if o.NP != 0 || o.Netns.Enabled() {
			return cmdutil.Flagf("--np and --netns start real runs: give --real too")
		}
		return runModel(streams, o)
	}
	if o.sizes == "" {
		o.sizes = "1MiB..16MiB"
	}
	if ss, err := cmdutil.Sizes(o.sizes); err == nil {
		if err := wholeElements(ss); err != nil {
			return err
		}
	}
	if o.algos == "" {
		// The default is allreduce's (-c bcast failed with "unknown bcast
		// algorithm ring", an algorithm the user never named; a new
		// user's trial).
		if strings.TrimSpace(o.collective) != string(collectives.Allreduce) {
			return cmdutil.Flagf("-a: name the algorithms to run for -c %s (the default, ring,recursive_doubling,rabenseifner, is allreduce's)", o.collective)
		}
		o.algos = "ring,recursive_doubling,rabenseifner"
	}
	for _, a := range strings.Split(o.algos, ",") {
		if a = strings.TrimSpace(a); collectives.IsSelector(a) {
			// It ran the whole measurement, then failed reading its own
			// row "ompi: allreduce/ring" (a new user's trial).
			return cmdutil.Flagf("-a %s: validate --real fits a model to named algorithms; a library's choice is not one (collsim real -a %s times it, and says what it picked)", a, a)
		}
	}
	if o.plotDir != "" {
		// Checked before the measurement, which took minutes and was then
		// lost on a directory that could not be made (a new user's
		// trial), and made once there are plots for it: made here, it was
		// left empty by a run that failed or was stopped (another).
		if err := canMakeDir(o.plotDir); err != nil {
			return fmt.Errorf("--plot %s: %w", o.plotDir, err)
		}
	}
	if err := realcmd.RefuseUnderLauncher(o.NP); err != nil {
		return err
	}
	switch {
	case o.NP < 2:
		return cmdutil.Flagf("--np must be at least 2: the fit needs a ping-pong between two ranks")
	case o.Netns.Hosts() != 0 && o.Netns.Hosts() != o.NP:
		return cmdutil.Flagf("--hosts %d with --np %d: validate models one rank per host; leave --hosts out", o.Netns.Hosts(), o.NP)
	case o.maxError < 0:
		return cmdutil.Flagf("--max-error must not be negative")
	case !o.Netns.Enabled() && o.exchange == "":
		return cmdutil.Flagf("--exchange: give sizes: on one host the fitted channel's bands, duplex and gamma come from exchanges (the default, auto, is each power of two from the smallest -s size over --np up to the largest)")
	}
	if o.exchange == autoExchange {
		sizes, err := cmdutil.Sizes(o.sizes)
		if err != nil {
			return cmdutil.Flagf("-s: %v", err)
		}
		o.exchange = exchangeSizes(sizes, o.NP)
	}
	if err := o.pairSizes(); err != nil {
		return err
	}
	if _, err := cmdutil.Collectives(o.collective); err != nil {
		return err
	}
	args := o.realArgs()
	if err := realcmd.Check(args, o.NP); err != nil {
		return err
	}
	o.Launcher.Timeout = realrun.SetupTimeout(o.timeout) // as real's: starting and registering take their time
	// The root's flags go before the verb, as the user gave them.
	reports, err := o.Launch(append(slices.Clip(o.rootArgs), args...), streams.Err)
	if err != nil {
		return err
	}
	sums := realcmd.Summaries(reports)
	pairs, after, _ := realcmd.PairsAgain(sums) // the fit is of the pairs before the collectives
	if pairs == nil {
		pairs = sums
	}
	fit, err := fitPingPong(pairs, o.fitSizes)
	if err != nil {
		return fmt.Errorf("fitting the ping-pong: %w", err)
	}
	if math.IsNaN(fit.BetaErr) {
		return fmt.Errorf("the ping-pong fit cannot be judged: fewer than three --pingpong sizes take 4x the smallest's time or more, and beta's spread needs three; give more large sizes (the default 1MiB..16MiB has five)")
	}
	if !(fit.BetaErr <= o.maxSpread*fit.Model.Beta) {
		// A fit this loose would make every prediction's error the fit's,
		// not the model's.
		// The spread to a tenth of a percent: at whole percents 5.3%
		// read "5%, allowed 5%" (a new user's trial).
		return fmt.Errorf("the ping-pong fit is unstable: beta %.3g s/B +- %.1f%% (the large sizes' pairwise slopes disagree; allowed %s): the link's timing was noisy; run again on a quieter machine, or give more --iterations or larger --pingpong sizes (--max-fit-spread 1e9 takes the fit as it is)",
			fit.Model.Beta, 100*fit.BetaErr/fit.Model.Beta, threshold(o.maxSpread))
	}
	h := cost.Hockney{Alpha: fit.Model.Alpha, Beta: fit.Model.Beta}
	var yaml []byte
	var channel *channelFit
	reduceBW := 0.0 // the reduction kernel's, between emulated hosts
	if o.Netns.Enabled() {
		// Each emulated host has one rank and a NIC of its own, shaped
		// the same way each way: one rank per host on a switch.
		reduceBW = reductionBandwidth()
		h.Gamma = 1 / reduceBW
		yaml = cmdutil.CrossbarYAML("fitted", "collsim validate --real (ping-pong on an emulated cluster of network namespaces, links shaped to "+o.Netns.Bandwidth()+")",
			o.NP, fit.Model.Alpha, 1/fit.Model.Beta, configs.FormatBandwidth(reduceBW), "none")
	} else {
		// The ranks share this host: what their channels do both ways at
		// once, and what a reduction adds, are measured, not assumed.
		ch, err := fitChannel(pairs, h)
		if err != nil {
			return fmt.Errorf("fitting the channel: %w", err)
		}
		channel = &ch
		h.Gamma = ch.ReduceSecondsPerByte
		yaml = oneHostYAML(o.NP, h, ch)
	}
	m, err := configs.Parse("fitted.yaml", yaml)
	if err != nil {
		return fmt.Errorf("the fitted machine does not load: %w", err)
	}
	var d *drift
	if o.interleave {
		d = measureRoundsDrift(reports, o.iterations, channel != nil, o.fitSizes)
	} else {
		d = measureDrift(aroundCollectives, after, fit, channel, o.fitSizes)
	}
	if d == nil && o.maxDrift > 0 {
		// A check that cannot be made must not pass silently.
		why := "the ping-pong timed again after the collectives did not fit; run again on a quieter machine"
		if o.interleave {
			why = fmt.Sprintf("the ping-pong of one half of the %d rounds did not fit; give more --iterations", o.iterations)
		}
		return fmt.Errorf("--max-drift %g cannot be checked: %s, or leave --max-drift out", o.maxDrift, why)
	}
	if d != nil && o.maxDrift > 0 && math.Abs(d.BetaChange) > o.maxDrift {
		when := driftTimes[d.Between]
		return fmt.Errorf("the machine changed during the run: the ping-pong's beta was %.3g s/B %s and %.3g %s (%+.0f%%; allowed %s): run again on a quieter machine",
			d.BetaBefore, when[0], d.BetaAfter, when[1], 100*d.BetaChange, threshold(o.maxDrift))
	}
	var points []point
	for _, s := range sums {
		if realcmd.IsPair(s) {
			continue
		}
		pt, err := predict(m, h, s, o.NP)
		if err != nil {
			return err
		}
		points = append(points, pt)
	}
	notes := caveats(o, channel, points)
	if note := driftNote(d); note != "" {
		notes = append(notes, note)
	}
	if o.plotDir != "" {
		paths, err := plot(o, points)
		if err != nil {
			return err
		}
		notes = append(notes, "plots: "+strings.Join(paths, ", "))
	}
	if o.json {
		// The keys are snake_case, as every other output's and this
		// one's nested ones (they were Go's field names: a new user's
		// trial).
		var reduceRate *float64 // null on one host: Channel has it there
		if channel == nil {
			reduceRate = &reduceBW
		}
		err = cmdutil.JSON(streams.Out, struct {
			Alpha    float64 `json:"alpha_s"`
			AlphaErr float64 `json:"alpha_error_s"`
			Beta     float64 `json:"beta_s_per_byte"`
			BetaErr  float64 `json:"beta_error_s_per_byte"`
			// AlphaSizes are the sizes alpha is estimated from; with 1,
			// its error is unknown, given as 0.
			AlphaSizes int `json:"alpha_sizes"`
			// ReduceBytesPerSecond is the reduction kernel's rate between
			// emulated hosts (null on one host: Channel's
			// reduce_s_per_byte is the exchanges' there).
			ReduceBytesPerSecond *float64 `json:"reduce_bytes_per_s"`
			// Channel is what the exchanges found on one host (null
			// between emulated hosts).
			Channel *channelFit `json:"channel"`
			// Drift is what the pairs timed at two times of the run
			// found (null when they did not fit).
			Drift *drift `json:"drift"`
			// Interleaved: the calls were timed in rounds (--interleave).
			Interleaved bool     `json:"interleaved"`
			Points      []point  `json:"points"`
			Notes       []string `json:"notes"`
		}{fit.Model.Alpha, fit.AlphaErr, fit.Model.Beta, fit.BetaErr, fit.AlphaSizes, reduceRate, channel, d, o.interleave, points, notes})
	} else {
		err = table(streams, o, fit, reduceBW, channel, points, notes)
	}
	if err != nil {
		return err
	}
	return check(o.maxError, points)
}

// predict simulates and prices the algorithm of one real summary.
func predict(m *configs.Machine, h cost.Hockney, s realrun.Summary, ranks int) (point, error) {
	c, name, _ := strings.Cut(s.Name, "/")
	a, err := collectives.Lookup(collectives.Collective(c), name)
	if err != nil {
		return point{}, err
	}
	params, err := collsim.Call(a.Collective, ranks, s.Bytes, 8, 0)
	if err != nil {
		return point{}, err
	}
	params.NodeSize, params.GroupSize = ranks, ranks // as real chose them: one rank per host
	simulated, err := cmdutil.Simulate(m, a, params)
	if err != nil {
		return point{}, err
	}
	flow, err := cmdutil.SimulateFlow(m, a, params)
	if err != nil {
		return point{}, err
	}
	pt := point{Algorithm: s.Name, Bytes: s.Bytes, Real: s.Median.Seconds(), RealMin: s.Min.Seconds(), RealMax: s.Max.Seconds(), Simulated: simulated, Flow: flow}
	pt.SimError = (simulated - pt.Real) / pt.Real
	pt.FlowError = (flow - pt.Real) / pt.Real
	if pr, err := h.Predict(a, params); err == nil {
		pt.Closed = pr.Time
		pt.CFError = (pr.Time - pt.Real) / pt.Real
	}
	return pt, nil
}

// reductionBandwidth times this host's reduction kernel (wrapping uint64
// sums, what a real run's reducing receives do) over a buffer larger than
// the caches: the gamma of the model, as bytes reduced per second.
func reductionBandwidth() float64 {
	dst, src := make([]uint64, 4<<20), make([]uint64, 4<<20)
	var best time.Duration
	for i := range 5 {
		start := time.Now()
		sim.ReduceSum.Apply(dst, src)
		if d := time.Since(start); i == 0 || d < best {
			best = d
		}
	}
	return float64(8*len(dst)) / best.Seconds()
}

// unbandedNote says which exchange sizes got no band, and what prices a
// message of each: the band below it (the fitted machine's bands each
// run up to the next), or below the first band the fitted line and the
// median duplex share (host.local).
func unbandedNote(ch channelFit) string {
	var all, line, below []string
	for _, b := range ch.Unbanded {
		all = append(all, configs.FormatBytes(b))
		if i := network.BandOf(ch.Bands, func(f bandFit) int64 { return f.From }, b); i < 0 {
			line = append(line, configs.FormatBytes(b))
		} else {
			below = append(below, fmt.Sprintf("%s (%s's band)", configs.FormatBytes(b), configs.FormatBytes(ch.Bands[i].From)))
		}
	}
	var what []string
	if len(line) > 0 {
		what = append(what, "the fitted line and the median duplex share price "+strings.Join(line, ", "))
	}
	if len(below) > 0 {
		what = append(what, "the band below prices "+strings.Join(below, ", "))
	}
	return fmt.Sprintf("the channel has no band at %s: the ping-pong there took no longer than the fitted alpha (a loaded machine's latency can hide a small size's bytes); %s",
		strings.Join(all, ", "), strings.Join(what, "; "))
}

// caveats says where the model's assumptions do not hold for this run.
func caveats(o *options, channel *channelFit, points []point) []string {
	var notes []string
	switch {
	case !o.Netns.Enabled() && runtime.NumCPU() < o.NP:
		notes = append(notes, fmt.Sprintf("the fitted machine puts the %d ranks on one host with a channel each, as measured between two of them; they also share this machine's %d cores, which it does not know: ranks that wait for a core make the model fast", o.NP, runtime.NumCPU()))
	case !o.Netns.Enabled():
		notes = append(notes, fmt.Sprintf("the fitted machine puts the %d ranks on one host with a channel each, as measured between two of them, priced by size in bands from each --exchange size up (a message between two sizes takes the smaller's band); the ranks also share the memory and its caches, which two ranks alone do not show", o.NP))
	case runtime.NumCPU() < o.NP:
		notes = append(notes, fmt.Sprintf("the %d emulated hosts share this machine's %d cores: where the shaped links are fast, the CPUs, not the links, can set the pace", o.NP, runtime.NumCPU()))
	}
	if o.Netns.Enabled() {
		notes = append(notes, "the fit is of the ping-pong alone; message sizes far outside --pingpong's range are extrapolated")
	} else {
		notes = append(notes, "the fit is of the ping-pong and of exchanges between two ranks; message sizes far outside their ranges are extrapolated")
	}
	if channel != nil && len(channel.Unbanded) > 0 {
		notes = append(notes, unbandedNote(*channel))
	}
	if channel != nil {
		// The closed forms know neither the share nor the bands.
		share, what := channel.DuplexShare, fmt.Sprintf("the duplex share of %.3g", channel.DuplexShare)
		for _, b := range channel.Bands {
			share = max(share, b.DuplexShare)
		}
		if len(channel.Bands) > 0 {
			what = fmt.Sprintf("duplex shares of up to %.3g by size and bandwidths that differ from beta's", share)
		}
		if share > 0 || len(channel.Bands) > 0 {
			notes = append(notes, fmt.Sprintf("the closed forms take each rank's channel as full duplex at beta; with %s, an algorithm whose ranks send and receive at once (a ring, recursive doubling) takes up to %.3gx its closed form's bandwidth term at a band's bandwidth, which the simulation shows", what, 1+share))
		}
	}
	worst, where := 0.0, ""
	for _, p := range points {
		for _, m := range p.models() {
			if math.Abs(m.err) > worst {
				worst, where = math.Abs(m.err), fmt.Sprintf("the %s network's, %s %s", m.name, p.Algorithm, configs.FormatBytes(p.Bytes))
			}
		}
	}
	if worst > 0.15 {
		notes = append(notes, fmt.Sprintf("the worst simulated time is %.0f%% off (%s): beyond noise, look at the points above for a pattern (small sizes: latency; large: bandwidth or contention)", 100*worst, where))
	}
	return notes
}

// modelTime is one network model's simulated time of a point and its
// error against the real one.
type modelTime struct {
	name      string
	time, err float64
}

// models lists the point's simulated times: the analytic network's and
// the flow network's, both of which a real validation runs and judges
// (--max-error, the worst point, the plots). It judged the analytic
// network's alone: a point the flow network put far off passed, and a
// failure did not say which network was off (3 emulated hosts: analytic
// -24%, flow +1.1%; an audit).
func (p point) models() [2]modelTime {
	return [2]modelTime{{"analytic", p.Simulated, p.SimError}, {"flow", p.Flow, p.FlowError}}
}

func table(streams *cmdutil.IO, o *options, fit cost.HockneyFit, reduceBW float64, channel *channelFit, points []point, notes []string) error {
	w := streams.Out
	order := "each call's iterations one after another, the ping-pong again after the collectives"
	if o.interleave {
		rounds := "rounds"
		if o.iterations == 1 {
			rounds = "round"
		}
		order = fmt.Sprintf("%d %s of every call after %d warm-up", o.iterations, rounds, o.warmup)
	}
	fmt.Fprintf(w, "validate %s on %d real ranks against the fitted machine (timed in %s)\n", o.collective, o.NP, order)
	fmt.Fprintf(w, "fit (ping-pong %s, rank 0 <-> %d): alpha %s, beta %.4g s/B ± %.2g (%s), worst residual %.1f%%",
		o.pingpong, o.NP-1, realcmd.AlphaText(fit), fit.Model.Beta, fit.BetaErr,
		configs.FormatBandwidth(1/fit.Model.Beta), 100*fit.MaxRelResidual)
	if channel != nil {
		fmt.Fprintf(w, "\n%s\n\n", channelText(*channel))
	} else {
		fmt.Fprintf(w, "; reduction %s (measured)\n\n", configs.FormatBandwidth(reduceBW))
	}
	rows := [][]string{{"algorithm", "size", "real median", "real min..max (rank avg)", "analytic", "error", "flow", "error", "closed form", "error"}}
	for _, p := range points {
		cf, cfErr := "-", "-"
		if p.Closed > 0 {
			cf, cfErr = cmdutil.Seconds(p.Closed), fmt.Sprintf("%+.1f%%", 100*p.CFError)
		}
		rows = append(rows, []string{p.Algorithm, configs.FormatBytes(p.Bytes), cmdutil.Seconds(p.Real),
			cmdutil.Seconds(p.RealMin) + ".." + cmdutil.Seconds(p.RealMax), cmdutil.Seconds(p.Simulated), fmt.Sprintf("%+.1f%%", 100*p.SimError),
			cmdutil.Seconds(p.Flow), fmt.Sprintf("%+.1f%%", 100*p.FlowError), cf, cfErr})
	}
	if err := cmdutil.Table(w, rows); err != nil {
		return err
	}
	printNotes(w, notes)
	return nil
}

// check fails when a simulated time is further than maxError from the
// real one.
func check(maxError float64, points []point) error {
	if maxError == 0 {
		return nil
	}
	var bad []string
	for _, p := range points {
		for _, m := range p.models() {
			if math.Abs(m.err) > maxError {
				bad = append(bad, fmt.Sprintf("%s %s on the %s network: %+.1f%%", p.Algorithm, configs.FormatBytes(p.Bytes), m.name, 100*m.err))
			}
		}
	}
	if len(bad) > 0 {
		return &cmdutil.ValidationError{Err: fmt.Errorf("%d points off by more than %s: %s", len(bad), threshold(maxError), strings.Join(bad, "; "))}
	}
	return nil
}

// plot draws time against size (each algorithm's real medians, and its
// simulated times dashed in the same colour) and the relative error of the
// simulation against size.
func plot(o *options, points []point) ([]string, error) {
	if err := os.MkdirAll(o.plotDir, 0o755); err != nil {
		return nil, fmt.Errorf("--plot %s: %w", o.plotDir, err)
	}
	var names []string
	for _, p := range points {
		if !slices.Contains(names, p.Algorithm) {
			names = append(names, p.Algorithm)
		}
	}
	var times, errs []plotutil.Series
	for _, n := range names {
		real := plotutil.Series{Name: n + " real"}
		sims := [2]plotutil.Series{{Name: n + " analytic", Dashed: true, Pair: true}, {Name: n + " flow", Dotted: true, Pair: true}}
		offs := [2]plotutil.Series{{Name: n + " analytic"}, {Name: n + " flow", Dotted: true, Pair: true}}
		for _, p := range points {
			if p.Algorithm == n {
				x := float64(p.Bytes)
				real.X, real.Y = append(real.X, x), append(real.Y, p.Real)
				for i, m := range p.models() {
					sims[i].X, sims[i].Y = append(sims[i].X, x), append(sims[i].Y, m.time)
					offs[i].X, offs[i].Y = append(offs[i].X, x), append(offs[i].Y, 100*m.err)
				}
			}
		}
		times = append(times, real, sims[0], sims[1])
		errs = append(errs, offs[0], offs[1])
	}
	on := fmt.Sprintf("%s on %d real ranks", o.collective, o.NP)
	tp := plotutil.Plot{Title: on + " and simulated on the fitted machine (analytic dashed, flow dotted)", XLabel: "size (bytes)", YLabel: "time (s)", LogY: true, XBytes: true, Lines: times}
	paths, err := tp.Save(o.plotDir, "validate-real")
	if err != nil {
		return nil, err
	}
	ep := plotutil.Plot{Title: on + ": simulated times' error (flow dotted)", XLabel: "size (bytes)", YLabel: "(simulated - real) / real, %", XBytes: true, Lines: errs}
	more, err := ep.Save(o.plotDir, "validate-real-error")
	return append(paths, more...), err
}

// printNotes writes the notes after a blank line, wrapped.
func printNotes(w io.Writer, notes []string) {
	fmt.Fprintln(w)
	for _, n := range notes {
		fmt.Fprintln(w, cmdutil.Wrap("note: "+n, 100, ""))
	}
}

// threshold writes a limit given as a fraction (--max-error,
// --max-fit-spread, --max-drift) as a percentage, to 6 significant digits:
// 0.001 is 0.1%, not 0% (as %.0f had it), and 0.15 is 15%, not
// 15.000000000000002%.
func threshold(maxError float64) string {
	return strconv.FormatFloat(100*maxError, 'g', 6, 64) + "%"
}

// canMakeDir says why dir could not be made (or written in, if it
// exists): its nearest existing ancestor is not a directory, or this
// process cannot write there. It makes nothing.
func canMakeDir(dir string) error {
	at := filepath.Clean(dir)
	for {
		fi, err := os.Stat(at)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", at)
			}
			f, err := os.CreateTemp(at, ".collsim-probe-*")
			if err != nil {
				return fmt.Errorf("cannot write in %s: %w", at, err)
			}
			f.Close()
			return os.Remove(f.Name())
		}
		parent := filepath.Dir(at)
		if parent == at {
			return err
		}
		at = parent
	}
}
