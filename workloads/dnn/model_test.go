package dnn_test

import (
	"math"
	"testing"

	"github.com/collsim/collsim/workloads/dnn"
)

// The built-in models against published figures: torchvision's ResNet-50
// has 25,557,032 parameters and 4.09 GMACs (8.18 GFLOPs) per 224x224
// image; GPT-3 "175B" (Brown et al. 2020); BERT-large's 335,141,888
// parameters without the pre-training heads (Hugging Face's
// bert-large-uncased with pooler: 335,141,888).
func TestBuiltinModels(t *testing.T) {
	r := dnn.ResNet50()
	if got := r.Params(); got != 25_557_032 {
		t.Errorf("ResNet-50: %d parameters, want 25,557,032", got)
	}
	if got := r.FwdFLOPs(); math.Abs(got/8.18e9-1) > 0.01 {
		t.Errorf("ResNet-50: %.4g forward FLOPs, want 8.18e9 within 1%%", got)
	}
	g := dnn.GPT3()
	if got := float64(g.Params()); math.Abs(got/175e9-1) > 0.01 {
		t.Errorf("GPT-3: %.4g parameters, want 175e9 within 1%%", got)
	}
	// Narayanan et al. 2021, eq. 3 without recomputation: training FLOPs
	// per sample 72 s L h^2 (1 + s/6h + V/12Lh) = 3 x the forward.
	s, L, h, V := 2048.0, 96.0, 12288.0, 50257.0
	want := 72 * s * L * h * h * (1 + s/(6*h) + V/(12*L*h))
	if got := 3 * g.FwdFLOPs(); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("GPT-3: 3 x forward = %.6g FLOPs per sample, want %.6g", got, want)
	}
	b := dnn.BERTLarge()
	if got := float64(b.Params()); math.Abs(got/335_141_888-1) > 0.002 {
		t.Errorf("BERT-large: %.0f parameters, want 335,141,888 within 0.2%%", got)
	}
}

// Generator sizes whose counts would overflow are refused.
func TestGPTBounds(t *testing.T) {
	for _, tr := range []dnn.Transformer{
		{Layers: 2, Hidden: 1 << 30, Heads: 1, Seq: 8, Vocab: 8},
		{Layers: 2, Hidden: 64, Heads: 4, Seq: math.MaxInt, Vocab: 8},
		{Layers: 1 << 20, Hidden: 64, Heads: 4, Seq: 8, Vocab: 8},
	} {
		if _, err := dnn.GPT(tr); err == nil {
			t.Errorf("%+v accepted", tr)
		}
	}
}

// A block's attention scores, 5 a s^2 bytes a sample, saturate where they
// would overflow (2^20 heads and a sequence of 2^22 give 5 x 2^64, which
// wrapped to 0: an audit); a sequence of 2^17 with as many heads, 5 x
// 2^51 bytes, and 34 s h = 34 x 2^34, fits.
func TestGPTActivationsSaturate(t *testing.T) {
	m, err := dnn.GPT(dnn.Transformer{Layers: 1, Hidden: 1 << 20, Heads: 1 << 20, Seq: 1 << 22, Vocab: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Layers[1].ActBytes; got != math.MaxInt64 {
		t.Errorf("2^20 heads, sequence 2^22: %d bytes, want saturated", got)
	}
	if m, err = dnn.GPT(dnn.Transformer{Layers: 1, Hidden: 1 << 17, Heads: 1 << 17, Seq: 1 << 17, Vocab: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Layers[1].ActBytes, int64(5<<51+34<<34); got != want {
		t.Errorf("2^17 heads, sequence 2^17: %d bytes, want %d", got, want)
	}
}
