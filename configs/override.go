package configs

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/collsim/collsim/sim/lines"
)

// Override sets one value of a machine config before it is validated, as a
// sweep's axis does ("network.fat_tree.taper: [1, 2, 4]").
//
// A Path that starts with a top-level section (name, network, node, host,
// placement, noise, faults) is the setting's full path. Any other Path is a
// suffix and sets every setting of the machine whose path ends with it:
// "link.bandwidth" is network.fat_tree.link.bandwidth on a fat-tree and
// network.crossbar.link.bandwidth on a crossbar.
type Override struct {
	Path  string
	Value *yaml.Node
	Where string // where it was given, for errors: "sweep.yaml:7"
}

// Source returns the config text of the machine Resolve(arg) loads and the
// source name its errors carry.
func Source(arg string) (source string, data []byte, err error) {
	if arg == "" {
		arg = DefaultMachine
	}
	if slices.Contains(Builtins(), arg) {
		data, err := builtinFS.ReadFile("builtin/" + arg + ".yaml")
		return "builtin:" + arg, data, err
	}
	if _, err := Resolve(arg); err != nil {
		return "", nil, err
	}
	data, err = ReadFile(arg, MaxConfigBytes, "a machine config")
	return arg, data, err
}

// CheckOverride says whether o names settings of the machine config format
// and its value has their type; the error names the valid keys where the
// path goes astray.
func CheckOverride(o Override) error {
	keys := strings.Split(o.Path, ".")
	if o.Value == nil {
		return fmt.Errorf("%s: %s has no value; give one (a yaml.Node)", o.Where, o.Path)
	}
	if slices.Contains(keys, "") {
		return fmt.Errorf("%s: %q is not a setting path; write the keys joined by dots, e.g. network.fat_tree.taper", o.Where, o.Path)
	}
	var leaves []reflect.Type
	if topLevel(keys[0]) {
		t, err := schemaPath(keys)
		if err != nil {
			return fmt.Errorf("%s: %s", o.Where, err)
		}
		leaves = append(leaves, t)
	} else {
		walkSchema(reflect.TypeFor[fileYAML](), nil, func(path []string, t reflect.Type) {
			if endsWith(path, keys) {
				leaves = append(leaves, t)
			}
		})
		if len(leaves) == 0 {
			var paths []string
			walkSchema(reflect.TypeFor[fileYAML](), nil, func(path []string, _ reflect.Type) {
				paths = append(paths, strings.Join(path, "."))
			})
			return fmt.Errorf("%s: no machine setting is or ends with %q%s; top-level sections: %s (see README.md, machine configs)", o.Where, o.Path, nearPath(keys, paths), validKeys(reflect.TypeFor[fileYAML]()))
		}
	}
	for _, t := range leaves {
		if err := o.Value.Decode(reflect.New(t).Interface()); err != nil {
			return fmt.Errorf("%s: %s: %s is %s", o.Where, o.Path, show(o.Value), yamlReason(err))
		}
	}
	return nil
}

// OverrideError is WithOverrides' error when the machine config is valid
// as it is and one of the overrides makes it invalid: the override is to
// blame (a command-line --set is then a bad flag).
type OverrideError struct{ Err error }

// Error implements error.
func (e *OverrideError) Error() string { return e.Err.Error() }

// Unwrap returns the error itself.
func (e *OverrideError) Unwrap() error { return e.Err }

