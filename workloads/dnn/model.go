// Package dnn simulates distributed training and inference of neural
// networks: a model (per-layer parameters, FLOPs and activations), a
// device, and a parallel strategy (data, tensor, pipeline parallel,
// ZeRO-3) become per-rank programs of compute and collective calls on the
// data-, tensor- and pipeline-parallel groups.
//
// FLOPs are counted as the literature does: a multiply-add is two FLOPs;
// a transformer block's forward pass on a sequence of s tokens with hidden
// size h costs 24 s h^2 + 4 s^2 h FLOPs and the logit layer 2 s h V
// (Narayanan et al., "Efficient large-scale language model training on GPU
// clusters using Megatron-LM", SC 2021, whose per-iteration count 72 B s L
// h^2 (1 + s/6h + V/12Lh) is three times the forward sum); a convolution
// 2 k^2 C_in C_out H_out W_out. The backward pass costs twice the forward.
package dnn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/collsim/collsim/sim"
)

// Layer is one layer (or block) of a model. Per-sample figures scale with
// the microbatch.
type Layer struct {
	Name string
	// Kind names the layer's kind, for per-kind efficiency: transformer,
	// embedding, logits, conv, fc, norm or another word.
	Kind   string
	Params int64
	// ParamsShared of the Params every tensor-parallel rank keeps whole,
	// as Megatron-LM replicates them: layer norms, the biases of
	// row-parallel linears (added after the allreduce), position and
	// token-type embeddings, BERT's pooler. The rest are divided by tp.
	ParamsShared int64
	FwdFLOPs     float64 // per sample
	// ActBytes are the activations the backward pass needs, per sample;
	// ActShared of them every tensor-parallel rank keeps whole (a
	// transformer block's layer-norm inputs, dropout masks and residuals:
	// 10 s h of its s h (34 + 5 a s / h) bytes, Korthikanti et al. 2022),
	// the rest divided by tp.
	ActBytes, ActShared int64
	// OutBytes is the layer's output per sample: what a pipeline stage
	// ending with this layer sends to the next, and what recomputation
	// keeps.
	OutBytes int64
	// FwdTime and BwdTime, when set, are measured times per sample on one
	// device, used instead of FLOPs at the device's rate.
	FwdTime, BwdTime sim.Time
	// TP: the layer splits across tensor-parallel ranks as Megatron-LM
	// splits it (parameters, FLOPs and activations divided by tp), with
	// TPFwd allreduces of its output in the forward pass and TPBwd in the
	// backward pass on the tensor-parallel group.
	TP           bool
	TPFwd, TPBwd int
	// TPBytes, when set, is the size per sample of its tensor-parallel
	// allreduces, else OutBytes. The logit layer's (vocabulary-parallel,
	// as Megatron-LM splits it) backward allreduce is of its input's
	// gradient, s h 16-bit values, not of its output (it was 4 s bytes:
	// an audit).
	TPBytes int64
	// Tied is the number of parameters this layer shares with the model's
	// first layer (GPT's and BERT's logits reuse the word embedding, split
	// by vocabulary over tp where this layer has TP). Where the two layers are
	// on different pipeline stages, this layer's stage keeps a copy, with
	// its gradients and optimizer state, and after the data-parallel
	// exchange the two stages allreduce the copies' gradients, as
	// Megatron-LM's embedding group does every step.
	Tied int64
	// Pruned is the fraction of the layer's operations skipped at run time
	// in inference (a binarized network's pruning).
	Pruned float64
}

// Model is a network as a sequence of layers.
type Model struct {
	Name   string
	Layers []Layer
	// Tokens per sample (sequence length), for tokens per second; 0 for
	// models whose samples are not sequences.
	Tokens int
	// Heads is a transformer's attention heads (0: not known): tensor
	// parallelism splits them, so tp must divide them.
	Heads int
}

// DeviceParams returns the parameters of l that each of tp
// tensor-parallel ranks holds: its split part divided by tp (rounded up),
// and the part every rank keeps whole.
func (l *Layer) DeviceParams(tp int) int64 {
	if !l.TP || tp <= 1 {
		return l.Params
	}
	return ceilDiv(l.Params-l.ParamsShared, int64(tp)) + l.ParamsShared
}

