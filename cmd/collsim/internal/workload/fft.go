package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/workloads/fft"
)

type fftFlags struct {
	machineFlags
	grid, decomp, pack, algo, layout   string
	ranks, pr, pc                      int
	double, roundTrip, breakdown       bool
	rate, packRate, hostLink, hostCopy string
}

func newFFT(streams *cmdutil.IO) *cobra.Command {
	o := &fftFlags{}
	cmd := &cobra.Command{
		Use:   "fft",
		Short: "Simulate a distributed 3D FFT (slab or pencil)",
		Long: `Simulate a forward (or round-trip) 3D FFT of a complex grid on a machine: local
1D FFTs at a FLOP rate (5 n log2 n FLOPs per line of n points), and the
transposes between them as alltoalls (one for a slab decomposition, two on
the rows and columns of a Pr x Pc grid for a pencil), with the blocks packed
and unpacked around each by a device kernel or through host memory.

--layout aligned numbers the process grid so that each row (the first
transpose's communicator) is consecutive ranks, which block placement puts in
one Dragonfly group; --placement random scatters ranks instead.`,
		Example: `  collsim workload fft --grid 1024 --ranks 256 -m xc40
  collsim workload fft --grid 2048 --ranks 1024 --pr 32 --layout aligned --network flow -m xc40
  collsim workload fft --grid 512,512,256 --decomp slab --ranks 64 --algo two_level -m gpu-cluster --pack host`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams) },
	}
	f := cmd.Flags()
	o.machineFlags.register(f, "xc40", collsim.Analytic)
	f.StringVar(&o.grid, "grid", "512", "the grid: N (N^3) or NX,NY,NZ points")
	f.BoolVar(&o.double, "double", false, "double precision (complex128, 16 bytes a point; default complex64, 8)")
	f.IntVarP(&o.ranks, "ranks", "n", 64, "ranks")
	f.StringVar(&o.decomp, "decomp", "pencil", "decomposition: slab (one alltoall on all ranks) or pencil (two, on a Pr x Pc grid)")
	f.IntVar(&o.pr, "pr", 0, "pencil grid rows Pr (default: the most square Pr x Pc = ranks with Pr >= Pc)")
	f.IntVar(&o.pc, "pc", 0, "pencil grid columns Pc")
	f.BoolVar(&o.roundTrip, "round-trip", false, "forward then inverse")
	f.StringVar(&o.rate, "fft-rate", "20GFLOP/s", "the rate a rank's local 1D FFTs achieve")
	f.StringVar(&o.pack, "pack", "device", "packing around each alltoall: device (a pack kernel at --pack-rate) or host (staged over --host-link, copied at --host-copy)")
	f.StringVar(&o.packRate, "pack-rate", "100GB/s", "the device pack kernel's rate")
	f.StringVar(&o.hostLink, "host-link", "25GB/s", "with --pack host: the device-host link, each way")
	f.StringVar(&o.hostCopy, "host-copy", "10GB/s", "with --pack host: the host's copy rate")
	f.StringVar(&o.algo, "algo", "", "the transposes' alltoall algorithm or library (pairwise, bruck, linear, two_level, group_aligned, ompi, mpich, ...); default pairwise")
	f.StringVar(&o.layout, "layout", "default", "process grid numbering: default (row-major) or aligned (rows on consecutive ranks)")
	f.BoolVar(&o.breakdown, "breakdown", true, "also run with every message free, to split compute from exposed communication")
	return cmd
}

