package dnn

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

// Device is one accelerator (or CPU node) that runs one rank.
type Device struct {
	Name string
	Peak float64 // FLOP/s at the training precision
	// Efficiency is the share of Peak that layers achieve (0 means 0.5);
	// ByKind overrides it per layer kind.
	Efficiency float64
	ByKind     map[string]float64
	Memory     int64   // bytes
	HostLink   float64 // bytes/s between device and host memory (offloading)
}

// Devices are presets: NVIDIA's datasheet peaks at 16-bit precision with
// dense math, and the host link a PCIe x16 slot moves in practice.
var Devices = map[string]Device{
	"v100":    {Name: "v100", Peak: 125e12, Memory: 32 << 30, HostLink: 12e9},
	"a100":    {Name: "a100", Peak: 312e12, Memory: 80 << 30, HostLink: 25e9},
	"h100":    {Name: "h100", Peak: 989e12, Memory: 80 << 30, HostLink: 50e9},
	"haswell": {Name: "haswell", Peak: 2 * 16 * 2.3e9 * 32, Memory: 128 << 30, HostLink: 60e9}, // a Cray XC40 node: 2 x 16 cores at 2.3 GHz, 32 single-precision FLOPs per cycle
}

func (d *Device) efficiency(kind string) float64 {
	if e, ok := d.ByKind[kind]; ok {
		return e
	}
	return d.defaultEfficiency()
}

// defaultEfficiency is the efficiency of layers whose kind the device
// does not name.
func (d *Device) defaultEfficiency() float64 {
	if d.Efficiency > 0 {
		return d.Efficiency
	}
	return 0.5
}

// KindsUnmatched says where a device's efficiencies by kind and model m's
// layer kinds miss each other (a typo on either side): the kinds the
// device names that no layer has, and the layers' kinds it does not name,
// which take its default efficiency; "" when they match, or when the
// device gives none by kind.
func (d *Device) KindsUnmatched(m *Model) string {
	if len(d.ByKind) == 0 {
		return ""
	}
	has := map[string]bool{}
	var missing []string
	for _, l := range m.Layers {
		if !has[l.Kind] {
			has[l.Kind] = true
			if _, ok := d.ByKind[l.Kind]; !ok {
				missing = append(missing, fmt.Sprintf("%q", l.Kind))
			}
		}
	}
	var unused []string
	for k := range d.ByKind {
		if !has[k] {
			unused = append(unused, fmt.Sprintf("%q", k))
		}
	}
	slices.Sort(unused)
	var parts []string
	if len(unused) > 0 {
		parts = append(parts, fmt.Sprintf("device %s gives an efficiency for kind %s, which no layer of %s has", d.Name, strings.Join(unused, ", "), m.Name))
	}
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("%s's layers of kind %s take %s's default efficiency %g", m.Name, strings.Join(missing, ", "), d.Name, d.defaultEfficiency()))
	}
	return strings.Join(parts, "; ")
}

// MinMemory is the least memory a device is given: below it, a number
// was written without its unit (memory: 40 meaning 40 GiB is 40 bytes).
const MinMemory = 1 << 20

// CheckMemory refuses a device memory under MinMemory.
func CheckMemory(bytes int64) error {
	if bytes < MinMemory {
		return fmt.Errorf("%d bytes, under 1 MiB: give a device's memory with its unit, e.g. 80GiB", bytes)
	}
	return nil
}

// Check refuses a device that cannot run anything.
func (d *Device) Check() error {
	if !(d.Peak > 0) {
		return fmt.Errorf("device %q: peak FLOP/s must be positive", d.Name)
	}
	for k, e := range d.ByKind {
		if !(e > 0 && e <= 1) {
			return fmt.Errorf("device %q: efficiency of %s layers %g outside (0, 1]", d.Name, k, e)
		}
	}
	if !(d.Efficiency >= 0 && d.Efficiency <= 1) { // NaN too
		return fmt.Errorf("device %q: efficiency %g outside (0, 1]", d.Name, d.Efficiency)
	}
	return nil
}