// tiedShare returns the parameters of the first layer's weights that l
// uses (Tied) each of tp tensor-parallel ranks holds.
func (l *Layer) tiedShare(tp int) int64 {
	if l.Tied == 0 {
		return 0
	}
	if !l.TP {
		tp = 1
	}
	return ceilDiv(l.Tied, int64(max(tp, 1)))
}

// tiedCopy returns l's tiedShare where l keeps a copy of it: on a stage
// whose first layer, first, is not the model's first.
func (l *Layer) tiedCopy(tp, first int) int64 {
	if first == 0 {
		return 0
	}
	return l.tiedShare(tp)
}

// heldParams returns the parameters of l a rank holds on a stage whose
// first layer is first: its share, and its copy of the tied weights where
// it keeps one.
func (l *Layer) heldParams(tp, first int) int64 {
	return l.DeviceParams(tp) + l.tiedCopy(tp, first)
}

// gathered returns the parameters of l that ZeRO-3 gathers whole on a
// rank before l computes: its share and the tied weights it uses, which
// DeepSpeed gathers with every module that uses them (on the first
// layer's stage too, where the logits' gather left them out: an audit).
func (l *Layer) gathered(tp int) int64 {
	return l.DeviceParams(tp) + l.tiedShare(tp)
}

// Params is the model's parameter count.
func (m *Model) Params() int64 {
	var n int64
	for _, l := range m.Layers {
		n += l.Params
	}
	return n
}

// SplitsTP reports whether some layer of the model splits across
// tensor-parallel ranks (tp above 1 means something for it).
func (m *Model) SplitsTP() bool {
	return slices.ContainsFunc(m.Layers, func(l Layer) bool { return l.TP })
}

// FwdFLOPs is one sample's forward FLOPs.
func (m *Model) FwdFLOPs() float64 {
	var f float64
	for _, l := range m.Layers {
		f += l.FwdFLOPs
	}
	return f
}

// Check refuses a model that cannot run: no layers, negative figures.
func (m *Model) Check() error {
	if len(m.Layers) == 0 {
		return fmt.Errorf("model %q has no layers", m.Name)
	}
	for i, l := range m.Layers {
		switch {
		case l.Params < 0 || l.FwdFLOPs < 0 || l.ActBytes < 0 || l.ActShared < 0 || l.ActShared > l.ActBytes || l.OutBytes < 0 || l.TPBytes < 0 || l.FwdTime < 0 || l.BwdTime < 0:
			return fmt.Errorf("model %q layer %d (%s): negative parameters, FLOPs, bytes or times", m.Name, i, l.Name)
		case l.Tied < 0 || l.Tied > 0 && i == 0:
			return fmt.Errorf("model %q layer %d (%s): %d parameters tied to the first layer's; a layer after the first may share its weights (0 or more)", m.Name, i, l.Name, l.Tied)
		case l.Tied > 0 && slices.ContainsFunc(m.Layers[i+1:], func(o Layer) bool { return o.Tied > 0 }):
			return fmt.Errorf("model %q layer %d (%s): more than one layer ties its weights to the first layer's; one may", m.Name, i, l.Name)
		case l.Tied > m.Layers[0].Params:
			// (A copy larger than the weights it copies was accepted: an
			// audit.)
			return fmt.Errorf("model %q layer %d (%s): %d parameters tied to the first layer's, which has %d; tie at most those", m.Name, i, l.Name, l.Tied, m.Layers[0].Params)
		case l.ParamsShared < 0 || l.ParamsShared > l.Params:
			return fmt.Errorf("model %q layer %d (%s): %d parameters kept whole by every tensor-parallel rank, outside 0 to its %d parameters", m.Name, i, l.Name, l.ParamsShared, l.Params)
		case l.Pruned < 0 || l.Pruned >= 1:
			return fmt.Errorf("model %q layer %d (%s): pruned fraction %g outside [0, 1)", m.Name, i, l.Name, l.Pruned)
		case l.TPFwd < 0 || l.TPBwd < 0:
			return fmt.Errorf("model %q layer %d (%s): negative allreduce count", m.Name, i, l.Name)
		}
	}
	return nil
}

