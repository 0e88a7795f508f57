package study

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/farm"
	"github.com/collsim/collsim/workloads/redist"
	"github.com/collsim/collsim/workloads/tiles"
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

// --- study farm -----------------------------------------------------------

func newFarmStudy(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var workers, sizes, duration, submit, handle, serialize, local string
	var tasks int
	cmd := &cobra.Command{
		Use:   "farm",
		Short: "Task farm (mpi4py.futures): throughput against workers, bandwidth against message size",
		Long: `The mpi4py.futures seed measures a pool executor's two limits: the throughput
of tiny tasks as workers are added (it stops growing once the master is
saturated), and the bandwidth of large arguments against their size. This
study runs both on the machine (fattree-1024 by default) twice: every rank on
one node (shared memory at --local) and each rank on a host of its own across
the fat-tree.

The knee is derived, not fitted: a worker takes a task every d + 2 alpha + c
seconds (the task, the message there and back, the master's per-task cost c
= submit + arguments/serialize + handle), and the master hands out one every
c, so throughput grows with W until W d' = (d + 2 alpha + c) / c workers, and
stays at 1/c past it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFarmStudy(streams, o, workers, sizes, duration, submit, handle, serialize, local, tasks)
		},
	}
	o.register(cmd, "fattree-1024", collsim.Flow)
	f := cmd.Flags()
	f.StringVar(&workers, "workers", "1,2,4,8,16,32,63", "worker counts (at most the node's ranks - 1 on one node)")
	f.StringVar(&sizes, "sizes", "1KiB,16KiB,256KiB,4MiB,64MiB", "argument sizes for the bandwidth curve")
	f.StringVar(&duration, "duration", "100us", "the tiny tasks' duration")
	f.StringVar(&submit, "submit", "20us", "the master's cost to submit a task")
	f.StringVar(&handle, "handle", "10us", "the master's cost to handle a result")
	f.StringVar(&serialize, "serialize", "5GB/s", "the master's serialization rate")
	f.StringVar(&local, "local", "{bandwidth: 10GB/s, latency: 300ns}", "the node's shared-memory channel (a machine config link)")
	f.IntVar(&tasks, "tasks", 2000, "tasks per run")
	return cmd
}

func runFarmStudy(streams *cmdutil.IO, o *workloadOptions, workerList, sizeList, durFlag, submitFlag, handleFlag, serFlag, local string, tasks int) error {
	across, err := o.experiment()
	if err != nil {
		return err
	}
	workers, err := counts("--workers", workerList)
	if err != nil {
		return err
	}
	maxW := slices.Max(workers)
	node := *o
	node.set = append(slices.Clone(o.set), fmt.Sprintf("host.ranks_per_host=%d", maxW+1), "host.local="+local)
	one, err := node.experiment()
	if err != nil {
		return err
	}
	var sizes []int64
	for _, s := range strings.Split(sizeList, ",") {
		b, err := configs.ParseSize(strings.TrimSpace(s))
		if err != nil || b < 1 {
			return cmdutil.Flagf("--sizes %q: sizes of at least 1 byte", s)
		}
		sizes = append(sizes, b)
	}
	base := farm.Job{Tasks: tasks, Dist: "fixed"}
	for _, d := range []struct {
		flag, v string
		to      *sim.Time
	}{{"--duration", durFlag, &base.Mean}, {"--submit", submitFlag, &base.Submit}, {"--handle", handleFlag, &base.Handle}} {
		if *d.to, err = configs.ParseDuration(d.v); err != nil {
			return cmdutil.Flagf("%s: %v", d.flag, err)
		}
	}
	if base.Serialize, err = configs.ParseBandwidth(serFlag); err != nil {
		return cmdutil.Flagf("--serialize: %v", err)
	}
	places := []struct {
		name string
		e    *collsim.Experiment
	}{{"one node", one}, {"across", across}}
	run := func(e *collsim.Experiment, j farm.Job) (*collsim.FarmResult, error) {
		if err := j.Check(); err != nil {
			return nil, &cmdutil.FlagError{Err: err}
		}
		if j.Workers+1 > e.Machine.Slots() {
			return nil, cmdutil.Flagf("%d workers, but %s has %d slots", j.Workers, e.Machine.Name, e.Machine.Slots())
		}
		return e.RunFarm(j)
	}
	fmt.Fprintf(streams.Out, "Task farm on %s (%s network): %d tasks of %s; the master pays %s to submit, %s to handle, serializes at %s\n",
		across.Machine.Name, across.Network, tasks, cmdutil.Seconds(base.Mean.Seconds()), cmdutil.Seconds(base.Submit.Seconds()), cmdutil.Seconds(base.Handle.Seconds()), cmdutil.SI(base.Serialize, "B/s"))
	rows := [][]string{{"workers", "one node", "across", "bound (one node)", "limit"}}
	knees := make([]float64, len(places))
	for _, w := range workers {
		row := []string{strconv.Itoa(w)}
		var first *collsim.FarmResult
		for i, p := range places {
			j := base
			j.Workers = w
			r, err := run(p.e, j)
			if err != nil {
				return err
			}
			if i == 0 {
				first = r
			}
			knees[i] = r.Knee
			row = append(row, cmdutil.SI(r.Throughput, "tasks/s"))
		}
		row = append(row, cmdutil.SI(min(first.MasterBound, first.WorkerBound), "tasks/s"), first.Limit)
		rows = append(rows, row)
	}
	if err := streams.Table(rows); err != nil {
		return err
	}
	c := base.MasterPerTask()
	fmt.Fprintf(streams.Out, "master saturation: 1/c = %s with c = %s a task; knee (d + 2 alpha + c)/c = %.1f workers on one node, %.1f across\n\n",
		cmdutil.SI(1/c, "tasks/s"), cmdutil.Seconds(c), knees[0], knees[1])
	rows = [][]string{{"argument", "one node", "across", "bound (one node)", "bound (across)", "limit (across)"}}
	w := min(maxW, 4)
	for _, b := range sizes {
		row := []string{configs.FormatBytes(b)}
		var res []*collsim.FarmResult
		for _, p := range places {
			j := base
			j.Workers, j.Mean, j.Arg, j.Tasks = w, 0, b, min(tasks, 200)
			r, err := run(p.e, j)
			if err != nil {
				return err
			}
			res = append(res, r)
			row = append(row, cmdutil.SI(r.Bandwidth, "B/s"))
		}
		for _, r := range res {
			row = append(row, cmdutil.SI(float64(b)*min(r.MasterBound, r.LinkBound, r.WorkerBound), "B/s"))
		}
		rows = append(rows, append(row, res[1].Limit))
	}
	fmt.Fprintf(streams.Out, "Bandwidth of arguments, tasks of no work on %d workers\n", w)
	return streams.Table(rows)
}

// --- studies blasx and hsa --------------------------------------------------

type tilesOptions struct {
	workloadOptions
	peak, memory string
	halfTile     int
}

func (o *tilesOptions) register(cmd *cobra.Command) {
	o.workloadOptions.register(cmd, "gpu-node-pcie", collsim.Flow)
	f := cmd.Flags()
	f.StringVar(&o.peak, "peak", "9.7TFLOP/s", "a device's peak FLOP rate")
	f.StringVar(&o.memory, "device-memory", "16GiB", "each device's memory for tiles")
	f.IntVar(&o.halfTile, "half-tile", 256, "the tile order at which kernels reach half their efficiency")
}

func (o *tilesOptions) job(algo string, n, b int) (tiles.Job, error) {
	peak, err := configs.ParseFLOPs(o.peak)
	if err != nil {
		return tiles.Job{}, cmdutil.Flagf("--peak: %v", err)
	}
	mem, err := configs.ParseSize(o.memory)
	if err != nil {
		return tiles.Job{}, cmdutil.Flagf("--device-memory: %v", err)
	}
	if n%b != 0 {
		return tiles.Job{}, cmdutil.Flagf("tile order %d does not divide N = %d", b, n)
	}
	return tiles.Job{Algorithm: algo, Tiles: n / b, B: b, Elem: 8, Peak: peak, HalfTile: o.halfTile,
		Capacity: int(min(mem/(int64(b)*int64(b)*8), 1<<30)), Scheduler: "locality"}, nil
}

func newBLASXStudy(streams *cmdutil.IO) *cobra.Command {
	o := &tilesOptions{}
	var devices string
	var n, b int
	cmd := &cobra.Command{
		Use:   "blasx",
		Short: "BLASX: tiled GEMM speedup over GPUs with peer-to-peer moves and tile caches, and without",
		Long: `BLASX claims that its tile cache and peer-to-peer moves keep communication
overlapped with computation, so a tiled GEMM speeds up near-linearly with
GPUs. This study runs C += A B (N x N doubles in b x b tiles; with 16 GiB a
GPU, N = 32768's 24 GiB of matrices stream from host memory on one GPU) on
1..8 GPUs of the machine four ways: BLASX-like (locality scheduler, peer to
peer, an LRU cache of the device's memory, and BLASX's second level: a
tile another GPU holds comes from it, host memory only when none has it),
staged (moves between GPUs
through host memory), no cache (room for one task's three tiles: every
input fetched again), and dynamic (each task to the GPU free first,
wherever its tiles are). Each cell is the speedup over one GPU of the
BLASX-like run, then the bytes moved (host to device and between devices).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBLASX(streams, o, devices, n, b) },
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&devices, "devices", "1,2,4,8", "GPU counts")
	f.IntVar(&n, "n", 32768, "matrix order")
	f.IntVar(&b, "tile", 1024, "tile order")
	return cmd
}

