package study

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/workloads/redist"
)

// The studies of the task-based workloads: redistribution, task farms,
// tile DAGs.

// --- study redistribute --------------------------------------------------

func newRedistStudy(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var sizes, tiles, copyRate, layouts string
	cmd := &cobra.Command{
		Use:   "redistribute",
		Short: "Matrix redistribution: schedules against the one-port bound, over sizes and tile sizes",
		Long: `The PaRSEC redistribution seed stresses that how well a redistribution does
depends on the data size and the tile size. This study moves an N x N matrix
of doubles from one process grid to another (--layouts FROM:TO pairs), tiles
of the same size on both (every tile moves whole, to another owner, or
stays): 4x4:8x2 changes the grid's shape, each rank exchanging with one or
two others; 16x1:1x16 deals tile rows, then tile columns, so every rank
sends to every other (a transpose of ownership). Under each
schedule: ScaLAPACK's PxGEMR2D steps (scalapack), a task-based caterpillar
order and a naive order, with one packed message per rank pair (pair) or one
per tile (tile), and prints each one's time over the one-port lower bound (the
most bytes any rank sends or receives at its paths' bandwidth, plus a
latency; packing is not in the bound).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRedistStudy(streams, o, sizes, tiles, copyRate, layouts)
		},
	}
	o.register(cmd, "small", collsim.Flow)
	f := cmd.Flags()
	f.StringVar(&sizes, "sizes", "256,1024,4096,16384", "matrix orders N (N x N doubles)")
	f.StringVar(&tiles, "tiles", "64,256,1024", "tile orders")
	f.StringVar(&layouts, "layouts", "4x4:8x2,16x1:1x16", "FROM:TO process grid pairs, PxQ each")
	f.StringVar(&copyRate, "copy-rate", "10GB/s", "the rate ranks pack and unpack at")
	return cmd
}

func runRedistStudy(streams *cmdutil.IO, o *workloadOptions, sizeList, tileList, copyRate, layoutList string) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	sizes, err := counts("--sizes", sizeList)
	if err != nil {
		return err
	}
	tiles, err := counts("--tiles", tileList)
	if err != nil {
		return err
	}
	rate, err := configs.ParseBandwidth(copyRate)
	if err != nil {
		return cmdutil.Flagf("--copy-rate: %v", err)
	}
	type grids struct {
		name         string
		p, q, p2, q2 int
	}
	var pairs []grids
	for _, l := range strings.Split(layoutList, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(l), ":")
		var g grids
		_, err1 := fmt.Sscanf(a, "%dx%d", &g.p, &g.q)
		_, err2 := fmt.Sscanf(b, "%dx%d", &g.p2, &g.q2)
		if !ok || err1 != nil || err2 != nil || g.p < 1 || g.q < 1 || g.p2 < 1 || g.q2 < 1 {
			return cmdutil.Flagf("--layouts %q: give FROM:TO pairs of grids, e.g. 4x4:8x2", l)
		}
		g.name = fmt.Sprintf("%dx%d to %dx%d", g.p, g.q, g.p2, g.q2)
		pairs = append(pairs, g)
	}
	type variant struct{ schedule, messages string }
	variants := []variant{{"scalapack", "pair"}, {"caterpillar", "pair"}, {"caterpillar", "tile"}, {"naive", "pair"}, {"naive", "tile"}}
	fmt.Fprintf(streams.Out, "Redistribution of N x N doubles between process grids (b x b tiles both) on %s (%s network); time / one-port bound\n", e.Machine.Name, e.Network)
	head := []string{"grids", "N", "b", "moved", "bound"}
	for _, v := range variants {
		head = append(head, v.schedule+" "+v.messages)
	}
	rows := [][]string{head}
	for _, g := range pairs {
		for _, n := range sizes {
			for _, b := range tiles {
				if b > n {
					continue
				}
				row := []string{g.name, strconv.Itoa(n), strconv.Itoa(b)}
				for i, v := range variants {
					j := redist.Job{M: n, N: n, Elem: 8, From: redist.Layout{MB: b, NB: b, P: g.p, Q: g.q}, To: redist.Layout{MB: b, NB: b, P: g.p2, Q: g.q2},
						Schedule: v.schedule, Messages: v.messages, CopyRate: rate}
					if err := j.Check(); err != nil {
						return &cmdutil.FlagError{Err: err}
					}
					if j.Size() > e.Machine.Slots() {
						return cmdutil.Flagf("%d ranks, but %s has %d slots", j.Size(), e.Machine.Name, e.Machine.Slots())
					}
					r, err := e.RunRedistribution(j)
					if err != nil {
						return err
					}
					if i == 0 {
						row = append(row, configs.FormatBytes(r.Moved), cmdutil.Seconds(r.Bound))
					}
					if r.Moved == 0 {
					row = append(row, "-") // one tile: nothing moves
					continue
				}
				row = append(row, fmt.Sprintf("%.2f", r.Ratio))
				}
				rows = append(rows, row)
			}
		}
	}
	return streams.Table(rows)
}
