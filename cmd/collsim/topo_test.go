package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTopoBisection: collsim topo reports the bisection of full,
// link-tapered and bandwidth-tapered trees and of trees with failed links,
// each derived by hand on the 1,024-host 32-ary 2-tree of 12.5 GB/s links
// (the first 512 hosts fill leaves 0..15; see topology's
// TestTaperedFatTrees and TestFailedLinkDetoursSpread for the cuts).
func TestTopoBisection(t *testing.T) {
	const tapered = "../../configs/examples/fattree-1024-tapered.yaml"
	for _, tc := range []struct {
		name      string
		args      []string
		switches  int
		bisection float64 // bytes per second each way
		failed    int
		degraded  int
	}{
		// 512 uplinks of 12.5 GB/s.
		{"full", []string{"-m", "fattree-1024"}, 64, 6400e9, 0, 0},
		// 16 uplinks per leaf, 16 spines: 256 uplinks.
		{"2:1 by links", []string{"-m", tapered}, 48, 3200e9, 0, 0},
		// Leaf 0 keeps 31 uplinks: 511 x 12.5 GB/s = 6387.5 GB/s.
		{"one failed uplink", []string{"-m", "fattree-1024", "--fail", "s0.0->s1.0"}, 64, 6387.5e9, 2, 0},
		// 255 x 12.5 GB/s = 3187.5 GB/s.
		{"2:1 with a failed uplink", []string{"-m", tapered, "--fail", "s0.0->s1.0"}, 48, 3187.5e9, 2, 0},
		// Half speed one way: 511.5 x 12.5 GB/s = 6393.75 GB/s.
		{"a half-speed uplink", []string{"-m", "fattree-1024", "--degrade", "s0.0->s1.0:0.5"}, 64, 6393.75e9, 0, 1},
	} {
		stdout, stderr, code := collsim(t, append([]string{"topo", "--json"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		var facts struct {
			Switches  int     `json:"switches"`
			Bisection float64 `json:"bisection_Bps"`
			Failed    int     `json:"failed_links"`
			Degraded  int     `json:"degraded_links"`
			Hosts     int     `json:"hosts"`
		}
		if err := json.Unmarshal([]byte(stdout), &facts); err != nil {
			t.Fatal(err)
		}
		if facts.Switches != tc.switches || math.Abs(facts.Bisection-tc.bisection) > 1e-9*tc.bisection || facts.Failed != tc.failed || facts.Degraded != tc.degraded || facts.Hosts != 1024 {
			t.Errorf("%s: %+v; want %d switches, bisection %g B/s, %d failed and %d degraded links, 1024 hosts", tc.name, facts, tc.switches, tc.bisection, tc.failed, tc.degraded)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fail", "h0->s0.0", "-m", "fattree-1024"}, "--fail: with those links failed, host h0 cannot reach"},
		{[]string{"--fail", "s0.0->s9.9", "-m", "fattree-1024"}, "has no link from s0.0 to s9.9"},
		{[]string{"--degrade", "s0.0->s1.0:3", "-m", "fattree-1024"}, "fraction of its bandwidth"},
	} {
		if _, stderr, code := collsim(t, append([]string{"topo"}, tc.args...)...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("topo %v: exit %d, %s; want exit 2 saying %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestTopoHostCosts: topo says what the hosts charge, the defaults a config
// leaves out included (a config with no host section reduced for free and
// sent above 64 KiB by rendezvous, and nothing said so).
func TestTopoHostCosts(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "bare.yaml")
	os.WriteFile(bare, []byte("name: bare\nnetwork:\n  crossbar: {hosts: 4, link: {bandwidth: 10GB/s, latency: 1us}}\n"), 0o644)
	for _, c := range []struct {
		machine, want string
	}{
		// small.yaml: reduce_bandwidth 10GB/s, eager_limit 64KiB.
		{"small", "host costs      o 0s per send and receive, g 0s per message, reductions at 10GB/s, eager up to 64KiB, rendezvous above"},
		{bare, "reductions free (host.reduce_bandwidth not set), eager up to 64KiB, rendezvous above"},
	} {
		out, stderr, code := collsim(t, "topo", "-m", c.machine)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %q in:\n%s%s", c.machine, code, c.want, out, stderr)
		}
	}
}
