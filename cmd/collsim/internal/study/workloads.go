package study

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/dnn"
	"github.com/collsim/collsim/workloads/fft"
	"github.com/collsim/collsim/workloads/taskbench"
)

// The studies of the workloads (DNN training, 3D FFT): each varies one
// choice of a seed paper and prints what the simulation finds.

type workloadOptions struct {
	machine string
	set     []string
	network string
}

func (o *workloadOptions) register(cmd *cobra.Command, machine, network string) {
	f := cmd.Flags()
	f.StringVarP(&o.machine, "machine", "m", machine, cmdutil.MachineUsage)
	f.StringArrayVar(&o.set, "set", nil, `a machine config setting "PATH=VALUE" (as run's --set); repeatable`)
	f.StringVar(&o.network, "network", network, "network model: analytic or flow")
}

func (o *workloadOptions) experiment() (*collsim.Experiment, error) {
	m, err := run.Machine(o.machine, o.set)
	if err != nil {
		return nil, err
	}
	e := &collsim.Experiment{Machine: m, Network: o.network, Seed: 1}
	return e, e.Check()
}

// counts reads a flag's list of counts ("64..1024", "8,16").
func counts(flag, list string) ([]int, error) {
	n, err := cmdutil.Ints(list)
	if err != nil {
		return nil, cmdutil.Flagf("%s: %v", flag, err)
	}
	return n, nil
}

func pct(a, b float64) string { return fmt.Sprintf("%+.1f%%", 100*(a/b-1)) }

// --- study fft -----------------------------------------------------------