// Strategy is how the model is parallelized.
type Strategy struct {
	DP, TP, PP int
	// Order is the rank order of the three dimensions, innermost first:
	// "tp,dp,pp" (the default: tensor parallel inside a node, as
	// Megatron-LM places it) or any permutation.
	Order string
	// Microbatches m per step and samples per microbatch; the global
	// batch is DP x m x MicroBatch.
	Microbatches, MicroBatch int
	// Schedule of the pipeline: "1f1b" (default) or "gpipe".
	Schedule string
	// ZeRO3 shards parameters, gradients and optimizer state over the
	// data-parallel group (FSDP): each layer's parameters are allgathered
	// before its forward and its backward pass, its gradients
	// reduce-scattered after.
	ZeRO3 bool
	// BucketBytes groups gradients for the data-parallel allreduce (0:
	// 25 MiB, PyTorch DDP's default); NoOverlap runs the allreduces after
	// the backward pass instead of during it. As DDP assigns them once it
	// has rebuilt them in the order gradients become ready, the buckets
	// fill from the last layer down, the first up to FirstBucketBytes (0:
	// 1 MiB, torch.distributed's _DEFAULT_FIRST_BUCKET_BYTES), each later
	// one up to BucketBytes, a bucket closing once it holds that much; the
	// first layers' remainder is exchanged last.
	BucketBytes      int64
	FirstBucketBytes int64
	NoOverlap        bool
	// GradBytes per gradient element exchanged (0: 2, 16-bit gradients).
	GradBytes int64
	// Algorithms per collective ("allreduce" -> "ring", "ompi", ...).
	Algorithms map[string]string
	// Compression of the data-parallel gradients.
	Compression Compression
	// Recompute activations in the backward pass instead of keeping them;
	// Offload keeps them in host memory (OffloadSerial: the copies stall
	// compute instead of overlapping it).
	Recompute, Offload, OffloadSerial bool
	// Inference runs forward passes only (Prune, when set, is the share
	// of every layer's operations skipped, unless the layer says).
	Inference bool
	Prune     float64
}

// Compression compresses data-parallel gradients (frequency-domain or
// sparsifying compression): Ratio (1: none) at Throughput bytes/s of
// uncompressed gradient on the device, exchanged by "allreduce" (dense
// compatible) or "allgather" (sparse: every rank decompresses and sums
// the dp contributions).
type Compression struct {
	Ratio      float64
	Throughput float64
	Exchange   string
}

// Job is a model, a device and a strategy: one training (or inference)
// step.
type Job struct {
	Model    *Model
	Device   Device
	Strategy Strategy
	// NodeSize is how many consecutive ranks share a node (from the
	// machine), for the default placement of tensor parallelism.
	NodeSize int
	// Nodes, when set, is the node of each rank as the run places them
	// (a placement other than block can put a tensor-parallel group's
	// ranks on several nodes); nil: consecutive ranks by NodeSize.
	Nodes []int32
	// AllowTPAcrossNodes lets tp exceed a node.
	AllowTPAcrossNodes bool
	// Transport is how devices exchange messages: "nccl" sends every
	// message eagerly, with no rendezvous handshake (NCCL's protocols
	// pipeline through pre-posted buffers), "mpi" follows the machine's
	// eager limit. "" chooses nccl on a machine whose nodes hold several
	// devices (GPUs), mpi otherwise (CPU nodes, Horovod over MPI).
	Transport string
	// Tune, when set, chooses the options a call's algorithm leaves open
	// (a pipeline's segment, SUARA's grid) for each call, as collsim run
	// does for a single call; its caller knows the machine.
	Tune func(a collectives.Algorithm, p *collectives.Params)
}

// Devices is dp x tp x pp.
func (j *Job) Devices() int { return j.Strategy.DP * j.Strategy.TP * j.Strategy.PP }

// GlobalBatch is the samples one step trains on.
func (j *Job) GlobalBatch() int {
	return j.Strategy.DP * j.Strategy.Microbatches * j.Strategy.MicroBatch
}

// MaxMicrobatches bounds the microbatches of a step: pipelines and
// gradient accumulation use tens to hundreds, and each costs the
// simulation its layers' ops on every device.
const MaxMicrobatches = 4096

func (s *Strategy) defaults() {
	s.DP, s.TP, s.PP = max(s.DP, 1), max(s.TP, 1), max(s.PP, 1)
	s.Microbatches, s.MicroBatch = max(s.Microbatches, 1), max(s.MicroBatch, 1)
	if s.Order == "" {
		s.Order = "tp,dp,pp"
	}
	if s.Schedule == "" {
		s.Schedule = "1f1b"
	}
	if s.BucketBytes == 0 {
		s.BucketBytes = 25 << 20
	}
	if s.FirstBucketBytes == 0 {
		s.FirstBucketBytes = 1 << 20
	}
	if s.GradBytes == 0 {
		s.GradBytes = 2
	}
	if s.Compression.Ratio == 0 {
		s.Compression.Ratio = 1
	}
	if s.Compression.Exchange == "" {
		s.Compression.Exchange = "allreduce"
	}
}

