// Package sweep is `collsim sweep` and `collsim merge`: many experiments
// from one file, run in parallel, written one row per point.
package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/collsim/collsim/sim/lines"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
)

// MaxPoints bounds a sweep: more points than this is a typo in an axis,
// not a study (a million points of 64 ranks take about a day on 2 cores).
const MaxPoints = 10_000_000

// Spec is a parsed sweep file.
type Spec struct {
	File string
	Base []Value // the settings every point shares
	Axes []Axis  // in the file's order; the first is the outermost loop
	// dims are the loops: one per axis, or one per zipped group.
	dims [][]int // axis indices of each dim
	Hash string  // of the points' definition, in every output row
}

// Value is one setting: a key of the sweep format and its YAML value.
type Value struct {
	Key  string
	Node *yaml.Node
	Line int
}

// Axis is a key and the values the sweep gives it.
type Axis struct {
	Key    string
	Values []*yaml.Node
	Line   int
}

// Points is how many points the sweep has.
func (s *Spec) Points() int {
	n := 1
	for _, d := range s.dims {
		n *= len(s.Axes[d[0]].Values)
	}
	return n
}

// Point returns the settings of point p (0 <= p < Points()): the base's,
// overridden by each axis's value at p.
func (s *Spec) Point(p int) []Value {
	vals := slices.Clone(s.Base)
	idx := make([]int, len(s.Axes))
	for d := len(s.dims) - 1; d >= 0; d-- {
		n := len(s.Axes[s.dims[d][0]].Values)
		for _, a := range s.dims[d] {
			idx[a] = p % n
		}
		p /= n
	}
	for a, ax := range s.Axes {
		v := Value{Key: ax.Key, Node: ax.Values[idx[a]], Line: ax.Values[idx[a]].Line}
		if i := slices.IndexFunc(vals, func(b Value) bool { return b.Key == ax.Key }); i >= 0 {
			vals[i] = v
		} else {
			vals = append(vals, v)
		}
	}
	return vals
}

// AxisValues are point p's values of the axes, as text, in axis order.
func (s *Spec) AxisValues(p int) []*yaml.Node {
	vals := s.Point(p)
	out := make([]*yaml.Node, len(s.Axes))
	for a, ax := range s.Axes {
		i := slices.IndexFunc(vals, func(v Value) bool { return v.Key == ax.Key })
		out[a] = vals[i].Node
	}
	return out
}

// fileKeys are the sweep file's top-level keys.
var fileKeys = []string{"base", "axes", "zip", "replicas"}