func newFFTStudy(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var grids, ranks, routings string
	cmd := &cobra.Command{
		Use:   "fft",
		Short: "3D FFT on a Dragonfly: transposes aligned with groups vs default vs random",
		Long: `The FFT-on-Dragonfly seed claims that aligning a pencil FFT's alltoalls with
Dragonfly groups reduces communication time and improves scaling. For each
grid and rank count this study runs a forward pencil FFT three ways, on the
flow network with block placement unless said:

  default    the most square Pr x Pc grid, numbered row-major: each column
             (the second transpose's communicator) is consecutive ranks
  same grid  aligned's grid, numbered row-major as default is
  aligned    Pr the largest divisor of the ranks that divides a group's
             ranks (Pc at least 2: a pencil still), rows (the first
             transpose's communicator) consecutive: every row inside one
             group
  random     the default grid with ranks placed at random over the machine

and reports the time, the communication it exposes (the time saved when
every message is free) and each layout's saving against default, and
aligned's against the same grid numbered row-major (alignment alone, apart
from the grid's shape), under each of --routing (minimal: one global hop;
ugal: Aries-like adaptive detours).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFFTStudy(streams, o, grids, ranks, routings) },
	}
	o.register(cmd, "xc40", collsim.Flow)
	cmd.Flags().StringVar(&grids, "grids", "1024,2048,4096", "grid sizes N (N^3 points)")
	cmd.Flags().StringVarP(&ranks, "ranks", "n", "256,1024,4096", "rank counts")
	cmd.Flags().StringVar(&routings, "routing", "minimal,ugal", "routings to compare (comma-separated)")
	return cmd
}

func runFFTStudy(streams *cmdutil.IO, o *workloadOptions, gridList, rankList, routingList string) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	grids, err := counts("--grids", gridList)
	if err != nil {
		return err
	}
	ranks, err := counts("--ranks", rankList)
	if err != nil {
		return err
	}
	group := e.Machine.GroupSize()
	fmt.Fprintf(streams.Out, "3D FFT (forward, pencil, complex64, pairwise alltoall, 20 GFLOP/s FFTs, device packing at 100 GB/s) on %s, %s network; a group holds %d ranks\n", e.Machine.Name, e.Network, group)
	rows := [][]string{{"N", "ranks", "routing", "layout", "grid", "time", "exposed comm", "comm vs default"}}
	for _, n := range grids {
		for _, p := range ranks {
			for _, routing := range strings.Split(routingList, ",") {
				if p > e.Machine.Slots() {
					return cmdutil.Flagf("%d ranks, but %s has %d slots", p, e.Machine.Name, e.Machine.Slots())
				}
				square := int(math.Sqrt(float64(p)))
				for p%square != 0 {
					square--
				}
				pr := 1
				for d := 1; d <= p; d++ {
					if p%d == 0 && group%d == 0 && n%d == 0 && n%(p/d) == 0 && (p/d >= 2 || p < 4) { // a pencil still: two transposes, as the others
						pr = d
					}
				}
				var base, sameGrid float64
				// "same grid": aligned's grid in the default numbering, so
				// that alignment is measured apart from the grid's shape
				// (aligned was only set against the square grid: an audit).
				for _, c := range []struct {
					name      string
					pr        int
					aligned   bool
					placement string
				}{{"default", p / square, false, ""}, {"same grid", pr, false, ""}, {"aligned", pr, true, ""}, {"random", p / square, false, "random"}} {
					j := fft.Job{Nx: n, Ny: n, Nz: n, Pr: c.pr, Pc: p / c.pr, FLOPs: 20e9, Pack: "device", PackRate: 100e9, Alltoall: "pairwise", Aligned: c.aligned}
					if err := j.Check(); err != nil {
						rows = append(rows, []string{fmt.Sprint(n), fmt.Sprint(p), routing, c.name, fmt.Sprintf("%dx%d", j.Pr, j.Pc), "-", "-", err.Error()})
						continue
					}
					x := *e
					x.Placement, x.Routing = c.placement, strings.TrimSpace(routing)
					res, err := x.RunFFT(j, true)
					if err != nil {
						return err
					}
					vs := ""
					if c.name == "default" {
						base = res.Exposed
					} else if base > 0 {
						vs = pct(res.Exposed, base)
					}
					switch {
					case c.name == "same grid":
						sameGrid = res.Exposed
					case c.name == "aligned" && sameGrid > 0:
						vs += fmt.Sprintf(" (%s vs same grid)", pct(res.Exposed, sameGrid))
					}
					rows = append(rows, []string{fmt.Sprint(n), fmt.Sprint(p), routing, c.name, fmt.Sprintf("%dx%d", j.Pr, j.Pc), cmdutil.Seconds(res.Time), cmdutil.Seconds(res.Exposed), vs})
				}
			}
		}
	}
	return streams.Table(rows)
}

// --- study suara-training ------------------------------------------------

func newSuaraTraining(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var nodes string
	var batch int
	cmd := &cobra.Command{
		Use:   "suara-training",
		Short: "SUARA's claim: a 2x faster allreduce made ResNet-50 training 9% faster on 1,024 XC40 nodes",
		Long: `SUARA reports that its allreduce, about twice as fast as the native Open
MPI allreduce on Shaheen-II (a Cray XC40), made data-parallel ResNet-50 training 9% faster on
1,024 nodes. This study trains ResNet-50 with DDP (25 MiB buckets overlapped
with the backward pass, 32-bit gradients, one rank per node, --batch images
per node) on the xc40 machine with Haswell nodes, with the allreduce Open MPI
4.1 would choose and with SUARA2, and reports both the allreduce of the whole
gradient alone and the training step. It runs on the flow network: these
allreduces load the dragonfly's links past what the analytic network, which
shares none, can tell (its times are 1.8-9.5x lower, and break the links'
bandwidth bounds).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSuaraTraining(streams, o, nodes, batch) },
	}
	o.register(cmd, "xc40", collsim.Flow)
	cmd.Flags().StringVarP(&nodes, "nodes", "n", "64..1024", "node counts (one rank each)")
	cmd.Flags().IntVar(&batch, "batch", 32, "images per node per step")
	return cmd
}

