package workload

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/workloads/dnn"
)

type dnnFlags struct {
	machineFlags
	model, device                 string
	peak, memory, hostLink        string
	efficiency                    float64
	devices, dp, tp, pp           int
	order, schedule               string
	microbatches, microBatch      int
	zero3, noOverlap              bool
	bucket, firstBucket           string
	gradBytes                     int64
	algo                          []string
	compress                      float64
	compressRate, compressExch    string
	recompute, offload, offSerial bool
	inference                     bool
	prune                         float64
	tpAcross                      bool
	breakdown                     bool
	search                        bool
	globalBatch, workers, top     int
	scaling                       string
	searchMB                      string
	strategy                      string
	fromStrategy                  map[string]string // the flags the --strategy file set, and its keys for them
	strategyLines                 map[string]int    // the --strategy file's keys, and their lines
	transport                     string
}

func newDNN(streams *cmdutil.IO) *cobra.Command {
	o := &dnnFlags{}
	cmd := &cobra.Command{
		Use:   "dnn",
		Short: "Simulate a training (or inference) step of a neural network",
		Long: `Simulate one training step (or one batch of inference) of a neural network on
a machine: every device is a rank that computes its layers at the device's
rate and calls collectives on its data-, tensor- and pipeline-parallel groups.

Prints the step time, its breakdown (compute, pipeline bubble, exposed
communication by kind: the step's time saved when that kind of message is
free), samples and tokens per second, model FLOP/s per device and as a share
of peak, and each pipeline stage's memory per device (mixed-precision Adam:
16 bytes per parameter, plus activations). A strategy that does not fit, or
whose degrees do not multiply to the devices, is refused with the numbers.

--search simulates every dp x tp x pp that multiplies to --devices (tp up to
a node), for a fixed --global-batch, on all cores, and ranks them.`,
		Example: `  collsim workload dnn --model resnet50 --device v100 --devices 64 -m gpu-cluster
  collsim workload dnn --model gpt3-175b --device a100 --tp 8 --pp 16 --dp 4 --microbatches 64 -m gpu-cluster --set network.fat_tree.levels=3
  collsim workload dnn --model bert-large --device a100 --devices 32 --compress 10 --compress-rate 200GB/s -m gpu-cluster
  collsim workload dnn --model gpt:24,2048,16,2048,50257 --device a100 --devices 64 --search --global-batch 512 -m gpu-cluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams) },
	}
	f := cmd.Flags()
	o.machineFlags.register(f, "gpu-cluster", collsim.Analytic)
	f.StringVar(&o.model, "model", "resnet50", "the model: resnet50, bert-large, gpt3-175b, gpt:LAYERS,HIDDEN,HEADS,SEQ,VOCAB, or a model YAML file (see README)")
	f.StringVar(&o.device, "device", "a100", "the device: a100, h100, v100, haswell (an XC40 node), or a device YAML file")
	f.StringVar(&o.peak, "peak", "", "override the device's peak, e.g. 312TFLOP/s")
	f.Float64Var(&o.efficiency, "efficiency", 0, "override the share of peak layers achieve (default: the device's, or 0.5)")
	f.StringVar(&o.memory, "memory", "", "override the device's memory, e.g. 40GiB")
	f.StringVar(&o.hostLink, "host-link", "", "override the device's host link bandwidth, e.g. 25GB/s")
	f.IntVar(&o.devices, "devices", 0, "devices (ranks); default dp x tp x pp, or with dp unset, the machine's slots over tp x pp")
	f.IntVar(&o.dp, "dp", 0, "data-parallel degree (default: devices / (tp x pp))")
	f.IntVar(&o.tp, "tp", 1, "tensor-parallel degree (Megatron-style, on transformer layers)")
	f.IntVar(&o.pp, "pp", 1, "pipeline-parallel stages")
	f.StringVar(&o.order, "order", "tp,dp,pp", "rank order of the three degrees, innermost first (tp,dp,pp keeps tensor parallel inside a node)")
	f.StringVar(&o.schedule, "schedule", "1f1b", "pipeline schedule: 1f1b or gpipe")
	f.IntVar(&o.microbatches, "microbatches", 1, "microbatches per step (gradient accumulation; pipeline depth)")
	f.IntVar(&o.microBatch, "microbatch-size", 1, "samples per microbatch")
	f.BoolVar(&o.zero3, "zero3", false, "ZeRO-3 / FSDP: shard parameters, gradients and optimizer state over the data-parallel group")
	f.StringVar(&o.bucket, "bucket", "25MiB", "gradient bucket size of the data-parallel allreduce (PyTorch DDP's default 25 MiB)")
	f.StringVar(&o.firstBucket, "first-bucket", "1MiB", "size of the first gradient bucket, of the last layers, exchanged first (torch.distributed's _DEFAULT_FIRST_BUCKET_BYTES, 1 MiB)")
	f.BoolVar(&o.noOverlap, "no-overlap", false, "allreduce the gradients after the backward pass instead of during it")
	f.Int64Var(&o.gradBytes, "grad-bytes", 2, "bytes per gradient element exchanged")
	f.StringArrayVar(&o.algo, "algo", nil, `a collective's algorithm "COLLECTIVE=ALGORITHM" (allreduce=ring, allreduce=ompi, allgather=bruck, ...); repeatable`)
	f.Float64Var(&o.compress, "compress", 1, "gradient compression ratio (1: none)")
	f.StringVar(&o.compressRate, "compress-rate", "", "compression (and decompression) throughput on the device, in uncompressed bytes/s, e.g. 200GB/s")
	f.StringVar(&o.compressExch, "compress-exchange", "allreduce", "how compressed gradients are exchanged: allreduce (dense-compatible) or allgather (sparse)")
	f.BoolVar(&o.recompute, "recompute", false, "recompute activations in the backward pass (one more forward pass)")
	f.BoolVar(&o.offload, "offload", false, "keep activations in host memory, copied over the host link alongside compute")
	f.BoolVar(&o.offSerial, "offload-serial", false, "with --offload: the copies stall compute instead of overlapping it")
	f.BoolVar(&o.inference, "inference", false, "forward passes only (data- or pipeline-parallel replicas)")
	f.Float64Var(&o.prune, "prune", 0, "with --inference: share of every layer's operations skipped at run time (O3BNN reports 0.16-0.42)")
	f.BoolVar(&o.tpAcross, "tp-across-nodes", false, "allow tensor parallelism wider than a node")
	f.StringVar(&o.transport, "transport", "", "how devices exchange messages: nccl (every message eager, no rendezvous) or mpi (the machine's eager limit); default nccl on machines with several devices per node, mpi otherwise")
	f.StringVar(&o.strategy, "strategy", "", "a strategy YAML file: the strategy flags as keys (dp, tp, pp, microbatches, microbatch_size, zero3, bucket, algo: {allreduce: ring}, compress: {ratio, rate, exchange}, ...); flags given on the command line override it")
	f.BoolVar(&o.breakdown, "breakdown", true, "also run the step with communication free, in all and kind by kind, to split its time")
	f.BoolVar(&o.search, "search", false, "simulate every strategy for --devices and --global-batch and rank them")
	f.IntVar(&o.globalBatch, "global-batch", 0, "with --search: samples per step")
	f.IntVar(&o.workers, "workers", 0, "with --search: simulations at once (default: one per core)")
	f.IntVar(&o.top, "top", 20, "with --search: strategies to print (JSON has all)")
	f.StringVar(&o.searchMB, "search-microbatch-sizes", "", `with --search: microbatch sizes to try, e.g. "1,2,4" (the microbatch count follows: global batch / (dp x size)); default --microbatch-size`)
	f.StringVar(&o.scaling, "scaling", "", `weak scaling: device counts, e.g. "8..512" (dp grows, tp, pp and the batch per replica stay): step, throughput and scaling efficiency against the first count`)
	return cmd
}

// fromFile fills the strategy flags the command line did not set from
// the --strategy file.
func (o *dnnFlags) fromFile(cmd *cobra.Command) error {
	if o.strategy == "" {
		return nil
	}
	sf, err := configs.LoadStrategy(o.strategy)
	if err != nil {
		return err
	}
	st := sf.Strategy
	o.fromStrategy, o.strategyLines = map[string]string{}, sf.Lines
	set := func(key, flag string, apply func()) {
		if sf.Set[key] && !cmd.Flags().Changed(flag) {
			apply()
			o.fromStrategy[flag] = key
		}
	}
	set("dp", "dp", func() { o.dp = st.DP })
	set("tp", "tp", func() { o.tp = st.TP })
	set("pp", "pp", func() { o.pp = st.PP })
	set("order", "order", func() { o.order = st.Order })
	set("schedule", "schedule", func() { o.schedule = st.Schedule })
	set("microbatches", "microbatches", func() { o.microbatches = st.Microbatches })
	set("microbatch_size", "microbatch-size", func() { o.microBatch = st.MicroBatch })
	set("zero3", "zero3", func() { o.zero3 = st.ZeRO3 })
	set("bucket", "bucket", func() { o.bucket = fmt.Sprint(st.BucketBytes) })
	set("first_bucket", "first-bucket", func() { o.firstBucket = fmt.Sprint(st.FirstBucketBytes) })
	set("no_overlap", "no-overlap", func() { o.noOverlap = st.NoOverlap })
	set("grad_bytes", "grad-bytes", func() { o.gradBytes = st.GradBytes })
	set("algo", "algo", func() {
		for _, c := range slices.Sorted(maps.Keys(st.Algorithms)) {
			o.algo = append(o.algo, c+"="+st.Algorithms[c])
		}
	})
	set("compress", "compress", func() {
		o.compress, o.compressExch = st.Compression.Ratio, cmp.Or(st.Compression.Exchange, o.compressExch)
		if st.Compression.Throughput > 0 {
			o.compressRate = fmt.Sprintf("%gB/s", st.Compression.Throughput)
		}
	})
	set("recompute", "recompute", func() { o.recompute = st.Recompute })
	set("offload", "offload", func() { o.offload = st.Offload })
	set("offload_serial", "offload-serial", func() { o.offSerial = st.OffloadSerial })
	set("inference", "inference", func() { o.inference = st.Inference })
	set("prune", "prune", func() { o.prune = st.Prune })
	set("tp_across_nodes", "tp-across-nodes", func() { o.tpAcross = sf.TPAcrossNodes })
	return nil
}

// notApplicable refuses the flags given, or the --strategy file's
// settings of them, that the run would ignore, for the reason why.
func (o *dnnFlags) notApplicable(f *pflag.FlagSet, why string, flags ...string) error {
	if err := cmdutil.NotApplicable(f, why, flags...); err != nil {
		return err
	}
	for _, flag := range flags { // the same rule for the --strategy file's settings
		if key, ok := o.fromStrategy[flag]; ok {
			return cmdutil.Flagf("%s:%d: %s does not apply: %s", o.strategy, o.strategyLines[key], key, why)
		}
	}
	return nil
}

// applicable refuses flags the run would ignore.
func (o *dnnFlags) applicable(cmd *cobra.Command) error {
	f := cmd.Flags()
	checks := []struct {
		when  bool
		why   string
		flags []string
	}{
		{!o.inference, "they price inference (give --inference)", []string{"prune"}},
		{!o.search, "they shape a search (give --search)", []string{"global-batch", "top", "workers", "search-microbatch-sizes"}},
		{o.search, "a search chooses the degrees and records no one run", []string{"dp", "tp", "pp", "scaling", "trace", "timeline", "microbatches"}},
		{o.scaling != "", "--scaling sets the devices (dp grows)", []string{"devices", "dp", "trace", "timeline"}},
		{o.compress == 1, "they shape compression (give --compress RATIO)", []string{"compress-rate", "compress-exchange"}},
		// It turned offloading on without a word (a new user's trial).
		{!o.offload, "it shapes offloading (give --offload)", []string{"offload-serial"}},
		{o.zero3, "ZeRO-3 reduce-scatters each layer's gradients (no buckets, no allreduce)", []string{"bucket", "first-bucket", "no-overlap", "compress", "compress-rate", "compress-exchange"}},
		{o.inference, "inference exchanges no gradients", []string{"bucket", "first-bucket", "no-overlap", "grad-bytes", "compress", "zero3"}},
		// They were refused for exchanging no gradients (a new user's trial).
		{o.inference, "inference keeps no activations for a backward pass", []string{"recompute", "offload", "offload-serial"}},
		{o.inference, "inference runs forward passes only, in microbatch order", []string{"schedule"}},
		{!o.search && o.pp == 1 && o.microbatches == 1, "the schedule orders the passes of several microbatches: give --microbatches or --pp above 1", []string{"schedule"}},
	}
	for _, c := range checks {
		if !c.when {
			continue
		}
		if err := o.notApplicable(f, c.why, c.flags...); err != nil {
			return err
		}
	}
	for _, name := range []string{"microbatches", "microbatch-size"} {
		if v, _ := f.GetInt(name); v < 1 {
			return cmdutil.Flagf("--%s must be at least 1, not %d", name, v)
		}
	}
	if o.gradBytes < 1 {
		// 0 ran as 2, the API's zero value for its default (a new user's
		// trial).
		if key, ok := o.fromStrategy["grad-bytes"]; ok && !f.Changed("grad-bytes") {
			return cmdutil.Flagf("%s:%d: %s must be at least 1, not %d (2: 16-bit gradients)", o.strategy, o.strategyLines[key], key, o.gradBytes)
		}
		return cmdutil.Flagf("--grad-bytes must be at least 1, not %d (2: 16-bit gradients)", o.gradBytes)
	}
	if o.top < 1 {
		return cmdutil.Flagf("--top must be at least 1, not %d (--json prints every strategy)", o.top)
	}
	if f.Changed("efficiency") && !(o.efficiency > 0 && o.efficiency <= 1) {
		return cmdutil.Flagf("--efficiency %g: a share of peak in (0, 1]", o.efficiency)
	}
	var err error
	if o.workers, err = cmdutil.Workers(f, o.workers); err != nil {
		return err
	}
	if !(o.compress >= 1) {
		return cmdutil.Flagf("--compress %g: a ratio of at least 1 (1: none)", o.compress)
	}
	for c := range o.algoSet() {
		switch c {
		case "allreduce", "allgather", "reduce_scatter":
		default:
			return cmdutil.Flagf("--algo %s=...: a training step calls allreduce (data and tensor parallel), allgather and reduce_scatter (ZeRO-3), not %s", c, c)
		}
	}
	return nil
}

func (o *dnnFlags) algoSet() map[string]bool {
	out := map[string]bool{}
	for _, a := range o.algo {
		c, _, _ := strings.Cut(a, "=")
		out[c] = true
	}
	return out
}

func (o *dnnFlags) job(cmd *cobra.Command, slots int) (dnn.Job, int, error) {
	var j dnn.Job
	if err := o.fromFile(cmd); err != nil {
		return j, 0, err
	}
	if err := o.applicable(cmd); err != nil {
		return j, 0, err
	}
	model, err := configs.Model(o.model)
	if err != nil && strings.HasPrefix(o.model, "gpt:") {
		// The shape is the flag's value: a usage error (exit 1 before: an
		// audit), where a model file's problems are a config's.
		return j, 0, &cmdutil.FlagError{Err: fmt.Errorf("--model: %w", err)}
	}
	if err != nil {
		return j, 0, err
	}
	dev, err := configs.Device(o.device)
	if err != nil {
		return j, 0, err
	}
	if o.peak != "" {
		if dev.Peak, err = configs.ParseFLOPs(o.peak); err != nil {
			return j, 0, cmdutil.Flagf("--peak: %v", err)
		}
	}
	if cmd.Flags().Changed("efficiency") {
		dev.Efficiency, dev.ByKind = o.efficiency, nil
	}
	if o.memory != "" {
		if dev.Memory, err = configs.ParseSize(o.memory); err != nil {
			return j, 0, cmdutil.Flagf("--memory: %v", err)
		}
		if err := dnn.CheckMemory(dev.Memory); err != nil {
			// A plain number is bytes: --memory 40 meant 40 GiB, and 0
			// would turn the check off without a word.
			return j, 0, cmdutil.Flagf("--memory %s: %v", o.memory, err)
		}
	}
	if o.hostLink != "" {
		if dev.HostLink, err = configs.ParseBandwidth(o.hostLink); err != nil {
			return j, 0, cmdutil.Flagf("--host-link: %v", err)
		}
	}
	bucket, err := bucketSize("bucket", o.bucket, "25MiB")
	if err != nil {
		return j, 0, err
	}
	firstBucket, err := bucketSize("first-bucket", o.firstBucket, "1MiB")
	if err != nil {
		return j, 0, err
	}
	algos, err := algoMap(o.algo)
	if err != nil {
		return j, 0, err
	}
	var rate float64
	if o.compressRate != "" {
		if rate, err = configs.ParseBandwidth(o.compressRate); err != nil {
			return j, 0, cmdutil.Flagf("--compress-rate: %v", err)
		}
	}
	if o.tp < 1 || o.pp < 1 || o.dp < 0 || o.devices < 0 {
		return j, 0, cmdutil.Flagf("--tp and --pp must be at least 1, --dp and --devices not negative")
	}
	for _, name := range []string{"devices", "dp"} {
		if v, _ := cmd.Flags().GetInt(name); v == 0 && cmd.Flags().Changed(name) {
			return j, 0, cmdutil.Flagf("--%s 0: give at least 1, or leave it out for its default", name)
		}
	}
	devices, dp := o.devices, o.dp
	switch {
	case devices == 0 && dp == 0:
		devices = slots / (o.tp * o.pp) * (o.tp * o.pp)
		dp = devices / (o.tp * o.pp)
	case devices == 0:
		devices = dp * o.tp * o.pp
	case dp == 0:
		if devices%(o.tp*o.pp) != 0 {
			return j, 0, cmdutil.Flagf("--devices %d is not a multiple of tp %d x pp %d", devices, o.tp, o.pp)
		}
		dp = devices / (o.tp * o.pp)
	}
	if devices < 1 {
		return j, 0, cmdutil.Flagf("tp %d x pp %d is more devices than the machine's %d slots", o.tp, o.pp, slots)
	}
	if !o.search && o.scaling == "" {
		// (All but --compress were taken and ignored: an audit.)
		if dp == 1 {
			if err := o.notApplicable(cmd.Flags(), "dp 1 exchanges no gradients", "compress", "zero3", "bucket", "first-bucket", "no-overlap", "grad-bytes"); err != nil {
				return j, 0, err
			}
		}
		if o.tp == 1 {
			if err := o.notApplicable(cmd.Flags(), "tp 1 splits no layer over devices", "tp-across-nodes"); err != nil {
				return j, 0, err
			}
		}
		if _, ok := algos["allreduce"]; ok && dp == 1 && o.tp == 1 {
			return j, 0, cmdutil.Flagf("--algo allreduce= does not apply: the step runs no allreduce (dp 1 and tp 1)")
		}
	}
	// The collectives the step runs: allreduce always (tp, dp); allgather
	// and reduce_scatter under ZeRO-3, allgather for sparse compression.
	for c := range algos {
		used := c == "allreduce" || o.zero3 && (c == "allgather" || c == "reduce_scatter") || c == "allgather" && o.compress != 1 && o.compressExch == "allgather"
		if !used {
			return j, 0, cmdutil.Flagf("--algo %s= does not apply: the step runs no %s (allgather and reduce_scatter come with --zero3; allgather with --compress-exchange allgather)", c, c)
		}
	}
	j = dnn.Job{Model: model, Device: dev, AllowTPAcrossNodes: o.tpAcross, Transport: o.transport, Strategy: dnn.Strategy{
		DP: dp, TP: o.tp, PP: o.pp, Order: o.order, Schedule: o.schedule, Microbatches: o.microbatches, MicroBatch: o.microBatch,
		ZeRO3: o.zero3, BucketBytes: bucket, FirstBucketBytes: firstBucket, NoOverlap: o.noOverlap, GradBytes: o.gradBytes, Algorithms: algos,
		Compression: dnn.Compression{Ratio: o.compress, Throughput: rate, Exchange: o.compressExch},
		Recompute:   o.recompute, Offload: o.offload, OffloadSerial: o.offSerial, Inference: o.inference, Prune: o.prune,
	}}
	return j, devices, nil
}

func (o *dnnFlags) run(cmd *cobra.Command, streams *cmdutil.IO) error {
	e, done, err := o.experiment(streams)
	if err != nil {
		return err
	}
	defer done()
	j, devices, err := o.job(cmd, e.Machine.Slots())
	if err != nil {
		return err
	}
	j.NodeSize = e.Machine.NodeSize()
	if devices > e.Machine.Slots() {
		return fmt.Errorf("%d devices, but machine %s has %d slots; use a larger machine (--set, or another -m) or fewer devices", devices, e.Machine.Name, e.Machine.Slots())
	}
	if j.Nodes, err = nodesOf(e, devices); err != nil {
		return err
	}
	if note := j.Device.KindsUnmatched(j.Model); note != "" {
		fmt.Fprintln(streams.Err, "collsim: note:", note)
	}
	if o.search {
		return o.runSearch(streams, e, j, devices)
	}
	if o.scaling != "" {
		return o.runScaling(streams, e, j)
	}
	if err := j.Check(devices); err != nil {
		var oom *dnn.OutOfMemory
		if errors.As(err, &oom) {
			return err // the strategy does not fit the machine: exit 1, as ranks that do not fit
		}
		return &cmdutil.FlagError{Err: err}
	}
	if j.Strategy.Offload {
		kept := j
		kept.Strategy.Offload = false
		if slices.Equal(j.Memory(), kept.Memory()) {
			fmt.Fprintln(streams.Err, "collsim: note: --offload saves no device memory here: it keeps three microbatches' activations on the device (in use, going out, coming back), and no stage holds more; it only adds the copies")
		}
	}
	res, err := e.RunDNN(j, o.breakdown)
	if err != nil {
		return err
	}
	if err := o.writeTrace(res.Devices, fmt.Sprintf("%s, %s on %d ranks of %s (%s network)", res.Model, res.Strategy, res.Devices, res.Run.Machine, res.Run.Network)); err != nil {
		return err
	}
	if o.json {
		return cmdutil.JSON(streams.Out, res)
	}
	return printDNN(streams, j, res)
}

func printDNN(streams *cmdutil.IO, j dnn.Job, r *collsim.DNNResult) error {
	m := j.Model
	rows := [][]string{
		{"model", fmt.Sprintf("%s: %s parameters, %s per sample forward, %d layers", m.Name, cmdutil.SI(float64(m.Params()), ""), cmdutil.SI(m.FwdFLOPs(), "FLOP"), len(m.Layers))},
		{"device", fmt.Sprintf("%s: %s peak, %s", j.Device.Name, cmdutil.SI(j.Device.Peak, "FLOP/s"), deviceMemory(j.Device.Memory))},
		{"strategy", fmt.Sprintf("%s on %d ranks of %s (%s network, %s transport)", r.Strategy, r.Devices, r.Run.Machine, r.Run.Network, r.Transport)},
		{"batch", fmt.Sprintf("%d samples per step", r.GlobalBatch)},
		{"step", cmdutil.Seconds(r.Step)},
		{"throughput", throughput(r)},
		{"model FLOP/s", fmt.Sprintf("%s per device, %.1f%% of peak", cmdutil.SI(r.ModelFLOPs, "FLOP/s"), 100*r.PeakShare)},
	}
	if b := r.Breakdown; b != nil {
		var kinds []string
		for _, k := range j.Kinds() {
			kinds = append(kinds, fmt.Sprintf("%s %s", k, cmdutil.Seconds(b.ExposedBy[k])))
		}
		line := fmt.Sprintf("compute %s, pipeline bubble %s, exposed communication %s", cmdutil.Seconds(b.Compute), cmdutil.Seconds(b.Bubble), cmdutil.Seconds(b.Exposed))
		if len(kinds) > 0 {
			line += " (saved when free: " + strings.Join(kinds, ", ") + ")"
		}
		rows = append(rows, []string{"breakdown", line})
	}
	for _, mem := range r.Memory {
		rows = append(rows, []string{fmt.Sprintf("memory, stage %d", mem.Stage), fmt.Sprintf("%s per device: weights %s, gradients %s, optimizer %s, activations %s",
			gib(mem.Total), gib(mem.Weights), gib(mem.Gradients), gib(mem.Optimizer), gib(mem.Activations))})
		if len(r.Memory) > 4 && mem.Stage == 1 {
			rows = append(rows, []string{"", fmt.Sprintf("(%d more stages)", len(r.Memory)-3)})
			rows = append(rows, memRow(r.Memory[len(r.Memory)-1]))
			break
		}
	}
	rows = append(rows, []string{"simulated", fmt.Sprintf("%d ops, %d messages in %s", r.Run.Ops, r.Run.Messages, cmdutil.Seconds(r.Run.Wall))})
	return streams.Table(rows)
}

func memRow(mem dnn.Memory) []string {
	return []string{fmt.Sprintf("memory, stage %d", mem.Stage), fmt.Sprintf("%s per device: weights %s, gradients %s, optimizer %s, activations %s",
		gib(mem.Total), gib(mem.Weights), gib(mem.Gradients), gib(mem.Optimizer), gib(mem.Activations))}
}

func throughput(r *collsim.DNNResult) string {
	s := cmdutil.SI(r.SamplesPerS, "samples/s")
	if r.TokensPerS > 0 {
		s += fmt.Sprintf(", %s tokens/s", cmdutil.SI(r.TokensPerS, ""))
	}
	return s
}

func (o *dnnFlags) runSearch(streams *cmdutil.IO, e *collsim.Experiment, j dnn.Job, devices int) error {
	if o.globalBatch < 1 {
		return cmdutil.Flagf("--search needs --global-batch, the samples per step every strategy trains on")
	}
	var sizes []int
	tried := fmt.Sprint(max(o.microBatch, 1))
	if o.searchMB != "" {
		var err error
		if sizes, err = cmdutil.Ints(o.searchMB); err != nil {
			return cmdutil.Flagf("--search-microbatch-sizes: %v", err)
		}
		seen := map[int]bool{}
		for _, n := range sizes {
			switch {
			case n < 1:
				return cmdutil.Flagf("--search-microbatch-sizes %q: %d; sizes are samples per microbatch, at least 1", o.searchMB, n)
			case seen[n]:
				return cmdutil.Flagf("--search-microbatch-sizes %q: %d is given twice", o.searchMB, n)
			}
			seen[n] = true
		}
		tried = o.searchMB
	}
	strategies := collsim.Strategies(j, devices, o.globalBatch, sizes...)
	if len(strategies) == 0 {
		return cmdutil.Flagf("no dp x tp x pp of %d devices divides a global batch of %d in microbatches of %s", devices, o.globalBatch, tried)
	}
	report, stop := o.counter(streams, "strategies simulated", len(strategies))
	defer stop()
	e.Progress = nil
	cands, err := e.Search(j, strategies, o.workers, report)
	if err != nil {
		return err
	}
	if o.json {
		return cmdutil.JSON(streams.Out, cands)
	}
	fit := 0
	for _, c := range cands {
		if c.Refused == "" {
			fit++
		}
	}
	fmt.Fprintf(streams.Out, "%s on %d %s devices of %s (%s network), global batch %d: %s, %d fit\n",
		j.Model.Name, devices, j.Device.Name, e.Machine.Name, cmp.Or(e.Network, collsim.Analytic), o.globalBatch, cmdutil.Count(len(cands), "strategy", "strategies"), fit)
	rows := [][]string{{"rank", "strategy", "step", "samples/s", "% of peak", "memory/device", "note"}}
	for i, c := range cands {
		if i == o.top {
			rows = append(rows, []string{"", fmt.Sprintf("(%d more; --top or --json for all)", len(cands)-o.top)})
			break
		}
		if c.Refused != "" {
			note := c.Refused
			if k := strings.Index(note, ";"); k > 0 {
				note = note[:k]
			}
			memory := "-" // refused before its memory was counted
			if c.MemoryGiB > 0 {
				memory = c.Memory()
			}
			rows = append(rows, []string{"-", c.Describe, "", "", "", memory, note})
			continue
		}
		rows = append(rows, []string{fmt.Sprint(i + 1), c.Describe, cmdutil.Seconds(c.Step), cmdutil.SI(c.SamplesPerS, ""),
			fmt.Sprintf("%.1f", 100*c.PeakShare), c.Memory(), ""})
	}
	return streams.Table(rows)
}

// scalingRow is one device count of a weak-scaling run.
type scalingRow struct {
	Devices     int     `json:"devices"`
	Step        float64 `json:"step_s"`
	SamplesPerS float64 `json:"samples_per_s"`
	Efficiency  float64 `json:"scaling_efficiency"` // throughput over (devices / first devices) x the first's
}

func (o *dnnFlags) runScaling(streams *cmdutil.IO, e *collsim.Experiment, j dnn.Job) error {
	counts, err := cmdutil.Ints(o.scaling)
	if err != nil {
		return cmdutil.Flagf("--scaling: %v", err)
	}
	per := j.Strategy.TP * j.Strategy.PP
	var out []scalingRow
	for _, n := range counts {
		if n < 1 || n%per != 0 || n > e.Machine.Slots() {
			return cmdutil.Flagf("--scaling %d: device counts are at least 1, multiples of tp x pp = %d, and at most the machine's %d slots", n, per, e.Machine.Slots())
		}
		jn := j
		jn.Strategy.DP = n / per
		if jn.Nodes, err = nodesOf(e, n); err != nil {
			return err
		}
		if err := jn.Check(n); err != nil {
			return &cmdutil.FlagError{Err: err}
		}
		r, err := e.RunDNN(jn, false)
		if err != nil {
			return err
		}
		row := scalingRow{Devices: n, Step: r.Step, SamplesPerS: r.SamplesPerS}
		if len(out) > 0 {
			row.Efficiency = r.SamplesPerS / (float64(n) / float64(out[0].Devices) * out[0].SamplesPerS)
		} else {
			row.Efficiency = 1
		}
		out = append(out, row)
	}
	if o.json {
		return cmdutil.JSON(streams.Out, out)
	}
	rows := [][]string{{"devices", "step", "samples/s", "scaling efficiency"}}
	for _, r := range out {
		rows = append(rows, []string{fmt.Sprint(r.Devices), cmdutil.Seconds(r.Step), cmdutil.SI(r.SamplesPerS, ""), fmt.Sprintf("%.1f%%", 100*r.Efficiency)})
	}
	return streams.Table(rows)
}

// deviceMemory is the device's memory, or that it is not known (and the
// strategies are not checked against it).
func deviceMemory(b int64) string {
	if b <= 0 {
		return "memory not given (strategies not checked against it; --memory sets it)"
	}
	return gib(b)
}

// nodesOf is the node of each of the run's ranks, as its placement puts
// them (dnn.Job.Nodes).
func nodesOf(e *collsim.Experiment, ranks int) ([]int32, error) {
	m := e.Machine
	place, err := m.Place(ranks, e.Placement, e.Seed)
	if err != nil {
		return nil, err
	}
	perNode := int32(max(m.DevicesPerNode, 1))
	nodes := make([]int32, ranks)
	for r, h := range place {
		nodes[r] = h / perNode
	}
	return nodes, nil
}

// bucketSize reads flag's value, a gradient bucket's size of at least 1
// byte (example is one such).
func bucketSize(flag, value, example string) (int64, error) {
	n, err := configs.ParseSize(value)
	if err != nil {
		return 0, cmdutil.Flagf("--%s: %v", flag, err)
	}
	if n < 1 {
		return 0, cmdutil.Flagf("--%s %q: a size of at least 1 byte, e.g. %s", flag, value, example)
	}
	return n, nil
}