func (o *fftFlags) job(cmd *cobra.Command, e *collsim.Experiment) (fft.Job, error) {
	f := cmd.Flags()
	if o.decomp == "slab" {
		if err := cmdutil.NotApplicable(f, "a slab is one row of ranks (Pr = ranks, Pc = 1), which a layout does not renumber", "pr", "pc", "layout"); err != nil {
			return fft.Job{}, err
		}
	}
	if o.pack == "device" {
		if err := cmdutil.NotApplicable(f, "they price host-staged packing (give --pack host)", "host-link", "host-copy"); err != nil {
			return fft.Job{}, err
		}
	} else if err := cmdutil.NotApplicable(f, "it prices the device's pack kernel (--pack device)", "pack-rate"); err != nil {
		return fft.Job{}, err
	}
	j := fft.Job{Double: o.double, RoundTrip: o.roundTrip, Pack: o.pack, Alltoall: o.algo, Aligned: o.layout == "aligned"}
	if o.layout != "default" && o.layout != "aligned" {
		return j, cmdutil.Flagf("--layout %q: default or aligned", o.layout)
	}
	dims := strings.Split(o.grid, ",")
	var n [3]int
	for i := range n {
		s := dims[min(i, len(dims)-1)]
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 || len(dims) != 1 && len(dims) != 3 {
			return j, cmdutil.Flagf("--grid %q: N or NX,NY,NZ, whole numbers of at least 1", o.grid)
		}
		n[i] = v
	}
	j.Nx, j.Ny, j.Nz = n[0], n[1], n[2]
	if o.ranks < 1 {
		return j, cmdutil.Flagf("--ranks must be at least 1")
	}
	switch o.decomp {
	case "slab":
		if o.pc > 1 {
			return j, cmdutil.Flagf("--decomp slab has one column (--pc 1)")
		}
		j.Pr, j.Pc = o.ranks, 1
	case "pencil":
		// (--pr -4 was read as a grid of -4x-16: an audit.)
		for _, g := range []struct {
			name string
			v    int
		}{{"pr", o.pr}, {"pc", o.pc}} {
			if g.v < 0 {
				return j, cmdutil.Flagf("--%s %d: give at least 1, or leave it out for the most square grid", g.name, g.v)
			}
		}
		j.Pr, j.Pc = o.pr, o.pc
		switch {
		case j.Pr == 0 && j.Pc == 0:
			j.Pc = int(math.Sqrt(float64(o.ranks)))
			for o.ranks%j.Pc != 0 {
				j.Pc--
			}
			j.Pr = o.ranks / j.Pc
		case j.Pc == 0 && o.ranks%j.Pr == 0:
			j.Pc = o.ranks / j.Pr
		case j.Pr == 0 && o.ranks%j.Pc == 0:
			j.Pr = o.ranks / j.Pc
		}
		switch {
		case j.Pr*j.Pc == o.ranks:
		case j.Pc == 0: // --pr alone, not dividing the ranks
			return j, cmdutil.Flagf("--pr %d does not divide the %d ranks (--pc would be the rest)", o.pr, o.ranks)
		case j.Pr == 0:
			return j, cmdutil.Flagf("--pc %d does not divide the %d ranks (--pr would be the rest)", o.pc, o.ranks)
		default:
			return j, cmdutil.Flagf("--pr %d x --pc %d is not the %d ranks", o.pr, o.pc, o.ranks)
		}
	default:
		return j, cmdutil.Flagf("--decomp %q: slab or pencil", o.decomp)
	}
	var err error
	if j.FLOPs, err = configs.ParseFLOPs(o.rate); err != nil {
		return j, cmdutil.Flagf("--fft-rate: %v", err)
	}
	for _, r := range []struct {
		flag, v string
		to      *float64
	}{{"--pack-rate", o.packRate, &j.PackRate}, {"--host-link", o.hostLink, &j.HostLink}, {"--host-copy", o.hostCopy, &j.HostCopy}} {
		if *r.to, err = configs.ParseBandwidth(r.v); err != nil {
			return j, cmdutil.Flagf("%s: %v", r.flag, err)
		}
	}
	if err := j.Check(); err != nil {
		return j, &cmdutil.FlagError{Err: err}
	}
	if j.Ranks() > e.Machine.Slots() {
		return j, fmt.Errorf("%d ranks, but machine %s has %d slots; use a larger machine or fewer ranks", j.Ranks(), e.Machine.Name, e.Machine.Slots())
	}
	return j, nil
}

func (o *fftFlags) run(cmd *cobra.Command, streams *cmdutil.IO) error {
	e, done, err := o.experiment(streams)
	if err != nil {
		return err
	}
	defer done()
	j, err := o.job(cmd, e)
	if err != nil {
		return err
	}
	res, err := e.RunFFT(j, o.breakdown)
	if err != nil {
		return err
	}
	if err := o.writeTrace(res.Ranks, fmt.Sprintf("FFT %s, %s on %d ranks of %s (%s network)", res.Grid, res.Decomp, res.Ranks, res.Run.Machine, res.Run.Network)); err != nil {
		return err
	}
	if o.json {
		return cmdutil.JSON(streams.Out, res)
	}
	rows := [][]string{
		{"grid", fmt.Sprintf("%s points, complex%d", res.Grid, 64*(1+btoi(j.Double)))},
		{"decomposition", fmt.Sprintf("%s on %d ranks of %s (%s layout, %s placement, %s network)", res.Decomp, res.Ranks, res.Run.Machine, res.Layout, res.Run.Placement, res.Run.Network)},
		{"alltoall", res.Alltoall},
		{"time", cmdutil.Seconds(res.Time)},
		{"rate", fmt.Sprintf("%.4g GFLOP/s (5 N log2 N)", res.GFLOPs)},
	}
	if o.breakdown {
		rows = append(rows, []string{"breakdown", fmt.Sprintf("FFTs and packing %s, exposed communication %s (%.0f%%)", cmdutil.Seconds(res.Compute), cmdutil.Seconds(res.Exposed), 100*res.Exposed/res.Time)})
	}
	rows = append(rows, []string{"simulated", fmt.Sprintf("%d ops, %d messages in %s", res.Run.Ops, res.Run.Messages, cmdutil.Seconds(res.Run.Wall))})
	return streams.Table(rows)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
