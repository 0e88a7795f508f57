package realcmd

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

// PRTT measurement (--prtt): Netgauge's LogGP benchmark over collsim's own
// TCP mesh, between rank 0 (the client) and --pingpong-peer (the server).
// It runs in two launches: PRTT(1,0,s) and PRTT(n,0,s) first, then
// PRTT(n,d,s) with d = the first launch's median PRTT(1,0,s), as Netgauge
// takes it. The ranks of the second launch learn d from --prtt-delays.

// prttKey says what one PRTT job measures.
type prttKey struct {
	bytes  int64
	n      int
	spaced bool
}

// prttJobs are the jobs of one PRTT launch: without delays the first
// (PRTT(1,0,s), PRTT(n,0,s) per size), with them the second.
func prttJobs(o *options, ranks int) ([]realrun.Job, []prttKey, error) {
	sizes, err := cmdutil.Sizes(o.prtt)
	if err != nil {
		return nil, nil, &cmdutil.FlagError{Err: fmt.Errorf("--prtt: %w", err)}
	}
	if o.prttN < 2 {
		return nil, nil, cmdutil.Flagf("--prtt-n %d: a burst needs at least 2 messages (Netgauge uses 10)", o.prttN)
	}
	if ranks < 2 {
		return nil, nil, cmdutil.Flagf("--prtt needs 2 ranks or more: a client and a server")
	}
	delays, err := parseDelays(o.prttDelays)
	if err != nil {
		return nil, nil, err
	}
	peer := o.peer
	if peer < 0 {
		peer = ranks - 1
	}
	var jobs []realrun.Job
	var keys []prttKey
	add := func(k prttKey, d sim.Time) error {
		s, err := collectives.PRTT(ranks, 0, peer, k.n, d, k.bytes)
		if err != nil {
			return &cmdutil.FlagError{Err: fmt.Errorf("--prtt: %w", err)}
		}
		jobs, keys = append(jobs, realrun.Job{Name: s.Name, Bytes: k.bytes, Schedule: s}), append(keys, k)
		return nil
	}
	for _, b := range sizes {
		if b < 1 {
			return nil, nil, cmdutil.Flagf("--prtt: sizes start at 1 byte (LogGP's G is per byte after the first)")
		}
		var err error
		if delays == nil {
			if err = add(prttKey{bytes: b, n: 1}, 0); err == nil {
				err = add(prttKey{bytes: b, n: o.prttN}, 0)
			}
		} else if d, ok := delays[b]; !ok {
			err = cmdutil.Flagf("--prtt-delays has no delay for %d bytes", b)
		} else {
			err = add(prttKey{bytes: b, n: o.prttN, spaced: true}, d)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return jobs, keys, nil
}

// parseDelays reads --prtt-delays, "bytes:picoseconds,...".
func parseDelays(v string) (map[int64]sim.Time, error) {
	if v == "" {
		return nil, nil
	}
	out := map[int64]sim.Time{}
	for _, item := range strings.Split(v, ",") {
		b, d, ok := strings.Cut(item, ":")
		bytes, err1 := strconv.ParseInt(b, 10, 64)
		ps, err2 := strconv.ParseInt(d, 10, 64)
		if !ok || err1 != nil || err2 != nil || ps < 0 {
			return nil, cmdutil.Flagf("--prtt-delays %q: want bytes:picoseconds pairs", item)
		}
		out[bytes] = sim.Time(ps)
	}
	return out, nil
}

// formatDelays writes --prtt-delays for the second launch.
func formatDelays(d map[int64]sim.Time) string {
	var items []string
	for b, t := range d {
		items = append(items, fmt.Sprintf("%d:%d", b, int64(t)))
	}
	slices.Sort(items)
	return strings.Join(items, ",")
}

// clientMedians returns the client's (rank 0's) median time of each job.
func clientMedians(reports []realrun.Report) []float64 {
	var out []float64
	for _, s := range realrun.Summarize(reports[:min(1, len(reports))]) {
		out = append(out, s.Median.Seconds())
	}
	return out
}

// runPRTT launches both phases and reports the series and their LogGP fit.
func runPRTT(cmd *cobra.Command, w, stderr io.Writer, o *options) error {
	if o.NP < 2 {
		return cmdutil.Flagf("--prtt runs in two launches of collsim's own: give --np (2 or more), with --netns for an emulated cluster")
	}
	_, keys, err := prttJobs(o, o.NP)
	if err != nil {
		return err
	}
	o.Timeout = o.timeout
	first, err := o.Launch(ChildArgs(cmd, "real", "prtt-out"), stderr)
	if err != nil {
		return err
	}
	series := cost.PRTT{N: o.prttN, D: map[int64]float64{}, One: map[int64][]float64{}, Burst: map[int64][]float64{}, Spaced: map[int64][]float64{}}
	delays := map[int64]sim.Time{}
	for i, t := range clientMedians(first) {
		k := keys[i]
		if k.n == 1 {
			series.One[k.bytes], series.D[k.bytes] = []float64{t}, t
			delays[k.bytes] = sim.FromSeconds(t)
		} else {
			series.Burst[k.bytes] = []float64{t}
		}
	}
	o.prttDelays = formatDelays(delays)
	second, err := o.Launch(append(ChildArgs(cmd, "real", "prtt-out", "prtt-delays"), "--prtt-delays="+o.prttDelays), stderr)
	if err != nil {
		return err
	}
	_, spacedKeys, _ := prttJobs(o, o.NP)
	for i, t := range clientMedians(second) {
		series.Spaced[spacedKeys[i].bytes] = []float64{t}
	}
	fit, fitErr := cost.FitLogGP(series)
	var model cost.LogGP
	if fitErr == nil {
		model = fit.Model
	}
	if o.prttOut != "" {
		f, err := os.Create(o.prttOut)
		if err != nil {
			return err
		}
		if err := cost.WriteNetgauge(f, series, model); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	sizes := make([]int64, 0, len(series.One))
	for s := range series.One {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	if o.json {
		type row struct {
			Bytes  int64   `json:"bytes"`
			One    float64 `json:"prtt_1_0_s"`
			Burst  float64 `json:"prtt_n_0_s"`
			Spaced float64 `json:"prtt_n_d_s"`
		}
		out := struct {
			N      int     `json:"n"`
			Series []row   `json:"series"`
			L      float64 `json:"L_s,omitempty"`
			O      float64 `json:"o_s,omitempty"`
			Gap    float64 `json:"g_s,omitempty"`
			G      float64 `json:"G_s_per_byte,omitempty"`
			FitErr string  `json:"fit_error,omitempty"`
		}{N: o.prttN, L: model.L, O: model.O, Gap: model.Gap, G: model.G}
		for _, b := range sizes {
			out.Series = append(out.Series, row{b, series.One[b][0], series.Burst[b][0], series.Spaced[b][0]})
		}
		if fitErr != nil {
			out.FitErr = fitErr.Error()
		}
		return cmdutil.JSON(w, out)
	}
	fmt.Fprintf(w, "PRTT between rank 0 and rank %d, n = %d, medians of %d timed iterations (d = PRTT(1,0,s))\n", max(o.peer, o.NP-1), o.prttN, o.iterations)
	rows := [][]string{{"size", "PRTT(1,0,s)", "PRTT(n,0,s)", "PRTT(n,d,s)"}}
	for _, s := range sizes {
		rows = append(rows, []string{configs.FormatBytes(s), cmdutil.Seconds(series.One[s][0]), cmdutil.Seconds(series.Burst[s][0]), cmdutil.Seconds(series.Spaced[s][0])})
	}
	if err := cmdutil.Table(w, rows); err != nil {
		return err
	}
	if fitErr != nil {
		// The measurement stands; only the model does not describe it.
		fmt.Fprintf(w, "LogGP fit: %v\n", fitErr)
	} else {
		fmt.Fprintf(w, "LogGP fit: L = %s, o = %s (per-size spread %s), g = %s, G = %s per MiB (%s)\n", cmdutil.Seconds(model.L), cmdutil.Seconds(model.O),
			cmdutil.Seconds(fit.OSpread), cmdutil.Seconds(model.Gap), cmdutil.Seconds(model.G*(1<<20)), configs.FormatBandwidth(1/model.G))
	}
	switch {
	case o.prttOut != "" && fitErr != nil:
		// calibrate fits the same model and would refuse the file (a new
		// user's trial: the line below suggested it anyway).
		fmt.Fprintf(w, "series written to %s (Netgauge's loggp format; its times do not fit LogGP, so collsim calibrate --prtt would refuse it too: measure again on a quieter machine or with more --iterations)\n", o.prttOut)
	case o.prttOut != "":
		fmt.Fprintf(w, "series written to %s (Netgauge's loggp format; collsim calibrate --prtt %s writes a machine)\n", o.prttOut, o.prttOut)
	}
	return nil
}
