package configs

import (
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
		{"fattree-1024", "bandwidth.link", "1", `t:9: no machine setting is or ends with "bandwidth.link"`},
		{"fattree-1024", "host..overhead", "1", `t:9: "host..overhead" is not a setting path`},
		{"dragonfly-72", "network.fat_tree.taper", "2", `machine dragonfly-72 has no network.fat_tree (its settings: name, description, network.dragonfly.p`},
		{"dragonfly-72", "link.bandwidth", "1Gbit/s", `machine dragonfly-72 has no setting ending with it`},
		{"small", "host.overhead", "fast", `t:9: small with host.overhead=fast: host.overhead: "fast" does not start with a number`},
		{"small", "network.crossbar.hosts.x", "1", `network.crossbar.hosts is a value, not a section`},
		{"small", "host.local_by_size.0.bandwidth", "1GB/s", `host.local_by_size is a list, set whole: give it as one YAML list (--set 'host.local_by_size=[...]'), not 0 under it`},
	} {
		source, data, _ := Source(c.machine)
		_, err := WithOverrides(source, data, []Override{{Path: c.path, Value: scalar(c.value), Where: "t:9"}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s=%s: %v, want %q", c.machine, c.path, c.value, err, c.want)
		}
	}
}