func runSuaraTraining(streams *cmdutil.IO, o *workloadOptions, nodeList string, batch int) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	nodes, err := counts("--nodes", nodeList)
	if err != nil {
		return err
	}
	model := dnn.ResNet50()
	grads := model.Params() * 4
	fmt.Fprintf(streams.Out, "ResNet-50 DDP on %s (haswell nodes, %d images per node, 32-bit gradients: %s per step), %s network\n", e.Machine.Name, batch, fmt.Sprintf("%.1f MB", float64(grads)/1e6), e.Network)
	rows := [][]string{{"nodes", "allreduce ompi", "allreduce suara", "allreduce speedup", "step ompi", "step suara", "training speedup"}}
	for _, n := range nodes {
		var ar, step [2]float64
		for i, alg := range []string{"ompi", "suara"} {
			x := *e
			x.Collective, x.Algorithm, x.Ranks, x.Size, x.ElemSize, x.Verify = "allreduce", alg, n, grads, 4, collsim.VerifyOff
			r, err := x.Run()
			if err != nil {
				return err
			}
			ar[i] = r.Time
			j := dnn.Job{Model: model, Device: dnn.Devices["haswell"], Strategy: dnn.Strategy{DP: n, MicroBatch: batch, GradBytes: 4, Algorithms: map[string]string{"allreduce": alg}}}
			res, err := e.RunDNN(j, false)
			if err != nil {
				return err
			}
			step[i] = res.Step
		}
		rows = append(rows, []string{fmt.Sprint(n), cmdutil.Seconds(ar[0]), cmdutil.Seconds(ar[1]), fmt.Sprintf("%.2fx", ar[0]/ar[1]),
			cmdutil.Seconds(step[0]), cmdutil.Seconds(step[1]), fmt.Sprintf("%.1f%%", 100*(step[0]/step[1]-1))})
	}
	return streams.Table(rows)
}

// --- study compression ----------------------------------------------------