func runBLASX(streams *cmdutil.IO, o *tilesOptions, deviceList string, n, b int) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	devs, err := counts("--devices", deviceList)
	if err != nil {
		return err
	}
	base, err := o.job("gemm", n, b)
	if err != nil {
		return err
	}
	base.PeerFirst = true // BLASX's second-level tile cache
	variants := []struct {
		name string
		edit func(*tiles.Job)
	}{
		{"blasx-like", func(*tiles.Job) {}},
		{"staged", func(j *tiles.Job) { j.Staged = true }},
		{"no cache", func(j *tiles.Job) { j.Capacity = 3 }},
		{"dynamic", func(j *tiles.Job) { j.Scheduler = "dynamic" }},
	}
	fmt.Fprintf(streams.Out, "Tiled GEMM, N = %d in %d x %d tiles of %d, on %s (%s network): speedup over one GPU (blasx-like), time, bytes host->device / peer\n",
		n, n/b, n/b, b, e.Machine.Name, e.Network)
	head := []string{"GPUs"}
	for _, v := range variants {
		head = append(head, v.name)
	}
	rows := [][]string{head}
	var one float64
	for _, d := range devs {
		row := []string{strconv.Itoa(d)}
		for vi, v := range variants {
			j := base
			j.Devices = d
			v.edit(&j)
			if err := j.Check(); err != nil && !strings.Contains(err.Error(), "no transfer costs") {
				return &cmdutil.FlagError{Err: err}
			}
			r, err := e.RunTiles(j)
			if err != nil {
				return err
			}
			if vi == 0 && one == 0 {
				one = r.Elapsed
			}
			row = append(row, fmt.Sprintf("%.2fx %s %s/%s", one/r.Elapsed, cmdutil.Seconds(r.Elapsed), configs.FormatBytes(r.HostToDevice), configs.FormatBytes(r.PeerToPeer)))
		}
		rows = append(rows, row)
	}
	return streams.Table(rows)
}

