package workload

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/workloads/redist"
)

type redistFlags struct {
	machineFlags
	size, from, to, schedule, messages, copyRate, elem string
	ranks                                              int
}

func newRedistribute(streams *cmdutil.IO) *cobra.Command {
	o := &redistFlags{}
	cmd := &cobra.Command{
		Use:   "redistribute",
		Short: "Simulate redistributing a tiled matrix from one distribution to another",
		Long: `Simulate moving an M x N matrix from one tiled distribution (--from) to
another (--to), as PaRSEC and ScaLAPACK's PxGEMR2D do. A layout is
GRID/TILE: a P x Q process grid dealing MB x NB tiles block-cyclically
(ranks row-major on the grid), e.g. 4x4/256 or 2x8/512x128; or FILE/TILE, an
irregular map: one line per tile row, the owning rank of each tile.

Schedules: scalapack (PxGEMR2D's steps: pairwise exchanges, blocking, every
message packed), caterpillar (every receive posted, each rank sending to
r+1, r+2, ... as soon as a message is ready), naive (the same, but every rank
sending to ranks 0, 1, 2, ... in turn). --messages tile sends one message per
tile piece, in place where it is contiguous, instead of one per rank pair.

Prints, for each schedule (default: all), the time, the one-port lower bound
(the most bytes any rank must send or receive, each message at its path's
bandwidth, plus a latency) and their ratio. The network defaults to flow:
contention is what the schedules differ in.`,
		Example: `  collsim workload redistribute --size 8192 --from 4x4/256 --to 8x2/512
  collsim workload redistribute --size 20000x5000 --from 2x8/100 --to owners.txt/500 --schedule caterpillar --messages tile -m fattree-1024`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams) },
	}
	f := cmd.Flags()
	o.machineFlags.register(f, "small", collsim.Flow)
	f.StringVar(&o.size, "size", "8192", "the matrix: N (N x N) or MxN elements")
	f.StringVar(&o.elem, "elem", "8", "bytes per element")
	f.StringVar(&o.from, "from", "4x4/256", "the source layout: PxQ/MB[xNB] (block-cyclic) or FILE/MB[xNB] (a tile-to-owner map)")
	f.StringVar(&o.to, "to", "8x2/512", "the target layout, as --from")
	f.IntVarP(&o.ranks, "ranks", "n", 0, "ranks taking part (default: the larger grid's)")
	f.StringVar(&o.schedule, "schedule", "all", "scalapack, caterpillar, naive, or all")
	f.StringVar(&o.messages, "messages", "", "pair (one packed message per rank pair) or tile (one per tile piece); default: both where the schedule allows")
	f.StringVar(&o.copyRate, "copy-rate", "10GB/s", "the rate a rank packs, unpacks and copies at")
	return cmd
}

// parseLayout reads GRID/TILE.
func parseLayout(flag, spec string) (redist.Layout, error) {
	var l redist.Layout
	grid, tile, ok := strings.Cut(spec, "/")
	if i := strings.LastIndex(spec, "/"); i >= 0 {
		grid, tile, ok = spec[:i], spec[i+1:], true
	}
	if !ok || grid == "" || tile == "" {
		return l, cmdutil.Flagf("--%s %q: give GRID/TILE, e.g. 4x4/256 (a 4x4 grid of 256x256 tiles) or owners.txt/128x64", flag, spec)
	}
	mb, nb, err := pair(tile)
	if err != nil {
		return l, cmdutil.Flagf("--%s %q: tile %q: %v", flag, spec, tile, err)
	}
	l.MB, l.NB = mb, nb
	if p, q, err := pair(grid); err == nil && strings.Contains(grid, "x") {
		l.P, l.Q = p, q
		return l, nil
	}
	if _, err := os.Stat(grid); err != nil {
		return l, cmdutil.Flagf("--%s %q: %q is neither a grid PxQ nor a readable map file: %v", flag, spec, grid, err)
	}
	// A map file's faults are bad input (exit 1), as a config's are.
	data, err := configs.ReadFile(grid, configs.MaxTraceBytes, "a tile map")
	if err != nil {
		return l, fmt.Errorf("--%s: %w", flag, err)
	}
	owners, _, _, err := redist.ParseMap(grid, data)
	if err != nil {
		return l, err
	}
	l.Owners, l.Name = owners, grid
	return l, nil
}