// WithOverrides validates the machine config data (from source) with the
// overrides applied; errors name the override that failed. An error of the
// config itself is reported as Parse reports it, at its own file and line;
// one the overrides make is an OverrideError.
func WithOverrides(source string, data []byte, overrides []Override) (*Machine, error) {
	if len(overrides) == 0 {
		return Parse(source, data)
	}
	if _, err := Parse(source, data); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(source, data, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a machine config (a mapping of sections)", source)
	}
	root := doc.Content[0]
	var orig yaml.Node
	yaml.Unmarshal(data, &orig) // parsed above: the same tree, left unchanged for its line numbers
	root0 := orig.Content[0]
	name := strings.TrimPrefix(source, "builtin:")
	var what []string
	setBy := map[string]Override{} // a setting's full path -> what set it
	for _, o := range overrides {
		if err := CheckOverride(o); err != nil {
			return nil, &OverrideError{Err: err} // exit 2 from the command line too
		}
		paths, err := apply(root, o, name)
		if err != nil {
			// A path the machine lacks is the override's mistake, as a
			// misspelled key is (it exited 1, the key 2; a new user's
			// trial).
			return nil, &OverrideError{Err: err}
		}
		for _, p := range paths {
			if prev, ok := setBy[p]; ok {
				return nil, &OverrideError{Err: fmt.Errorf("%s: %s and %s (%s) both set %s of machine %s; give one", o.Where, o.Path, prev.Path, prev.Where, p, name)}
			}
			setBy[p] = o
		}
		what = append(what, o.Path+"="+show(o.Value))
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	src := fmt.Sprintf("%s with %s", name, strings.Join(what, ", "))
	m, err := Parse(src, out)
	if err != nil {
		// The line numbers are of the rewritten config, which the user
		// never sees: name the settings instead, and the override that set
		// what the first error is about (else the first override).
		where := overrides[0].Where
		if at := regexp.MustCompile(`^` + regexp.QuoteMeta(src) + `:(\d+): `).FindStringSubmatch(err.Error()); at != nil {
			var rewritten yaml.Node
			line, _ := strconv.Atoi(at[1])
			if yaml.Unmarshal(out, &rewritten) == nil && len(rewritten.Content) > 0 {
				if path := pathAtLine(rewritten.Content[0], line, nil); path != nil {
					if o, ok := setterOf(setBy, strings.Join(path, ".")); ok {
						where = o.Where
					}
				}
			}
		}
		msg := strings.ReplaceAll(err.Error(), "\n"+src+":", "\n"+src+" line ")
		msg = regexp.MustCompile(`^`+regexp.QuoteMeta(src)+`:\d+: `).ReplaceAllString(msg, src+": ")
		msg = regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(src)+` line \d+: `).ReplaceAllString(msg, src+": ")
		return nil, &OverrideError{Err: fmt.Errorf("%s: %s", where, msg)}
	}
	if m.Name == "" || m.Name == name {
		m.Name = name
	}
	// A costly input set by an override is named where the override was
	// given ("sweep.yaml:7", "--set ..."), not by a line of the rewritten
	// config; the others by their line in the machine's own file.
	for i, in := range m.Inputs {
		if o, ok := setterOf(setBy, in.Key); ok {
			m.Inputs[i].Where = o.Where
		} else if _, n, found := nodeAt(root0, strings.Split(in.Key, ".")); found {
			m.Inputs[i].Where = fmt.Sprintf("%s:%d", source, n)
		}
	}
	return m, nil
}

// pathAtLine is the path (keys, and list indices as numbers) of the
// deepest setting under n written on line, or nil.
func pathAtLine(n *yaml.Node, line int, at []string) []string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := append(slices.Clone(at), k.Value)
			if deeper := pathAtLine(v, line, p); deeper != nil {
				return deeper
			}
			if k.Line == line || v.Line == line && v.Kind == yaml.ScalarNode {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := append(slices.Clone(at), strconv.Itoa(i))
			if deeper := pathAtLine(v, line, p); deeper != nil {
				return deeper
			}
			if v.Line == line && v.Kind == yaml.ScalarNode {
				return p
			}
		}
	}
	return nil
}

// setterOf returns the override that set the setting at path, or a list
// or section it lies in (host.local_by_size for
// host.local_by_size.0.bandwidth: a list is set whole).
func setterOf(setBy map[string]Override, path string) (Override, bool) {
	for p := path; ; {
		if o, ok := setBy[p]; ok {
			return o, true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return Override{}, false
		}
		p = p[:i]
	}
}

// apply sets o in the config tree root of the machine called name, and
// returns the full paths of the settings it set.
func apply(root *yaml.Node, o Override, name string) ([]string, error) {
	keys := strings.Split(o.Path, ".")
	if topLevel(keys[0]) {
		n := root
		for i, k := range keys[:len(keys)-1] {
			next := child(n, k)
			if next == nil {
				if k != "network" && (i == 0 || keys[i-1] != "network") {
					next = &yaml.Node{Kind: yaml.MappingNode}
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, next)
				} else {
					return nil, fmt.Errorf("%s: %s: machine %s has no %s (the settings its config writes: %s; sections other than network may be added)", o.Where, o.Path, name, strings.Join(keys[:i+1], "."), strings.Join(leafPaths(root), ", "))
				}
			}
			if next.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s: %s: %s of machine %s is not a section", o.Where, o.Path, strings.Join(keys[:i+1], "."), name)
			}
			n = next
		}
		set(n, keys[len(keys)-1], o.Value)
		return []string{o.Path}, nil
	}
	var paths []string
	walkTree(root, nil, func(path []string, parent *yaml.Node) {
		if endsWith(path, keys) {
			set(parent, path[len(path)-1], o.Value)
			paths = append(paths, strings.Join(path, "."))
		}
	})
	if len(paths) == 0 {
		leaves := leafPaths(root)
		return nil, fmt.Errorf("%s: %s: machine %s has no setting ending with it%s (the settings its config writes: %s; give a full path such as host.overhead to add one outside network)", o.Where, o.Path, name, nearPath(keys, leaves), strings.Join(leaves, ", "))
	}
	return paths, nil
}

// topLevel says whether k is a top-level section of the format.
func topLevel(k string) bool {
	t := reflect.TypeFor[fileYAML]()
	for i := range t.NumField() {
		if yamlKey(t.Field(i)) == k {
			return true
		}
	}
	return false
}