// Parse reads a sweep file. Every error names file:line, what is wrong
// and the valid choices.
func Parse(file string, data []byte) (*Spec, error) {
	doc, err := configs.ParseYAML(file, data)
	if err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1: a sweep file is a mapping with %s (see README.md, Sweeps)", file, strings.Join(fileKeys, ", "))
	}
	s := &Spec{File: file}
	at := func(n *yaml.Node) string { return fmt.Sprintf("%s:%d", file, n.Line) }
	root := doc.Content[0]
	var zip *yaml.Node
	replicas := 0
	var replicasAt *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "base":
			if v.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s: base is a mapping of settings, e.g. {machine: small, c: allreduce}", at(v))
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				key, val := v.Content[j], deref(v.Content[j+1])
				if err := checkKey(file, key, val, false); err != nil {
					return nil, err
				}
				if slices.ContainsFunc(s.Base, func(b Value) bool { return b.Key == key.Value }) {
					return nil, fmt.Errorf("%s: %s is set twice in base", at(key), key.Value)
				}
				s.Base = append(s.Base, Value{Key: key.Value, Node: val, Line: key.Line})
			}
		case "axes":
			if v.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s: axes is a mapping of settings to lists of values, e.g. {ranks: [16, 64], size: 8..1MiB}", at(v))
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				key, val := v.Content[j], v.Content[j+1]
				if slices.ContainsFunc(s.Axes, func(a Axis) bool { return a.Key == key.Value }) {
					return nil, fmt.Errorf("%s: axis %s is given twice", at(key), key.Value)
				}
				vals, err := axisValues(file, key, val)
				if err != nil {
					return nil, err
				}
				s.Axes = append(s.Axes, Axis{Key: key.Value, Values: vals, Line: key.Line})
			}
		case "zip":
			zip = v
		case "replicas":
			n, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > MaxPoints {
				return nil, fmt.Errorf("%s: replicas %s: give a whole number of 1 to %d (each replica runs with the next seed)", at(v), show(v), MaxPoints)
			}
			replicas, replicasAt = n, v
		default:
			return nil, fmt.Errorf("%s: %q is not a key of a sweep file; valid: %s", at(k), k.Value, strings.Join(fileKeys, ", "))
		}
	}
	if err := s.zip(zip, at); err != nil {
		return nil, err
	}
	n := float64(max(replicas, 1))
	for _, d := range s.dims {
		n *= float64(len(s.Axes[d[0]].Values))
	}
	if n > MaxPoints {
		return nil, fmt.Errorf("%s: %.4g points; a sweep has at most %d (shorten an axis, or split the study)", file, n, MaxPoints)
	}
	// The replicas' seeds are the innermost loop, made only now that the
	// point count is known to be bounded.
	if replicas > 1 {
		if slices.ContainsFunc(s.Axes, func(a Axis) bool { return a.Key == "seed" }) {
			return nil, fmt.Errorf("%s: replicas and a seed axis both choose seeds; give one", at(replicasAt))
		}
		first := uint64(1)
		if i := slices.IndexFunc(s.Base, func(b Value) bool { return b.Key == "seed" }); i >= 0 {
			first, _ = strconv.ParseUint(s.Base[i].Node.Value, 10, 64)
		}
		if first > math.MaxUint64-uint64(replicas-1) {
			return nil, fmt.Errorf("%s: replicas %d from seed %d pass the largest seed, %d; start from a smaller seed", at(replicasAt), replicas, first, uint64(math.MaxUint64))
		}
		ax := Axis{Key: "seed", Line: replicasAt.Line}
		for r := range uint64(replicas) {
			ax.Values = append(ax.Values, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatUint(first+r, 10), Line: replicasAt.Line})
		}
		s.Axes = append(s.Axes, ax)
		s.dims = append(s.dims, []int{len(s.Axes) - 1})
	}
	s.Hash = s.hash()
	return s, nil
}

// zip groups the axes into loops: each group of zip advances together.
func (s *Spec) zip(zip *yaml.Node, at func(*yaml.Node) string) error {
	group := make([]int, len(s.Axes)) // dim of each axis, -1 until placed
	for i := range group {
		group[i] = -1
	}
	var groups [][]int
	if zip != nil {
		if zip.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s: zip is a list of groups of axes, e.g. [[algo, segment]]", at(zip))
		}
		for _, g := range zip.Content {
			if g.Kind != yaml.SequenceNode || len(g.Content) < 2 {
				return fmt.Errorf("%s: a zip group lists two or more axes, e.g. [algo, segment]", at(g))
			}
			var axes []int
			for _, name := range g.Content {
				a := slices.IndexFunc(s.Axes, func(x Axis) bool { return x.Key == name.Value })
				if a < 0 {
					return fmt.Errorf("%s: zip names %q, which is not an axis; axes: %s", at(name), name.Value, strings.Join(s.axisKeys(), ", "))
				}
				if group[a] >= 0 {
					return fmt.Errorf("%s: axis %s is in two zip groups", at(name), name.Value)
				}
				if len(s.Axes[a].Values) != len(s.Axes[axes0(axes, a)].Values) {
					return fmt.Errorf("%s: zipped axes need lists of one length: %s has %d values, %s has %d",
						at(name), name.Value, len(s.Axes[a].Values), s.Axes[axes[0]].Key, len(s.Axes[axes[0]].Values))
				}
				group[a] = len(groups)
				axes = append(axes, a)
			}
			groups = append(groups, axes)
		}
	}
	placed := make([]bool, len(groups))
	for a := range s.Axes {
		switch g := group[a]; {
		case g < 0:
			s.dims = append(s.dims, []int{a})
		case !placed[g]:
			placed[g] = true
			s.dims = append(s.dims, groups[g])
		}
	}
	return nil
}

