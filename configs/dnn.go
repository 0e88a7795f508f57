package configs

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim/lines"
	"github.com/collsim/collsim/workloads/dnn"
)

// A model file is YAML: a name, optional tokens per sample, and either a
// transformer to generate or a list of layers (each optionally repeated):
//
//	name: my-cnn
//	layers:
//	  - {name: conv1, kind: conv, params: 9408, fwd_flops: 2.36e8, activation_bytes: 2.4MB, output_bytes: 3.2MB}
//	  - {name: block, kind: transformer, repeat: 24, params: 12.6e6, fwd_flops: 1.2e10, activation_bytes: 40MiB, output_bytes: 2MiB, tp: true, tp_fwd: 2, tp_bwd: 2}
//	  - {name: logits, kind: logits, params: 4096, fwd_flops: 4e11, output_bytes: 8KiB, tp: true, tp_bwd: 1, tp_bytes: 8MiB}
//
//	name: my-gpt
//	transformer: {layers: 24, hidden: 2048, heads: 16, seq: 2048, vocab: 50257}
type modelYAML struct {
	Name        string           `yaml:"name"`
	Tokens      int              `yaml:"tokens"`
	Transformer *transformerYAML `yaml:"transformer"`
	Layers      []yaml.Node      `yaml:"layers"`
}

type transformerYAML struct {
	Layers  int  `yaml:"layers"`
	Hidden  int  `yaml:"hidden"`
	Heads   int  `yaml:"heads"`
	Seq     int  `yaml:"seq"`
	Vocab   int  `yaml:"vocab"`
	Encoder bool `yaml:"encoder"`
}

type layerYAML struct {
	Name       string  `yaml:"name"`
	Kind       string  `yaml:"kind"`
	Repeat     int     `yaml:"repeat"`
	Params     float64 `yaml:"params"`
	FwdFLOPs   float64 `yaml:"fwd_flops"`
	Activation string  `yaml:"activation_bytes"`
	Output     string  `yaml:"output_bytes"`
	FwdTime    string  `yaml:"fwd_time"`
	BwdTime    string  `yaml:"bwd_time"`
	TP         bool    `yaml:"tp"`
	TPFwd      int     `yaml:"tp_fwd"`
	TPBwd      int     `yaml:"tp_bwd"`
	TPBytes    string  `yaml:"tp_bytes"` // its tensor-parallel allreduces' size per sample (default: output_bytes)
	// ParamsShared of a tp layer's params every tensor-parallel rank keeps
	// whole (layer norms, row-parallel biases); Tied, params it shares
	// with the first layer (logits tied to the word embedding).
	ParamsShared float64 `yaml:"params_shared"`
	Tied         float64 `yaml:"tied"`
	Pruned       float64 `yaml:"pruned"`
}

// MaxModelLayers bounds a model file's layers after repeats.
const MaxModelLayers = 1 << 16

// Model resolves a model argument: a built-in name (dnn.BuiltinNames),
// "gpt:LAYERS,HIDDEN,HEADS,SEQ,VOCAB", or a model YAML file.
func Model(arg string) (*dnn.Model, error) {
	if spec, ok := strings.CutPrefix(arg, "gpt:"); ok {
		var v [5]int
		parts := strings.Split(spec, ",")
		if len(parts) != 5 {
			return nil, fmt.Errorf("model %q: give gpt:LAYERS,HIDDEN,HEADS,SEQ,VOCAB, e.g. gpt:24,2048,16,2048,50257", arg)
		}
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil, fmt.Errorf("model %q: %q is not a whole number", arg, p)
			}
			v[i] = n
		}
		return dnn.GPT(dnn.Transformer{Name: arg, Layers: v[0], Hidden: v[1], Heads: v[2], Seq: v[3], Vocab: v[4]})
	}
	if m, err := dnn.Builtin(arg); err == nil {
		return m, nil
	}
	if _, err := os.Stat(arg); err != nil {
		_, berr := dnn.Builtin(arg)
		return nil, fmt.Errorf("%w (and not a readable file)", berr)
	}
	data, err := ReadFile(arg, MaxConfigBytes, "a model file")
	if err != nil {
		return nil, err
	}
	return ParseModel(arg, data)
}