// Check fills the strategy's defaults and refuses what cannot run, with
// the numbers.
func (j *Job) Check(devices int) error {
	s := &j.Strategy
	s.defaults()
	if j.Model == nil {
		return fmt.Errorf("no model: set Job.Model (dnn.Builtin's, dnn.GPT's, or a model file's)")
	}
	if err := j.Model.Check(); err != nil {
		return err
	}
	if err := j.Device.Check(); err != nil {
		return err
	}
	for _, l := range j.Model.Layers {
		// A measured time prices the layer and its FLOPs count toward the
		// FLOP/s reported (model FLOPs utilization); FLOPs that the time
		// could not hold made that 240% of the peak (a new user's trial).
		if l.FwdTime > 0 && l.FwdFLOPs > 0 && l.FwdFLOPs/l.FwdTime.Seconds() > j.Device.Peak {
			return fmt.Errorf("model %q layer %s: %.4g FLOPs a sample in %v is %.4g FLOP/s, above device %s's peak of %.4g FLOP/s; one of fwd_flops and fwd_time is wrong",
				j.Model.Name, l.Name, l.FwdFLOPs, l.FwdTime, l.FwdFLOPs/l.FwdTime.Seconds(), j.Device.Name, j.Device.Peak)
		}
	}
	if s.DP < 1 || s.TP < 1 || s.PP < 1 {
		return fmt.Errorf("dp, tp and pp must be at least 1")
	}
	if s.Microbatches > MaxMicrobatches {
		return fmt.Errorf("%d microbatches a step: at most %d (each is scripted layer by layer on every device: the run's time and memory grow with them); use fewer, larger microbatches (--microbatch-size)", s.Microbatches, MaxMicrobatches)
	}
	if devices > 0 && j.Devices() != devices {
		return fmt.Errorf("dp %d x tp %d x pp %d = %d devices, but the run has %d; choose degrees whose product is %d", s.DP, s.TP, s.PP, j.Devices(), devices, devices)
	}
	if _, err := s.axes(); err != nil {
		return err
	}
	if s.Schedule != "1f1b" && s.Schedule != "gpipe" {
		return fmt.Errorf("pipeline schedule %q; use 1f1b or gpipe", s.Schedule)
	}
	if s.PP > len(j.Model.Layers) {
		return fmt.Errorf("pp %d is more stages than the model's %d layers", s.PP, len(j.Model.Layers))
	}
	if s.TP > 1 {
		if !j.Model.SplitsTP() {
			return fmt.Errorf("tp %d: model %q has no layer that splits across tensor-parallel ranks (transformer blocks do); use tp 1", s.TP, j.Model.Name)
		}
		if h := j.Model.Heads; h > 0 && h%s.TP != 0 {
			return fmt.Errorf("tp %d does not divide model %q's %d attention heads; use a divisor of %d", s.TP, j.Model.Name, h, h)
		}
		if ns := j.NodeSize; ns > 0 && !j.AllowTPAcrossNodes {
			// Rank 0's tensor-parallel group, under block placement.
			mp := j.mapping()
			for t := range s.TP {
				if mp.rank(0, t, 0)/ns != 0 {
					if s.TP > ns {
						return fmt.Errorf("tp %d is larger than a node of %d devices, so its allreduces would cross the network; use tp <= %d, or say tp may cross nodes", s.TP, ns, ns)
					}
					return fmt.Errorf("order %s spreads each tensor-parallel group of %d over nodes of %d devices (its allreduces would cross the network); put tp first (tp,dp,pp), or say tp may cross nodes", s.Order, s.TP, ns)
				}
			}
			// Every group, as the run places its ranks (Nodes placed
			// another number of ranks: not this run's).
			nodes := j.Nodes
			if len(nodes) != s.DP*s.TP*s.PP {
				nodes = nil
			}
			for d := range s.DP {
				for st := range s.PP {
					for t := 1; nodes != nil && t < s.TP; t++ {
						if a, b := mp.rank(d, 0, st), mp.rank(d, t, st); nodes[a] != nodes[b] {
							return fmt.Errorf("the placement puts ranks %d and %d of a tensor-parallel group on nodes %d and %d (its allreduces would cross the network); use block placement, or say tp may cross nodes", a, b, nodes[a], nodes[b])
						}
					}
				}
			}
		}
	}
	if s.ZeRO3 && s.PP > 1 {
		return fmt.Errorf("zero3 with pp %d: ZeRO-3 re-gathers every layer for every microbatch of every stage, which this model of it does not cover; use pp 1 with zero3", s.PP)
	}
	if s.Inference && (s.ZeRO3 || s.Compression.Ratio != 1 || s.Recompute || s.Offload) {
		return fmt.Errorf("inference runs forward passes only: zero3, compression, recomputation and offloading are training options")
	}
	if !(s.Prune >= 0 && s.Prune < 1) {
		return fmt.Errorf("prune %g outside [0, 1)", s.Prune)
	}
	c := s.Compression
	switch {
	case !(c.Ratio >= 1):
		return fmt.Errorf("compression ratio %g: at least 1 (1: none)", c.Ratio)
	case c.Ratio > 1 && !(c.Throughput > 0):
		return fmt.Errorf("compression ratio %g needs the device's compression rate (bytes/s), positive", c.Ratio)
	case c.Exchange != "allreduce" && c.Exchange != "allgather":
		return fmt.Errorf("compressed gradients are exchanged by allreduce or allgather, not %q", c.Exchange)
	}
	if s.Offload && (j.Device.HostLink <= 0) {
		return fmt.Errorf("offload needs the device's host link bandwidth")
	}
	if s.Recompute && s.Offload {
		return fmt.Errorf("recompute and offload: choose one way to save activation memory")
	}
	if s.BucketBytes < 0 || s.FirstBucketBytes < 0 || s.GradBytes < 0 {
		return fmt.Errorf("bucket and gradient bytes must not be negative")
	}
	return j.fits()
}