// axes0 is the first axis of a group being built, or a when it is empty.
func axes0(axes []int, a int) int {
	if len(axes) == 0 {
		return a
	}
	return axes[0]
}

func (s *Spec) axisKeys() []string {
	var keys []string
	for _, a := range s.Axes {
		keys = append(keys, a.Key)
	}
	return keys
}

// axisValues are an axis's values: a list, a scalar, or for ranks and size
// a list or doubling range as run takes them ("2..1024", "8..64MiB").
func axisValues(file string, key, val *yaml.Node) ([]*yaml.Node, error) {
	val = deref(val)
	at := fmt.Sprintf("%s:%d", file, val.Line)
	var items []*yaml.Node
	switch val.Kind {
	case yaml.SequenceNode:
		items = val.Content
	case yaml.ScalarNode:
		items = []*yaml.Node{val}
	default:
		return nil, fmt.Errorf("%s: axis %s: give a list of values, e.g. [1, 2, 4]", at, key.Value)
	}
	if len(items) == 0 || val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
		// (algo: with nothing after it ran one point of the default.)
		return nil, fmt.Errorf("%s: axis %s has no values", at, key.Value)
	}
	var out []*yaml.Node
	for _, it := range items {
		it = deref(it)
		expanded, err := expand(key.Value, it)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %v", file, it.Line, key.Value, err)
		}
		for _, v := range expanded {
			if err := checkKey(file, key, v, true); err != nil {
				return nil, err
			}
		}
		out = append(out, expanded...)
	}
	// A value twice made two identical points, which ran twice and read as
	// replicas (size: [8, 8], or 1024 and 1KiB; a new user's trial).
	seen := map[string]*yaml.Node{}
	for _, v := range out {
		if v.Kind != yaml.ScalarNode {
			continue
		}
		same := strings.TrimSpace(v.Value)
		switch key.Value {
		case "size":
			if n, err := configs.ParseSize(same); err == nil {
				same = strconv.FormatInt(n, 10)
			}
		case "ranks":
			if n, err := strconv.Atoi(same); err == nil {
				same = strconv.Itoa(n)
			}
		}
		if first, ok := seen[same]; ok {
			what := fmt.Sprintf("%s is given twice", show(v))
			if strings.TrimSpace(first.Value) != strings.TrimSpace(v.Value) {
				what = fmt.Sprintf("%s and %s are the same value", show(first), show(v))
			}
			return nil, fmt.Errorf("%s:%d: axis %s: %s; give each value once (replicas: N repeats every point)", file, v.Line, key.Value, what)
		}
		seen[same] = v
	}
	if key.Value == "size" {
		// In bytes, as a range writes them: a list's 64KiB went into the
		// size column as written, beside a range's 65536 (a new user's
		// trial).
		for _, v := range out {
			if n, err := configs.ParseSize(strings.TrimSpace(v.Value)); err == nil && v.Kind == yaml.ScalarNode {
				// A number in JSON Lines too (1KiB was the string "1024"
				// beside 2048 written plainly: a new user's trial).
				v.Value, v.Tag, v.Style = strconv.FormatInt(n, 10), "!!int", 0
			}
		}
	}
	return out, nil
}

// deref is the node an alias (*name) stands for, else n.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// expand turns a range or list of ranks or sizes into its values, as run's
// -n and -s do; other values are themselves.
func expand(key string, v *yaml.Node) ([]*yaml.Node, error) {
	text := v.Value
	if v.Kind != yaml.ScalarNode || !strings.ContainsAny(text, ".,") || key != "ranks" && key != "size" {
		return []*yaml.Node{v}, nil
	}
	var vals []string
	if key == "ranks" {
		ns, err := cmdutil.Ints(text)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			vals = append(vals, strconv.Itoa(n))
		}
	} else {
		sizes, err := cmdutil.Sizes(text)
		if err != nil {
			return nil, err
		}
		for _, n := range sizes {
			vals = append(vals, strconv.FormatInt(n, 10))
		}
	}
	var out []*yaml.Node
	for _, s := range vals {
		out = append(out, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: s, Line: v.Line, Column: v.Column})
	}
	return out, nil
}

