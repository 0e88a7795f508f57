package configs

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func scalar(v string) *yaml.Node {
	var doc yaml.Node
	yaml.Unmarshal([]byte(v), &doc)
	return doc.Content[0]
}

// TestOverrides checks settings applied by path and by suffix against the
// values the machine then has, and each kind of mistake's message.
func TestOverrides(t *testing.T) {
	source, data, err := Source("fattree-1024")
	if err != nil {
		t.Fatal(err)
	}
	m, err := WithOverrides(source, data, []Override{
		{Path: "link.bandwidth", Value: scalar("50Gbit/s"), Where: "t:1"},
		{Path: "host.overhead", Value: scalar("1us"), Where: "t:2"},
		{Path: "network.fat_tree.k", Value: scalar("4"), Where: "t:3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A k-ary n-tree has k^n hosts (32^2 = 1024 built in): 4^2 = 16 here;
	// every link at 50 Gbit/s.
	if m.Topology.Hosts() != 16 || m.Name != "fattree-1024" {
		t.Errorf("%d hosts, name %q; want 16 and fattree-1024", m.Topology.Hosts(), m.Name)
	}
	for _, l := range m.Topology.Links() {
		if l.Bandwidth != 6.25e9 {
			t.Fatalf("a link of %g B/s, want 6.25e9", l.Bandwidth)
		}
	}
	if m.Host.Overhead.Seconds() != 1e-6 {
		t.Errorf("overhead %v, want 1 µs", m.Host.Overhead)
	}
	// The original is untouched.
	if orig, _ := Builtin("fattree-1024"); orig.Topology.Hosts() != 1024 {
		t.Error("the built-in machine changed")
	}
	// A costly input names where it was set: the override, or its line in
	// the machine's own file (not a line of the rewritten config).
	m, err = WithOverrides(source, data, []Override{{Path: "host.reduce_bandwidth", Value: scalar("1GB/s"), Where: "--set host.reduce_bandwidth=1GB/s"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, in := range m.Inputs {
		switch in.Key {
		case "host.reduce_bandwidth", "network.fat_tree.link.latency":
			seen++
		}
		switch in.Key {
		case "host.reduce_bandwidth":
			if in.Where != "--set host.reduce_bandwidth=1GB/s" {
				t.Errorf("%s: where %q", in.Key, in.Where)
			}
		case "network.fat_tree.link.latency":
			if in.Where != "builtin:fattree-1024:10" { // its line in configs/builtin/fattree-1024.yaml
				t.Errorf("%s: where %q", in.Key, in.Where)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d of the two inputs checked are in the machine's inputs", seen)
	}
	// Two settings of one value: refused, not the last one silently.
	_, err = WithOverrides(source, data, []Override{
		{Path: "network.fat_tree.link.bandwidth", Value: scalar("1GB/s"), Where: "t:1"},
		{Path: "link.bandwidth", Value: scalar("2GB/s"), Where: "t:2"},
	})
	if err == nil || !strings.Contains(err.Error(), "t:2: link.bandwidth and network.fat_tree.link.bandwidth (t:1) both set network.fat_tree.link.bandwidth") {
		t.Errorf("two settings of one value: %v", err)
	}
	for _, c := range []struct {
		machine, path, value, want string
	}{
		{"fattree-1024", "network.fat_tree.tapir", "2", `t:9: network.fat_tree has no setting "tapir"; valid: k, levels, taper, taper_mode, link`},
		{"fattree-1024", "network.fat_tree.taper", "[1, 2]", `t:9: network.fat_tree.taper: [1, 2] is not a number`},
		{"fattree-1024", "bandwidth.link", "1", `t:9: no machine setting is or ends with "bandwidth.link"; top-level sections`},
		// A misspelt setting gets the endings within two edits, as a
		// misspelt key in a file does (a new user's trial).
		{"fattree-1024", "link.bandwith", "1Gbit/s", `t:9: no machine setting is or ends with "link.bandwith"; did you mean link.bandwidth?`},
		{"fattree-1024", "host..overhead", "1", `t:9: "host..overhead" is not a setting path`},
		{"dragonfly-72", "network.fat_tree.taper", "2", `machine dragonfly-72 has no network.fat_tree (the settings its config writes: name, description, network.dragonfly.p`},
		{"dragonfly-72", "link.bandwidth", "1Gbit/s", `machine dragonfly-72 has no setting ending with it`},
		{"small", "host.overhead", "fast", `t:9: small with host.overhead=fast: host.overhead: "fast" does not start with a number`},
		{"small", "network.crossbar.hosts.x", "1", `network.crossbar.hosts is a value, not a section`},
		{"small", "host.local_by_size.0.bandwidth", "1GB/s", `host.local_by_size is a list, set whole: give it as one YAML list (--set 'host.local_by_size=[...]'), not 0 under it`},
		// It said "has no setting; valid: , , , ," (a new user's trial).
		{"small", "faults.degraded.h0->s0.0", "0.5", `faults.degraded is a mapping, set whole: give it as one YAML mapping (--set 'faults.degraded={h0->s0.0: ...}'), not h0->s0 under it`},
	} {
		source, data, _ := Source(c.machine)
		_, err := WithOverrides(source, data, []Override{{Path: c.path, Value: scalar(c.value), Where: "t:9"}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s=%s: %v, want %q", c.machine, c.path, c.value, err, c.want)
		}
	}
}

// A band's bandwidth, an input inside a list, is named by its own line in
// the machine's file, and by the override when a --set gave the list
// (before, the file's line of the list's key, and under --set a line of
// the rewritten config, which the user never sees).
func TestBandInputsNamedWhereSet(t *testing.T) {
	const file = "network:\n" + // 1
		"  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\n" + // 2
		"host:\n" + // 3
		"  ranks_per_host: 2\n" + // 4
		"  local: {bandwidth: 10GB/s, latency: 0}\n" + // 5
		"  local_by_size:\n" + // 6
		"    - from: 64KiB\n" + // 7
		"      bandwidth: 8GB/s\n" + // 8
		"    - from: 1MiB\n" + // 9
		"      bandwidth: 6GB/s\n" // 10
	where := func(m *Machine) map[string]string {
		out := map[string]string{}
		for _, in := range m.Inputs {
			out[in.Key] = in.Where
		}
		return out
	}
	m, err := Parse("b.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	got := where(m)
	for key, want := range map[string]string{"host.local_by_size.0.bandwidth": "b.yaml:8", "host.local_by_size.1.bandwidth": "b.yaml:10", "host.local.bandwidth": "b.yaml:5"} {
		if got[key] != want {
			t.Errorf("in the file: %s is named at %q, want %q", key, got[key], want)
		}
	}
	var list yaml.Node
	if err := yaml.Unmarshal([]byte("[{from: 2MiB, bandwidth: 1GB/s}]"), &list); err != nil {
		t.Fatal(err)
	}
	const set = "--set host.local_by_size=[{from: 2MiB, bandwidth: 1GB/s}]"
	m, err = WithOverrides("b.yaml", []byte(file), []Override{{Path: "host.local_by_size", Value: list.Content[0], Where: set}})
	if err != nil {
		t.Fatal(err)
	}
	got = where(m)
	for key, want := range map[string]string{"host.local_by_size.0.bandwidth": set, "host.local.bandwidth": "b.yaml:5"} {
		if got[key] != want {
			t.Errorf("under --set: %s is named at %q, want %q", key, got[key], want)
		}
	}
	if _, ok := got["host.local_by_size.1.bandwidth"]; ok {
		t.Errorf("under --set the file's second band is still an input: %v", got)
	}
}

// TestOverrideErrorNamesItsSetter: a value the machine refuses is named
// where the override that set it was given, not where the first was.
func TestOverrideErrorNamesItsSetter(t *testing.T) {
	source, data, err := Source("fattree-1024")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		overrides []Override
		where     string
	}{
		{[]Override{{Path: "network.fat_tree.taper", Value: scalar("2"), Where: "s.yaml:3"}, {Path: "link.bandwidth", Value: scalar("0B/s"), Where: "s.yaml:5"}}, "s.yaml:5: "},
		{[]Override{{Path: "link.bandwidth", Value: scalar("0B/s"), Where: "s.yaml:3"}, {Path: "network.fat_tree.taper", Value: scalar("2"), Where: "s.yaml:5"}}, "s.yaml:3: "},
		{[]Override{{Path: "host.overhead", Value: scalar("1us"), Where: "s.yaml:2"}, {Path: "network.fat_tree.taper", Value: scalar("0.5"), Where: "s.yaml:4"}}, "s.yaml:4: "},
	} {
		_, err := WithOverrides(source, data, tc.overrides)
		if err == nil || !strings.HasPrefix(err.Error(), tc.where) {
			t.Errorf("%v: %v, want it at %s", tc.overrides, err, tc.where)
		}
	}
}

// TestOverrideMistakesAreOverrideErrors: every mistake of an override,
// its path and its value among them, is an OverrideError, as
// WithOverrides says (a misspelt path was a plain error, and a nil Value
// a panic in the YAML decoder: a new user's trial).
func TestOverrideMistakesAreOverrideErrors(t *testing.T) {
	source, data, err := Source("small")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Override{
		{Path: "link.bandwidht", Value: scalar("1GB/s"), Where: "mine"},
		{Path: "link.bandwidth", Value: nil, Where: "mine"},
		{Path: "link..bandwidth", Value: scalar("1GB/s"), Where: "mine"},
		{Path: "link.bandwidth", Value: scalar("fast"), Where: "mine"},
	} {
		_, err := WithOverrides(source, data, []Override{o})
		var oe *OverrideError
		if !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), "mine: ") {
			t.Errorf("%s=%v: %v (%T), want an OverrideError at mine", o.Path, o.Value, err, err)
		}
	}
}