// ParseModel reads a model file; every problem is "source:line: what is
// wrong; how to fix it".
func ParseModel(source string, data []byte) (*dnn.Model, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: %d bytes is too large for a model (at most %d)", source, len(data), MaxConfigBytes)
	}
	root, err := ParseYAML(source, data)
	if err != nil {
		return nil, err
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a model (a mapping with name and layers or transformer)", source)
	}
	var f modelYAML
	if err := strictDecode(source, data, root.Content[0], &f); err != nil {
		return nil, err
	}
	if f.Name == "" {
		f.Name = strings.TrimSuffix(source[strings.LastIndex(source, "/")+1:], ".yaml")
	}
	line := func(key string) int {
		n := root.Content[0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
		return n.Line
	}
	switch {
	case f.Transformer != nil && len(f.Layers) > 0:
		return nil, fmt.Errorf("%s:%d: both transformer and layers; a model is one or the other", source, line("layers"))
	case f.Transformer != nil && hasKey(root.Content[0], "tokens"):
		// It was ignored, -3 too (a new user's trial).
		return nil, fmt.Errorf("%s:%d: tokens with transformer: a transformer's tokens per sample are its seq; leave tokens out", source, line("tokens"))
	case f.Transformer != nil:
		t := f.Transformer
		m, err := dnn.GPT(dnn.Transformer{Name: f.Name, Layers: t.Layers, Hidden: t.Hidden, Heads: t.Heads, Seq: t.Seq, Vocab: t.Vocab, Encoder: t.Encoder})
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", source, line("transformer"), err)
		}
		return m, nil
	case len(f.Layers) == 0:
		return nil, fmt.Errorf("%s:%d: no layers; list them under layers, or give a transformer", source, root.Content[0].Line)
	}
	m := &dnn.Model{Name: f.Name, Tokens: f.Tokens}
	var errs []error
	for i := range f.Layers {
		n := &f.Layers[i]
		var ly layerYAML
		if err := strictDecode(source, data, n, &ly); err != nil {
			errs = append(errs, err)
			continue
		}
		if ly.Repeat == 0 && hasKey(n, "repeat") {
			ly.Repeat = -1 // a written 0: refused below, as other zeros that cannot be
		}
		l, repeat, err := ly.layer(i)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", source, n.Line, err))
			continue
		}
		// The model's own checks of tied weights, at the layer's line.
		switch {
		case l.Tied > 0 && len(m.Layers) == 0:
			errs = append(errs, fmt.Errorf("%s:%d: layer %d (%s): tied: the first layer's weights are its own; tie a later layer (the logits) to them", source, n.Line, i, l.Name))
			continue
		case l.Tied > 0 && l.Tied > m.Layers[0].Params:
			errs = append(errs, fmt.Errorf("%s:%d: layer %d (%s): tied %d is more than the first layer's %d params", source, n.Line, i, l.Name, l.Tied, m.Layers[0].Params))
			continue
		}
		if len(m.Layers)+repeat > MaxModelLayers {
			errs = append(errs, fmt.Errorf("%s:%d: more than %d layers in all; a model this deep is a mistake", source, n.Line, MaxModelLayers))
			break
		}
		for range repeat {
			m.Layers = append(m.Layers, l)
		}
	}
	if f.Tokens < 0 {
		errs = append(errs, fmt.Errorf("%s:%d: tokens must not be negative", source, line("tokens")))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// strictDecode decodes mapping n into v (a pointer to a struct), refusing
// keys the struct does not have: errors are "source:line: ...".
func strictDecode(source string, data []byte, n *yaml.Node, v any) error {
	t := reflect.TypeOf(v).Elem()
	var keys []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" {
			keys = append(keys, tag)
		}
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: expected a mapping of %s", source, n.Line, strings.Join(keys, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(keys, k.Value) {
			return fmt.Errorf("%s:%d: unknown key %q; valid keys here: %s", source, k.Line, k.Value, strings.Join(keys, ", "))
		}
	}
	if err := wholeNumbers(source, "", n, t); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		return yamlError(source, data, err)
	}
	return nil
}