func newCompression(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var ratios string
	var gpus int
	var rate string
	cmd := &cobra.Command{
		Use:   "compression",
		Short: "Gradient compression on a 32-GPU cluster: scaling efficiency against the compression ratio",
		Long: `The frequency-domain gradient compression seed claims that compressing
gradients lets data-parallel training scale. This study trains ResNet-50 (64
images per GPU) and BERT-large (8 sequences per GPU) with DDP on --gpus A100s
of the gpu-cluster machine, gradients compressed by each ratio at --rate on the
GPU and allreduced, and reports the step, the throughput and the scaling
efficiency (throughput over --gpus times one GPU's, which exchanges nothing).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCompression(streams, o, ratios, gpus, rate) },
	}
	o.register(cmd, "gpu-cluster", collsim.Flow)
	cmd.Flags().StringVar(&ratios, "ratios", "1,2,5,10,20,50,100", "compression ratios")
	cmd.Flags().IntVarP(&gpus, "gpus", "n", 32, "GPUs")
	cmd.Flags().StringVar(&rate, "rate", "100GB/s", "compression and decompression throughput on the GPU, in uncompressed bytes/s")
	return cmd
}

func runCompression(streams *cmdutil.IO, o *workloadOptions, ratioList string, gpus int, rateFlag string) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	rate, err := configs.ParseBandwidth(rateFlag)
	if err != nil {
		return cmdutil.Flagf("--rate: %v", err)
	}
	var ratios []float64
	for _, r := range strings.Split(ratioList, ",") {
		r = strings.TrimSpace(r)
		var v float64
		if _, err := fmt.Sscan(r, &v); err != nil || v < 1 {
			return cmdutil.Flagf("--ratios: %q is not a ratio of at least 1", r)
		}
		ratios = append(ratios, v)
	}
	fmt.Fprintf(streams.Out, "gradient compression, DDP on %d A100s of %s, %s network, compression at %s\n", gpus, e.Machine.Name, e.Network, rateFlag)
	rows := [][]string{{"model", "ratio", "step", "samples/s", "scaling efficiency"}}
	for _, m := range []struct {
		model *dnn.Model
		batch int
	}{{dnn.ResNet50(), 64}, {dnn.BERTLarge(), 8}} {
		one, err := e.RunDNN(dnn.Job{Model: m.model, Device: dnn.Devices["a100"], Strategy: dnn.Strategy{DP: 1, MicroBatch: m.batch}}, false)
		if err != nil {
			return err
		}
		for _, r := range ratios {
			j := dnn.Job{Model: m.model, Device: dnn.Devices["a100"], Strategy: dnn.Strategy{DP: gpus, MicroBatch: m.batch,
				Compression: dnn.Compression{Ratio: r, Throughput: rate, Exchange: "allreduce"}}}
			res, err := e.RunDNN(j, false)
			if err != nil {
				return err
			}
			rows = append(rows, []string{m.model.Name, fmt.Sprint(r), cmdutil.Seconds(res.Step), fmt.Sprintf("%.0f", res.SamplesPerS),
				fmt.Sprintf("%.1f%%", 100*res.SamplesPerS/(float64(gpus)*one.SamplesPerS))})
		}
	}
	return streams.Table(rows)
}

// --- study lp-training ----------------------------------------------------

func newLPTraining(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var gpus string
	cmd := &cobra.Command{
		Use:   "lp-training",
		Short: "Linear Pipelining inside BSP-SGD against ring and tree allreduces",
		Long: `The Linear Pipelining seed applies its allreduce to bulk-synchronous SGD:
compute every gradient, then allreduce them all, then update. This study
trains ResNet-50 that way (64 images per GPU, one allreduce of the whole
16-bit gradient after the backward pass) on the gpu-cluster machine with
linear_pipeline, ring and a binomial tree (reduce_bcast), and reports each
step and the share of it spent communicating. It runs on the flow network:
linear_pipeline's allreduce shares the links between nodes, and on the
analytic network, which shares none, it took as little as 56% of the flow
model's time, less than its links allow.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLPTraining(streams, o, gpus) },
	}
	o.register(cmd, "gpu-cluster", collsim.Flow)
	cmd.Flags().StringVarP(&gpus, "gpus", "n", "8..256", "GPU counts")
	return cmd
}

func runLPTraining(streams *cmdutil.IO, o *workloadOptions, gpuList string) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	gpus, err := counts("--gpus", gpuList)
	if err != nil {
		return err
	}
	model := dnn.ResNet50()
	algs := []string{"linear_pipeline", "ring", "reduce_bcast"}
	fmt.Fprintf(streams.Out, "BSP-SGD ResNet-50 (64 images per GPU, one allreduce of %s after the backward pass) on %s, %s network\n", fmt.Sprintf("%.1f MB", float64(2*model.Params())/1e6), e.Machine.Name, e.Network)
	head := []string{"GPUs"}
	for _, a := range algs {
		head = append(head, a, "comm share")
	}
	rows := [][]string{head}
	for _, n := range gpus {
		row := []string{fmt.Sprint(n)}
		for _, a := range algs {
			j := dnn.Job{Model: model, Device: dnn.Devices["a100"], Strategy: dnn.Strategy{DP: n, MicroBatch: 64, NoOverlap: true, BucketBytes: 1 << 40, FirstBucketBytes: 1 << 40,
				Algorithms: map[string]string{"allreduce": a}}}
			res, err := e.RunDNN(j, true)
			if err != nil {
				return err
			}
			row = append(row, cmdutil.Seconds(res.Step), fmt.Sprintf("%.0f%%", 100*res.Breakdown.Exposed/res.Step))
		}
		rows = append(rows, row)
	}
	return streams.Table(rows)
}

// --- study strategies -----------------------------------------------------

