package workload

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/workloads/tiles"
)

type tilesFlags struct {
	machineFlags
	algo, scheduler, memory, peak, scaling, elem string
	n, tile, devices, halfTile, links            int
	staged, peerFirst                            bool
}

func newTiles(streams *cmdutil.IO) *cobra.Command {
	o := &tilesFlags{}
	cmd := &cobra.Command{
		Use:   "tiles",
		Short: "Simulate tiled GEMM, Cholesky or LU on the GPUs of one node",
		Long: `Simulate a tiled dense algorithm (GEMM C += A B, Cholesky, LU without
pivoting) on the devices of one node, as BLASX- or StarPU-like runtimes run
it: N x N matrices in b x b tiles, starting and ending in host memory; each
task (a tile kernel) placed on a device by --scheduler (locality: where it
is estimated to finish first, counting the tiles it must fetch; dynamic:
the device free first; bsp: the owner of its tile, with a barrier after
every step), its tiles fetched peer to peer (or through host memory with
--staged) into a per-device LRU cache of --device-memory (--peer-first:
from another device's cache whenever one holds the tile, as BLASX's
second-level cache), written back when evicted as the only copy. Kernels run at --peak x b/(b + --half-tile),
times their efficiency relative to GEMM (SYRK 0.9, TRSM 0.8, POTRF and
GETRF 0.25).

The machine is one node of GPUs whose second node stands for host memory
(gpu-node-pcie, gpu-node-nvlink, gpu-node-nvswitch). Prints the makespan,
the FLOP rate, bytes moved each way and per device, and the cache's hit
rate, and the busiest links with the bytes each carried; --scaling 1,2,4,8
runs each device count and prints the speedup. The network defaults to
flow.`,
		Example: `  collsim workload tiles --algo cholesky --n 32768 --tile 512
  collsim workload tiles --algo gemm --n 32768 --tile 1024 --scaling 1,2,4,8 -m gpu-node-nvlink
  collsim workload tiles --algo lu --n 16384 --tile 512 --scheduler bsp --staged`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams) },
	}
	f := cmd.Flags()
	o.machineFlags.register(f, "gpu-node-pcie", collsim.Flow) // the links' sharing is what placements differ in
	f.StringVar(&o.algo, "algo", "cholesky", "gemm, cholesky or lu")
	f.IntVar(&o.n, "n", 16384, "matrix order N")
	f.IntVar(&o.tile, "tile", 512, "tile order b (must divide N)")
	f.StringVar(&o.elem, "elem", "8", "bytes per element")
	f.IntVarP(&o.devices, "devices", "d", 8, "devices")
	f.StringVar(&o.scheduler, "scheduler", "locality", "locality, dynamic or bsp")
	f.BoolVar(&o.staged, "staged", false, "move tiles between devices through host memory, not peer to peer")
	f.BoolVar(&o.peerFirst, "peer-first", false, "take a tile another device holds from the nearest one whose copy is in place, host memory only when none has it (BLASX's second-level tile cache); without, a peer only when its copy would arrive no later than host memory's")
	f.StringVar(&o.memory, "device-memory", "16GiB", "each device's memory for tiles (its cache)")
	f.StringVar(&o.peak, "peak", "9.7TFLOP/s", "a device's peak FLOP rate")
	f.IntVar(&o.halfTile, "half-tile", 256, "the tile order at which kernels reach half their efficiency")
	f.IntVar(&o.links, "busiest-links", 8, "with --network flow: print this many of the busiest links and the bytes each carried (0: none)")
	f.StringVar(&o.scaling, "scaling", "", "device counts to run, e.g. 1,2,4,8: prints the speedup over the first")
	return cmd
}

