// Package calibrate is `collsim calibrate`: fit a machine to measurements.
package calibrate

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
)

// New returns the calibrate command.
func New(streams *cmdutil.IO) *cobra.Command {
	var latFile, bwFile, out, name, reduceBW string
	var hosts int
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
what-if questions of the config with collsim run.`,
		Example: `  osu_latency > lat.txt; osu_bw > bw.txt
  collsim calibrate --osu-latency lat.txt --osu-bw bw.txt --hosts 128 -o my-cluster.yaml
  collsim run -m my-cluster.yaml -n 128 -s 1MiB`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if latFile == "" {
				return cmdutil.Flagf("--osu-latency is required: the output of osu_latency between two hosts")
			}
			if hosts < 2 {
				return cmdutil.Flagf("--hosts %d: a machine needs at least 2 hosts", hosts)
			}
			if _, err := configs.ParseBandwidth(reduceBW); err != nil {
				return cmdutil.Flagf("--reduce-bandwidth: %v", err)
			}
			lat, err := parse(latFile, cost.OSULatency)
			if err != nil {
				return err
			}
			fit, err := cost.FitHockney(lat.Samples())
			if err != nil {
				return fmt.Errorf("%s: %w", latFile, err)
			}
			bandwidth, source := 1/fit.Model.Beta, "fit of "+latFile
			if bwFile != "" {
				bw, err := parse(bwFile, cost.OSUBandwidth)
				if err != nil {
					return err
				}
				bandwidth, source = 0, "peak of "+bwFile
				for _, p := range bw.Points {
					bandwidth = max(bandwidth, p.Value)
				}
			}
			from := "collsim calibrate from " + latFile
			if bwFile != "" {
				from += " and " + bwFile
			}
			yaml := cmdutil.CrossbarYAML(name, from, hosts, fit.Model.Alpha, bandwidth, reduceBW)
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
					"machine_alpha_s": alpha, "machine_beta_s_per_byte": beta, "config": out,
				})
			}
			rows := [][]string{
				{"samples", fmt.Sprintf("%d sizes from %s", fit.Samples, latFile)},
				{"alpha", fmt.Sprintf("%s ± %s", cmdutil.Seconds(fit.Model.Alpha), cmdutil.Seconds(fit.AlphaErr))},
				{"beta (fitted)", fmt.Sprintf("%s ± %s per MiB = %s", cmdutil.Seconds(fit.Model.Beta*(1<<20)), cmdutil.Seconds(fit.BetaErr*(1<<20)), configs.FormatBandwidth(1/fit.Model.Beta))},
				{"worst residual", fmt.Sprintf("%.2f%% of a measurement", 100*fit.MaxRelResidual)},
				{"bandwidth used", fmt.Sprintf("%s (%s)", configs.FormatBandwidth(bandwidth), source)},
				{"machine", fmt.Sprintf("%d hosts on one switch: alpha %s, beta %s per MiB host to host", hosts, cmdutil.Seconds(alpha), cmdutil.Seconds(beta*(1<<20)))},
			}
			if out != "" {
				rows = append(rows, []string{"written", out})
			}
			if err := cmdutil.Table(streams.Out, rows); err != nil {
				return err
			}
			if out == "" {
				_, err = fmt.Fprintf(streams.Out, "\n%s", yaml)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&latFile, "osu-latency", "", "osu_latency output (one-way latency per size)")
	f.StringVar(&bwFile, "osu-bw", "", "osu_bw output; its peak sets the link bandwidth")
	f.IntVar(&hosts, "hosts", 64, "hosts of the machine to write")
	f.StringVar(&name, "name", "calibrated", "name of the machine")
	f.StringVar(&reduceBW, "reduce-bandwidth", "10GB/s", "local reduction speed (OSU point-to-point files do not measure it)")
	f.StringVarP(&out, "output", "o", "", "write the machine config here (default: print it)")
	f.BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func parse(file string, want cost.OSUKind) (*cost.OSUResult, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := cost.ParseOSU(file, f)
	if err != nil {
		return nil, err
	}
	if res.Kind != want {
		kinds := map[cost.OSUKind]string{cost.OSULatency: "latencies", cost.OSUBandwidth: "bandwidths"}
		return nil, fmt.Errorf("%s holds %s (%q) where %s were expected: is it the right file?", file, kinds[res.Kind], res.Column, kinds[want])
	}
	return res, nil
}