func newStrategies(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var model string
	var gpus, batch, tp, pp, workers int
	cmd := &cobra.Command{
		Use:   "strategies",
		Short: "GPT-3 175B on 1,024 GPUs: the best dp x tp x pp found against Megatron's hand choice",
		Long: `The Unity/FlexFlow seed asks which parallel strategy a model should use on a
machine. Restricted to parallel degrees, this study simulates every dp x tp x pp
of --gpus GPUs (tp within a node, microbatches of one sequence, 25 or 100 MiB
buckets) for a global batch of --batch, and compares the best with the
Megatron-LM choice (--tp 8 in a node, --pp, dp the rest).

The default machine is gpu-cluster grown to three levels of its fat tree
(512 nodes of 8 GPUs) so that 1,024 GPUs fit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := cmdutil.Workers(cmd.Flags(), workers)
			if err != nil {
				return err
			}
			return runStrategies(streams, o, model, gpus, batch, tp, pp, w)
		},
	}
	o.register(cmd, "gpu-cluster", collsim.Flow)
	cmd.Flags().Lookup("set").DefValue = "[network.fat_tree.levels=3]"
	o.set = []string{"network.fat_tree.levels=3"}
	cmd.Flags().StringVar(&model, "model", "gpt3-175b", "the model (as workload dnn --model)")
	cmd.Flags().IntVarP(&gpus, "gpus", "n", 1024, "GPUs")
	cmd.Flags().IntVar(&batch, "batch", 512, "global batch (sequences per step)")
	cmd.Flags().IntVar(&tp, "tp", 8, "the hand choice's tensor parallelism")
	cmd.Flags().IntVar(&pp, "pp", 16, "the hand choice's pipeline stages")
	cmd.Flags().IntVar(&workers, "workers", 0, "simulations at once (default: one per core)")
	return cmd
}

func runStrategies(streams *cmdutil.IO, o *workloadOptions, modelName string, gpus, batch, tp, pp, workers int) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	model, err := configs.Model(modelName)
	if err != nil {
		return err
	}
	base := dnn.Job{Model: model, Device: dnn.Devices["a100"], NodeSize: e.Machine.NodeSize(), Strategy: dnn.Strategy{MicroBatch: 1}}
	strategies := collsim.Strategies(base, gpus, batch)
	cands, err := e.Search(base, strategies, workers, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "%s on %d A100s of %s (%s network), global batch %d: %d strategies, %d fit\n", model.Name, gpus, e.Machine.Name, e.Network, batch, len(cands), countFit(cands))
	hand := -1
	for i, c := range cands {
		s := c.Strategy
		if s.TP == tp && s.PP == pp && s.BucketBytes == 25<<20 {
			hand = i
		}
	}
	rows := [][]string{{"rank", "strategy", "step", "samples/s", "% of peak", "memory/device", "vs best"}}
	best := cands[0].Step
	for i, c := range cands {
		if c.Refused != "" || i >= 5 && i != hand {
			continue
		}
		mark := fmt.Sprint(i + 1)
		if i == hand {
			mark += " (hand)"
		}
		rows = append(rows, []string{mark, c.Describe, cmdutil.Seconds(c.Step), fmt.Sprintf("%.3g", c.SamplesPerS), fmt.Sprintf("%.1f", 100*c.PeakShare),
			c.Memory(), fmt.Sprintf("%.2fx", c.Step/best)})
	}
	if hand < 0 {
		rows = append(rows, []string{"-", fmt.Sprintf("tp %d pp %d", tp, pp), "", "", "", "", "not a strategy of this search"})
	} else if cands[hand].Refused != "" {
		rows = append(rows, []string{"-", cands[hand].Describe, "", "", "", cands[hand].Memory(), cands[hand].Refused})
	}
	return streams.Table(rows)
}

func countFit(cands []collsim.Candidate) int {
	n := 0
	for _, c := range cands {
		if c.Refused == "" {
			n++
		}
	}
	return n
}

// --- study taskbench ------------------------------------------------------

func newTaskBenchStudy(streams *cmdutil.IO) *cobra.Command {
	o := &workloadOptions{}
	var nodes, overheads, patterns string
	var steps, points, workers int
	cmd := &cobra.Command{
		Use:   "taskbench",
		Short: "Task Bench's METG against nodes: is 100 us the smallest granularity at 256 nodes?",
		Long: `Task Bench's paper finds that at 256 nodes (32 cores each) even the best
systems sustain no task granularity below about 100 us. This study finds
METG(50%) on the cori machine (a Cori-like Aries dragonfly, 32 ranks a node)
for each node count, pattern (stencil_1d; nearest with radix 5) and per-task
overhead of the runtime system (1, 10 and 100 us): one column per core, the
kernel halved --points times from 10 ms, --steps timesteps, 16 bytes per
dependency.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := cmdutil.Workers(cmd.Flags(), workers)
			if err != nil {
				return err
			}
			return runTaskBenchStudy(streams, o, nodes, overheads, patterns, steps, points, w)
		},
	}
	o.register(cmd, "cori", collsim.Analytic)
	f := cmd.Flags()
	f.StringVarP(&nodes, "nodes", "n", "1..256", "node counts (32 ranks each on cori)")
	f.StringVar(&overheads, "overheads", "1us,10us,100us", "per-task overheads")
	f.StringVar(&patterns, "patterns", "stencil_1d,nearest", "patterns (nearest with radix 5)")
	f.IntVar(&steps, "steps", 20, "timesteps")
	f.IntVar(&points, "points", 20, "kernels of each METG sweep")
	f.IntVar(&workers, "workers", 0, "simulations at once (default: one per core)")
	return cmd
}

