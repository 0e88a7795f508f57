package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
)

func TestUnits(t *testing.T) {
	bw := map[string]float64{"100Gbit/s": 12.5e9, "12.5GB/s": 12.5e9, "100Gbps": 12.5e9, "1GiB/s": 1 << 30, "8bit/s": 1, "1e9B/s": 1e9, "400Gb/s": 50e9}
	for in, want := range bw {
		if got, err := ParseBandwidth(in); err != nil || got != want {
			t.Errorf("ParseBandwidth(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	dur := map[string]sim.Time{"1.2us": 1200 * sim.Nanosecond, "500ns": 500 * sim.Nanosecond, "1µs": sim.Microsecond, "0": 0, "3ms": 3 * sim.Millisecond, "7ps": 7}
	for in, want := range dur {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	size := map[string]int64{"8": 8, "64KiB": 65536, "1MB": 1e6, "4M": 4 << 20, "0": 0, "1GiB": 1 << 30}
	for in, want := range size {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fast", "100", "100Gbt/s", "-5GB/s", "0GB/s"} {
		if _, err := ParseBandwidth(bad); err == nil {
			t.Errorf("ParseBandwidth(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"5", "1.2 lightyears", "-3ns", "1e300s"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"1.5", "-1", "3 apples", "1e30"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestBuiltinsLoad(t *testing.T) {
	want := map[string]int{"small": 64, "fattree-1024": 1024, "xc40": 6144, "gpu-cluster": 512, "dragonfly-72": 72}
	names := Builtins()
	if len(names) != len(want) {
		t.Fatalf("built-ins %v, want %d", names, len(want))
	}
	for _, name := range names {
		m, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Topology.Hosts() != want[name] {
			t.Errorf("%s: %d hosts, want %d", name, m.Topology.Hosts(), want[name])
		}
		if err := m.Topology.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	xc, _ := Builtin("xc40")
	if a, b := xc.PathParams(0, 6143); a <= 0 || b < 1/4.7e9*0.999 {
		t.Errorf("xc40 far path: alpha %g beta %g; the optical link should set beta", a, b)
	}
}

// Each bad config yields one error line per problem, naming file:line and
// the fix.
func TestBadConfigsNameTheLine(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"typo", "network:\n  crossbar:\n    hosts: 4\n    link: {bandwdth: 1GB/s, latency: 1us}\n",
			[]string{"bad.yaml:4: unknown key \"bandwdth\"; valid keys here: bandwidth, latency"}},
		{"zero bandwidth", "network:\n  crossbar:\n    hosts: 4\n    link:\n      bandwidth: 0GB/s\n      latency: 1us\n",
			[]string{"bad.yaml:5: network.crossbar.link.bandwidth: bandwidth \"0GB/s\" must be positive"}},
		{"bad unit", "network:\n  crossbar:\n    hosts: 4\n    link: {bandwidth: 1GB/s, latency: 1 fortnight}\n",
			[]string{"bad.yaml:4: network.crossbar.link.latency: duration \"1 fortnight\""}},
		{"two networks", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\n  torus: {dims: [2], link: {bandwidth: 1GB/s, latency: 0}}\n",
			[]string{"bad.yaml:1: network: give exactly one of crossbar, fat_tree, dragonfly, torus, graph (found 2: crossbar, torus)"}},
		{"dragonfly misfit", "network:\n  dragonfly:\n    p: 2\n    a: 4\n    h: 2\n    g: 20\n    host_link: {bandwidth: 1GB/s, latency: 0}\n    local_link: {bandwidth: 1GB/s, latency: 0}\n    global_link: {bandwidth: 1GB/s, latency: 0}\n",
			[]string{"bad.yaml:2: network.dragonfly: dragonfly: g=20 groups need at least 19 global ports", "at most 9 groups"}},
		{"missing latency", "network:\n  torus:\n    dims: [4, 4]\n    link: {bandwidth: 1GB/s}\n",
			[]string{"bad.yaml:4: network.torus.link.latency: missing"}},
		{"wrong type", "network:\n  crossbar:\n    hosts: many\n",
			[]string{"bad.yaml:3: cannot unmarshal"}},
		{"syntax", "network: [\n", []string{"bad.yaml:"}},
		{"empty", "", []string{"bad.yaml: empty config"}},
		{"several problems", "network:\n  crossbar:\n    hosts: 4\n    link: {bandwidth: fast, latency: slow}\nplacement: scattered\n",
			[]string{"bad.yaml:4: network.crossbar.link.bandwidth", "bad.yaml:4: network.crossbar.link.latency"}},
		{"bad placement", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nplacement: scattered\n",
			[]string{"bad.yaml:3: placement: unknown placement \"scattered\"; valid: block, round_robin, random"}},
		{"local needed", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 4\n",
			[]string{"bad.yaml:3: host.local: missing: with 4 ranks per host"}},
		{"ugal on a crossbar", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\n  routing: ugal\n",
			[]string{"bad.yaml:3: network.routing: ugal routing detours through a third group of a dragonfly", "use minimal"}},
		{"disconnected graph", "network:\n  graph:\n    hosts: 4\n    link: {bandwidth: 1GB/s, latency: 0}\n    edges:\n      - h0 s0\n      - h1 s0\n      - h2 s1\n      - h3 s1\n",
			[]string{"bad.yaml:2: network.graph: custom graph of 4 hosts: not connected: host h0 cannot reach host h2; add edges"}},
		{"graph edge lines", "network:\n  graph:\n    hosts: 2\n    edges:\n      - h0 s0 1GB/s 1us\n      - h1 s0\n      - h5 s0 1GB/s 0\n      - s0 s1 fast 0\n      - s0\n",
			[]string{"bad.yaml:6: network.graph.edges: edge \"h1 s0\": no bandwidth and latency: give them on the line or as network.graph.link",
				"bad.yaml:8: network.graph.edges: edge \"s0 s1 fast 0\": bandwidth: \"fast\" does not start", "bad.yaml:9: network.graph.edges: edge \"s0\": want two vertex names"}},
		{"graph missing host", "network:\n  graph:\n    hosts: 2\n    link: {bandwidth: 1GB/s, latency: 0}\n    edges:\n      - h0 s0\n      - h1 s0\n      - h5 s0\n",
			[]string{"bad.yaml:8: network.graph.edges: edge \"h5 s0\": host h5 does not exist"}},
		{"ecmp on a torus", "network:\n  torus: {dims: [4], link: {bandwidth: 1GB/s, latency: 0}}\n  routing: ecmp\n",
			[]string{"bad.yaml:3: network.routing: ecmp routing chooses among equal shortest paths"}},
		{"unknown routing", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\n  routing: adaptive\n",
			[]string{"bad.yaml:3: network.routing: unknown routing \"adaptive\"; valid: minimal, valiant, ugal"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	if m, err := Resolve(""); err != nil || m.Name != DefaultMachine {
		t.Fatalf("default: %v %v", m, err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	os.WriteFile(file, []byte("network:\n  torus: {dims: [3, 3], link: {bandwidth: 2GB/s, latency: 100ns}}\n"), 0o644)
	m, err := Resolve(file)
	if err != nil || m.Name != "mine" || m.Topology.Hosts() != 9 {
		t.Fatalf("file: %+v %v", m, err)
	}
	if _, err := Resolve("nonesuch"); err == nil || !strings.Contains(err.Error(), "small") {
		t.Fatalf("unknown machine: %v", err)
	}
}

// FuzzParse: the loader never panics; what it accepts is a usable machine.
func FuzzParse(f *testing.F) {
	for _, name := range Builtins() {
		data, _ := builtinFS.ReadFile("builtin/" + name + ".yaml")
		f.Add(data)
	}
	f.Add([]byte("network:\n  torus: {dims: [2, 3], link: {bandwidth: 1GB/s, latency: 0}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		if m.Topology == nil || m.Topology.Hosts() < 1 || m.RanksPerHost < 1 {
			t.Fatalf("accepted an unusable machine: %+v", m)
		}
		if m.Topology.Hosts() <= 4096 {
			if err := m.Topology.Check(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestExamplesLoad: every example config in configs/examples is valid and
// its routes are whole.
func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob("examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		m, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if err := m.Topology.Check(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