// pair reads N or AxB as two positive counts (N: N and N).
func pair(s string) (int, int, error) {
	a, b, two := strings.Cut(s, "x")
	x, err := strconv.Atoi(a)
	y := x
	if err == nil && two {
		y, err = strconv.Atoi(b)
	}
	if err != nil || x < 1 || y < 1 {
		return 0, 0, fmt.Errorf("give N or AxB, positive whole numbers")
	}
	return x, y, nil
}

func (o *redistFlags) jobs(cmd *cobra.Command) ([]redist.Job, error) {
	m, n, err := pair(o.size)
	if err != nil {
		return nil, cmdutil.Flagf("--size %q: %v", o.size, err)
	}
	elem, err := configs.ParseSize(o.elem)
	if err != nil || elem < 1 {
		return nil, cmdutil.Flagf("--elem %q: bytes per element, at least 1", o.elem)
	}
	rate, err := configs.ParseBandwidth(o.copyRate)
	if err != nil {
		return nil, cmdutil.Flagf("--copy-rate: %v", err)
	}
	from, err := parseLayout("from", o.from)
	if err != nil {
		return nil, err
	}
	to, err := parseLayout("to", o.to)
	if err != nil {
		return nil, err
	}
	if o.ranks < 0 {
		return nil, cmdutil.Flagf("--ranks %d: at least 1 (or 0: the larger grid's)", o.ranks)
	}
	base := redist.Job{M: m, N: n, Elem: elem, From: from, To: to, Ranks: o.ranks, CopyRate: rate}
	schedules := redist.Schedules
	if o.schedule != "all" {
		schedules = []string{o.schedule}
	}
	var out []redist.Job
	for _, s := range schedules {
		for _, msgs := range redist.MessageModes {
			if o.messages != "" && msgs != o.messages || o.messages == "" && s == "scalapack" && msgs == "tile" {
				continue
			}
			j := base
			j.Schedule, j.Messages = s, msgs
			if err := j.Check(); err != nil {
				return nil, &cmdutil.FlagError{Err: err}
			}
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		return nil, cmdutil.Flagf("--messages %q: valid: %s", o.messages, strings.Join(redist.MessageModes, ", "))
	}
	return out, nil
}

func (o *redistFlags) run(cmd *cobra.Command, streams *cmdutil.IO) error {
	jobs, err := o.jobs(cmd)
	if err != nil {
		return err
	}
	if len(jobs) > 1 && (o.trace != "" || o.timeline != "") {
		return cmdutil.Flagf("--trace and --timeline record one run: give one --schedule and --messages")
	}
	e, done, err := o.experiment(streams)
	if err != nil {
		return err
	}
	defer done()
	if r := jobs[0].Size(); r > e.Machine.Slots() {
		return fmt.Errorf("%d ranks, but machine %s has %d slots; use a larger machine or smaller grids", r, e.Machine.Name, e.Machine.Slots())
	}
	type row struct {
		Schedule string `json:"schedule"`
		Messages string `json:"messages"`
		*collsim.RedistResult
	}
	var rows []row
	for _, j := range jobs {
		res, err := e.RunRedistribution(j)
		if err != nil {
			return err
		}
		rows = append(rows, row{j.Schedule, j.Messages, res})
	}
	j := jobs[0]
	if err := o.writeTrace(j.Size(), fmt.Sprintf("redistribution %dx%d, %s to %s", j.M, j.N, j.From.String(), j.To.String())); err != nil {
		return err
	}
	if o.json {
		return cmdutil.JSON(streams.Out, rows)
	}
	r0 := rows[0]
	fmt.Fprintf(streams.Out, "%dx%d matrix of %d-byte elements, %s to %s, on %d ranks of %s (%s network)\n", j.M, j.N, j.Elem, j.From.String(), j.To.String(),
		j.Size(), r0.Result.Machine, r0.Result.Network)
	fmt.Fprintf(streams.Out, "moves %s between ranks (%s copied within ranks); the busiest rank sends or receives %s\n",
		configs.FormatBytes(r0.Moved), configs.FormatBytes(r0.Local), configs.FormatBytes(r0.MaxRank))
	table := [][]string{{"schedule", "messages", "count", "time", "bound", "time/bound"}}
	for _, r := range rows {
		ratio := "-"
		if r.Bound > 0 {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
		}
		table = append(table, []string{r.Schedule, r.Messages, strconv.Itoa(r.RedistResult.Messages), cmdutil.Seconds(r.Elapsed), cmdutil.Seconds(r.Bound), ratio})
	}
	return streams.Table(table)
}