func runTaskBenchStudy(streams *cmdutil.IO, o *workloadOptions, nodeList, overheadList, patternList string, steps, points, workers int) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	nodes, err := counts("--nodes", nodeList)
	if err != nil {
		return err
	}
	var overheads []sim.Time
	for _, s := range strings.Split(overheadList, ",") {
		d, err := configs.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return cmdutil.Flagf("--overheads: %v", err)
		}
		overheads = append(overheads, d)
	}
	per := e.Machine.RanksPerHost
	var durations []sim.Time
	for d, i := 10*sim.Millisecond, 0; i < points; d, i = d/2, i+1 {
		durations = append(durations, d)
	}
	fmt.Fprintf(streams.Out, "Task Bench METG(50%%) on %s (%d ranks a node, %s network): %d timesteps, a column per core, kernels from 10 ms halved %d times\n", e.Machine.Name, per, e.Network, steps, points-1)
	head := []string{"pattern", "overhead"}
	for _, n := range nodes {
		head = append(head, fmt.Sprintf("%d nodes", n))
	}
	rows := [][]string{head}
	for _, pat := range strings.Split(patternList, ",") {
		pat = strings.TrimSpace(pat)
		for _, over := range overheads {
			name := pat
			if pat == "nearest" {
				name = "nearest r5"
			}
			row := []string{name, cmdutil.Seconds(over.Seconds())}
			for _, n := range nodes {
				ranks := n * per
				if ranks > e.Machine.Slots() {
					return cmdutil.Flagf("%d nodes, but %s has %d", n, e.Machine.Name, e.Machine.Slots()/per)
				}
				j := taskbench.Job{Ranks: ranks, Overhead: over, Graphs: []taskbench.Graph{{Pattern: pat, Width: ranks, Steps: steps, Radix: 5, Output: 16}}}
				if err := j.Check(); err != nil {
					return &cmdutil.FlagError{Err: err}
				}
				_, metg, crossed, err := e.METG(j, durations, workers, nil)
				if err != nil {
					return err
				}
				cell := "not reached"
				switch {
				case !math.IsNaN(metg) && crossed:
					cell = cmdutil.Seconds(metg)
				case !math.IsNaN(metg):
					cell = "<= " + cmdutil.Seconds(metg) // even the shortest kernel ran at 50%
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
	}
	return streams.Table(rows)
}
