package configs

import (
	"strings"
	"testing"
)

func TestParseModel(t *testing.T) {
	m, err := ParseModel("my.yaml", []byte(`name: two
tokens: 128
layers:
  - {name: a, kind: conv, params: 1000, fwd_flops: 2e6, activation_bytes: 1KiB, output_bytes: 512}
  - name: b
    kind: transformer
    repeat: 3
    params: 4e3
    fwd_flops: 1e7
    fwd_time: 1ms
    tp: true
    tp_fwd: 2
    tp_bwd: 2
    tp_bytes: 8KiB
    params_shared: 100
  - {name: head, params: 10, tp: true, tied: 800}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 5 || m.Params() != 1000+3*4000+10 || m.Layers[0].ActBytes != 1024 || m.Layers[0].OutBytes != 512 || m.Tokens != 128 || !m.Layers[3].TP || m.Layers[3].TPFwd != 2 || m.Layers[3].TPBytes != 8<<10 ||
		m.Layers[3].ParamsShared != 100 || m.Layers[4].Tied != 800 {
		t.Errorf("%+v", m)
	}
	g, err := ParseModel("g.yaml", []byte("transformer: {layers: 2, hidden: 64, heads: 4, seq: 16, vocab: 100}\n"))
	if err != nil || len(g.Layers) != 4 || g.Name != "g" {
		t.Errorf("%+v %v", g, err)
	}
}

func TestParseModelErrors(t *testing.T) {
	cases := map[string]string{
		"layers:\n  - {name: a, params: -5}\n":                            "m.yaml:2: layer 0 (a): params -5 must be a whole number",
		"layers:\n  - {name: a, params: 5, flops: 3}\n":                   `m.yaml:2: unknown key "flops"; valid keys here: name, kind, repeat, params, fwd_flops`,
		"layers:\n  - {name: a}\n":                                        "m.yaml:2: layer 0 (a): no params, fwd_flops or fwd_time",
		"layers:\n  - {name: a, params: 5, activation_bytes: 3 apples}\n": "m.yaml:2: layer 0 (a): activation_bytes:",
		"name: x\n": "m.yaml:1: no layers",
		"transformer: {layers: 2, hidden: 10, heads: 3, seq: 4, vocab: 5}\n":   "m.yaml:1: transformer: hidden size 10 is not a multiple of 3 heads",
		"transformer: {layers: 2, hidden: 64, heads: 4, seq: 16, vocabb: 5}\n": `m.yaml:1: unknown key "vocabb" in transformer; valid keys here:`,
		"layers:\n  - {name: a, params: 5, repeat: 100000}\n":                  "m.yaml:2: layer 0 (a): repeat 100000 must be from 1 to 65536",
		"layers:\n  - {name: a, params: 5, tp_fwd: 2}\n":                       "m.yaml:2: layer 0 (a): tp_fwd and tp_bwd count allreduces of a layer with tp: true",
		"layers:\n  - {name: a, params: 5, tp_bytes: 1KiB}\n":                  "m.yaml:2: layer 0 (a): tp_bytes sizes the allreduces of a layer with tp: true",
		"layers:\n\t- a\n": "m.yaml:2: a tab",
		"layers:\n  - {name: a, params: 5, tp: true, params_shared: 6}\n":           "m.yaml:2: layer 0 (a): params_shared 6 must be a whole number from 0 to the layer's params, 5",
		"layers:\n  - {name: a, params: 5, params_shared: 2}\n":                     "m.yaml:2: layer 0 (a): params_shared counts the params a layer split by tensor parallelism keeps whole; give tp: true",
		"layers:\n  - {name: a, params: 5, tied: -1}\n":                             "m.yaml:2: layer 0 (a): tied -1 must be a whole number",
		"layers:\n  - {name: a, params: 5, tied: 1.5}\n":                            "m.yaml:2: layer 0 (a): tied 1.5 must be a whole number",
		"layers:\n  - {name: a, params: 5, tied: 2}\n":                              "m.yaml:2: layer 0 (a): tied: the first layer's weights are its own",
		"layers:\n  - {name: a, params: 5, tp: true, params_shared: 2.5}\n":         "m.yaml:2: layer 0 (a): params_shared 2.5 must be a whole number",
		"layers:\n  - {name: a, params: 5}\n  - {name: b, params: 1, tied: 2e15}\n": "m.yaml:3: layer 1 (b): tied 2e+15 must be a whole number of params from 0 to 1e15",
		"layers:\n  - {name: a, params: 5}\n  - {name: b, params: 1, tied: 6}\n":    "m.yaml:3: layer 1 (b): tied 6 is more than the first layer's 5 params",
		"layers: [1, 2]\n": "m.yaml:1: expected a mapping",
		"tokens: -3\ntransformer: {layers: 2, hidden: 64, heads: 4, seq: 16, vocab: 5}\n": "m.yaml:1: tokens with transformer: a transformer's tokens per sample are its seq",
	}
	for in, want := range cases {
		_, err := ParseModel("m.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestParseDevice(t *testing.T) {
	d, err := ParseDevice("d.yaml", []byte("name: g\npeak: 100TFLOP/s\nefficiency: 0.4\nmemory: 40GiB\nhost_link: 25GB/s\nefficiency_by_kind: {conv: 0.2}\n"))
	if err != nil || d.Peak != 100e12 || d.Memory != 40<<30 || d.HostLink != 25e9 || d.ByKind["conv"] != 0.2 {
		t.Errorf("%+v %v", d, err)
	}
	for in, want := range map[string]string{
		"name: g\n":                                "d.yaml:1: no peak",
		"peak: 5 furlongs\n":                       "d.yaml:1: peak:",
		"peak: 1e12\nefficiency: 2\n":              "d.yaml:2: efficiency 2 outside (0, 1]",
		"peak: 1e12\nmemroy: 1GiB\n":               `d.yaml:2: unknown key "memroy"`,
		"peak: 1e12\nefficiency_by_kind: {a: 0}\n": "d.yaml:2: device \"d\": efficiency of a layers 0",
		// 40 meant 40 GiB: a plain number is bytes.
		"peak: 1e12\nmemory: 40\n": "d.yaml:2: memory: 40 bytes, under 1 MiB",
		"peak: 1e12\nmemory: 0\n":  "d.yaml:2: memory: 0 bytes, under 1 MiB",
	} {
		_, err := ParseDevice("d.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestParseStrategy(t *testing.T) {
	sf, err := ParseStrategy("s.yaml", []byte("dp: 2\ntp: 4\npp: 2\nmicrobatches: 8\nbucket: 10MiB\nfirst_bucket: 2MiB\nalgo: {allreduce: ring}\ncompress: {ratio: 10, rate: 100GB/s}\nzero3: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := sf.Strategy
	if s.DP != 2 || s.TP != 4 || s.PP != 2 || s.Microbatches != 8 || s.BucketBytes != 10<<20 || s.FirstBucketBytes != 2<<20 || s.Algorithms["allreduce"] != "ring" ||
		s.Compression.Ratio != 10 || s.Compression.Throughput != 100e9 || !sf.Set["zero3"] || sf.Set["schedule"] {
		t.Errorf("%+v %v", s, sf.Set)
	}
	for in, want := range map[string]string{
		"dp: 2\ntp: 0\n":            "s.yaml:2: tp: 0; at least 1",
		"dp: 2\nbucket: 0\n":        "s.yaml:2: bucket: \"0\": a size of at least 1 byte",
		"dp: 2\nfirst_bucket: 1x\n": "s.yaml:2: first_bucket: \"1x\": a size of at least 1 byte",
		"tp: 2\nzero: true\n":       `s.yaml:2: unknown key "zero"`,
		// Keys inside a nested mapping are checked too (compress's
		// exchang ran as the default exchange, a new user's trial).
		"dp: 8\ncompress: {ratio: 10, rate: 200GB/s, exchang: allgather}\n": `s.yaml:2: unknown key "exchang" in compress; valid keys here: ratio, rate, exchange`,
		"compress:\n  ratio: 10\n  rate: 1GB/s\n  bogus: 3\n":               `s.yaml:4: unknown key "bogus" in compress`,
		// algo's names at the file's line (they were reported as a bad
		// --algo flag, without the file).
		"dp: 2\nalgo: {allreduce: rign}\n":       `s.yaml:2: algo: unknown allreduce algorithm "rign"; valid: `,
		"dp: 2\nalgo: {allreduc: ring}\n":        "s.yaml:2: algo: allreduc: a training step calls allreduce",
		"prune: 1.5\n":                           "s.yaml:1: prune: 1.5 outside [0, 1)",
		"compress: {ratio: 4}\n":                 "s.yaml:1: compress: ratio 4 (at least 1), a rate when compressing",
		"compress: {ratio: 4, rate: 1 parsec}\n": "s.yaml:1: compress: rate:",
		"dp: two\n":                              "s.yaml:1: two is not a whole number",
		// Fractions were truncated without a word (a new user's trial).
		"dp: 2.5\n":                  `s.yaml:1: dp: "2.5" is not a whole number`,
		"tp: 2\nmicrobatches: 4.9\n": `s.yaml:2: microbatches: "4.9" is not a whole number`,
		"dp: 2.0\n":                  "", // whole, though written as a float: no error of this kind
		// A leading zero is octal to YAML (the test audit).
		"dp: 010\n": `s.yaml:1: dp: "010" has a leading zero, which YAML reads as octal`,
		"":          "s.yaml: empty strategy",
	} {
		_, err := ParseStrategy("s.yaml", []byte(in))
		if want == "" {
			if err != nil && strings.Contains(err.Error(), "whole number") {
				t.Errorf("%q: %v", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := ParseStrategy("s.yaml", []byte("dp: 2\nalgo: {allreduce: ompi, reduce_scatter: ring}\n")); err != nil {
		t.Errorf("a library's choice and an algorithm: %v", err)
	}
	// lp, as --algo allreduce=lp, is linear_pipeline (the check above
	// refused it, where --algo took it).
	if sf, err := ParseStrategy("s.yaml", []byte("dp: 2\nalgo: {allreduce: lp}\n")); err != nil || sf.Strategy.Algorithms["allreduce"] != "linear_pipeline" {
		t.Errorf("allreduce: lp: %v", err)
	}
	// Two bad pairs: the first in collective order is named, every time.
	for range 5 {
		if _, err := ParseStrategy("s.yaml", []byte("algo: {reduce_scatter: nope, allreduce: rign}\n")); err == nil || !strings.Contains(err.Error(), `unknown allreduce algorithm "rign"`) {
			t.Fatalf("two bad pairs: %v", err)
		}
	}
	// In a model file too, in a list's item and in a nested mapping.
	for in, want := range map[string]string{
		"name: rep\nlayers:\n  - {name: b, kind: transformer, repeat: 2.5, params: 1e6, fwd_flops: 1e9, activation_bytes: 1MiB, output_bytes: 1MiB}\n": `m.yaml:3: repeat: "2.5" is not a whole number`,
		"name: rep\ntransformer: {layers: 2.5, hidden: 512, heads: 8, seq: 512, vocab: 1000}\n":                                                        `m.yaml:2: layers: "2.5" is not a whole number`,
		// A float field written with a leading zero was read as octal: 8
		// parameters (the test audit).
		"name: o\nlayers:\n  - {name: a, kind: dense, params: 010, fwd_flops: 1e9, activation_bytes: 1MiB, output_bytes: 1MiB}\n": `m.yaml:3: params: "010" has a leading zero`,
	} {
		if _, err := ParseModel("m.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}
