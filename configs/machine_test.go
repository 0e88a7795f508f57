package configs

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/collsim/collsim/network"
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
	for _, bad := range []string{"", "fast", "100", "100Gbt/s", "-5GB/s", "0GB/s", "1e300TB/s", "5e-324bit/s"} {
		if _, err := ParseBandwidth(bad); err == nil {
			t.Errorf("ParseBandwidth(%q) accepted", bad)
		}
	}
	// A bare 0 or negative is not an unknown unit: it says what is wrong.
	for _, zero := range []string{"0", "-1"} {
		if _, err := ParseBandwidth(zero); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("ParseBandwidth(%q): %v; want it to say the bandwidth must be positive", zero, err)
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
	want := map[string]int{"small": 64, "fattree-1024": 1024, "xc40": 6144, "gpu-cluster": 512, "dragonfly-72": 72, "cori": 6144,
		"gpu-node-pcie": 16, "gpu-node-nvlink": 16, "gpu-node-nvswitch": 16}
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
	// A GPU to the host memory port behind it on gpu-node-pcie: up its
	// x16 link (1 us) and its switch's uplink (500 ns), bridge to the
	// memory link (100 ns), the free link between the nodes, and down the
	// mirror node the same way: 3.2 us, the 25 GB/s links the bottleneck.
	pc, _ := Builtin("gpu-node-pcie")
	if a, b := pc.PathParams(0, 8); math.Abs(a-3.2e-6) > 1e-15 || math.Abs(b-1/25e9) > 1e-24 {
		t.Errorf("gpu-node-pcie GPU 0 to memory port 0: alpha %g beta %g, want 3.2e-6 and 4e-11", a, b)
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
			[]string{`bad.yaml:3: network.crossbar.hosts: "many" is not a whole number`}},
		{"syntax", "network: [\n", []string{"bad.yaml:"}},
		// Messages that said something else than what was wrong (a new
		// user's trial): "found 0: )", "does not start with a number",
		// "is not a whole number" for a quoted number.
		{"no network", "network: {}\n", []string{"bad.yaml:1: network: give one of crossbar, fat_tree, dragonfly, torus, graph (found none)"}},
		{"latency out of range", "network:\n  crossbar: {hosts: 4, link: {bandwidth: 1GB/s, latency: 1e400us}}\n",
			[]string{`bad.yaml:2: network.crossbar.link.latency: "1e400us": 1e400 is out of range`}},
		{"quoted number", "network:\n  crossbar: {hosts: \"8\", link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "8" is quoted, so it is text; write the number without quotes`}},
		{"quoted taper", "network:\n  fat_tree: {k: 32, levels: 2, taper: \"2\", link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.fat_tree.taper: "2" is quoted, so it is text; write the number without quotes`}},
		{"taper not a fraction", "network:\n  fat_tree: {k: 32, levels: 2, taper: 32/0, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.fat_tree.taper: "32/0" is not a number or a fraction such as 32/24 or 4:3`}},
		{"empty", "", []string{"bad.yaml: empty config"}},
		{"several problems", "network:\n  crossbar:\n    hosts: 4\n    link: {bandwidth: fast, latency: slow}\nplacement: scattered\n",
			[]string{"bad.yaml:4: network.crossbar.link.bandwidth", "bad.yaml:4: network.crossbar.link.latency"}},
		{"bad placement", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nplacement: scattered\n",
			[]string{"bad.yaml:3: placement: unknown placement \"scattered\"; valid: block, round_robin, random"}},
		{"local needed", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 4\n",
			[]string{"bad.yaml:3: host.local: missing: with 4 ranks per host"}},
		{"local duplex", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: simplex\n",
			[]string{`bad.yaml:6: host.local_duplex: "simplex" is not a duplex; use full`}},
		{"local duplex share above 1", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: 1.5\n",
			[]string{`bad.yaml:6: host.local_duplex: "1.5" is not a duplex`, "a share between 0 and 1"}},
		{"local duplex share negative", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: -0.5\n",
			[]string{`bad.yaml:6: host.local_duplex: "-0.5" is not a duplex`}},
		{"local duplex share hex", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: 0x1p-2\n",
			[]string{`bad.yaml:6: host.local_duplex: "0x1p-2" is not a duplex`}},
		{"local duplex share exponent", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: 1e-400\n",
			[]string{`bad.yaml:6: host.local_duplex: "1e-400" is not a duplex`}},
		{"local duplex share two dots", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: 0.2.5\n",
			[]string{`bad.yaml:6: host.local_duplex: "0.2.5" is not a duplex`}},
		{"local duplex share NaN", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: .nan\n",
			[]string{`bad.yaml:6: host.local_duplex: ".nan" is not a duplex`}},
		{"local band without from", "network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    - {bandwidth: 12GB/s}\n",
			[]string{"bad.yaml:7: host.local_by_size.0.from: missing: give the smallest message size"}},
		{"local bands out of order", "network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    - {from: 1MiB, bandwidth: 12GB/s}\n    - from: 512KiB\n      bandwidth: 14GB/s\n",
			[]string{"bad.yaml:8: host.local_by_size.1.from: 512KiB is not above the band before it (1MiB): list the bands in increasing order"}},
		{"local band from 0", "network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    - {from: 0, bandwidth: 12GB/s}\n",
			[]string{"bad.yaml:7: host.local_by_size.0.from: 0: a band starts at 1 byte or more"}},
		{"local band bad values", "network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    - from: 1MiB\n      bandwidth: fast\n    - from: 2MiB\n      duplex: simplex\n",
			[]string{"bad.yaml:8: host.local_by_size.0.bandwidth: ", "bad.yaml:9: host.local_by_size.1.bandwidth: missing; give the bandwidth of messages from 2MiB up",
				`bad.yaml:10: host.local_by_size.1.duplex: "simplex" is not a duplex`}},
		{"local band unknown key", "network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    - {from: 1MiB, bandwidth: 12GB/s, latency: 1us}\n",
			[]string{"bad.yaml:7:", "latency", "from, bandwidth, duplex"}},
		{"local bands not a list", "network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    from: 1MiB\n",
			[]string{"bad.yaml:7: host.local_by_size: want a list"}},
		{"ugal on a crossbar", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\n  routing: ugal\n",
			[]string{"bad.yaml:3: network.routing: ugal routing detours through a third group of a dragonfly", "use minimal"}},
		{"ugal on nodes of two rails on a dragonfly", "network:\n  dragonfly: {p: 2, a: 4, h: 2, g: 9, host_link: {bandwidth: 1GB/s, latency: 0}, local_link: {bandwidth: 1GB/s, latency: 0}, global_link: {bandwidth: 1GB/s, latency: 0}}\n  routing: ugal\nnode:\n  devices: 4\n  rails: 2\n  fabric: {bandwidth: 1GB/s, latency: 0}\n  nic: {bandwidth: 1GB/s, latency: 0}\n",
			[]string{"bad.yaml:3: network.routing: ugal routing detours through a third group of a dragonfly;", "its nodes have 2 rails each, whose NICs lie in different groups", "use minimal"}},
		{"disconnected graph", "network:\n  graph:\n    hosts: 4\n    link: {bandwidth: 1GB/s, latency: 0}\n    edges:\n      - h0 s0\n      - h1 s0\n      - h2 s1\n      - h3 s1\n",
			[]string{"bad.yaml:2: network.graph: custom graph of 4 hosts: not connected: host h0 cannot reach host h2; add edges"}},
		// A misspelt switch (S0 for s0) is named at the line that
		// introduced it (an audit: it was the graph's line).
		{"misspelt switch", "network:\n  graph:\n    hosts: 2\n    link: {bandwidth: 1GB/s, latency: 0}\n    edges:\n      - h0 s0\n      - h1 S0\n",
			[]string{"bad.yaml:7: network.graph.edges: edge \"h1 S0\": custom graph of 2 hosts: not connected: host h0 cannot reach host h1; switches s0, S0 have only one edge each, so they join nothing: is a name misspelled?"}},
		{"graph edge lines", "network:\n  graph:\n    hosts: 2\n    edges:\n      - h0 s0 1GB/s 1us\n      - h1 s0\n      - h5 s0 1GB/s 0\n      - s0 s1 fast 0\n      - s0\n",
			[]string{"bad.yaml:6: network.graph.edges: edge \"h1 s0\": no bandwidth and latency: give them on the line or as network.graph.link",
				"bad.yaml:8: network.graph.edges: edge \"s0 s1 fast 0\": bandwidth: \"fast\" does not start", "bad.yaml:9: network.graph.edges: edge \"s0\": want two vertex names"}},
		{"graph missing host", "network:\n  graph:\n    hosts: 2\n    link: {bandwidth: 1GB/s, latency: 0}\n    edges:\n      - h0 s0\n      - h1 s0\n      - h5 s0\n",
			[]string{"bad.yaml:8: network.graph.edges: edge \"h5 s0\": host h5 does not exist"}},
		{"ecmp on a torus", "network:\n  torus: {dims: [4], link: {bandwidth: 1GB/s, latency: 0}}\n  routing: ecmp\n",
			[]string{"bad.yaml:3: network.routing: ecmp routing chooses among equal shortest paths"}},
		{"node fabric", "network:\n  crossbar: {hosts: 4, link: {bandwidth: 1GB/s, latency: 0}}\nnode:\n  devices: 4\n  fabric: {bandwidth: 1GB/s, latency: 0}\n  nic: {bandwidth: 1GB/s, latency: 0}\n  fabric_kind: ring\n",
			[]string{"bad.yaml:7: node.fabric_kind: unknown fabric \"ring\"; valid: switch, mesh, tree"}},
		{"rails", "network:\n  crossbar: {hosts: 6, link: {bandwidth: 1GB/s, latency: 0}}\nnode:\n  devices: 4\n  fabric: {bandwidth: 1GB/s, latency: 0}\n  nic: {bandwidth: 1GB/s, latency: 0}\n  rails: 4\n",
			[]string{"bad.yaml:7: node.rails: multi-node: 4 rails need a network whose hosts (6) are a multiple of 4"}},
		{"overfull node", "network:\n  crossbar: {hosts: 4, link: {bandwidth: 1GB/s, latency: 0}}\nnode:\n  devices: 4\n  fabric: {bandwidth: 1GB/s, latency: 0}\n  nic: {bandwidth: 1GB/s, latency: 0}\n  ranks: 5\n",
			[]string{"bad.yaml:7: node.ranks: must be 1..4 (a node of 4 devices x 1 ranks per host), not 5"}},
		{"noise out of range", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nnoise:\n  jitter: {normal: -5ns}\n  detours: {period: 10us, duration: 20us}\n  stragglers: {count: 0, factor: 0.5}\n",
			[]string{"bad.yaml:4: noise.jitter.normal: duration \"-5ns\"", "bad.yaml:5: noise.detours: periodic noise: a detour of 20µs every 10µs; need 0 < duration < period",
				"bad.yaml:6: noise.stragglers.count: must be at least 1", "bad.yaml:6: noise.stragglers.factor: a slow rank's CPU work takes factor times as long: give 1..1e6, not 0.5"}},
		{"noise kinds", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nnoise:\n  jitter: {normal: 5ns, lognormal: 5ns}\n  detours:\n    period: 1ms\n    rate: 100\n",
			[]string{"bad.yaml:4: noise.jitter: give one of normal", "bad.yaml:5: noise.detours: give one of period"}},
		{"noise rate", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nnoise:\n  co_scheduled: true\n  detours:\n    rate: -3\n    duration: 0s\n",
			[]string{"bad.yaml:6: noise.detours.rate: detours per second: give a number in (0, 1e9], not -3", "bad.yaml:7: noise.detours.duration: must be above zero, not 0s"}},
		{"noise cosched alone", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nnoise:\n  co_scheduled: true\n",
			[]string{"bad.yaml:4: noise.co_scheduled: co-scheduling shares the detours' phase among ranks: give detours too"}},
		{"noise trace missing", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nnoise:\n  detours: {trace: /nonexistent/noise.txt}\n",
			[]string{"bad.yaml:4: noise.detours: noise trace: open /nonexistent/noise.txt: no such file"}},
		{"faults", "network:\n  fat_tree: {k: 4, levels: 2, link: {bandwidth: 1GB/s, latency: 0}}\nfaults:\n  degraded:\n    s0.0->s1.0: 0.5\n    s0.0->s9.9: 0.5\n    s0.0->s1.1: 2\n    h0: s0.0\n",
			[]string{"bad.yaml:6: faults.degraded: s0.0->s9.9: fat-tree k=4 n=2 has no link from s0.0 to s9.9", "bad.yaml:7: faults.degraded: s0.0->s1.1: a degraded link keeps a fraction of its bandwidth in (0, 1], not 2",
				"bad.yaml:8: faults.degraded: h0: want FROM->TO:FACTOR"}},
		// The same link twice, spelt alike or not, multiplied its factors
		// (a new user's trial): the second is refused at its line.
		{"degraded twice", "network:\n  fat_tree: {k: 4, levels: 2, link: {bandwidth: 1GB/s, latency: 0}}\nfaults:\n  degraded:\n    s0.0->s1.0: 0.5\n    \"s0.0 -> s1.0\": 0.25\n",
			[]string{"bad.yaml:6: faults.degraded: s0.0 -> s1.0: the link is degraded already at line 5: give each link once"}},
		{"degraded list", "network:\n  fat_tree: {k: 4, levels: 2, link: {bandwidth: 1GB/s, latency: 0}}\nfaults:\n  degraded: [a]\n",
			[]string{"bad.yaml:4: faults.degraded: want a mapping of links"}},
		{"failed cuts", "network:\n  fat_tree: {k: 4, levels: 2, link: {bandwidth: 1GB/s, latency: 0}}\nfaults:\n  failed:\n    - s0.0->s1.0\n    - h0->s0.0\n",
			[]string{"bad.yaml:4: faults.failed: with those links failed, host h0 cannot reach"}},
		{"failed unknown", "network:\n  fat_tree: {k: 4, levels: 2, link: {bandwidth: 1GB/s, latency: 0}}\nfaults:\n  failed:\n    - s0.0->s1.0\n    - s0.0 s1.1\n",
			[]string{"bad.yaml:6: faults.failed: \"s0.0 s1.1\": want FROM->TO"}},
		{"taper not whole", "network:\n  fat_tree:\n    k: 32\n    levels: 2\n    taper: 3\n    link: {bandwidth: 1GB/s, latency: 0}\n",
			[]string{"bad.yaml:5: network.fat_tree.taper: fat-tree: taper 3 would keep 32/3 = 10.7 of each leaf switch's 32 uplinks", "whole ratios: 1, 2, 4, 8, 16, 32"}},
		{"unknown taper mode", "network:\n  fat_tree:\n    k: 4\n    levels: 2\n    taper: 2\n    taper_mode: speed\n    link: {bandwidth: 1GB/s, latency: 0}\n",
			[]string{"bad.yaml:6: network.fat_tree.taper_mode: unknown taper mode \"speed\"; valid: links, bandwidth"}},
		{"failed links under valiant", "network:\n  dragonfly: {p: 1, a: 2, h: 1, g: 3, host_link: {bandwidth: 1GB/s, latency: 0}, local_link: {bandwidth: 1GB/s, latency: 0}, global_link: {bandwidth: 1GB/s, latency: 0}}\n  routing: valiant\nfaults:\n  failed: [r0.0->r0.1]\n",
			[]string{"faults.failed: failed links are routed around by minimal and ECMP routes; valiant routing does not know them"}},
		{"unknown routing", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\n  routing: adaptive\n",
			[]string{"bad.yaml:3: network.routing: unknown routing \"adaptive\"; valid: minimal, valiant, ugal"}},
		// Accepted but wrong, before: yaml.v3 truncates fractions into
		// integers, a written 0 passed for a key left out, and a second
		// document went unread.
		{"fractional hosts", "network:\n  crossbar:\n    hosts: 2.5\n    link: {bandwidth: 1GB/s, latency: 1us}\n",
			[]string{`bad.yaml:3: network.crossbar.hosts: "2.5" is not a whole number`}},
		{"fractional dims", "network:\n  torus:\n    dims:\n      - 2\n      - 3.9\n    link: {bandwidth: 1GB/s, latency: 1us}\n",
			[]string{"bad.yaml:5: network.torus.dims: 3.9 is not a whole number"}},
		// 1e0 is a whole number, written as a float: said so, with its
		// digits (it read "is not a whole number": an audit).
		{"ranks per host as a float", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 1e0\n",
			[]string{`bad.yaml:4: host.ranks_per_host: "1e0" is a whole number written as a float; write it in digits: 1`}},
		{"a flow mapping's key without its colon", "network:\n  crossbar: {hosts: 4, link: {bandwi 500 10GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: unknown key "bandwi 500 10GB/s"; valid keys here: bandwidth, latency`}},
		{"hosts as a float", "network:\n  crossbar: {hosts: 1e3, link: {bandwidth: 1GB/s, latency: 0}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "1e3" is a whole number written as a float; write it in digits: 1000`}},
		// Through an alias, a fraction was cut to a whole number, and a
		// number written with a leading zero or in another base was read
		// in that base: 4.5 hosts built 4, 7.9 built a torus of 7, 010
		// hosts built 8 (an audit).
		{"fraction through an alias", "description: &d 4.5\nnetwork:\n  crossbar: {hosts: *d, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:3: network.crossbar.hosts: "4.5" is not a whole number`}},
		{"fraction through an alias in a list", "name: &d 7.9\nnetwork:\n  torus: {dims: [*d, 2], link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{"bad.yaml:3: network.torus.dims: 7.9 is not a whole number"}},
		{"octal hosts", "network:\n  crossbar: {hosts: 010, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "010" has a leading zero, which YAML reads as octal; write it without the leading zeros`}},
		{"octal taper", "network:\n  fat_tree: {k: 8, levels: 2, taper: 02, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.fat_tree.taper: "02" has a leading zero`}},
		{"binary dims", "network:\n  torus: {dims: [0b11, 2], link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.torus.dims: "0b11" is written in another base; write the number in decimal`}},
		{"hex hosts", "network:\n  crossbar: {hosts: 0x10, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "0x10" is written in another base`}},
		// yaml.v3 drops underscores first (0_10 built 8 hosts) and takes
		// capital prefixes and runs of zeros (the test audit).
		{"octal with an underscore", "network:\n  crossbar: {hosts: 0_10, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "0_10" has a leading zero`}},
		{"two leading zeros", "network:\n  crossbar: {hosts: 001, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "001" has a leading zero`}},
		// 08 is no octal number: yaml.v3 reads it as the float 8 (it said
		// "a whole number written as a float"; a new user's trial).
		{"08", "network:\n  crossbar: {hosts: 08, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "08" has a leading zero`}},
		{"0009 in a list", "network:\n  torus: {dims: [0009, 2], link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.torus.dims: "0009" has a leading zero`}},
		{"zeros only", "network:\n  crossbar: {hosts: 00, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "00" has a leading zero`}},
		{"capital hex", "network:\n  crossbar: {hosts: 0X10, link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.crossbar.hosts: "0X10" is written in another base`}},
		{"capital binary in a list", "network:\n  torus: {dims: [2, 0B11], link: {bandwidth: 1GB/s, latency: 1us}}\n",
			[]string{`bad.yaml:2: network.torus.dims: "0B11" is written in another base`}},
		// Digits past int64, which yaml.v3 tags a float: too large, not a
		// fraction (a new user's trial).
		{"hosts past int64", "network:\n  crossbar:\n    hosts: 99999999999999999999999\n    link: {bandwidth: 1GB/s, latency: 1us}\n",
			[]string{`bad.yaml:3: network.crossbar.hosts: "99999999999999999999999" is too large`}},
		{"taper 0", "network:\n  fat_tree:\n    k: 4\n    levels: 2\n    taper: 0\n    link: {bandwidth: 1GB/s, latency: 0}\n",
			[]string{"bad.yaml:5: network.fat_tree.taper: fat-tree: taper must be a ratio of at least 1", "not 0"}},
		{"ranks per host 0", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 0\n",
			[]string{"bad.yaml:4: host.ranks_per_host: must be at least 1, not 0"}},
		{"node ranks 0", "network:\n  crossbar: {hosts: 4, link: {bandwidth: 1GB/s, latency: 0}}\nnode:\n  devices: 2\n  fabric: {bandwidth: 10GB/s, latency: 0}\n  nic: {bandwidth: 1GB/s, latency: 0}\n  ranks: 0\n",
			[]string{"bad.yaml:7: node.ranks: must be 1..2 (a node of 2 devices x 1 ranks per host), not 0"}},
		// Wrong kinds and bad text, in the file's words (yaml.v3 names Go
		// types: "cannot unmarshal !!seq into int", "into
		// configs.linkYAML"), with the line.
		{"list for a number", "network:\n  crossbar:\n    hosts: [1, 2]\n", []string{"bad.yaml:3: network.crossbar.hosts: want a single value, not a list"}},
		{"text for a link", "network:\n  crossbar:\n    hosts: 2\n    link: fast\n", []string{"bad.yaml:4: network.crossbar.link: want a mapping of keys (bandwidth, latency), not a value"}},
		{"mapping for dims", "network:\n  torus:\n    dims: {a: 1}\n", []string{"bad.yaml:3: network.torus.dims: want a list, not a mapping"}},
		{"a list for the config", "- 1\n- 2\n", []string{"bad.yaml:1: the config: want a mapping of keys (name, description, network,"}},
		{"tab", "network:\n  crossbar:\n\thosts: 2\n", []string{"bad.yaml:3: a tab; YAML indents with spaces only"}},
		// Syntax errors at the line that is wrong (yaml.v3's parser
		// counts lines from 0, and names where it gave up: the end).
		{"unclosed brace", "name: x\nnetwork:\n  crossbar:\n    hosts: 4\n    link: {bandwidth: 1GB/s, latency: 0\nhost:\n  overhead: 0ns\n",
			[]string{"bad.yaml:5: the { opened here is never closed"}},
		{"unclosed bracket", "network:\n  torus:\n    dims: [2, 2\n", []string{"bad.yaml:3: the [ opened here is never closed"}},
		{"unclosed bracket, closed brace", "network: {torus: {dims: [2, 2}}\n", []string{"bad.yaml:1: the [ opened here is never closed"}},
		{"brackets in a comment", "# [ a comment\nnetwork:\n  torus: {dims: [2, 2}\n", []string{"bad.yaml:3: the [ opened here is never closed"}},
		{"unclosed quote", "name: \"x\nnetwork:\n  crossbar:\n    hosts: 4\n", []string{"bad.yaml:1: the \" opened here is never closed"}},
		{"unclosed quote after an escaped one", "description: \"a \\\" b\nname: x\n", []string{"bad.yaml:1: the \" opened here is never closed"}},
		{"unclosed single quote after a doubled one", "name: x\ndescription: 'it''s\n", []string{"bad.yaml:2: the ' opened here is never closed"}},
		{"no dash in a list", "- a\nb: c\n", []string{"bad.yaml:2: did not find expected '-' indicator"}},
		// A quote or bracket inside a plain scalar, a comment or a block
		// scalar is text: the one left open is the one named.
		{"quote in a plain scalar", "description: it is 'fine\nname: \"x\n", []string{"bad.yaml:2: the \" opened here is never closed"}},
		{"quote in a block scalar", "description: >-\n  the 'best\n  [draft\nname: \"x\n", []string{"bad.yaml:4: the \" opened here is never closed"}},
		{"quote and bracket in comments", "# it's ] here\nnetwork: # don't [\n  torus: {dims: [2, 2}\n", []string{"bad.yaml:3: the [ opened here is never closed"}},
		{"the innermost of two open", "description: [1,\n  [2, 3\n", []string{"bad.yaml:2: the [ opened here is never closed"}},
		{"the end of the file", "name: x\nnetwork:\n  - [a\n", []string{"bad.yaml:3:"}},
		// Where yaml.v3 names the collection or the line before, the
		// first lines that fail alone name the one that is wrong.
		{"a key indented too little", "name: x\nnetwork:\n  crossbar:\n    hosts: 4\n   link: {bandwidth: 1GB/s, latency: 0}\n", []string{"bad.yaml:5: did not find expected key"}},
		{"a list item indented too little", "network:\n  graph:\n    hosts: 2\n    edges:\n      - h0 s0\n     - h1 s1\n", []string{"bad.yaml:6: did not find expected key"}},
		{"a late tab", "network:\n  crossbar:\n    hosts: 4\n    link:\n      bandwidth: 1GB/s\n\tlatency: 0\n", []string{"bad.yaml:6: a tab; YAML indents with spaces only"}},
		{"a bad escape", "description: ok\nname: \"x\\q\"\n", []string{"bad.yaml:2: found unknown escape character"}},
		{"a block scalar in a flow mapping", "name: x\nnetwork:\n  crossbar: {hosts: 4\ndescription: |\n  text\n", []string{"bad.yaml:4: found character that cannot start any token (inside the { opened on line 3)"}},
		{"NUL", "name: a\x00b\n", []string{"bad.yaml:1: control character 0x00; a config is plain text"}},
		{"not UTF-8", "name: x\ndescription: \xff\n", []string{"bad.yaml:2: byte 0xff is not UTF-8 text"}},
		{"two documents", "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\n---\nnetwork:\n  crossbar: {hosts: 8, link: {bandwidth: 1GB/s, latency: 0}}\n",
			[]string{"bad.yaml:3: a second YAML document; the file is one document"}},
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
	f.Add([]byte("network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    - {from: 512KiB, bandwidth: 9GB/s, duplex: 0.4}\n    - {from: 4MiB, bandwidth: 6GB/s}\n"))
	// A bandwidth whose number times its unit overflows (refused since a
	// helper's audit found the model refusing what the config took).
	f.Add([]byte("network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_by_size:\n    - {from: 1MiB, bandwidth: 1e300TB/s}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		if m.Topology == nil || m.Topology.Hosts() < 1 || m.RanksPerHost < 1 {
			t.Fatalf("accepted an unusable machine: %+v", m)
		}
		// What the config accepts, the network models take.
		if _, err := m.Analytic([]int32{0}); err != nil {
			t.Fatalf("accepted a machine the analytic model refuses: %v", err)
		}
		if m.Topology.Hosts() <= 4096 {
			if err := m.Topology.Check(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestNodePlacement: a node's ranks take its devices in order; block fills
// node after node, round_robin deals ranks to nodes in turn, node.ranks
// leaves devices empty; the example with rails keeps a GPU on its rail.
func TestNodePlacement(t *testing.T) {
	const yaml = "network:\n  crossbar: {hosts: 3, link: {bandwidth: 1GB/s, latency: 0}}\nnode:\n  devices: 4\n  fabric: {bandwidth: 9GB/s, latency: 0}\n  nic: {bandwidth: 1GB/s, latency: 0}\n"
	m, err := Parse("m.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		policy string
		want   []int32
	}{{"block", []int32{0, 1, 2, 3, 4, 5}}, {"round_robin", []int32{0, 4, 8, 1, 5, 9}}} {
		if got, err := m.Place(6, c.policy, 1); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.policy, got, err, c.want)
		}
	}
	half, err := Parse("m.yaml", []byte(yaml+"  ranks: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := half.Place(6, "block", 1); !slices.Equal(got, []int32{0, 1, 4, 5, 8, 9}) || half.NodeSize() != 2 || half.Slots() != 6 {
		t.Errorf("2 ranks per node: %v, node size %d, slots %d", got, half.NodeSize(), half.Slots())
	}
	if _, err := half.Place(7, "block", 1); err == nil || !strings.Contains(err.Error(), "3 nodes x 2 ranks per node = 6 slots") {
		t.Errorf("7 ranks on 6 slots: %v", err)
	}
	random, _ := m.Place(12, "random", 3)
	seen := map[int32]bool{}
	for _, h := range random {
		seen[h] = true
	}
	if len(seen) != 12 {
		t.Errorf("random placement of a full machine %v reuses a device", random)
	}
}

// TestNoiseConfig: a trace is read relative to the config, its errors name
// the trace's line; a machine's noise is a fresh value per run, the same
// for the same seed.
func TestNoiseConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "os.txt"), []byte("# start\tduration (ns)\n0\t5000\n100000\t0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("0\t5000\n10\tlots\n"), 0o644)
	head := "network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 0}}\nnoise:\n"
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(head+body), 0o644)
		return f
	}
	m, err := Load(write("ok.yaml", "  detours: {trace: os.txt}\n  co_scheduled: true\n  stragglers: {count: 1, factor: 3}\n  jitter: {lognormal: 50ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Noise == nil || !m.Jitter.Lognormal || m.Jitter.Sigma != 50*sim.Nanosecond {
		t.Fatalf("noise %+v, jitter %+v", m.Noise, m.Jitter)
	}
	a, b := m.Noise.For(1), m.Noise.For(1)
	if a == b || !a.CoScheduled || a.Stragglers != 1 || a.Factor != 3 {
		t.Errorf("For: %p %p %+v", a, b, a)
	}
	if _, err := Load(write("bad.yaml", "  detours: {trace: bad.txt}\n")); err == nil || !strings.Contains(err.Error(), "bad.txt:2") {
		t.Errorf("a bad trace line: %v", err)
	}
	poisson, err := Load(write("p.yaml", "  detours: {rate: 1000, duration: 20us}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if poisson.Noise.For(1) == nil {
		t.Error("no Poisson noise")
	}
}

// TestFaultsConfig: degraded and failed links given in a config change the
// machine as the run flags do.
func TestFaultsConfig(t *testing.T) {
	const tree = "network:\n  fat_tree: {k: 4, levels: 2, link: {bandwidth: 1GB/s, latency: 0}}\n"
	m, err := Parse("f.yaml", []byte(tree+"faults:\n  degraded: {s0.0->s1.0: 0.25}\n  failed: [\"s0.1->s1.1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := m.Topology.LinkNamed("s0.0", "s1.0")
	if bw := m.Topology.Links()[id].Bandwidth; bw != 0.25e9 {
		t.Errorf("degraded link at %g B/s, want 0.25e9", bw)
	}
	dead, _ := m.Topology.LinkNamed("s0.1", "s1.1")
	for s := range m.Topology.Hosts() {
		for d := range m.Topology.Hosts() {
			if slices.Contains(m.Topology.Route(s, d, nil), int32(dead)) {
				t.Fatalf("route %d->%d crosses the failed link", s, d)
			}
		}
	}
	// --degrade's factor is of the link's own bandwidth: it replaces the
	// config's 0.25 (1 GB/s at 0.5: 0.5 GB/s, not 0.125), and a link given
	// twice is refused.
	again, err := m.Degrade([]string{"s0.0->s1.0:0.5", "s0.1->s1.0:0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if bw := again.Topology.Links()[id].Bandwidth; bw != 0.5e9 {
		t.Errorf("degraded again at %g B/s, want 0.5e9", bw)
	}
	if got := len(again.Topology.DegradedLinks()); got != 2 {
		t.Errorf("%d degraded links, want 2", got)
	}
	// The config's input for the link goes with its factor: the costly
	// inputs that name where a bandwidth came from are the flags'.
	for _, in := range again.Inputs {
		if strings.HasPrefix(in.Key, "faults.degraded.") {
			t.Errorf("the config's replaced factor is still an input: %+v", in)
		}
	}
	if n := len(again.Inputs) - len(m.Inputs); n != 1 {
		t.Errorf("%d inputs more than the config's, want 1 (2 flags, one replacing the config's)", n)
	}
	if _, err := m.Degrade([]string{"s0.1->s1.0:0.5", "s0.1 -> s1.0:0.75"}); err == nil || !strings.Contains(err.Error(), `"s0.1 -> s1.0:0.75": the link is degraded already by "s0.1->s1.0:0.5"`) {
		t.Errorf("a link degraded twice: %v", err)
	}
	// ECMP keeps hashing around a failed link, over the survivors.
	m, err = Parse("f.yaml", []byte(tree+"  routing: ecmp\nfaults:\n  failed: [\"s0.1->s1.1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Topology.Hashes() || len(m.Topology.Failed()) != 2 {
		t.Fatalf("ecmp with a failed link: hashes %v, %d failed links", m.Topology.Hashes(), len(m.Topology.Failed()))
	}
	dead, _ = m.Topology.LinkNamed("s0.1", "s1.1")
	for h := range uint64(64) {
		if path := m.Topology.RouteHashed(4, 13, h, nil); slices.Contains(path, int32(dead)) {
			t.Fatalf("hashed route %v crosses the failed link", path)
		}
	}
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

// TestREADMEConfig: the config file the README shows is valid.
func TestREADMEConfig(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\nname: my-cluster\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("README.md has no ```yaml block starting name: my-cluster")
	}
	m, err := Parse("README.md", []byte("name: my-cluster\n"+block))
	if err != nil {
		t.Fatal(err)
	}
	if m.Noise == nil || m.DevicesPerNode != 4 || m.Jitter.Sigma == 0 {
		t.Errorf("README config: noise %v, %d devices per node, jitter %v", m.Noise, m.DevicesPerNode, m.Jitter)
	}
}

// Whole numbers of bytes are read exactly, up to 2^62 and no further:
// through a float64, 2^53+1 was read as 2^53, and 2^62+1 passed as 2^62.
func TestParseSizeExact(t *testing.T) {
	for s, want := range map[string]int64{
		"9007199254740993":    1<<53 + 1,
		"4611686018427387904": 1 << 62,
		"4194304TiB":          1 << 62,
		"1KiB":                1024,
		" 8 ":                 8,
		"1.5KiB":              1536,
	} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"4611686018427387905", "4194305TiB", "99999999999999999999", "2.5"} {
		if got, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", s, got)
		}
	}
}

// TestFlowRangeNamesTheEdge: a custom graph's edge whose own bandwidth the
// flow model cannot hold is named by its line, not mistaken for another
// bandwidth of the config (the host's reduction rate, once).
func TestFlowRangeNamesTheEdge(t *testing.T) {
	yaml := "name: g\nnetwork:\n  graph:\n    hosts: 2\n    edges:\n      - h0 s0 100Gbit/s 1us\n      - s0 h1 1000TB/s 1us\nhost:\n  reduce_bandwidth: 1TB/s\n"
	m, err := Parse("g.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	place, err := m.Place(2, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Flow(place)
	if err == nil || !strings.Contains(err.Error(), "it comes from network.graph.edges s0 h1 1000TB/s 1us (g.yaml:7)") {
		t.Errorf("%v", err)
	}
}

// host.local_duplex reaches both network models: an exchange between the
// two ranks of one host takes twice a one-way message's time on a
// half-duplex channel (10000 B at 10 GB/s: 1µs, no latency), the same on
// a full-duplex one.
func TestLocalDuplexConfig(t *testing.T) {
	for _, c := range []struct {
		duplex string
		want   sim.Time
	}{{"", sim.Microsecond}, {"local_duplex: full\n", sim.Microsecond}, {"local_duplex: half\n", 2 * sim.Microsecond},
		// A share, as a number (1.25 µs: the receipt waits out a quarter
		// of the send's time) and quoted; 0 and 1 are full and half.
		{"local_duplex: 0.25\n", 1250 * sim.Nanosecond}, {"local_duplex: \"0.25\"\n", 1250 * sim.Nanosecond},
		{"local_duplex: 0\n", sim.Microsecond}, {"local_duplex: 1\n", 2 * sim.Microsecond},
		{"local_duplex: .5\n", 1500 * sim.Nanosecond}, {"local_duplex: 1.0\n", 2 * sim.Microsecond}} {
		m, err := Parse("x.yaml", []byte("network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  "+c.duplex))
		if err != nil {
			t.Fatal(err)
		}
		for model, took := range localExchange(t, m, 10000) {
			if took != c.want {
				t.Errorf("%q, %s: the exchange took %v, want %v", c.duplex, model, took, c.want)
			}
		}
	}
}

// localExchange is how long an exchange of bytes each way between the two
// ranks of m's first host takes, by network model.
func localExchange(t *testing.T, m *Machine, bytes int64) map[string]sim.Time {
	t.Helper()
	exchange := sim.FromPrograms("exchange", []sim.Program{
		{{Kind: sim.OpSend, Peer: 1, Bytes: bytes}, {Kind: sim.OpRecv, Peer: 1, Bytes: bytes}},
		{{Kind: sim.OpSend, Peer: 0, Bytes: bytes}, {Kind: sim.OpRecv, Peer: 0, Bytes: bytes}},
	}, 2)
	took := map[string]sim.Time{}
	for model, factory := range map[string]func([]int32) (sim.NetworkFactory, error){"analytic": m.Analytic, "flow": m.Flow} {
		net, err := factory([]int32{0, 0})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Execute(sim.New(1), exchange, sim.Config{Network: net, Host: sim.HostParams{EagerLimit: math.MaxInt64}})
		if err != nil {
			t.Fatal(err)
		}
		took[model] = res.Makespan
	}
	return took
}

// host.local_by_size reaches both network models: an exchange of b bytes
// between the two ranks of one host takes the band of b's bandwidth and
// duplex share, a band without a duplex the host's (0.5 here): 10000 B
// below the bands at 10 GB/s, share 0.5: 1.5µs; 20000 B at 40 GB/s, half
// duplex: 2 x 0.5µs; 1 MiB at 1 GB/s, the host's share: 1.5 x 1048.576µs.
func TestLocalBandsConfig(t *testing.T) {
	m, err := Parse("x.yaml", []byte("network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 2\n  local: {bandwidth: 10GB/s, latency: 0}\n  local_duplex: 0.5\n"+
		"  local_by_size:\n    - {from: 20000, bandwidth: 40GB/s, duplex: half}\n    - {from: 1MiB, bandwidth: 1GB/s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []network.LocalBand{{From: 20000, Bandwidth: 40e9, DuplexShare: 1}, {From: 1 << 20, Bandwidth: 1e9, DuplexShare: 0.5}}
	if !slices.Equal(m.LocalBands, want) {
		t.Errorf("bands %+v, want %+v", m.LocalBands, want)
	}
	for _, c := range []struct {
		bytes int64
		want  sim.Time
	}{{10000, 1500 * sim.Nanosecond}, {20000, sim.Microsecond}, {1 << 20, sim.FromSeconds(1.5 * (1 << 20) / 1e9)}} {
		for model, took := range localExchange(t, m, c.bytes) {
			if took != c.want {
				t.Errorf("%d bytes, %s: the exchange took %v, want %v", c.bytes, model, took, c.want)
			}
		}
	}
}

// TestTaperFraction: the README's taper "such as 32/24" is read as the
// fraction (it was refused as "not a number"): 24 of a 32-ary leaf's
// uplinks kept, the same tree as the decimal 1.3333 builds.
func TestTaperFraction(t *testing.T) {
	tree := func(taper string) *Machine {
		m, err := Parse("ft.yaml", []byte("network:\n  fat_tree: {k: 32, levels: 2, taper: "+taper+", link: {bandwidth: 1GB/s, latency: 1us}}\n"))
		if err != nil {
			t.Fatalf("taper %s: %v", taper, err)
		}
		return m
	}
	frac, dec := tree("32/24"), tree("1.3333")
	if got, want := len(frac.Topology.Links()), len(dec.Topology.Links()); got != want || frac.Topology.Name() != dec.Topology.Name() {
		t.Errorf("32/24: %s, %d links; 1.3333: %s, %d links", frac.Topology.Name(), got, dec.Topology.Name(), want)
	}
	// The form topo prints a taper in ("taper 4:3") is read back the same.
	if colon := tree("32:24"); colon.Topology.Name() != frac.Topology.Name() {
		t.Errorf("32:24 built %s, 32/24 %s", colon.Topology.Name(), frac.Topology.Name())
	}
	if !strings.Contains(frac.Topology.Name(), "24 of 32 leaf uplinks") {
		t.Errorf("32/24 built %s", frac.Topology.Name())
	}
}

// TestPlacedNodes: how a placement puts ranks on gpu-cluster's 64 nodes of
// 8 devices, by hand: 16 ranks in blocks fill 2 nodes, 8 each, in blocks;
// 12 fill 8 and 4; round-robin puts 16 on 16 nodes, one each (blocks of
// 1), and 100 on all 64, two on 36 of them and one on the other 28,
// interleaved (rank 0 and 64 share node 0); 128 put two on every node.
func TestPlacedNodes(t *testing.T) {
	m, err := Resolve("gpu-cluster")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ranks   int
		policy  string
		perNode int
		least   int
		blocked bool
	}{{16, "block", 8, 8, true}, {12, "block", 8, 4, true}, {16, "round_robin", 1, 1, true}, {100, "round_robin", 2, 1, false}, {128, "round_robin", 2, 2, false}, {8, "", 8, 8, true}} {
		perNode, least, blocked, err := m.PlacedNodes(c.ranks, c.policy, 1)
		if err != nil || perNode != c.perNode || least != c.least || blocked != c.blocked {
			t.Errorf("%d ranks, %q: %d to %d a node, blocked %t (%v); want %d to %d, %t", c.ranks, c.policy, least, perNode, blocked, err, c.least, c.perNode, c.blocked)
		}
	}
	// Random placement: the answer agrees with the hosts Place gives (a
	// node's 8 devices are consecutive hosts).
	for seed := range uint64(20) {
		place, err := m.Place(40, "random", seed)
		if err != nil {
			t.Fatal(err)
		}
		count := map[int32]int{}
		most, fewest := 0, 40
		for _, h := range place {
			count[h/8]++
			most = max(most, count[h/8])
		}
		for _, c := range count {
			fewest = min(fewest, c)
		}
		perNode, least, blocked, err := m.PlacedNodes(40, "random", seed)
		if err != nil || perNode != most || least != fewest || most == 1 && !blocked {
			t.Errorf("seed %d: %d to %d a node, blocked %t (%v); the hosts say %d to %d a node", seed, least, perNode, blocked, err, fewest, most)
		}
	}
}

// A whole number through an alias is read as written; 0x0 is refused as
// another base, though it is 0 in any.
func TestWholeNumbersThroughAliases(t *testing.T) {
	m, err := Parse("ok.yaml", []byte("description: &d 8\nnetwork:\n  torus: {dims: [*d, 0x0, 0], link: {bandwidth: 1GB/s, latency: 1us}}\n"))
	if err == nil || !strings.Contains(err.Error(), `"0x0" is written in another base`) {
		t.Errorf("0x0: %v", err)
	}
	m, err = Parse("ok.yaml", []byte("description: &d 8\nnetwork:\n  crossbar: {hosts: *d, link: {bandwidth: 1GB/s, latency: 0}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Topology.Hosts() != 8 {
		t.Errorf("hosts through an alias of 8: %d", m.Topology.Hosts())
	}
}

// A dragonfly of nodes of 4 devices, p = 2 and a = 4: a group holds 8
// nodes, 32 devices, the ranks a group-aligned algorithm takes as a
// group (GroupSize was 8, the network's hosts per group, a node's share
// too small: an audit); UGAL routing is accepted there (it was refused at
// run time, after the file was read).
func TestDragonflyOfNodesGroups(t *testing.T) {
	m, err := Parse("f.yaml", []byte("network:\n  dragonfly: {p: 2, a: 4, h: 2, g: 9, host_link: {bandwidth: 1GB/s, latency: 0}, local_link: {bandwidth: 1GB/s, latency: 0}, global_link: {bandwidth: 1GB/s, latency: 0}}\n  routing: ugal\nnode:\n  devices: 4\n  fabric: {bandwidth: 1GB/s, latency: 0}\n  nic: {bandwidth: 1GB/s, latency: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.GroupSize() != 32 || m.Topology.Groups() != 9 {
		t.Errorf("group size %d, %d groups; want 32 and 9", m.GroupSize(), m.Topology.Groups())
	}
}

// A machine's facts give its links' latencies, as they give their
// bandwidths (the report's machine table showed bandwidths alone, so two
// machines apart only in latency looked the same: a new user's trial):
// a crossbar of 300 ns links under nodes whose fabric is 200 ns and whose
// NICs 700 ns spans 200 ns to 700 ns.
func TestFactsLinkLatency(t *testing.T) {
	m, err := Parse("f.yaml", []byte("network:\n  crossbar: {hosts: 2, link: {bandwidth: 1GB/s, latency: 300ns}}\nnode:\n  devices: 2\n  fabric: {bandwidth: 10GB/s, latency: 200ns}\n  nic: {bandwidth: 5GB/s, latency: 700ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Facts()
	if math.Abs(f.LinkLatencyMin-200e-9) > 1e-18 || math.Abs(f.LinkLatencyMax-700e-9) > 1e-18 {
		t.Errorf("link latency %g .. %g s, want 200 ns .. 700 ns", f.LinkLatencyMin, f.LinkLatencyMax)
	}
	var row string
	for _, d := range m.Describe() {
		if d[0] == "link latency" {
			row = d[1]
		}
	}
	if row != "200ns .. 700ns" {
		t.Errorf("describe: link latency %q", row)
	}
}