func (o *tilesFlags) job() (tiles.Job, error) {
	var j tiles.Job
	if o.n < 1 || o.tile < 1 {
		return j, cmdutil.Flagf("--n %d and --tile %d: both at least 1", o.n, o.tile)
	}
	if o.n%o.tile != 0 {
		return j, cmdutil.Flagf("--tile %d does not divide --n %d (%d tiles and %d rows left over); give a tile order that divides N, e.g. %d", o.tile, o.n, o.n/o.tile, o.n%o.tile, gcd(o.n, o.tile))
	}
	elem, err := configs.ParseSize(o.elem)
	if err != nil || elem < 1 {
		return j, cmdutil.Flagf("--elem %q: bytes per element, at least 1", o.elem)
	}
	peak, err := configs.ParseFLOPs(o.peak)
	if err != nil {
		return j, cmdutil.Flagf("--peak: %v", err)
	}
	mem, err := configs.ParseSize(o.memory)
	if err != nil {
		return j, cmdutil.Flagf("--device-memory: %v", err)
	}
	j = tiles.Job{Algorithm: o.algo, Tiles: o.n / o.tile, B: o.tile, Elem: elem, Devices: o.devices, Peak: peak, HalfTile: o.halfTile,
		Scheduler: o.scheduler, Staged: o.staged, PeerFirst: o.peerFirst}
	tile := int64(o.tile) * int64(o.tile) * elem
	j.Capacity = int(min(mem/tile, 1<<30))
	if j.Capacity < 3 {
		return j, cmdutil.Flagf("--device-memory %s holds %d tiles of %s; a task needs 3: give more memory or smaller tiles", o.memory, j.Capacity, configs.FormatBytes(tile))
	}
	j.Cost = func(int, int) (float64, float64) { return 0, 0 } // for Check; the run sets the machine's
	if err := j.Check(); err != nil {
		return j, &cmdutil.FlagError{Err: err}
	}
	return j, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func (o *tilesFlags) run(cmd *cobra.Command, streams *cmdutil.IO) error {
	j, err := o.job()
	if err != nil {
		return err
	}
	counts := []int{j.Devices}
	if o.scaling != "" {
		if cmd.Flags().Changed("devices") {
			return cmdutil.Flagf("--devices does not apply with --scaling: it gives the device counts")
		}
		if counts, err = cmdutil.Ints(o.scaling); err != nil {
			return cmdutil.Flagf("--scaling: %v", err)
		}
		if len(counts) > 1 && (o.trace != "" || o.timeline != "") {
			return cmdutil.Flagf("--trace and --timeline record one run: give one device count")
		}
	}
	e, done, err := o.experiment(streams)
	if err != nil {
		return err
	}
	defer done()
	if o.links < 0 {
		return cmdutil.Flagf("--busiest-links %d: 0 or more", o.links)
	}
	if e.Network == collsim.Flow {
		e.BusiestLinks = o.links
	} else if o.links > 0 && cmd.Flags().Changed("busiest-links") {
		return cmdutil.Flagf("--busiest-links needs --network flow: the analytic network shares no links, and records none")
	}
	var results []*collsim.TilesResult
	for _, d := range counts {
		jd := j
		jd.Devices = d
		if err := jd.Check(); err != nil {
			return &cmdutil.FlagError{Err: err}
		}
		r, err := e.RunTiles(jd)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if err := o.writeTrace(2*counts[0], fmt.Sprintf("tiled %s, N=%d b=%d, on %d devices", j.Algorithm, o.n, o.tile, counts[0])); err != nil {
		return err
	}
	if o.json {
		if len(results) == 1 {
			return cmdutil.JSON(streams.Out, results[0])
		}
		return cmdutil.JSON(streams.Out, results)
	}
	fmt.Fprintf(streams.Out, "tiled %s, N = %d in %d x %d tiles of %d (%s each), %s scheduler%s, on %s (%s network)\n", j.Algorithm, o.n, j.Tiles, j.Tiles, o.tile,
		configs.FormatBytes(int64(o.tile)*int64(o.tile)*j.Elem), j.Scheduler, map[bool]string{true: ", staged through host", false: ", peer to peer"}[j.Staged],
		results[0].Result.Machine, results[0].Result.Network)
	rows := [][]string{{"devices", "time", "FLOP/s", "of peak", "speedup", "host->dev", "dev->host", "peer", "hit rate", "plan estimate"}}
	for i, r := range results {
		rows = append(rows, []string{strconv.Itoa(counts[i]), cmdutil.Seconds(r.Elapsed), cmdutil.SI(r.Rate, "FLOP/s"),
			fmt.Sprintf("%.0f%%", 100*r.Rate/(float64(counts[i])*j.Peak)), fmt.Sprintf("%.2f", results[0].Elapsed/r.Elapsed),
			configs.FormatBytes(r.HostToDevice), configs.FormatBytes(r.DeviceToHost), configs.FormatBytes(r.PeerToPeer),
			fmt.Sprintf("%.1f%%", 100*r.HitRate), cmdutil.Seconds(r.Estimate)})
	}
	if err := streams.Table(rows); err != nil {
		return err
	}
	last := results[len(results)-1]
	if len(last.Links) == 0 {
		return nil
	}
	fmt.Fprintf(streams.Out, "\nbusiest links (%d devices; node0 is the GPUs' host bridge, node1 and its devices host memory):\n", counts[len(counts)-1])
	rows = [][]string{{"link", "bytes", "busy", "utilization"}}
	for _, l := range last.Links {
		rows = append(rows, []string{l.From + " -> " + l.To, configs.FormatBytes(int64(l.Bytes)), fmt.Sprintf("%.0f%%", 100*l.BusyShare), fmt.Sprintf("%.0f%%", 100*l.Utilization)})
	}
	return streams.Table(rows)
}