// axes returns the position of tp, dp and pp in the rank order, innermost
// first.
func (s *Strategy) axes() ([3]string, error) {
	parts := strings.Split(s.Order, ",")
	var out [3]string
	sorted := slices.Clone(parts)
	slices.Sort(sorted)
	if len(parts) != 3 || !slices.Equal(sorted, []string{"dp", "pp", "tp"}) {
		return out, fmt.Errorf("order %q: list tp, dp and pp once each, innermost first (default tp,dp,pp)", s.Order)
	}
	copy(out[:], parts)
	return out, nil
}

// mapping numbers ranks by their (dp, tp, pp) coordinates: axis[i] is
// the i-th axis from the innermost (0 dp, 1 tp, 2 pp), size its degree.
type mapping struct {
	axis [3]int
	size [3]int // by axis: dp, tp, pp
}

func (j *Job) mapping() mapping {
	o, _ := j.Strategy.axes()
	m := mapping{size: [3]int{j.Strategy.DP, j.Strategy.TP, j.Strategy.PP}}
	for i, a := range o {
		m.axis[i] = map[string]int{"dp": 0, "tp": 1, "pp": 2}[a]
	}
	return m
}

func (m mapping) coords(r int) (dp, tp, pp int) {
	var c [3]int
	for _, a := range m.axis {
		c[a] = r % m.size[a]
		r /= m.size[a]
	}
	return c[0], c[1], c[2]
}

func (m mapping) rank(dp, tp, pp int) int {
	c := [3]int{dp, tp, pp}
	r, stride := 0, 1
	for _, a := range m.axis {
		r += c[a] * stride
		stride *= m.size[a]
	}
	return r
}

// stages splits the layers into pp contiguous stages of about equal
// compute time, forward and backward as the device runs them (layerTime:
// measured times, or FLOPs at the kind's efficiency), every stage at
// least one layer; a model whose layers take no time at all is split by
// parameters. It returns the first layer of each stage and one past the
// last. (Weighed by forward FLOPs, with a measured time counted as 1e15
// FLOP/s whatever the device, a layer of 1 ms measured on an A100 weighed
// 6.4 times five layers of 1 ms by FLOPs, and took a stage of its own: an
// audit.)
func (j *Job) stages() []int {
	pp := j.Strategy.PP
	ls := j.Model.Layers
	w := make([]float64, len(ls))
	var total float64
	for i := range ls {
		w[i] = (j.layerTime(&ls[i], false) + j.layerTime(&ls[i], true)).Seconds()
		total += w[i]
	}
	if total == 0 {
		for i, l := range ls {
			w[i] = float64(l.Params)
			total += w[i]
		}
	}
	// A stage ends before layer i when layer i would take it past its
	// share by more than half of layer i, or when the layers left are
	// just enough for the stages left.
	bounds := []int{0}
	var acc float64
	for i := range ls {
		k := len(bounds) // the stage being filled is k-1; boundary k is next
		if k < pp && i > bounds[k-1] {
			target := total * float64(k) / float64(pp)
			if acc+w[i]/2 > target || len(ls)-i == pp-k {
				bounds = append(bounds, i)
			}
		}
		acc += w[i]
	}
	return append(bounds, len(ls))
}