func newHSAStudy(streams *cmdutil.IO) *cobra.Command {
	o := &tilesOptions{}
	var sizes string
	var devices, b int
	cmd := &cobra.Command{
		Use:   "hsa",
		Short: "HSA: Cholesky and LU with dependency-driven tasks against bulk-synchronous steps",
		Long: `The HSA seed reports tiled Cholesky 3.8x and LU 1.6x faster when tasks run as
their dependencies allow than in bulk-synchronous steps (every device waits
for all after each step of the factorization). This study runs both on the
machine's GPUs: dependency-driven (the locality scheduler: a task on the
device holding the tile it writes) and bulk-synchronous (the same kind of
owner, 1D block-cyclic by tile column, and a barrier after every step), and
prints their times and the ratio beside the paper's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHSA(streams, o, sizes, devices, b) },
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&sizes, "n", "16384,32768", "matrix orders")
	f.IntVar(&devices, "devices", 8, "GPUs")
	f.IntVar(&b, "tile", 1024, "tile order")
	return cmd
}

func runHSA(streams *cmdutil.IO, o *tilesOptions, sizeList string, devices, b int) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	sizes, err := counts("--n", sizeList)
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "Dependency-driven against bulk-synchronous, %d GPUs of %s (%s network), tiles of %d\n", devices, e.Machine.Name, e.Network, b)
	rows := [][]string{{"algorithm", "N", "dependency-driven", "bulk-synchronous", "ratio", "paper"}}
	for _, algo := range []string{"cholesky", "lu"} {
		for _, n := range sizes {
			row := []string{algo, strconv.Itoa(n)}
			var t [2]float64
			for i, s := range []string{"locality", "bsp"} {
				j, err := o.job(algo, n, b)
				if err != nil {
					return err
				}
				j.Devices, j.Scheduler = devices, s
				r, err := e.RunTiles(j)
				if err != nil {
					return err
				}
				t[i] = r.Elapsed
				row = append(row, fmt.Sprintf("%s (%s)", cmdutil.Seconds(r.Elapsed), cmdutil.SI(r.Rate, "FLOP/s")))
			}
			row = append(row, fmt.Sprintf("%.2fx", t[1]/t[0]), map[string]string{"cholesky": "3.8x", "lu": "1.6x"}[algo])
			rows = append(rows, row)
		}
	}
	return streams.Table(rows)
}