// Transformer describes a GPT- or BERT-style transformer.
type Transformer struct {
	Name                       string
	Layers, Hidden, Heads, Seq int
	Vocab                      int
	Encoder                    bool // BERT: token-type embeddings and a pooler
}

// GPT builds a GPT-style decoder: an embedding (vocabulary and
// positions), layers transformer blocks and a logit layer whose weights
// are the embedding's (tied, as GPT ties them). A block has 12h^2 + 13h
// parameters; its activations per sample are s h (34 + 5 a s / h) bytes in
// 16-bit precision (Korthikanti et al., "Reducing activation
// recomputation in large transformer models", 2022, without sequence
// parallelism or recomputation).
func GPT(t Transformer) (*Model, error) {
	if t.Layers < 1 || t.Hidden < 1 || t.Heads < 1 || t.Seq < 1 || t.Vocab < 1 {
		return nil, fmt.Errorf("transformer: layers, hidden, heads, seq and vocab must be at least 1 (have %d, %d, %d, %d, %d)", t.Layers, t.Hidden, t.Heads, t.Seq, t.Vocab)
	}
	// Bounds far past any model, so that the int64 counts below (12 h^2
	// per block, v h, 4 s v) cannot overflow. A block's activations, 5 a
	// s^2 bytes for the attention scores, can (5 x 2^64 within these
	// bounds: they wrapped to 0 bytes, an audit), and saturate, as the
	// memory's sums do.
	if t.Layers > 1<<16 || t.Hidden > 1<<20 || t.Heads > t.Hidden || t.Seq > 1<<22 || t.Vocab > 1<<26 {
		return nil, fmt.Errorf("transformer: at most 65536 layers, hidden 2^20, heads up to the hidden size, sequence 2^22, vocabulary 2^26 (have %d, %d, %d, %d, %d)", t.Layers, t.Hidden, t.Heads, t.Seq, t.Vocab)
	}
	if t.Hidden%t.Heads != 0 {
		return nil, fmt.Errorf("transformer: hidden size %d is not a multiple of %d heads", t.Hidden, t.Heads)
	}
	h, s, v, a := int64(t.Hidden), int64(t.Seq), int64(t.Vocab), int64(t.Heads)
	hf, sf, vf := float64(h), float64(s), float64(v)
	out := 2 * s * h // a block's output, 16-bit
	m := &Model{Name: t.Name, Tokens: t.Seq, Heads: t.Heads}
	// The word embedding is split by vocabulary; the position embedding
	// is kept whole.
	emb := Layer{Name: "embedding", Kind: "embedding", Params: v*h + s*h, ParamsShared: s * h, OutBytes: out, ActBytes: out, TP: true, TPFwd: 1}
	if t.Encoder {
		emb.Params += 2*h + 2*h // token types, layer norm
		emb.ParamsShared += 2*h + 2*h
	}
	m.Layers = append(m.Layers, emb)
	for i := range t.Layers {
		m.Layers = append(m.Layers, Layer{
			Name: fmt.Sprintf("block%d", i), Kind: "transformer",
			// Kept whole: the two layer norms (4h) and the biases of the
			// row-parallel attention output and second MLP linear (2h).
			Params: 12*h*h + 13*h, ParamsShared: 6 * h,
			FwdFLOPs: 24*sf*hf*hf + 4*sf*sf*hf,
			ActBytes: addSat(s*h*34, mulSat(mulSat(5*a, s), s)), ActShared: 10 * s * h,
			OutBytes: out, TP: true, TPFwd: 2, TPBwd: 2,
		})
	}
	// The final layer norm, kept whole (the logits reuse the split word
	// embedding).
	head := Layer{Name: "logits", Kind: "logits", Params: 2 * h, ParamsShared: 2 * h, Tied: v * h, FwdFLOPs: 2 * sf * hf * vf, ActBytes: 4 * s * v, OutBytes: 4 * s, TP: true, TPBwd: 1, TPBytes: out}
	if t.Encoder {
		head.Params += h*h + h // the pooler, a linear every rank keeps whole
		head.ParamsShared += h*h + h
	}
	m.Layers = append(m.Layers, head)
	return m, nil
}