// Memory is one device's memory in a stage, in bytes.
type Memory struct {
	Stage       int   `json:"stage"`
	Params      int64 `json:"params"` // the parameters the device holds (its shard)
	Weights     int64 `json:"weights_bytes"`
	Gradients   int64 `json:"gradients_bytes"`
	Optimizer   int64 `json:"optimizer_bytes"`
	Activations int64 `json:"activations_bytes"`
	Total       int64 `json:"total_bytes"`
}

// Memory returns each stage's per-device memory under mixed-precision
// Adam (Rajbhandari et al., ZeRO, SC 2020): 16-bit weights and gradients
// (2 + 2 bytes per parameter) and 32-bit master weights, momentum and
// variance (12 bytes); ZeRO-3 divides all 16 bytes by dp, and holds the
// 16-bit weights of two layers gathered whole (the one computing and the
// one prefetched: the stage's two largest, at the worst). Activations are
// those of the microbatches a stage holds at once: m for GPipe, pp - s
// for 1F1B's stage s; recomputation keeps each layer's input and one
// layer's activations; offloading keeps three microbatches' (the one in
// use, one being copied out and one being brought back). Inference keeps
// one layer's.
func (j *Job) Memory() []Memory {
	s := j.Strategy
	bounds := j.stages()
	var out []Memory
	for st := range s.PP {
		var params, acts, outs, most int64
		var largest [2]int64 // the stage's two largest layers' parameters gathered on a device
		for _, l := range j.Model.Layers[bounds[st]:bounds[st+1]] {
			div := int64(1)
			if l.TP {
				div = int64(s.TP)
			}
			params = addSat(params, l.heldParams(s.TP, bounds[st]))
			if g := l.gathered(s.TP); g > largest[0] {
				largest = [2]int64{g, largest[0]}
			} else {
				largest[1] = max(largest[1], g)
			}
			a := mulSat(ceilDiv(l.ActBytes-l.ActShared, div)+l.ActShared, int64(s.MicroBatch))
			acts = addSat(acts, a)
			most = max(most, a)
			outs = addSat(outs, mulSat(l.OutBytes, int64(s.MicroBatch)))
		}
		held := int64(s.Microbatches)
		if s.Schedule == "1f1b" {
			held = int64(min(s.PP-st, s.Microbatches))
		}
		// Saturated, as the total is (12 x params wrapped to a negative
		// optimizer state for absurd models: an audit).
		m := Memory{Stage: st, Params: params, Weights: mulSat(2, params), Gradients: mulSat(2, params), Optimizer: mulSat(12, params)}
		switch {
		case s.Inference:
			m.Gradients, m.Optimizer = 0, 0
			m.Activations = most
		case s.Recompute:
			m.Activations = addSat(mulSat(held, outs), most)
		case s.Offload:
			m.Activations = mulSat(min(3, held), acts)
		default:
			m.Activations = mulSat(held, acts)
		}
		if s.ZeRO3 && s.DP > 1 {
			d := int64(s.DP)
			m.Params = ceilDiv(params, d)
			m.Weights, m.Gradients, m.Optimizer = ceilDiv(m.Weights, d), ceilDiv(m.Gradients, d), ceilDiv(m.Optimizer, d)
			// The layer computing and the one prefetched, gathered whole.
			m.Weights = addSat(m.Weights, mulSat(2, addSat(largest[0], largest[1])))
		}
		m.Total = addSat(addSat(m.Weights, m.Gradients), addSat(m.Optimizer, m.Activations))
		out = append(out, m)
	}
	return out
}

