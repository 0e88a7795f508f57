// Package calibrate is `collsim calibrate`: fit a machine to measurements.
package calibrate

import (
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/topology"
)

// New returns the calibrate command.
func New(streams *cmdutil.IO) *cobra.Command {
	var latFile, bwFile, out, name, reduceBW, ncclFile, collFile, coll, algo, prttFile string
	var hosts, ranks int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Fit alpha and beta to OSU micro-benchmark output and write a machine config",
		Long: `calibrate fits the Hockney model t(n) = alpha + beta*n to osu_latency's
one-way latencies by least squares (weighted by 1/t^2, so that small and large
messages count alike), reports each parameter with its standard error, and
writes a single-switch machine config with those parameters: link latency
alpha/2 each way and link bandwidth 1/beta. With --osu-bw, the bandwidth is
osu_bw's peak instead (a streaming figure, usually the better estimate of
beta), and the fitted one is shown beside it. Measure a cluster once; then ask
what-if questions of the config with collsim run.

From a collective's times instead (--nccl for nccl-tests output such as
all_reduce_perf's, --osu-collective for osu_allreduce and friends), calibrate
fits alpha and beta through the closed form of the algorithm that ran
(-c, -a; it must be exact on those ranks): the form is linear in alpha, beta
and gamma, so a line through the times gives alpha and beta once gamma is
taken from --reduce-bandwidth (one collective cannot tell moving a byte from
reducing it).

From a LogGP measurement (--prtt: Netgauge's "ng -x loggp" output, or what
collsim real --prtt writes), calibrate fits LogGP's L, o, g and G by the PRTT
method of Hoefler, Lichei and Rehm (2007) and writes a machine whose hosts
charge o per send and per receive and g between messages (host.overhead,
host.gap), with host-to-host latency L and bandwidth 1/G.`,
		Example: `  osu_latency > lat.txt; osu_bw > bw.txt
  collsim calibrate --osu-latency lat.txt --osu-bw bw.txt --hosts 128 -o my-cluster.yaml
  collsim run -m my-cluster.yaml -n 128 -s 1MiB
  all_reduce_perf -b 8 -e 1G -f 2 > ar.txt   # NCCL_ALGO=Ring, under mpirun
  collsim calibrate --nccl ar.txt -c allreduce -a ring --reduce-bandwidth 500GB/s
  ng -x loggp -o loggp.out ...   # or: collsim real --np 2 --prtt 1..1MiB --prtt-out loggp.out
  collsim calibrate --prtt loggp.out -o my-cluster.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sources := 0
			for _, f := range []string{latFile, ncclFile, collFile, prttFile} {
				if f != "" {
					sources++
				}
			}
			if sources > 1 {
				// It said "give one of", which reads as none given.
				return cmdutil.Flagf("%d logs given: calibrate fits one at a time; give one of --osu-latency, --nccl, --osu-collective or --prtt", sources)
			}
			if sources != 1 {
				return cmdutil.Flagf("give one of --osu-latency (osu_latency between two hosts), --nccl (nccl-tests output), --osu-collective (osu_allreduce and friends) or --prtt (a LogGP measurement)")
			}
			if latFile != "" || prttFile != "" {
				// Point-to-point measurements: no collective was fitted.
				if err := cmdutil.NotApplicable(cmd.Flags(), "they name the collective a log of --nccl or --osu-collective timed; --osu-latency and --prtt time messages between two hosts", "collective", "algo", "ranks"); err != nil {
					return err
				}
			}
			if hosts < 2 || hosts > topology.MaxHosts {
				return cmdutil.Flagf("--hosts %d: give 2..%d hosts", hosts, topology.MaxHosts)
			}
			if prttFile != "" {
				return calibrateLogGP(streams, prttFile, name, out, hosts, reduceBW, asJSON)
			}
			reduceRate, err := configs.ParseBandwidth(reduceBW)
			if err != nil {
				return cmdutil.Flagf("--reduce-bandwidth: %v", err)
			}
			var fit cost.HockneyFit
			what, warnBW := latFile, ""
			// The machine written charges a handshake above its eager limit
			// only where the fit priced one: else the times' own protocol
			// costs, if any, are in alpha and beta already.
			eager, eagerWhy := "none", "the closed form fitted charges no handshake: what the times' protocol costs is in alpha and beta"
			switch {
			case latFile != "":
				lat, err := parse(latFile, cost.OSULatency)
				if err != nil {
					return err
				}
				if err := pointToPoint(latFile, lat, "latency"); err != nil {
					return err
				}
				// A handshake is the request's and the reply's latency: 2
				// alpha on the one-switch machine written here.
				ef, err := cost.FitHockneyEager(lat.Samples(), 2)
				if err != nil {
					return fmt.Errorf("%s: %w", latFile, err)
				}
				fit = ef.HockneyFit
				eager, eagerWhy = "none", "the times show no jump of a handshake (2 alpha): the line holds every size"
				if !math.IsInf(ef.EagerLimit, 1) {
					eager = configs.FormatBytes(int64(ef.EagerLimit))
					eagerWhy = "the times jump by a handshake (2 alpha) above it"
				}
			default:
				if fit, what, err = fitCollective(ncclFile, collFile, coll, algo, ranks, 1/reduceRate); err != nil {
					return err
				}
			}
			bandwidth, source := 1/fit.Model.Beta, "fit of "+what
			if bwFile != "" {
				bw, err := parse(bwFile, cost.OSUBandwidth)
				if err != nil {
					return err
				}
				if err := pointToPoint(bwFile, bw, "bw"); err != nil {
					return err
				}
				bandwidth, source = 0, "peak of "+bwFile
				peak := 0
				for i, p := range bw.Points {
					if p.Value > bandwidth {
						bandwidth, peak = p.Value, i
					}
				}
				if spike := spikeOver(bw.Points, peak); spike > 0 {
					warnBW = fmt.Sprintf("the peak, %s at %s (%s:%d), is %.1fx its neighbours: one bad row? the machine uses it", configs.FormatBandwidth(bandwidth), configs.FormatBytes(bw.Points[peak].Bytes), bwFile, bw.Points[peak].Line, spike)
				}
			}
			from := "collsim calibrate from " + what
			if bwFile != "" {
				from += " and " + bwFile
			}
			if !finitePositive(fit.Model.Alpha, true) || !finitePositive(bandwidth, false) {
				// Absurd figures (1e300 us) overflowed the fit's weights,
				// and the NaN reached the config as an internal error
				// (an audit).
				return fmt.Errorf("%s: the fit gives alpha %g s and %g bytes/s, which no machine can have: are these one run's times, in the log's units?", what, fit.Model.Alpha, bandwidth)
			}
			yaml := cmdutil.CrossbarYAML(name, from, hosts, fit.Model.Alpha, bandwidth, reduceBW, eager)
			// The config must load and describe the machine that was fitted.
			m, err := configs.Parse(name+".yaml", yaml)
			if err != nil {
				return fmt.Errorf("internal error: the written config does not load: %w", err)
			}
			if out != "" {
				if err := os.WriteFile(out, yaml, 0o644); err != nil {
					return err
				}
			}
			alpha, beta := m.PathParams(0, 1)
			if asJSON {
				return cmdutil.JSON(streams.Out, map[string]any{
					"alpha_s": fit.Model.Alpha, "alpha_stderr_s": fit.AlphaErr,
					"beta_s_per_byte": fit.Model.Beta, "beta_stderr_s_per_byte": fit.BetaErr,
					"max_rel_residual": fit.MaxRelResidual, "samples": fit.Samples,
					"bandwidth_bytes_per_s": bandwidth, "bandwidth_source": source,
					"machine_alpha_s": alpha, "machine_beta_s_per_byte": beta, "config": out, "config_yaml": string(yaml),
					"eager_limit": eager, "eager_limit_source": eagerWhy, "bandwidth_warning": warnBW,
				})
			}
			rows := [][]string{
				{"samples", fmt.Sprintf("%d sizes from %s", fit.Samples, what)},
				{"alpha", fmt.Sprintf("%s ± %s", cmdutil.Seconds(fit.Model.Alpha), spread(fit.AlphaErr, 1))},
				{"beta (fitted)", fmt.Sprintf("%s ± %s per MiB = %s", cmdutil.Seconds(fit.Model.Beta*(1<<20)), spread(fit.BetaErr, 1<<20), configs.FormatBandwidth(1/fit.Model.Beta))},
				{"worst residual", fmt.Sprintf("%.2f%% of a measurement", 100*fit.MaxRelResidual)},
				{"bandwidth used", fmt.Sprintf("%s (%s)", configs.FormatBandwidth(bandwidth), source)},
				{"eager limit", fmt.Sprintf("%s (%s)", eager, eagerWhy)},
				{"machine", fmt.Sprintf("%d hosts on one switch: alpha %s, beta %s per MiB host to host", hosts, cmdutil.Seconds(alpha), cmdutil.Seconds(beta*(1<<20)))},
			}
			if warnBW != "" {
				rows = append(rows, []string{"(!) bandwidth", warnBW})
			}
			if fit.MaxRelResidual > poorFit {
				rows = append(rows, []string{"(!) poor fit", fmt.Sprintf("a measurement is %.0f%% off the fitted times: they do not follow alpha + beta n (with at most one jump of a handshake); check the file, or fit the sizes that do", 100*fit.MaxRelResidual)})
			}
			return printMachine(streams, rows, out, yaml)
		},
	}
	f := cmd.Flags()
	f.StringVar(&latFile, "osu-latency", "", "osu_latency output (one-way latency per size)")
	f.StringVar(&bwFile, "osu-bw", "", "osu_bw output; its peak sets the link bandwidth")
	f.IntVar(&hosts, "hosts", 64, "hosts of the machine to write")
	f.StringVar(&name, "name", "calibrated", "name of the machine")
	f.StringVar(&reduceBW, "reduce-bandwidth", "10GB/s", "local reduction speed (OSU point-to-point files do not measure it)")
	f.StringVarP(&out, "output", "o", "", "write the machine config here (default: print it)")
	f.StringVar(&ncclFile, "nccl", "", "nccl-tests output (all_reduce_perf, ...): fit alpha and beta through the closed form of -c/-a")
	f.StringVar(&collFile, "osu-collective", "", "osu_allreduce (or another OSU collective) output: fit through the closed form of -c/-a on --ranks (the sizes of osu_allgather, osu_alltoall, osu_gather and osu_scatter, a rank's block, are multiplied by the ranks)")
	f.StringVarP(&coll, "collective", "c", "allreduce", "with --nccl or --osu-collective: the collective measured")
	f.StringVarP(&algo, "algo", "a", "ring", "with --nccl or --osu-collective: the algorithm that ran (its closed form must be exact on those ranks)")
	f.IntVar(&ranks, "ranks", 0, "with --osu-collective: the ranks it ran on (nccl-tests output lists them)")
	f.StringVar(&prttFile, "prtt", "", "a LogGP measurement (Netgauge's loggp output, or collsim real --prtt-out): fit L, o, g and G")
	f.BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// calibrateLogGP fits LogGP to the PRTT series in file and writes the
// machine.
func calibrateLogGP(streams *cmdutil.IO, file, name, out string, hosts int, reduceBW string, asJSON bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	series, err := cost.ParseNetgauge(file, configs.Bounded(f, configs.MaxLogBytes, "a Netgauge log"))
	if err != nil {
		return err
	}
	fit, err := cost.FitLogGP(series)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	p := fit.Model
	// No eager limit: LogGP prices no handshake, so what the times'
	// protocol costs is in L, o, g and G already (with one, the machine
	// charged it twice above the limit: 12% over its own PRTT at 72 KiB).
	const eager, eagerWhy = "none", "LogGP prices no handshake: what the times' protocol costs is in L, o, g and G"
	if !finitePositive(p.L, true) || !finitePositive(p.O, true) || !finitePositive(p.Gap, true) || !finitePositive(p.G, false) {
		return fmt.Errorf("%s: the fit gives L %g s, o %g s, g %g s and G %g s/B, which no machine can have: are these one run's times?", file, p.L, p.O, p.Gap, p.G)
	}
	yaml := cmdutil.CrossbarLogGPYAML(name, "collsim calibrate from "+file, hosts, p.L, p.O, p.Gap, 1/p.G, reduceBW, eager)
	if _, err := configs.Parse(name+".yaml", yaml); err != nil {
		return fmt.Errorf("internal error: the written config does not load: %w", err)
	}
	if out != "" {
		if err := os.WriteFile(out, yaml, 0o644); err != nil {
			return err
		}
	}
	if asJSON {
		return cmdutil.JSON(streams.Out, map[string]any{
			"L_s": p.L, "o_s": p.O, "g_s": p.Gap, "G_s_per_byte": p.G, "o_spread_s": fit.OSpread,
			"gap_fit_max_rel_residual": fit.GapFit.MaxRelResidual, "gap_sizes": fit.GapSizes, "sizes": len(series.One), "n": series.N, "config": out, "config_yaml": string(yaml),
			"eager_limit": eager, "eager_limit_source": eagerWhy,
		})
	}
	rows := [][]string{
		{"samples", fmt.Sprintf("%d sizes, bursts of n = %d, from %s", len(series.One), series.N, file)},
		{"L", cmdutil.Seconds(p.L)},
		{"o", fmt.Sprintf("%s (per-size estimates spread over %s)", cmdutil.Seconds(p.O), cmdutil.Seconds(fit.OSpread))},
		{"g", gapRow(fit, len(series.One))},
		{"G", fmt.Sprintf("%s per MiB = %s (worst residual of g + (s-1)G: %.2f%%)", cmdutil.Seconds(p.G*(1<<20)), configs.FormatBandwidth(1/p.G), 100*fit.GapFit.MaxRelResidual)},
		{"eager limit", fmt.Sprintf("%s (%s)", eager, eagerWhy)},
		{"machine", fmt.Sprintf("%d hosts on one switch: latency L, bandwidth 1/G, host overhead o and gap g", hosts)},
	}
	return printMachine(streams, rows, out, yaml)
}

// gapRow says g and which sizes measured it: only those whose bursts
// were paced by g + (s-1)G rather than by o (cost.PRTT).
func gapRow(fit cost.LogGPFit, sizes int) string {
	g := cmdutil.Seconds(fit.Model.Gap)
	switch fit.GapSizes {
	case sizes:
		return fmt.Sprintf("%s ± %s", g, cmdutil.Seconds(fit.GapFit.AlphaErr))
	case 0:
		return fmt.Sprintf("%s: o, for no size's bursts were paced by more than o (g may be anything up to o); G from the round trips", g)
	case 1:
		return fmt.Sprintf("%s, from the one size whose bursts were paced by more than o, with G from the round trips", g)
	}
	return fmt.Sprintf("%s ± %s, from the %d sizes of %d whose bursts were paced by more than o", g, cmdutil.Seconds(fit.GapFit.AlphaErr), fit.GapSizes, sizes)
}

// printMachine prints the fit's table and, unless it was written to out,
// the machine config.
func printMachine(streams *cmdutil.IO, rows [][]string, out string, yaml []byte) error {
	if out != "" {
		rows = append(rows, []string{"written", out})
	}
	if err := cmdutil.Table(streams.Out, rows); err != nil {
		return err
	}
	if out == "" {
		_, err := fmt.Fprintf(streams.Out, "\n%s", yaml)
		return err
	}
	return nil
}

// spikeOver returns how many times the bandwidth of points[i] is that of
// the larger of its neighbours when more than twice it, else 0: osu_bw's
// figures rise to a plateau, and a lone row far above both neighbours is
// more likely a bad row than the link's peak.
func spikeOver(points []cost.OSUPoint, i int) float64 {
	near := 0.0
	for _, j := range []int{i - 1, i + 1} {
		if j >= 0 && j < len(points) {
			near = max(near, points[j].Value)
		}
	}
	if near > 0 && points[i].Value > 2*near {
		return points[i].Value / near
	}
	return 0
}

// pointToPoint refuses a file whose title names another program than
// osu_<want>: a collective's times fitted as a ping-pong's, or osu_bibw's
// bandwidth, which counts both directions, taken for one link's.
func pointToPoint(file string, res *cost.OSUResult, want string) error {
	switch b := res.Benchmark; {
	case res.Title == "" || b == want:
		return nil
	case b == "bibw":
		return fmt.Errorf("%s is osu_bibw's output, whose bandwidth counts both directions; give osu_bw's", file)
	case slices.Contains(collectives.Collectives, collectives.Collective(b)):
		return fmt.Errorf("%s is osu_%s's output, a collective's times; give it with --osu-collective %s -c %s --ranks N (and -a, the algorithm that ran)", file, b, file, b)
	}
	return fmt.Errorf("%s: its title says %q; give osu_%s's output", file, res.Title, want)
}

func parse(file string, want cost.OSUKind) (*cost.OSUResult, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := cost.ParseOSU(file, configs.Bounded(f, configs.MaxLogBytes, "an OSU log"))
	if err != nil {
		return nil, err
	}
	if res.Kind != want {
		kinds := map[cost.OSUKind]string{cost.OSULatency: "latencies", cost.OSUBandwidth: "bandwidths"}
		return nil, fmt.Errorf("%s holds %s (%q) where %s were expected: is it the right file?", file, kinds[res.Kind], res.Column, kinds[want])
	}
	return res, nil
}

// fitCollective fits alpha and beta to a collective's times from an
// nccl-tests or OSU file through algo's closed form, with gamma given.
func fitCollective(ncclFile, osuFile, coll, algo string, ranks int, gamma float64) (cost.HockneyFit, string, error) {
	a, err := collectives.Lookup(collectives.Collective(coll), algo)
	if err != nil {
		return cost.HockneyFit{}, "", &cmdutil.FlagError{Err: err}
	}
	var samples []cost.Sample
	file := ncclFile
	if ncclFile != "" {
		f, err := os.Open(ncclFile)
		if err != nil {
			return cost.HockneyFit{}, "", err
		}
		defer f.Close()
		res, err := cost.ParseNCCLTests(ncclFile, configs.Bounded(f, configs.MaxLogBytes, "an nccl-tests log"))
		if err != nil {
			return cost.HockneyFit{}, "", err
		}
		switch {
		case ranks == 0:
			ranks = res.Ranks
		case res.Ranks > 0 && ranks != res.Ranks:
			// (It fitted the log as if it had run on --ranks: a wrong
			// alpha and beta, without a word.)
			return cost.HockneyFit{}, "", cmdutil.Flagf("--ranks %d: %s ran on %d ranks; leave --ranks out, the log says", ranks, ncclFile, res.Ranks)
		}
		if c, ok := res.Collective(); ok && string(c) != coll {
			// (It fitted all_reduce_perf's times through a bcast's form.)
			return cost.HockneyFit{}, "", cmdutil.Flagf("-c %s: %s:%d is %s's output, times of %s; give -c %s", coll, ncclFile, res.TestLine, res.Test, c, c)
		}
		if !res.Fits(collectives.Collective(coll)) {
			// A log without its test line was fitted through any -c (a
			// new user's trial: a bcast's rows as an allreduce's gave 999.9
			// GB/s); its rows' redop and root still tell.
			root := fmt.Sprint(res.Root)
			if res.Root == cost.RootUnknown {
				root = "none printed"
			}
			return cost.HockneyFit{}, "", cmdutil.Flagf("-c %s: %s:%d's rows (redop %s, root %s) are not %s's: nccl-tests prints a reduction for allreduce, reduce and reduce_scatter (none for the others) and a root for broadcast, reduce, gather and scatter (-1 for the others); give the -c of the test that wrote it", coll, ncclFile, res.RowLine, res.Redop, root, coll)
		}
		samples = res.Samples()
	} else {
		file = osuFile
		res, err := parse(osuFile, cost.OSULatency)
		if err != nil {
			return cost.HockneyFit{}, "", err
		}
		switch b := res.Benchmark; {
		case b == "latency":
			return cost.HockneyFit{}, "", fmt.Errorf("%s is osu_latency's output, a ping-pong's times; give it with --osu-latency", osuFile)
		case b == "" && res.Title != "":
			return cost.HockneyFit{}, "", fmt.Errorf("%s: its title says %q, not a collective that calibrate fits; give the output of osu_allreduce, osu_bcast, osu_allgather, osu_alltoall, osu_reduce, osu_reduce_scatter, osu_gather or osu_scatter", osuFile, res.Title)
		case b != "" && b != coll:
			// (It fitted osu_allreduce's times through a bcast's form.)
			return cost.HockneyFit{}, "", cmdutil.Flagf("-c %s: %s is osu_%s's output; give -c %s", coll, osuFile, b, b)
		}
		samples = res.Samples()
	}
	if ranks == 1 {
		// It asked "on how many ranks did it run?" of a --ranks 1.
		return cost.HockneyFit{}, "", cmdutil.Flagf("--ranks 1: a collective on one rank moves nothing to fit; give the ranks %s ran on (at least 2)", file)
	}
	if ranks < 2 {
		return cost.HockneyFit{}, "", cmdutil.Flagf("%s: on how many ranks did it run? give --ranks (at least 2)", file)
	}
	sizes := ""
	if osuFile != "" && cost.OSUCountsABlock(a.Collective) {
		// OSU's size is a rank's block; the form's is the whole call's.
		for i := range samples {
			samples[i].Bytes *= float64(ranks)
		}
		sizes = fmt.Sprintf("; OSU's sizes, a rank's block, times %d ranks", ranks)
	}
	fit, err := cost.FitCollective(a, ranks, gamma, samples)
	if err != nil {
		return cost.HockneyFit{}, "", fmt.Errorf("%s: %w", file, err)
	}
	return cost.HockneyFit{Model: fit.Model, AlphaErr: fit.AlphaErr, BetaErr: fit.BetaErr, MaxRelResidual: fit.MaxRelResidual, Samples: fit.Samples},
		fmt.Sprintf("%s (%s on %d ranks%s)", file, a.ID(), ranks, sizes), nil
}

// poorFit is the worst residual above which calibrate warns that the
// times do not follow the model it fitted.
const poorFit = 0.1

// spread writes a standard error (times scale), or says it is unknown:
// two sizes fit exactly and leave no residual to judge it by.
func spread(err, scale float64) string {
	if math.IsNaN(err) {
		return "unknown (two sizes fit exactly)"
	}
	return cmdutil.Seconds(err * scale)
}

// finitePositive reports whether x is a finite figure above 0 (or at 0
// where zero is allowed).
func finitePositive(x float64, zero bool) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && (x > 0 || zero && x == 0)
}