// GPT3 is GPT-3 175B (Brown et al. 2020): 96 layers, hidden 12288, 96
// heads, sequence 2048, vocabulary 50257.
func GPT3() *Model {
	m, _ := GPT(Transformer{Name: "gpt3-175b", Layers: 96, Hidden: 12288, Heads: 96, Seq: 2048, Vocab: 50257})
	return m
}

// BERTLarge is BERT-large (Devlin et al. 2019): 24 layers, hidden 1024, 16
// heads, sequence 512, vocabulary 30522.
func BERTLarge() *Model {
	m, _ := GPT(Transformer{Name: "bert-large", Layers: 24, Hidden: 1024, Heads: 16, Seq: 512, Vocab: 30522, Encoder: true})
	return m
}

// ResNet50 is ResNet-50 v1.5 (He et al. 2016; torchvision's, with the
// stride in the 3x3 convolution) on 224 x 224 images, built from its
// architecture: convolutions without bias followed by batch norms (two
// parameters per channel), bottleneck blocks [3, 4, 6, 3] of widths 64,
// 128, 256, 512 (outputs four times wider), a projection on each stage's
// first block, and a 1000-way classifier. Activations are 32-bit, the
// input of every convolution and batch norm kept for the backward pass.
func ResNet50() *Model {
	m := &Model{Name: "resnet50"}
	conv := func(name string, cin, cout, k, stride, hin int) (Layer, int) {
		hout := (hin + stride - 1) / stride
		return Layer{Name: name, Kind: "conv",
			Params:   int64(k*k*cin*cout) + 2*int64(cout), // weights, batch norm
			FwdFLOPs: 2 * float64(k*k*cin*cout) * float64(hout*hout),
			ActBytes: 4*int64(cin*hin*hin) + 2*4*int64(cout*hout*hout), // conv input, BN input and output
			OutBytes: 4 * int64(cout*hout*hout),
		}, hout
	}
	stem, hw := conv("conv1", 3, 64, 7, 2, 224)
	m.Layers = append(m.Layers, stem)
	hw /= 2 // max pool 3x3/2: 112 -> 56
	cin := 64
	for si, blocks := range []int{3, 4, 6, 3} {
		width := 64 << si
		for b := range blocks {
			stride := 1
			if b == 0 && si > 0 {
				stride = 2
			}
			name := fmt.Sprintf("layer%d.%d", si+1, b)
			c1, h1 := conv(name+".conv1", cin, width, 1, 1, hw)
			c2, h2 := conv(name+".conv2", width, width, 3, stride, h1)
			c3, _ := conv(name+".conv3", width, 4*width, 1, 1, h2)
			m.Layers = append(m.Layers, c1, c2, c3)
			if b == 0 {
				ds, _ := conv(name+".downsample", cin, 4*width, 1, stride, hw)
				m.Layers = append(m.Layers, ds)
			}
			cin, hw = 4*width, h2
		}
	}
	m.Layers = append(m.Layers, Layer{Name: "fc", Kind: "fc", Params: 2048*1000 + 1000, FwdFLOPs: 2 * 2048 * 1000, ActBytes: 4 * 2048, OutBytes: 4 * 1000})
	return m
}

// Builtin returns a named model: resnet50, bert-large, gpt3-175b.
func Builtin(name string) (*Model, error) {
	switch name {
	case "resnet50", "resnet-50":
		return ResNet50(), nil
	case "bert-large":
		return BERTLarge(), nil
	case "gpt3-175b", "gpt3", "gpt-3":
		return GPT3(), nil
	}
	return nil, fmt.Errorf("unknown model %q; built in: %s, or a model YAML file, or gpt:LAYERS,HIDDEN,HEADS,SEQ,VOCAB", name, strings.Join(BuiltinNames, ", "))
}

// BuiltinNames lists the built-in models.
var BuiltinNames = []string{"resnet50", "bert-large", "gpt3-175b"}