// knownAlgorithm reports whether name is an algorithm of some collective
// or a library's choice: which collective a point runs may be set
// elsewhere in the file.
func knownAlgorithm(name string) bool {
	name = strings.TrimSpace(name)
	if name == "" || collectives.IsSelector(name) {
		return true
	}
	return slices.ContainsFunc(collectives.All(), func(a collectives.Algorithm) bool { return a.Name == name })
}

// checkKey says whether key is a setting a sweep knows and val a value it
// takes: machine, a flag of `collsim run`, or a machine config setting.
func checkKey(file string, key, val *yaml.Node, axis bool) error {
	at := fmt.Sprintf("%s:%d", file, val.Line)
	k := key.Value
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
		if axis {
			return fmt.Errorf("%s: %s: an empty value in the list; give one", at, k)
		}
		return fmt.Errorf("%s: %s has no value; give one, or leave the key out", at, k)
	}
	switch {
	case k == "machine":
		if val.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: machine: give a built-in machine's name or a config file", at)
		}
		if _, _, err := configs.Source(machinePath(file, val.Value)); err != nil {
			if !slices.Contains(configs.Builtins(), val.Value) && !strings.Contains(err.Error(), "neither") {
				return fmt.Errorf("%s: machine %s: %v", at, val.Value, err)
			}
			return fmt.Errorf("%s: machine %q is neither a built-in machine (%s) nor a readable file (a file's path is relative to the sweep file's folder)", at, val.Value, strings.Join(configs.Builtins(), ", "))
		}
		return nil
	case run.IsFlag(k):
		if val.Kind == yaml.MappingNode || val.Kind == yaml.SequenceNode && !run.Repeatable(k) {
			what := "one value"
			if !axis {
				what += " (a list of values belongs in axes)"
			}
			return fmt.Errorf("%s: %s takes %s", at, k, what)
		}
		_, err := run.Point(settings([]Value{{Key: k, Node: val}}), nil)
		if err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		if k == "collective" && !slices.Contains(collectives.Collectives, collectives.Collective(strings.TrimSpace(val.Value))) {
			// Checked here, as algo below: it failed every point.
			return fmt.Errorf("%s: collective %q is not one of %s", at, val.Value, cmdutil.CollectiveNames())
		}
		if k == "algo" && !knownAlgorithm(val.Value) {
			// Checked here, not only when its point runs: a misspelt
			// name passed --dry-run and failed every point later (a
			// new user's trial), on Slurm across a whole job array.
			return fmt.Errorf("%s: algo %q is not an algorithm of any collective, nor a library's choice (%s); collsim algos lists them", at, val.Value, strings.Join(collectives.Selectors, ", "))
		}
		return nil
	case strings.Contains(k, ".") || slices.Contains([]string{"name", "description", "network", "node", "host", "noise", "faults"}, k):
		return configs.CheckOverride(configs.Override{Path: k, Value: val, Where: fmt.Sprintf("%s:%d", file, key.Line)})
	}
	hint := "" // a typo's likely meaning (sise: size), as for flags
	if near := lines.Near(k, append([]string{"machine"}, run.Flags()...)); len(near) > 0 {
		hint = "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return fmt.Errorf("%s:%d: %q is not a setting of a sweep%s; valid: machine, a machine config setting (e.g. network.fat_tree.taper, link.bandwidth), or a flag of collsim run: %s",
		file, key.Line, k, hint, strings.Join(run.Flags(), ", "))
}