// wholeNumbers refuses a fraction where t, the type n decodes into, holds
// a whole number: YAML's decoder truncates 2.5 into an int field without
// a word (dp: 2.5 ran as dp 2, a new user's trial found), where a machine
// config says it is not a whole number; and a key of a nested mapping
// that no field of its struct takes.
func wholeNumbers(source, key string, n *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if k := t.Kind(); (k >= reflect.Int && k <= reflect.Uint64 || k == reflect.Float32 || k == reflect.Float64) &&
		n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") && numberSpelling(n.Value) != "" {
		// params: 010 was 8 parameters (the test audit), as hosts: 010
		// built 8 hosts.
		return fmt.Errorf("%s:%d: %s: %s", source, n.Line, key, numberSpelling(n.Value))
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%s:%d: %s: %s is not a whole number", source, n.Line, key, lines.Quote(n.Value))
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode || reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
			return nil
		}
		var keys []string
		inline := false
		for j := range t.NumField() {
			tag, opts, _ := strings.Cut(t.Field(j).Tag.Get("yaml"), ",")
			inline = inline || strings.Contains(opts, "inline")
			if tag != "" {
				keys = append(keys, tag)
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			known := false
			for j := range t.NumField() {
				if tag, _, _ := strings.Cut(t.Field(j).Tag.Get("yaml"), ","); tag == n.Content[i].Value {
					known = true
					if err := wholeNumbers(source, tag, n.Content[i+1], t.Field(j).Type); err != nil {
						return err
					}
				}
			}
			// A key no field takes, inside a mapping as at the top
			// (strictDecode): compress: {exchang: allgather} ran as the
			// default exchange without a word (a new user's trial).
			if !known && !inline && len(keys) > 0 {
				k := n.Content[i]
				where := ""
				if key != "" {
					where = " in " + key
				}
				return fmt.Errorf("%s:%d: unknown key %q%s; valid keys here: %s", source, k.Line, k.Value, where, strings.Join(keys, ", "))
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for _, item := range n.Content {
			if err := wholeNumbers(source, key, item, t.Elem()); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := wholeNumbers(source, n.Content[i].Value, n.Content[i+1], t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ly *layerYAML) layer(i int) (dnn.Layer, int, error) {
	name := ly.Name
	if name == "" {
		name = fmt.Sprintf("layer%d", i)
	}
	bad := func(format string, args ...any) (dnn.Layer, int, error) {
		return dnn.Layer{}, 0, fmt.Errorf("layer %d (%s): %s", i, name, fmt.Sprintf(format, args...))
	}
	l := dnn.Layer{Name: name, Kind: ly.Kind, TP: ly.TP, TPFwd: ly.TPFwd, TPBwd: ly.TPBwd, Pruned: ly.Pruned}
	if ly.Params < 0 || ly.Params > 1e15 || ly.Params != math.Trunc(ly.Params) {
		return bad("params %g must be a whole number from 0 to 1e15", ly.Params)
	}
	if !(ly.FwdFLOPs >= 0 && ly.FwdFLOPs <= 1e21) { // NaN too
		return bad("fwd_flops %g must be from 0 to 1e21 per sample", ly.FwdFLOPs)
	}
	l.Params, l.FwdFLOPs = int64(ly.Params), ly.FwdFLOPs
	switch {
	case ly.ParamsShared < 0 || ly.ParamsShared > ly.Params || ly.ParamsShared != math.Trunc(ly.ParamsShared):
		return bad("params_shared %g must be a whole number from 0 to the layer's params, %g", ly.ParamsShared, ly.Params)
	case ly.ParamsShared > 0 && !ly.TP:
		return bad("params_shared counts the params a layer split by tensor parallelism keeps whole; give tp: true, or leave it out (a layer without tp keeps all its params whole)")
	case ly.Tied < 0 || ly.Tied > 1e15 || ly.Tied != math.Trunc(ly.Tied):
		return bad("tied %g must be a whole number of params from 0 to 1e15", ly.Tied)
	}
	l.ParamsShared, l.Tied = int64(ly.ParamsShared), int64(ly.Tied)
	var err error
	if ly.Activation != "" {
		if l.ActBytes, err = ParseSize(ly.Activation); err != nil {
			return bad("activation_bytes: %v", err)
		}
	}
	if ly.Output != "" {
		if l.OutBytes, err = ParseSize(ly.Output); err != nil {
			return bad("output_bytes: %v", err)
		}
	}
	if ly.TPBytes != "" {
		if !ly.TP {
			return bad("tp_bytes sizes the allreduces of a layer with tp: true")
		}
		if l.TPBytes, err = ParseSize(ly.TPBytes); err != nil {
			return bad("tp_bytes: %v", err)
		}
	}
	if ly.FwdTime != "" {
		if l.FwdTime, err = ParseDuration(ly.FwdTime); err != nil {
			return bad("fwd_time: %v", err)
		}
	}
	if ly.BwdTime != "" {
		if l.BwdTime, err = ParseDuration(ly.BwdTime); err != nil {
			return bad("bwd_time: %v", err)
		}
	}
	if l.FwdFLOPs == 0 && l.FwdTime == 0 && l.Params == 0 {
		return bad("no params, fwd_flops or fwd_time: a layer that costs nothing; give at least one")
	}
	if !(ly.Pruned >= 0 && ly.Pruned < 1) {
		return bad("pruned %g must be in [0, 1)", ly.Pruned)
	}
	if ly.TPFwd < 0 || ly.TPBwd < 0 || !ly.TP && (ly.TPFwd > 0 || ly.TPBwd > 0) {
		return bad("tp_fwd and tp_bwd count allreduces of a layer with tp: true (not negative)")
	}
	repeat := ly.Repeat
	if repeat == 0 {
		repeat = 1
	}
	if repeat < 1 || repeat > MaxModelLayers {
		return bad("repeat %d must be from 1 to %d", max(ly.Repeat, 0), MaxModelLayers)
	}
	return l, repeat, nil
}

// deviceYAML is a device file:
//
//	name: my-gpu
//	peak: 312TFLOP/s
//	efficiency: 0.45
//	efficiency_by_kind: {transformer: 0.55, logits: 0.4}
//	memory: 80GiB
//	host_link: 25GB/s
type deviceYAML struct {
	Name       string             `yaml:"name"`
	Peak       string             `yaml:"peak"`
	Efficiency float64            `yaml:"efficiency"`
	ByKind     map[string]float64 `yaml:"efficiency_by_kind"`
	Memory     string             `yaml:"memory"`
	HostLink   string             `yaml:"host_link"`
}

// Device resolves a device argument: a preset (dnn.Devices) or a device
// YAML file.
func Device(arg string) (dnn.Device, error) {
	if d, ok := dnn.Devices[arg]; ok {
		return d, nil
	}
	if _, err := os.Stat(arg); err != nil {
		return dnn.Device{}, fmt.Errorf("device %q is neither a preset (a100, h100, v100, haswell) nor a readable file", arg)
	}
	data, err := ReadFile(arg, MaxConfigBytes, "a device file")
	if err != nil {
		return dnn.Device{}, err
	}
	return ParseDevice(arg, data)
}

// ParseDevice reads a device file.
func ParseDevice(source string, data []byte) (dnn.Device, error) {
	root, err := ParseYAML(source, data)
	if err != nil {
		return dnn.Device{}, err
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return dnn.Device{}, fmt.Errorf("%s: not a device (a mapping with name, peak, memory, ...)", source)
	}
	n := root.Content[0]
	var f deviceYAML
	if err := strictDecode(source, data, n, &f); err != nil {
		return dnn.Device{}, err
	}
	at := func(key string) int {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
		return n.Line
	}
	d := dnn.Device{Name: f.Name, Efficiency: f.Efficiency, ByKind: f.ByKind}
	if d.Name == "" {
		d.Name = strings.TrimSuffix(source[strings.LastIndex(source, "/")+1:], ".yaml")
	}
	if hasKey(n, "efficiency") && !(f.Efficiency > 0 && f.Efficiency <= 1) {
		return d, fmt.Errorf("%s:%d: efficiency %g outside (0, 1]", source, at("efficiency"), f.Efficiency)
	}
	if f.Peak == "" {
		return d, fmt.Errorf("%s:%d: no peak; give the device's FLOP/s, e.g. peak: 312TFLOP/s", source, n.Line)
	}
	if d.Peak, err = ParseFLOPs(f.Peak); err != nil {
		return d, fmt.Errorf("%s:%d: peak: %w", source, at("peak"), err)
	}
	if f.Memory != "" {
		if d.Memory, err = ParseSize(f.Memory); err == nil {
			err = dnn.CheckMemory(d.Memory)
		}
		if err != nil {
			return d, fmt.Errorf("%s:%d: memory: %w (or leave memory out: no check)", source, at("memory"), err)
		}
	}
	if f.HostLink != "" {
		if d.HostLink, err = ParseBandwidth(f.HostLink); err != nil {
			return d, fmt.Errorf("%s:%d: host_link: %w", source, at("host_link"), err)
		}
	}
	if err := d.Check(); err != nil {
		key := "efficiency"
		if len(f.ByKind) > 0 && strings.Contains(err.Error(), " layers ") {
			key = "efficiency_by_kind"
		}
		return d, fmt.Errorf("%s:%d: %w", source, at(key), err)
	}
	return d, nil
}

var flopUnits = map[string]float64{"FLOP/s": 1, "GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15, "": 1}

// ParseFLOPs reads a rate such as "312TFLOP/s" or "1.5e14".
func ParseFLOPs(s string) (float64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	scale, ok := flopUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q; use FLOP/s, GFLOP/s, TFLOP/s or PFLOP/s", s, unit)
	}
	if !(v > 0) || math.IsInf(v*scale, 0) {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return v * scale, nil
}

// strategyYAML is a strategy file: the flags of collsim workload dnn as
// keys (dp, tp, pp, order, schedule, microbatches, microbatch_size, zero3,
// bucket, first_bucket, no_overlap, grad_bytes, algo, compress, recompute, offload,
// offload_serial, inference, prune, tp_across_nodes).
type strategyYAML struct {
	DP             int               `yaml:"dp"`
	TP             int               `yaml:"tp"`
	PP             int               `yaml:"pp"`
	Order          string            `yaml:"order"`
	Schedule       string            `yaml:"schedule"`
	Microbatches   int               `yaml:"microbatches"`
	MicroBatchSize int               `yaml:"microbatch_size"`
	ZeRO3          bool              `yaml:"zero3"`
	Bucket         string            `yaml:"bucket"`
	FirstBucket    string            `yaml:"first_bucket"`
	NoOverlap      bool              `yaml:"no_overlap"`
	GradBytes      int64             `yaml:"grad_bytes"`
	Algo           map[string]string `yaml:"algo"`
	Compress       *compressYAML     `yaml:"compress"`
	Recompute      bool              `yaml:"recompute"`
	Offload        bool              `yaml:"offload"`
	OffloadSerial  bool              `yaml:"offload_serial"`
	Inference      bool              `yaml:"inference"`
	Prune          float64           `yaml:"prune"`
	TPAcrossNodes  bool              `yaml:"tp_across_nodes"`
}

type compressYAML struct {
	Ratio    float64 `yaml:"ratio"`
	Rate     string  `yaml:"rate"`
	Exchange string  `yaml:"exchange"`
}

// StrategyFile is a strategy read from a file, and whether it allows
// tensor parallelism wider than a node.
type StrategyFile struct {
	Strategy      dnn.Strategy
	TPAcrossNodes bool
	Source        string
	// Set lists the keys the file gives, for flags to override only
	// what they set.
	Set map[string]bool
	// Lines gives the line of each key the file gives, for errors about
	// its setting found after the file is read (a key that does not
	// apply to the run).
	Lines map[string]int
}

// LoadStrategy reads a strategy file.
func LoadStrategy(path string) (*StrategyFile, error) {
	data, err := ReadFile(path, MaxConfigBytes, "a strategy file")
	if err != nil {
		return nil, err
	}
	return ParseStrategy(path, data)
}

// ParseStrategy reads a strategy file; problems are "source:line: ...".
func ParseStrategy(source string, data []byte) (*StrategyFile, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: %d bytes is too large for a strategy (at most %d)", source, len(data), MaxConfigBytes)
	}
	root, err := ParseYAML(source, data)
	if err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty strategy; give dp, tp, pp, microbatches, ...", source)
	}
	n := root.Content[0]
	var f strategyYAML
	if err := strictDecode(source, data, n, &f); err != nil {
		return nil, err
	}
	at := map[string]int{}
	out := &StrategyFile{Source: source, Set: map[string]bool{}, Lines: at, TPAcrossNodes: f.TPAcrossNodes}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out.Set[n.Content[i].Value] = true
		at[n.Content[i].Value] = n.Content[i].Line
	}
	bad := func(key, format string, args ...any) (*StrategyFile, error) {
		return nil, fmt.Errorf("%s:%d: %s: %s", source, at[key], key, fmt.Sprintf(format, args...))
	}
	for key, v := range map[string]int{"dp": f.DP, "tp": f.TP, "pp": f.PP, "microbatches": f.Microbatches, "microbatch_size": f.MicroBatchSize} {
		if out.Set[key] && v < 1 {
			return bad(key, "%d; at least 1", v)
		}
	}
	if f.GradBytes < 0 {
		return bad("grad_bytes", "%d must not be negative", f.GradBytes)
	}
	if f.Prune < 0 || f.Prune >= 1 {
		return bad("prune", "%g outside [0, 1)", f.Prune)
	}
	s := dnn.Strategy{DP: f.DP, TP: f.TP, PP: f.PP, Order: f.Order, Schedule: f.Schedule, Microbatches: f.Microbatches, MicroBatch: f.MicroBatchSize,
		ZeRO3: f.ZeRO3, NoOverlap: f.NoOverlap, GradBytes: f.GradBytes, Algorithms: f.Algo, Recompute: f.Recompute,
		Offload: f.Offload || f.OffloadSerial, OffloadSerial: f.OffloadSerial, Inference: f.Inference, Prune: f.Prune}
	if f.Bucket != "" {
		if s.BucketBytes, err = ParseSize(f.Bucket); err != nil || s.BucketBytes < 1 {
			return bad("bucket", "%q: a size of at least 1 byte, e.g. 25MiB", f.Bucket)
		}
	}
	if f.FirstBucket != "" {
		if s.FirstBucketBytes, err = ParseSize(f.FirstBucket); err != nil || s.FirstBucketBytes < 1 {
			return bad("first_bucket", "%q: a size of at least 1 byte, e.g. 1MiB", f.FirstBucket)
		}
	}
	if c := f.Compress; c != nil {
		s.Compression = dnn.Compression{Ratio: c.Ratio, Exchange: c.Exchange}
		if c.Rate != "" {
			if s.Compression.Throughput, err = ParseBandwidth(c.Rate); err != nil {
				return bad("compress", "rate: %v", err)
			}
		}
		if c.Ratio < 1 || c.Ratio > 1 && c.Rate == "" || c.Exchange != "" && c.Exchange != "allreduce" && c.Exchange != "allgather" {
			return bad("compress", "ratio %g (at least 1), a rate when compressing, exchange %q (allreduce or allgather)", c.Ratio, c.Exchange)
		}
	}
	// Each pair is checked here, where the file's line is known (a bad
	// name was reported as a bad --algo flag, exit 2, without the file).
	for _, c := range slices.Sorted(maps.Keys(f.Algo)) {
		a := collectives.Canonical(f.Algo[c])
		f.Algo[c] = a
		switch {
		case c == "" || a == "":
			return bad("algo", "give COLLECTIVE: ALGORITHM pairs, e.g. {allreduce: ring}")
		case c != "allreduce" && c != "allgather" && c != "reduce_scatter":
			return bad("algo", "%s: a training step calls allreduce (data and tensor parallel), allgather and reduce_scatter (ZeRO-3), not %s", c, c)
		case !collectives.IsSelector(a):
			if _, err := collectives.Lookup(collectives.Collective(c), a); err != nil {
				return bad("algo", "%v", err)
			}
		}
	}
	out.Strategy = s
	return out, nil
}

// hasKey reports whether mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