// schemaPath is the type of the setting at keys, or an error naming the
// valid keys where keys leave the format.
func schemaPath(keys []string) (reflect.Type, error) {
	t := reflect.TypeFor[fileYAML]()
	for i, k := range keys {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Slice {
			return nil, fmt.Errorf("%s is a list, set whole: give it as one YAML list (--set '%s=[...]'), not %s under it", strings.Join(keys[:i], "."), strings.Join(keys[:i], "."), k)
		}
		if t.Kind() == reflect.Map || t == reflect.TypeFor[yaml.Node]() {
			// A mapping of the user's keys (faults.degraded's links): its
			// keys are no settings (it listed "valid: , , ,"), and link
			// names hold dots.
			p := strings.Join(keys[:i], ".")
			return nil, fmt.Errorf("%s is a mapping, set whole: give it as one YAML mapping (--set '%s={%s: ...}'), not %s under it", p, p, strings.Join(keys[i:], "."), k)
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeFor[lineText]() {
			return nil, fmt.Errorf("%s is a value, not a section: %s cannot go under it", strings.Join(keys[:i], "."), k)
		}
		f, ok := fieldByKey(t, k)
		if !ok {
			where := "the top level"
			if i > 0 {
				where = strings.Join(keys[:i], ".")
			}
			return nil, fmt.Errorf("%s has no setting %q; valid: %s", where, k, validKeys(t))
		}
		t = f.Type
	}
	return t, nil
}

func fieldByKey(t reflect.Type, k string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if yamlKey(t.Field(i)) == k {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func yamlKey(f reflect.StructField) string { return strings.Split(f.Tag.Get("yaml"), ",")[0] }

// walkSchema calls visit with the path and type of every setting and
// section of the format under t.
func walkSchema(t reflect.Type, path []string, visit func([]string, reflect.Type)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[lineText]() || t == reflect.TypeFor[yaml.Node]() {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		p := append(slices.Clip(path), yamlKey(f))
		visit(p, f.Type)
		walkSchema(f.Type, p, visit)
	}
}

// walkTree calls visit with the path of every key of the config tree and
// the mapping that holds it.
func walkTree(n *yaml.Node, path []string, visit func([]string, *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := append(slices.Clip(path), n.Content[i].Value)
		visit(p, n)
		walkTree(n.Content[i+1], p, visit)
	}
}

// leafPaths lists the paths of the config's values.
// nearPath suggests, for a setting path of keys that matched none, the
// endings of as many keys of paths within two edits of it: "; did you
// mean link.bandwidth?" for link.bandwith (a sweep's misspelt setting got
// no suggestion where the same typo in a file did: a new user's trial).
func nearPath(keys, paths []string) string {
	var ends []string
	for _, p := range paths {
		parts := strings.Split(p, ".")
		if len(parts) >= len(keys) {
			if end := strings.Join(parts[len(parts)-len(keys):], "."); !slices.Contains(ends, end) {
				ends = append(ends, end)
			}
		}
	}
	near := lines.Near(strings.Join(keys, "."), ends)
	if len(near) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}

func leafPaths(root *yaml.Node) []string {
	var paths []string
	walkTree(root, nil, func(path []string, parent *yaml.Node) {
		if v := child(parent, path[len(path)-1]); v != nil && v.Kind != yaml.MappingNode {
			paths = append(paths, strings.Join(path, "."))
		}
	})
	return paths
}

func endsWith(path, keys []string) bool {
	return len(path) >= len(keys) && slices.Equal(path[len(path)-len(keys):], keys)
}

// child is the value of key k of mapping n, or nil.
func child(n *yaml.Node, k string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}

// set makes v the value of key k of mapping n.
func set(n *yaml.Node, k string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
}

// ValueText is a value as its YAML text on one line (a scalar as written).
func ValueText(v *yaml.Node) string { return show(v) }

// show is a value as its YAML text on one line.
func show(v *yaml.Node) string {
	if v.Kind == yaml.ScalarNode {
		return v.Value
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// yamlReason is a decoding error in words, as "not <what was wanted>":
// without yaml.v3's line prefix and Go's type names ("cannot unmarshal
// !!int `5` into configs.linkYAML" says a section was wanted).
func yamlReason(err error) string {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = strings.TrimPrefix(yamlLine.ReplaceAllString(te.Errors[0], "$2"), "yaml: ")
	}
	if m := cannotUnmarshal.FindStringSubmatch(msg); m != nil {
		want := "a value of another kind"
		switch t := m[2]; {
		case strings.HasPrefix(t, "configs."):
			want = "a section of settings"
			if st, ok := schemaTypes[t]; ok {
				want += " (" + validKeys(st) + ")"
			}
		case t == "float64" || t == "float32":
			want = "a number"
		case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
			want = "a whole number"
		case t == "string":
			want = "one value, not a list or section"
		case strings.HasPrefix(t, "[]"):
			want = "a list"
		}
		msg = "not " + want
	}
	return msg
}

var cannotUnmarshal = regexp.MustCompile("cannot unmarshal !!\\w+( `[^`]*`)? into (\\S+)")