// settings are the values that are run's flags, as run.Settings.
func settings(vals []Value) []run.Setting {
	var out []run.Setting
	for _, v := range vals {
		if !run.IsFlag(v.Key) {
			continue
		}
		if v.Node.Kind == yaml.SequenceNode {
			for _, it := range v.Node.Content {
				out = append(out, run.Setting{Flag: v.Key, Value: it.Value})
			}
			continue
		}
		out = append(out, run.Setting{Flag: v.Key, Value: v.Node.Value})
	}
	return out
}

// hash identifies the points' definition: the same base, axes and zip
// give the same hash whatever the comments and layout of the file.
func (s *Spec) hash() string {
	h := sha256.New()
	fmt.Fprintln(h, "collsim sweep 1")
	for _, b := range s.Base {
		fmt.Fprintf(h, "base %q %q\n", b.Key, show(b.Node))
	}
	for _, a := range s.Axes {
		fmt.Fprintf(h, "axis %q", a.Key)
		for _, v := range a.Values {
			fmt.Fprintf(h, " %q", show(v))
		}
		fmt.Fprintln(h)
	}
	for _, d := range s.dims {
		fmt.Fprintf(h, "dim %v\n", d)
	}
	// What the named machine and noise-trace files hold, not only their
	// names: a machine file edited between an interrupted sweep and its
	// resume (or between the tasks of a Slurm array) gave rows of two
	// machines in one file under one hash (a new user's trial).
	for _, v := range s.inputFiles() {
		data, err := configs.ReadFile(v, configs.MaxConfigBytes, "an input file")
		if err != nil {
			continue // the points that use it fail, saying why
		}
		fmt.Fprintf(h, "file %q %x\n", v, sha256.Sum256(data))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// inputFiles are the files the points read, by path: every machine that is
// not built in and every noise trace, in base and axes, once each, in
// order. (A noise trace a machine config names is not among them.)
func (s *Spec) inputFiles() []string {
	var out []string
	add := func(key string, v *yaml.Node) {
		if (key != "machine" && key != "noise-trace") || v.Kind != yaml.ScalarNode || v.Value == "" {
			return
		}
		// A machine's path is relative to the sweep file's folder; a
		// trace's goes to collsim run as it is written.
		path := v.Value
		if key == "machine" {
			if slices.Contains(configs.Builtins(), path) {
				return
			}
			path = machinePath(s.File, path)
		}
		if !slices.Contains(out, path) {
			out = append(out, path)
		}
	}
	for _, b := range s.Base {
		add(b.Key, b.Node)
	}
	for _, a := range s.Axes {
		for _, v := range a.Values {
			add(a.Key, v)
		}
	}
	return out
}

// show is a value as one line of text.
func show(v *yaml.Node) string { return configs.ValueText(v) }

// typed is a value as JSON would carry it: a number, a bool or a string.
func typed(v *yaml.Node) any {
	if v.Kind == yaml.ScalarNode {
		switch v.Tag {
		case "!!int":
			if n, err := strconv.ParseInt(v.Value, 0, 64); err == nil {
				return n
			}
		case "!!float":
			if f, err := strconv.ParseFloat(v.Value, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f
			}
		case "!!bool":
			return v.Value == "true"
		}
	}
	return show(v)
}

// Command is point p as a collsim run command line: its machine, its
// machine settings as --set and its flags, each value shell-quoted where
// it needs to be.
func (s *Spec) Command(p int) string {
	args := []string{"collsim", "run"}
	for _, v := range s.Point(p) {
		switch {
		case v.Key == "machine":
			args = append(args, "-m", machinePath(s.File, v.Node.Value))
		case run.IsFlag(v.Key) && v.Node.Kind == yaml.SequenceNode:
			for _, it := range v.Node.Content {
				args = append(args, "--"+v.Key, it.Value)
			}
		case run.IsFlag(v.Key):
			args = append(args, "--"+v.Key, v.Node.Value)
		default:
			args = append(args, "--set", v.Key+"="+show(v.Node))
		}
	}
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellQuote quotes a for a POSIX shell where it has anything but letters,
// digits and -_./:=,+@.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