// fits refuses a strategy whose busiest stage needs more than the
// device's memory.
func (j *Job) fits() error {
	if j.Device.Memory <= 0 {
		return nil
	}
	for _, m := range j.Memory() {
		if m.Total > j.Device.Memory {
			rem := []string{"more tensor or pipeline parallelism"}
			s := j.Strategy
			if !s.ZeRO3 && !s.Inference && s.PP == 1 {
				rem = append(rem, "zero3")
			}
			if !s.Recompute && !s.Offload && !s.Inference {
				// Offloading keeps three microbatches' activations on the
				// device: no help to a stage that holds no more.
				for _, r := range []struct {
					name string
					set  func(*Strategy)
				}{{"recompute", func(s *Strategy) { s.Recompute = true }}, {"offload", func(s *Strategy) { s.Offload = true }}} {
					with := *j
					r.set(&with.Strategy)
					if with.Memory()[m.Stage].Activations < m.Activations {
						rem = append(rem, r.name)
					}
				}
			}
			return &OutOfMemory{Need: m, Have: j.Device.Memory, Device: j.Device.Name, Remedies: rem}
		}
	}
	return nil
}

// OutOfMemory is a strategy that does not fit, with the numbers.
type OutOfMemory struct {
	Need     Memory
	Have     int64
	Device   string
	Remedies []string // what the strategy could still use
}

func (e *OutOfMemory) Error() string {
	m := e.Need
	return fmt.Sprintf("does not fit: stage %d needs %s per device (weights %s, gradients %s, optimizer %s, activations %s), but device %s has %s; use %s",
		m.Stage, gib(m.Total), gib(m.Weights), gib(m.Gradients), gib(m.Optimizer), gib(m.Activations), e.Device, gib(e.Have), strings.Join(e.Remedies, ", "))
}

// gib prints bytes in GiB, or MiB below one GiB ("more than 8 EiB" where
// a count saturated).
func gib(b int64) string {
	if b == math.MaxInt64 {
		return "more than 8 EiB"
	}
	if b < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// ceilDiv is a/b rounded up, for a not negative and b positive; a + b - 1
// would wrap for a saturated count.
func ceilDiv(a, b int64) int64 {
	if a%b != 0 {
		return a/b + 1
	}
	return a / b
}

// mulSat and addSat are a*b and a+b of counts of bytes (not negative),
// or math.MaxInt64 where that would overflow: a microbatch of 131,072
// samples of a long-sequence model wrapped to negative memory, and was
// taken to fit (an audit).
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// layerTime is the forward (or backward) time of layer l for one
// microbatch on one device.
func (j *Job) layerTime(l *Layer, backward bool) sim.Time {
	s := j.Strategy
	div := 1.0
	if l.TP {
		div = float64(s.TP)
	}
	samples := float64(s.MicroBatch)
	keep := 1.0
	if s.Inference {
		keep = 1 - l.Pruned
		if l.Pruned == 0 {
			keep = 1 - s.Prune
		}
	}
	if backward && l.BwdTime > 0 {
		return sim.FromSeconds(l.BwdTime.Seconds() * samples / div)
	}
	if l.FwdTime > 0 {
		t := l.FwdTime.Seconds() * samples / div * keep
		if backward {
			t *= 2
		}
		return sim.FromSeconds(t)
	}
	f := l.FwdFLOPs * samples / div * keep
	if backward {
		f *= 2
	}
	return sim.FromSeconds(f / (j.Device.Peak * j.Device.efficiency(l.Kind)))
}

// Kinds lists the kinds of communication the job has (KindTP, ...).
func (j *Job) Kinds() []string {
	s := j.Strategy
	var k []string
	if s.TP > 1 {
		k = append(k, KindTP)
	}
	if s.DP > 1 && !s.Inference {
		if s.ZeRO3 {
			k = append(k, KindZeRO)
		} else {
			k = append(k, KindDP)
		}
	}
	if s.PP > 1 {
		k = append(k, KindPP)
	}
	if s.Offload {
		k = append(k, KindOffload)
	}
	return k
}

// UsefulFwdFLOPs is one sample's forward FLOPs the job really runs: in
// inference, without the pruned share of each layer.
func (j *Job) UsefulFwdFLOPs() float64 {
	if !j.Strategy.Inference {
		return j.Model.FwdFLOPs()
	}
	var f float64
	for _, l := range j.Model.Layers {
		keep := 1 - l.Pruned
		if l.Pruned == 0 {
			keep = 1 - j.Strategy.Prune
		}
		f += l.FwdFLOPs * keep
	}
	return f
}
