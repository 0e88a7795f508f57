package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/collsim/collsim/cmd/collsim/internal/root"
)

var update = flag.Bool("update", false, "rewrite the snapshot files (testdata/*.snapshot)")

// wallClock matches the only output that depends on the machine running
// the test: wall time and simulation speed.
var wallClock = regexp.MustCompile(`(?m)((?:wall|parse) time\s+).*$|("(?:wall|wall_total|parse)_s": )[0-9.e+-]+|("ops_per_s": )[0-9.e+-]+`)

func collsim(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = root.Main(args, &out, &errb)
	return out.String(), errb.String(), code
}

func mask(s string) string { return wallClock.ReplaceAllString(s, "${1}${2}${3}<wall>") }

// TestSnapshots compares each command's output with testdata/NAME.snapshot:
// the output as it was when last reviewed, not values derived
// independently (those are in TestHandDerivedValues and the packages'
// tests). A snapshot catches any change; it does not prove the old output
// right. Rewrite them with `go test ./cmd/collsim -run TestSnapshots
// -update`, and commit a rewrite only if you can explain every changed
// line.
func TestSnapshots(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"run-default", []string{"run"}},
		{"run-json", []string{"run", "-c", "allgather", "-n", "13", "-s", "1000", "--json"}},
		{"run-fattree-rd", []string{"run", "-m", "fattree-1024", "-n", "100", "-a", "recursive_doubling", "-s", "8", "--placement", "random", "--seed", "3"}},
		{"run-gpu-alltoall", []string{"run", "-m", "gpu-cluster", "-c", "alltoall", "-n", "64", "-s", "4MiB"}},
		{"run-barrier-xc40", []string{"run", "-m", "xc40", "-c", "barrier", "-n", "1000"}},
		{"algos", []string{"algos"}},
		{"topo-xc40", []string{"topo", "-m", "xc40"}},
		{"topo-gpu-json", []string{"topo", "-m", "gpu-cluster", "--json"}},
		{"model", []string{"model"}},
		{"model-alltoall", []string{"model", "-c", "alltoall", "-m", "fattree-1024", "-n", "16,1024", "-s", "8..64KiB"}},
		{"run-hierarchical-gpu", []string{"run", "-m", "gpu-cluster", "-a", "hierarchical", "-n", "128", "-s", "4MiB"}},
		{"run-suara-xc40", []string{"run", "-m", "xc40", "-a", "suara", "-n", "256", "-s", "8"}},
		{"run-ompi-xc40", []string{"run", "-m", "xc40", "-a", "ompi", "-n", "300", "-s", "8"}},
		{"run-group-aligned-xc40", []string{"run", "-m", "xc40", "-c", "alltoall", "-a", "group_aligned", "-n", "768", "-s", "768KiB", "--verify", "off"}},
		{"explain-ring", []string{"explain", "-a", "ring", "-n", "3", "-s", "24"}},
		{"explain-bcast-binomial", []string{"explain", "-c", "bcast", "-n", "5", "-s", "8", "--root", "2"}},
		{"explain-alltoall-bruck", []string{"explain", "-c", "alltoall", "-a", "bruck", "-n", "3", "-s", "36"}},
		{"run-flow-tapered", []string{"run", "-m", "fattree-1024", "--network", "flow", "-c", "alltoall", "-a", "linear", "-n", "64", "-s", "256KiB"}},
		{"model-reduce-scatter", []string{"model", "-c", "reduce_scatter", "-n", "6,8", "-s", "1KiB,1MiB"}},
		{"run-loggops-bcast", []string{"run", "-c", "bcast", "-n", "64", "-s", "8", "--network", "loggops", "--json"}},
		{"schedule-ring", []string{"schedule", "-a", "ring", "-n", "4", "-s", "32"}},
		{"schedule-rd-reduce", []string{"schedule", "-a", "recursive_doubling", "-n", "3", "-s", "4KiB", "--reduce-bandwidth", "10GB/s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := collsim(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			matchSnapshot(t, tc.name, mask(out))
		})
	}
}

// matchSnapshot compares got with testdata/NAME.snapshot, or with -update
// rewrites the file.
func matchSnapshot(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name+".snapshot")
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}

// TestHandDerivedValues: the times of snapshot runs that can be worked
// out by hand, worked out by hand.
func TestHandDerivedValues(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want float64
	}{{
		// The main job: ring allreduce of 1 MiB (131072 doubles) on 64
		// ranks of the small machine (1 µs and 12.5 GB/s host to host,
		// reductions at 10 GB/s): 2(P-1) = 126 steps of a 16384 B block,
		// alpha + 16384 B / 12.5 GB/s = 1 + 1.31072 µs each, and 63
		// reductions of a block, 16384 B / 10 GB/s = 1.6384 µs each:
		// 291.15072 + 103.2192 = 394.36992 µs.
		"run-default", nil, 126*(1e-6+16384/12.5e9) + 63*16384/10e9,
	}, {
		// LogGOPS binomial bcast of 8 B on 64 ranks (L 2.5 µs, o 1.5 µs,
		// g 1 µs, G 6 ns/B): a hop costs the sender's o, (s-1)G = 42 ns
		// on its NIC, L and the receiver's o, 5.542 µs; each rank sends to
		// its largest subtree first, o apart (o > g + (s-1)G), so the
		// deepest path is the first child's at each of the 6 levels:
		// 6 x 5.542 = 33.252 µs.
		"run-loggops-bcast", []string{"-c", "bcast", "-n", "64", "-s", "8", "--network", "loggops"}, 6 * (1.5e-6 + 7*6e-9 + 2.5e-6 + 1.5e-6),
	}, {
		// Ring allreduce of 1 MiB on 4 ranks of the small machine: blocks
		// of 262144 B, above its 64 KiB eager limit, so each of the 6
		// steps pays the rendezvous request and reply (2 alpha) on top of
		// alpha + 262144 B / 12.5 GB/s; 3 reductions of a block at
		// 10 GB/s: 6 x (3 + 20.97152) + 3 x 26.2144 = 222.47232 µs.
		"run-rendezvous", []string{"-n", "4", "-s", "1MiB"}, 6*(3e-6+262144/12.5e9) + 3*262144/10e9,
	}, {
		// The same, eager: 6 x 21.97152 + 78.6432 = 210.47232 µs.
		"run-eager", []string{"-n", "4", "-s", "1MiB", "--set", "host.eager_limit=16MiB"}, 6*(1e-6+262144/12.5e9) + 3*262144/10e9,
	}} {
		if got := simTime(t, c.args...); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("%s: simulated %.9g s, derived %.9g s", c.name, got, c.want)
		}
	}
}

// TestProtocolIsSaid: run and explain say which messages went by
// rendezvous, which the times include (TestHandDerivedValues).
func TestProtocolIsSaid(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		// 4 ranks of a ring allreduce send 2(p-1) = 6 blocks each.
		{[]string{"run", "-n", "4", "-s", "1MiB"}, []string{"eager up to 64KiB: 24 of 24 messages went by rendezvous", "Hockney with each rendezvous message's handshake, exact here"}},
		// LogGOPS's rendezvous costs no latency (LogGOPSim's): the line
		// said a request and a reply were paid for (a new user's trial).
		{[]string{"run", "-c", "bcast", "-a", "linear", "-n", "2", "-s", "1MiB", "--network", "loggops"}, []string{"1 of 1 messages went by rendezvous (LogGOPSim's: no latency more, but each send completes only once its receiver has taken it in)"}},
		{[]string{"run", "-n", "4", "-s", "1MiB", "--set", "host.eager_limit=16MiB"}, []string{"eager up to 16MiB: every message went eagerly", "(Hockney, exact here"}},
		{[]string{"run", "-n", "4", "-s", "1MiB", "--set", "host.eager_limit=none"}, []string{"every message eager (no eager limit)"}},
		{[]string{"run", "-n", "4", "-s", "1MiB", "--json"}, []string{`"rendezvous_messages": 24`, `"eager_limit_bytes": 65536`}},
		{[]string{"explain", "-a", "recursive_doubling", "-n", "2", "-s", "128KiB"}, []string{"(131072 B, by rendezvous", "2 messages (2 above the 64KiB eager limit, by rendezvous)", "each rendezvous message also pays its handshake"}},
		{[]string{"explain", "-a", "recursive_doubling", "-n", "2", "-s", "64KiB"}, []string{"done at 12.7965µs: 2 messages; every rank's data checked: exact."}},
	} {
		out, stderr, code := collsim(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

// Bad input: one clear line per problem, the right exit status, never a
// panic or a stack trace.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("network:\n  crossbar:\n    hosts: 4\n    link: {bandwith: 1GB/s, latency: 1us}\n"), 0o644)
	zero := filepath.Join(dir, "zero.yaml")
	os.WriteFile(zero, []byte("network:\n  crossbar:\n    hosts: 4\n    link: {bandwidth: 0GB/s, latency: 1us}\n"), 0o644)
	long := filepath.Join(dir, "long.trace")
	os.WriteFile(long, []byte(strings.Repeat("x", 300000)+"\n"), 0o644)
	trunc := filepath.Join(dir, "trunc.goal")
	os.WriteFile(trunc, []byte("num_ranks 2\nrank 0 {\nl0: send 100b to 1 tag 0\n}\nrank 1 {\nl0: recv 10b from 0 tag 0\n}\n"), 0o644)
	sw := filepath.Join(dir, "sw.yaml")
	os.WriteFile(sw, []byte("axes:\n  ranks: [2, 4]\n"), 0o644)
	one := filepath.Join(dir, "one.yaml")
	os.WriteFile(one, []byte("network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\n"), 0o644)
	four := filepath.Join(dir, "four.yaml")
	os.WriteFile(four, []byte("network:\n  crossbar: {hosts: 4, link: {bandwidth: 1GB/s, latency: 0}}\n"), 0o644)
	four2 := filepath.Join(dir, "four2.yaml")
	os.WriteFile(four2, []byte("name: four\nnetwork:\n  crossbar: {hosts: 4, link: {bandwidth: 2GB/s, latency: 0}}\n"), 0o644)
	cases := []badCase{
		// Two machines of one name made rows that could not be told apart
		// (a new user's trial: a copied config, its name left as it was).
		{[]string{"run", "-m", four + "," + four2, "-n", "2"}, 2, `four.yaml and ` + four2 + ` are both named "four", so their rows could not be told apart: rename one (its name: key)`},
		{[]string{"run", "-m", "small,small", "-n", "2"}, 2, "-m: builtin:small is given twice"},
		// A new user's trial: an empty -m ran on the default machine; a
		// typo got no suggestion; a path the machine lacks exited 1 where a
		// misspelled key exits 2; a malformed value said "give PATH=VALUE".
		{[]string{"topo", "-m", ""}, 2, "-m/--machine is empty: give a built-in machine"},
		// An unquoted s0.0->s1.0 reaches collsim as s0.0- (the shell
		// redirects to a file s1.0), as topo's own example was written.
		{[]string{"topo", "-m", "fattree-1024", "--fail", "s0.0-"}, 2, "quote it, as 's0.0->s1.0': an unquoted > is a shell's redirection"},
		{[]string{"run", "-m", "smal"}, 1, "nor a readable file; did you mean small?"},
		{[]string{"run", "--set", "network.fat_tree.k=4"}, 2, "machine small has no network.fat_tree"},
		{[]string{"run", "--set", "host.overhead=1us", "--set", "overhead=2us"}, 2, "both set host.overhead of machine small"},
		{[]string{"run", "--set", "network.torus.dims=[2,2,2"}, 2, `the value "[2,2,2" is not YAML`},
		{[]string{"run", "-m", "small", "--set", "faults.degraded.h0->s0.0=0.5"}, 2, "faults.degraded is a mapping, set whole"},
		// A list's bad point fails it before any point runs (it ran and
		// printed the points before it, then failed).
		{[]string{"run", "-m", "dragonfly-72,small", "--network", "flow", "--routing", "valiant", "-n", "16"}, 2, "the default algorithm on 16 ranks of small, 1MiB: --routing: valiant routing detours through a third group of a dragonfly"},
		{[]string{"run", "-m", "dragonfly-72", "-n", "16,100"}, 1, "the default algorithm on 100 ranks of dragonfly-72, 1MiB: 100 ranks do not fit on dragonfly-72"},
		{[]string{"run", "-m", "dragonfly-72,small", "--network", "flow", "--routing", "valiant"}, 2, "the default algorithm on its default ranks of small, 1MiB"},
		// A grid's rank counts that do not fit name the flag's value, the
		// default's too (it said "--ranks 5 does not fit on four (2..4)"
		// to a user who gave no --ranks, and "(2..1)" on one slot).
		{[]string{"validate", "-m", four}, 1, "--ranks 5,16,64: 5 does not fit on four; give rank counts from 2 to 4"},
		{[]string{"validate", "-m", one}, 1, "one has 1 slot for ranks, and this needs at least 2: use a larger machine"},
		// Two output formats at once; a sweep output named .json, which
		// got CSV (a new user's trial).
		{[]string{"topo", "--dot", "--json"}, 2, "--dot and --json are two formats; give one"},
		{[]string{"sweep", sw, "-o", filepath.Join(dir, "x.json")}, 2, "x.json: a sweep writes CSV or JSON Lines (one object a line); name it .csv or .jsonl"},
		// study lp ran the first of several sizes and dropped the rest
		// without a word (a new user's trial).
		{[]string{"study", "lp", "-n", "2..8", "-s", "64KiB,1MiB"}, 2, "study lp takes one size (-s); the rank count is what varies"},
		// A message larger than its receive is the schedule's mistake, as
		// a deadlock is (3; it was 1, a new user's trial found).
		// Each op with the line that wrote it (as a deadlock's are).
		{[]string{"run", "--goal", trunc}, 3, "rank 1 op 0 (recv 10B from 0 tag 0, " + trunc + ":6) matched a message of 100 bytes from rank 0 op 0 (" + trunc + ":3): larger than the receive (MPI_ERR_TRUNCATE)"},
		{[]string{"run", "--goal", trunc, "--network", "analytic"}, 3, "larger than the receive (MPI_ERR_TRUNCATE)"},
		// Files are read with a bound, and a refused line is quoted cut
		// short; a bad file is bad input (1), not a bad flag (2).
		{[]string{"run", "-m", "/dev/zero"}, 1, "/dev/zero: file too large: more than 1MiB, too large for a machine config"},
		{[]string{"run", "--noise-trace", long}, 1, long + `:1: want "start<TAB>duration" in nanoseconds, got "` + strings.Repeat("x", 60) + `"... (300000 bytes)`},
		{[]string{"run", "-a", "nonesuch"}, 2, `unknown allreduce algorithm "nonesuch"; valid: allgather_reduce, basic_linear, double_binary_tree, han, hierarchical,`},
		{[]string{"run", "-a", "nonsense"}, 2, `ring, segmented_ring, smp, suara (or a library's choice: ompi, ompi40, ompi5, mpich, mpich4)`},
		{[]string{"run", "-c", "scan"}, 2, `unknown collective "scan"; valid: allreduce, bcast, reduce, allgather, reduce_scatter, gather, scatter, alltoall, barrier`},
		// A library's choice is an algorithm: an unknown collective's
		// message does not offer it (it did, and -c ompi then failed).
		{[]string{"run", "-c", "ompi"}, 2, `unknown collective "ompi"; valid: allreduce, bcast, reduce, allgather, reduce_scatter, gather, scatter, alltoall, barrier` + "\n"},
		{[]string{"run", "-a", "hierarchical"}, 1, "hierarchical needs ranks per node (--node-size, or a machine config with nodes or several ranks per host); on a flat machine use ring or rabenseifner"},
		{[]string{"run", "-a", "suara", "-n", "12", "--groups", "5"}, 1, "suara with --groups 5: the groups must divide the 12 ranks"},
		// Only --groups given: the message named --steps too (a new user's trial).
		{[]string{"run", "-a", "suara", "-n", "7", "--groups", "3"}, 1, "--groups 3: the groups must divide the 7 ranks; use a divisor, or leave --groups out"},
		{[]string{"run", "-a", "suara", "--inner", "suara"}, 1, "cannot run inside a subset"},
		{[]string{"explain", "-n", "17"}, 2, "--ranks must be 1..16 for an explanation"},
		{[]string{"run", "-c", "allgather", "-a", "neighbor_exchange", "-n", "5"}, 1, "neighbor exchange needs an even number of ranks, not 5; use allgather/ring or allgather/bruck"},
		{[]string{"run", "-n", "65"}, 1, "65 ranks do not fit on small"},
		// A rank count out of the flag's range is a bad flag (2) for
		// every command that takes one (schedule and run said so with 1
		// above the largest); 268435456 is sim.MaxRanks, 2^28.
		{[]string{"run", "-n", "0"}, 2, "--ranks must be 1..268435456, not 0"},
		{[]string{"run", "-n", "268435457"}, 2, "--ranks must be 1..268435456, not 268435457"},
		{[]string{"run", "-n", "4,268435457", "--network", "loggops"}, 2, "--ranks must be 1..268435456, not 268435457"},
		{[]string{"schedule", "-n", "0"}, 2, "--ranks must be 1..268435456, not 0"},
		{[]string{"schedule", "-n", "268435457"}, 2, "--ranks must be 1..268435456, not 268435457"},
		// Files written when the work ends are checked before it starts
		// (a METG sweep ran every kernel, then refused --plot x.jpg).
		{[]string{"workload", "taskbench", "--metg", "--plot", "metg.jpg"}, 2, "--plot metg.jpg: give a .png or .svg file"},
		{[]string{"workload", "taskbench", "--metg", "--plot", filepath.Join(dir, "none", "metg.png")}, 2, "there is no directory " + filepath.Join(dir, "none") + " to write it in"},
		{[]string{"study", "farm", "--html", filepath.Join(dir, "none", "f.html")}, 2, "--html " + filepath.Join(dir, "none", "f.html") + ": there is no directory"},
		{[]string{"run", "-s", "1 parsec"}, 2, `unknown unit "parsec"`},
		{[]string{"run", "-s", "1001"}, 2, "not a whole number of 8-byte elements"},
		{[]string{"run", "-c", "bcast", "--root", "70"}, 2, "--root 70 is not a rank"},
		// Options no algorithm of the run takes (a new user's trial found
		// them ignored without a word).
		{[]string{"run", "--root", "3"}, 2, "--root does not apply to allreduce/ring: no allreduce algorithm takes it"},
		{[]string{"run", "-a", "ring", "--segment", "64"}, 2, "--segment does not apply to allreduce/ring: its schedule is the same without it; the allreduce algorithms that take it: double_binary_tree, hierarchical, linear_pipeline, segmented_ring"},
		{[]string{"run", "-a", "ring,recursive_doubling", "--inner", "ring"}, 2, "--inner does not apply to any of ring, recursive_doubling"},
		{[]string{"schedule", "-c", "alltoall", "-a", "linear", "--overlap"}, 2, "--overlap does not apply to alltoall/linear"},
		{[]string{"explain", "-a", "ring", "--groups", "2"}, 2, "--groups does not apply to allreduce/ring"},
		{[]string{"run", "--network", "packet"}, 2, `network model "packet" is not available; valid: analytic, flow, loggops`},
		{[]string{"run", "--verify", "maybe"}, 2, "--verify must be auto, on or off"},
		{[]string{"run", "-m", typo}, 1, typo + `:4: unknown key "bandwith"; valid keys here: bandwidth, latency`},
		{[]string{"run", "-m", zero}, 1, zero + ":4: network.crossbar.link.bandwidth: bandwidth \"0GB/s\" must be positive"},
		{[]string{"run", "-m", "nowhere.yaml"}, 1, "neither a built-in machine"},
		{[]string{"run", "extra"}, 2, `unknown command "extra" for "collsim run"`},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"run", "--frob"}, 2, "unknown flag: --frob"},
		{[]string{"model", "-n", "2..x"}, 2, "--ranks"},
		{[]string{"model", "-n", "128"}, 1, "--ranks 128 does not fit on small"}, // README: exit 1, as run
		{[]string{"algos", "-c", "scan"}, 2, `unknown collective "scan"`},
		{[]string{"run", "-c", "alltoall", "-n", "64", "-s", "1GiB", "--verify", "on"}, 1, "data mode would need"},
		// 2^27 elements of 8 B on each of 4 ranks: 2^29 in all, past the
		// limit of 2^27 (it printed the limit as the total).
		{[]string{"explain", "-a", "ring", "-n", "4", "-s", "1GiB"}, 1, "134217728 elements on each of 4 ranks, 536870912 in all, more than its limit of 134217728"},
		// A flag value that is not a choice is a usage error, as
		// --network's is; flags a run would ignore are refused.
		{[]string{"run", "--placement", "diagonal"}, 2, `--placement "diagonal" is not a policy; valid: block, round_robin, random`},
		{[]string{"run", "--goal", "x.goal", "-c", "bcast", "-s", "8"}, 2, "-c/--collective, -s/--size do not apply: with --goal the file is the program"},
		{[]string{"run", "--network", "loggops", "-m", "fattree-1024"}, 2, "-m/--machine does not apply: the loggops network has no machine"},
		{[]string{"run", "--goal", "x.goal", "--placement", "random"}, 2, "--placement does not apply: the loggops network has no machine"},
		// (A new user's trial found these taken and ignored.)
		{[]string{"run", "--goal", "x.goal", "--set", "link.bandwidth=1GB/s"}, 2, "--set does not apply: the loggops network has no machine"},
		{[]string{"run", "--goal", "x.goal", "--routing", "valiant", "--jitter", "normal:1us", "--links", "4"}, 2, "--routing, --jitter, --links do not apply: the loggops network has no machine"},
		{[]string{"run", "--network", "loggops", "-c", "bcast", "--set", "link.bandwidth=1GB/s"}, 2, "--set does not apply: the loggops network has no machine"},
		// A --set value the machine refuses is a bad flag, as an unknown
		// key is (it exited 1; a new user's trial).
		{[]string{"run", "-m", "fattree-1024", "--set", "network.fat_tree.link.bandwidth=-1GB/s"}, 2, `network.fat_tree.link.bandwidth: bandwidth "-1GB/s" must be positive`},
		{[]string{"run", "--set", "host.eager_limit=abc"}, 2, `host.eager_limit: "abc" does not start with a number`},
		// An alltoall's size is split evenly over the ranks: 8 B over 3
		// ranks is no whole 8-byte element each, so nothing would move.
		{[]string{"run", "-c", "alltoall", "-n", "3", "-s", "8"}, 2, "--size: nothing would be sent: alltoall splits each rank's 8B evenly over 3 ranks in whole 8-byte elements: 0 elements to each"},
		// Mistyped commands and flags: one line, with what was meant.
		{[]string{"rn"}, 2, `unknown command "rn" for "collsim"; did you mean run?`},
		{[]string{"study", "foo"}, 2, `unknown command "foo" for "collsim study"`},
		{[]string{"study", "sura"}, 2, `unknown command "sura" for "collsim study"; did you mean suara?`},
		{[]string{"run", "--placment", "block"}, 2, "unknown flag: --placment; did you mean --placement?"},
		{[]string{"run", "--sze", "8"}, 2, "unknown flag: --sze; did you mean --seed or --set or --size?"},
	}
	expectErrors(t, cases)
}

// An alltoall size that does not split evenly moves what does, as
// nccl-tests does, and says so: 56 B over 3 ranks of 8-byte elements is 2
// elements (16 B) to each, 48 B in all, 8 B left.
func TestAlltoallShortfallIsReported(t *testing.T) {
	out, errs, code := collsim(t, "run", "-c", "alltoall", "-n", "3", "-s", "56", "--json")
	if code != 0 || !strings.Contains(out, `"size_bytes": 48`) {
		t.Fatalf("exit %d, stdout %s", code, out)
	}
	want := "collsim: note: alltoall splits each rank's 56B evenly over 3 ranks in whole 8-byte elements: 2 elements to each, 48B in all (8B is not sent; a multiple of 24B moves everything)\n"
	if errs != want {
		t.Errorf("stderr %q, want %q", errs, want)
	}
	// schedule and explain left the 8 B out without a word (a new user's
	// trial).
	for _, cmd := range []string{"schedule", "explain"} {
		if _, errs, code := collsim(t, cmd, "-c", "alltoall", "-n", "3", "-s", "56"); code != 0 || errs != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", cmd, code, errs, want)
		}
	}
}

// badCase is a command line that must fail with code and a message.
type badCase struct {
	args []string
	code int
	want string
}

// expectErrors runs each case: the exit status and the message must match,
// with no stack trace and nothing on standard output.
func expectErrors(t *testing.T, cases []badCase) {
	t.Helper()
	for _, tc := range cases {
		out, errs, code := collsim(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("collsim %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
		if strings.Contains(errs, "goroutine") || strings.Contains(errs, "panic") || out != "" {
			t.Errorf("collsim %v: stack trace or stray output: %q %q", tc.args, out, errs)
		}
		lines := 0
		for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
			if l != "Run 'collsim --help' for usage." {
				lines++
			}
		}
		if lines != 1 {
			t.Errorf("collsim %v: %d lines of error, want one: %q", tc.args, lines, errs)
		}
	}
}

// TestDeterminism: the same command and seed give the same output, byte
// for byte; another seed changes a random placement's result.
func TestDeterminism(t *testing.T) {
	args := []string{"run", "-m", "xc40", "-n", "512", "-s", "64KiB", "--placement", "random", "--json"}
	a, _, _ := collsim(t, append(args, "--seed", "5")...)
	b, _, _ := collsim(t, append(args, "--seed", "5")...)
	c, _, _ := collsim(t, append(args, "--seed", "6")...)
	if mask(a) != mask(b) {
		t.Fatal("same seed, different output")
	}
	if mask(a) == mask(c) {
		t.Fatal("a different seed gave the same random placement result: the seed is not used")
	}
}

// The reference's worked value through the CLI: write a schedule as GOAL,
// run it in LogGOPS mode with LogGOPSim's defaults.
func TestGOALThroughTheCLI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bcast.goal")
	if _, errs, code := collsim(t, "schedule", "-c", "bcast", "-n", "64", "-s", "8", "-o", file); code != 0 {
		t.Fatal(errs)
	}
	out, errs, code := collsim(t, "run", "--goal", file, "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	if !strings.Contains(out, `"time_s": 0.000033252,`) || !strings.Contains(out, `"network": "loggops"`) {
		t.Fatalf("want 33252 ns in loggops mode, got %s", out)
	}
	// The same file on a machine's analytic network.
	if _, errs, code := collsim(t, "run", "--goal", file, "--network", "analytic"); code != 0 {
		t.Fatal(errs)
	}
	// Noise makes it slower, reproducibly.
	trace := filepath.Join(t.TempDir(), "noise.txt")
	os.WriteFile(trace, []byte("0\t500\n1000\t500\n2000\t0\n"), 0o644)
	a, _, _ := collsim(t, "run", "--goal", file, "--noise-trace", trace, "--json")
	b, _, _ := collsim(t, "run", "--goal", file, "--noise-trace", trace, "--json")
	if mask(a) != mask(b) || mask(a) == mask(out) {
		t.Fatal("noise did not change the result, or changed it differently twice")
	}
}

// A large all-eager schedule runs in parallel when there are processors
// for it, and gives the sequential result; also with more partitions than
// there are cores (GOMAXPROCS 8).
func TestGOALParallelThroughTheCLI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ring.goal")
	if _, errs, code := collsim(t, "schedule", "-a", "ring", "-n", "256", "-s", "1MiB", "-o", file); code != 0 {
		t.Fatal(errs)
	}
	run := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		out, errs, code := collsim(t, "run", "--goal", file, "--json")
		if code != 0 {
			t.Fatal(errs)
		}
		return mask(out)
	}
	seq := run(1)
	if !strings.Contains(seq, `"partitions": 0`) {
		t.Fatalf("want a sequential run on one processor:\n%s", seq)
	}
	for _, procs := range []int{2, 8} {
		par := run(procs)
		n := fmt.Sprintf(`"partitions": %d`, procs)
		if !strings.Contains(par, n) {
			t.Fatalf("want %d partitions on %d processors:\n%s", procs, procs, par)
		}
		if strings.Replace(par, n, `"partitions": 0`, 1) != seq {
			t.Fatalf("the run in %d partitions differs:\n%s\n%s", procs, seq, par)
		}
	}
}

func TestGOALBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.goal")
	os.WriteFile(bad, []byte("num_ranks 2\nrank 0 {\nsend 8 to 1\n}\n"), 0o644)
	deadlock := filepath.Join(dir, "deadlock.goal")
	os.WriteFile(deadlock, []byte("num_ranks 2\nrank 0 {\nl1: recv 8b from 1\nl2: send 8b to 1\nl2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0\nl2: send 8b to 0\nl2 requires l1\n}\n"), 0o644)
	cases := []badCase{
		{[]string{"run", "--goal", bad}, 1, bad + `:3:6: expected a size in bytes such as 1024b, found "8"`},
		{[]string{"run", "--goal", deadlock}, 3, "deadlock at 0s: 2 of 2 ranks cannot finish (ranks 0,1); rank 0 op 0 (" + deadlock + ":3) recv 8B from 1 tag 0: posted; no matching send arrived"},
		{[]string{"run", "--goal", filepath.Join(dir, "none.goal")}, 1, "no such file"},
		{[]string{"run", "--network", "analytic", "--L", "1us"}, 2, "--L, --o, --g, --G, --O, --S and --reduce-bandwidth set the loggops network"},
		{[]string{"run", "--network", "loggops", "--G", "fast"}, 2, "--G (time per byte)"},
		{[]string{"run", "--noise-cosched"}, 2, "--noise-cosched needs --noise-trace"},
		{[]string{"schedule", "--format", "dot"}, 2, `--format "dot" is not available; valid: goal`},
		{[]string{"schedule", "-a", "pipeline"}, 2, `unknown allreduce algorithm "pipeline"`},
	}
	expectErrors(t, cases)
}

// The studies' key numbers, as snapshots (testdata/study-*.snapshot, the
// output when last reviewed; -update rewrites them), and their plots: real
// PNG and SVG files. The README's study tables are checked against the
// same runs (TestREADMEStudyTables); the analytic checks are in the
// packages (cost.TestSuaraSpeedupOverALinearBase).
func TestStudies(t *testing.T) {
	dir := t.TempDir()
	for _, c := range studyRuns {
		out := studyOutput(t, dir, c.args...)
		file := filepath.Join("testdata", c.name+".snapshot")
		if *update {
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if out != string(want) {
			t.Errorf("%v: output differs from %s:\n--- got\n%s\n--- want\n%s", c.args, file, out, want)
		}
	}
	for _, name := range []string{"study-lp", "study-noise", "study-suara-ompi41", "study-suara-ompi40", "study-suara-best", "study-suara-growth"} {
		png, err := os.ReadFile(filepath.Join(dir, name+".png"))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 5000 {
			t.Errorf("%s.png is not a real PNG (%d bytes, %v)", name, len(png), err)
		}
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s.svg is not an SVG (%v)", name, err)
		}
	}
	if _, errs, code := collsim(t, "study", "lp", "-n", "4096"); code != 1 || !strings.Contains(errs, "does not fit") { // README: exit 1
		t.Errorf("too many ranks: exit %d %q", code, errs)
	}
}

// --cpuprofile writes a pprof profile (gzip-compressed protocol buffers),
// also when the command fails.
func TestCPUProfile(t *testing.T) {
	for _, args := range [][]string{{"run", "-n", "64"}, {"run", "-n", "0"}} {
		path := filepath.Join(t.TempDir(), "cpu.pprof")
		_, stderr, code := collsim(t, append([]string{"--cpuprofile", path}, args...)...)
		if (code == 0) != (args[2] == "64") {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		data, err := os.ReadFile(path)
		if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Fatalf("%v: profile %d bytes, %v; want a gzip stream", args, len(data), err)
		}
	}
	// A real run's launcher and each of its ranks write their own: one file
	// written by all three was not a profile.
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	if _, stderr, code := collsim(t, "--cpuprofile", path, "real", "--np", "2", "-c", "bcast", "-s", "8", "--iterations", "2"); code != 0 {
		t.Fatalf("real run: exit %d: %s", code, stderr)
	}
	profiles := func(path string) {
		t.Helper()
		for _, name := range []string{path, path + ".rank0", path + ".rank1"} {
			data, err := os.ReadFile(name)
			if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
				t.Errorf("%s: %d bytes, %v; want a gzip stream", filepath.Base(name), len(data), err)
			}
		}
	}
	profiles(path)
	// validate --real writes its ranks' arguments itself, and passes the
	// root's flags on (--huge-pages the same way): before, its ranks wrote
	// no profile.
	path = filepath.Join(t.TempDir(), "cpu.pprof")
	for attempt := 1; ; attempt++ {
		_, stderr, code := collsim(t, "--cpuprofile", path, "validate", "--real", "--np", "2", "-a", "ring", "-s", "64KiB", "--pingpong", "8,1MiB..4MiB", "--iterations", "1", "--max-fit-spread", "1e9")
		if loadedFit(t, code, stderr, attempt) {
			continue
		}
		if code != 0 {
			t.Fatalf("validate --real: exit %d: %s", code, stderr)
		}
		break
	}
	profiles(path)
	if _, stderr, code := collsim(t, "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir"), "run"); code == 0 || !strings.Contains(stderr, "no such file") {
		t.Fatalf("an unwritable profile: exit %d, %q", code, stderr)
	}
}

// studyRuns are the study commands whose output the tests keep: the
// README's ADAPT and Linear Pipelining tables' commands as the README runs
// them, and the SUARA study on the two smallest rank counts of the
// README's sweep (every point of which is simulated on its own, so these
// rows are the README's rows).
var studyRuns = []struct {
	name string
	args []string
}{
	{"study-noise", []string{"study", "noise"}},
	{"study-lp", []string{"study", "lp"}},
	{"study-suara", []string{"study", "suara", "-n", "64,256", "-s", "8,1KiB,16KiB,64KiB,256KiB,16MiB"}},
}

// studyOutput runs a study writing its plots to dir, and returns its
// output with dir written as <out>.
func studyOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errs, code := collsim(t, append(args, "-o", dir)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	out = strings.ReplaceAll(out, dir, "<out>")
	studiesMu.Lock()
	studiesRun[strings.Join(args, " ")] = out
	studiesMu.Unlock()
	return out
}

// studiesRun keeps the studies' text outputs (<out> for their directory)
// by their arguments, so that TestREADMEStudyTables reads the runs
// TestStudies made rather than running every study again (about 14 s of
// cmd/collsim's tests, which came near the package's 10-minute timeout on
// a loaded machine).
var (
	studiesMu  sync.Mutex
	studiesRun = map[string]string{}
)

// studyText is a study's text output: TestStudies' run of it, or a run of
// its own where TestStudies did not run first (-run selecting this test).
func studyText(t *testing.T, dir string, args ...string) string {
	t.Helper()
	studiesMu.Lock()
	out, ok := studiesRun[strings.Join(args, " ")]
	studiesMu.Unlock()
	if ok {
		return out
	}
	return studyOutput(t, dir, args...)
}

// TestREADMEStudyTables: every figure of the README's ADAPT, Linear
// Pipelining and SUARA tables is what the study prints (for SUARA, the
// columns of the rank counts studyRuns covers).
func TestREADMEStudyTables(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skipf("README not found beside the module: %v", err)
	}
	dir := t.TempDir()
	out := map[string]string{}
	for _, c := range studyRuns {
		out[c.name] = studyText(t, dir, c.args...)
	}
	// rows of the study output, by their first fields.
	row := func(study string, keys ...string) []string {
		for _, line := range strings.Split(out[study], "\n") {
			f := strings.Fields(line)
			if len(f) >= len(keys) && slices.Equal(f[:len(keys)], keys) {
				return f
			}
		}
		t.Fatalf("%s prints no row %v", study, keys)
		return nil
	}
	norm := func(cell string) string { return strings.NewReplacer(" ", "", ",", "", "x", "").Replace(cell) }
	check := func(what, readmeCell, printed string) {
		if norm(readmeCell) != norm(printed) {
			t.Errorf("README's %s: %q, the study prints %q", what, readmeCell, printed)
		}
	}
	for _, r := range readmeTable(t, string(readme), "| detours/s | bcast: Open MPI's tree |") {
		d := norm(r[0])
		b, red := row("study-noise", "bcast", d), row("study-noise", "reduce", d)
		for i, cell := range []string{b[3], b[5], b[7], red[3], red[5], red[7]} {
			check(fmt.Sprintf("ADAPT table, %s detours/s, column %d", r[0], i+2), r[i+1], cell)
		}
	}
	for _, r := range readmeTable(t, string(readme), "| P | chain, paper's segment | segment |") {
		printed := row("study-lp", norm(r[0]))
		for i := 1; i < len(r); i++ {
			check(fmt.Sprintf("LP table, P=%s, column %d", r[0], i+1), r[i], printed[i])
		}
	}
	checked := 0
	for _, r := range readmeTable(t, string(readme), "| size | P = 64 | 256 | 1,024 | 4,096 |") {
		for col, p := range []string{"64", "256"} {
			size := norm(r[0])
			if !strings.Contains(out["study-suara"], "\n"+size+" ") {
				continue // a size studyRuns leaves out
			}
			f := row("study-suara", size, p)
			check(fmt.Sprintf("SUARA table, %s on %s ranks", r[0], p), r[col+1], strings.Join(f[len(f)-3:], "/"))
			checked++
		}
	}
	if checked < 8 {
		t.Errorf("checked %d cells of the README's SUARA table; the table or studyRuns changed shape", checked)
	}
}

// readmeTable returns the body rows (cells trimmed) of the markdown table
// whose header line starts with header.
func readmeTable(t *testing.T, readme, header string) [][]string {
	t.Helper()
	i := strings.Index(readme, header)
	if i < 0 {
		t.Fatalf("README has no table headed %q", header)
	}
	var rows [][]string
	for n, line := range strings.Split(readme[i:], "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if n < 2 { // the header and its rule
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("README's table headed %q has no rows", header)
	}
	return rows
}

// TestRunPoints: lists and doubling ranges of -m, -a, -n and -s run one
// point each, machines outermost, then algorithms, ranks and sizes; a range ends
// at its end ("2..6" is 2, 4, 6). On the small machine (one switch) the
// closed forms price every point independently: exactly where they say
// so, else as bounds (recursive doubling on 6 ranks), and each point's
// time must agree.
func TestRunPoints(t *testing.T) {
	stdout, stderr, code := collsim(t, "run", "-a", "ring,recursive_doubling", "-n", "2..6", "-s", "8,64KiB", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []struct {
		Algorithm string   `json:"algorithm"`
		Ranks     int      `json:"ranks"`
		Size      int64    `json:"size_bytes"`
		Time      float64  `json:"time_s"`
		Model     *float64 `json:"model_s"`
		Exact     bool     `json:"model_exact"`
		Lower     *float64 `json:"model_lower_s"`
		Verified  *bool    `json:"data_verified"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	i := 0
	for _, algo := range []string{"ring", "recursive_doubling"} {
		for _, n := range []int{2, 4, 6} {
			for _, size := range []int64{8, 64 << 10} {
				if i >= len(got) {
					t.Fatalf("%d points, want 12", len(got))
				}
				g := got[i]
				if g.Algorithm != algo || g.Ranks != n || g.Size != size {
					t.Errorf("point %d is %s on %d ranks, %d B; want %s, %d, %d", i, g.Algorithm, g.Ranks, g.Size, algo, n, size)
				}
				switch {
				case g.Model == nil || g.Verified == nil:
					t.Errorf("point %d (%s, %d ranks, %d B): no model, or data not checked", i, algo, n, size)
				case g.Exact && math.Abs(g.Time-*g.Model) > 1e-9**g.Model:
					t.Errorf("point %d (%s, %d ranks, %d B): time %g, exact model %g", i, algo, n, size, g.Time, *g.Model)
				case !g.Exact && (g.Lower == nil || g.Time < *g.Lower*(1-1e-9) || g.Time > *g.Model*(1+1e-9)):
					t.Errorf("point %d (%s, %d ranks, %d B): time %g outside the model's bounds %v..%g", i, algo, n, size, g.Time, g.Lower, *g.Model)
				}
				i++
			}
		}
	}
	if len(got) != 12 {
		t.Errorf("%d points, want 12", len(got))
	}
	// A list of machines is the outermost loop; each point runs on its own
	// machine (its name in the result, and its default rank count).
	stdout, stderr, code = collsim(t, "run", "-m", "small,dragonfly-72", "-s", "8", "--json")
	var ms []struct {
		Machine string `json:"machine"`
		Ranks   int    `json:"ranks"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &ms) != nil || len(ms) != 2 || ms[0].Machine != "small" || ms[1].Machine != "dragonfly-72" || ms[0].Ranks != 64 || ms[1].Ranks != 64 {
		t.Errorf("-m small,dragonfly-72: exit %d, %+v: %s", code, ms, stderr)
	}
	// The same points as CSV: a header and a row each, the same times.
	stdout, stderr, code = collsim(t, "run", "-a", "ring,recursive_doubling", "-n", "2..6", "-s", "8,64KiB", "--csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) != 13 || rows[0][7] != "time_s" {
		t.Fatalf("CSV: %v, %d rows: %s", err, len(rows), stdout)
	}
	for k, row := range rows[1:] {
		if row[1] != got[k].Algorithm || row[7] != strconv.FormatFloat(got[k].Time, 'g', -1, 64) {
			t.Errorf("CSV row %d: %v; JSON: %+v", k+1, row, got[k])
		}
		// data_verified as --json and sweep write it: true, or empty
		// (null) when not checked.
		if rows[0][10] != "data_verified" || row[10] != "true" {
			t.Errorf("CSV row %d: data_verified %q, want true", k+1, row[10])
		}
	}
	// Which -a item each row ran for: a library's choice is otherwise
	// the same row as the other library's.
	stdout, _, _ = collsim(t, "run", "-a", "ompi,mpich", "-n", "16", "-s", "8", "--csv")
	if rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll(); err != nil || len(rows) != 3 || rows[0][12] != "requested" || rows[1][12] != "ompi" || rows[2][12] != "mpich" {
		t.Errorf("-a ompi,mpich --csv: the requested column should say ompi then mpich: %v %q", err, stdout)
	}
	stdout, _, _ = collsim(t, "run", "-n", "4", "-s", "8", "--csv", "--verify", "off")
	if rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll(); err != nil || len(rows) != 2 || rows[1][10] != "" {
		t.Errorf("--verify off: data_verified should be empty: %v %q", err, stdout)
	}
}

// The closed forms take a host's channels as full duplex: on a machine
// whose channels are half or partly duplex (host.local_duplex), a run
// says its closed form is an estimate; full duplex, the form is exact and
// gives the time. By hand: each of the ring's 6 steps exchanges 4 MiB,
// b beta = 419 us on the channel, far above its latency (100 ns), so a
// step takes (1+share) b beta in the model, and the simulated time is
// 1+share times the form's to within 1%: 2x at half duplex.
func TestClosedFormLocalDuplex(t *testing.T) {
	type point struct {
		Time   float64  `json:"time_s"`
		Model  *float64 `json:"model_s"`
		Exact  bool     `json:"model_exact"`
		Duplex bool     `json:"local_duplex"`
	}
	for duplex, share := range map[string]float64{"full": 0, "0.3": 0.3, "half": 1} {
		file := filepath.Join(t.TempDir(), "m.yaml")
		yaml := "network:\n  crossbar: {hosts: 1, link: {bandwidth: 10GB/s, latency: 0}}\nhost:\n  ranks_per_host: 4\n  local: {bandwidth: 10GB/s, latency: 100ns}\n  local_duplex: " + duplex + "\n"
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := collsim(t, "run", "-m", file, "-c", "allreduce", "-a", "ring", "-n", "4", "-s", "16MiB", "--verify", "off", "--json")
		var p point
		if code != 0 || json.Unmarshal([]byte(stdout), &p) != nil || p.Model == nil {
			t.Fatalf("%s: exit %d: %s%s", duplex, code, stdout, stderr)
		}
		if full := duplex == "full"; p.Duplex == full || full && math.Abs(p.Time-*p.Model) > 1e-9**p.Model || math.Abs(p.Time / *p.Model / (1+share) - 1) > 0.01 {
			t.Errorf("local_duplex %s: %+v (model %g s): simulated/model %g, want %g", duplex, p, *p.Model, p.Time / *p.Model, 1+share)
		}
	}
}

// TestClosedFormOnSharedHosts: on the cori machine's nodes (32 ranks a
// host, talking through shared memory), where the closed forms say they
// are exact they give the analytic network's time, and the flow network
// gives the same time (the ranks' shared-memory channels are the same in
// both; before, the analytic network passed a node's ranks through one
// channel and took 15.7x the closed form for a ring allreduce). Across two
// nodes, whose ranks take turns at their node's NIC, the closed forms are
// marked as estimates (the two-level alltoall took 16x its form there).
func TestClosedFormOnSharedHosts(t *testing.T) {
	type point struct {
		Algorithm  string   `json:"algorithm"`
		Time       float64  `json:"time_s"`
		Model      *float64 `json:"model_s"`
		Exact      bool     `json:"model_exact"`
		SharedNICs bool     `json:"shared_nics"`
	}
	runs := func(network string, args ...string) []point {
		stdout, stderr, code := collsim(t, append([]string{"run", "-m", "cori", "-s", "1MiB", "--verify", "off", "--json", "--network", network}, args...)...)
		var got []point
		if code == 0 && json.Unmarshal([]byte(stdout), &got) == nil {
			return got
		}
		var one point // one point: an object, not a list
		if code != 0 || json.Unmarshal([]byte(stdout), &one) != nil {
			t.Fatalf("%v on %s: exit %d: %s%s", args, network, code, stdout, stderr)
		}
		return []point{one}
	}
	for _, c := range [][]string{
		{"-c", "allreduce", "-a", "ring,recursive_doubling,rabenseifner"},
		{"-c", "bcast", "-a", "binomial,linear"},
		{"-c", "gather", "-a", "binomial,linear"},
		{"-c", "allgather", "-a", "linear,ring,bruck"},
		{"-c", "alltoall", "-a", "pairwise,linear"},
	} {
		args := append([]string{"-n", "32"}, c...)
		analytic, flow := runs("analytic", args...), runs("flow", args...)
		if len(analytic) != len(flow) {
			t.Fatalf("%v: %d analytic points, %d flow", c, len(analytic), len(flow))
		}
		for i, a := range analytic {
			if a.Model == nil || a.SharedNICs {
				t.Errorf("%v %s on one node: model %v, shared NICs %t", c, a.Algorithm, a.Model, a.SharedNICs)
				continue
			}
			if a.Exact && math.Abs(a.Time-*a.Model) > 1e-9**a.Model {
				t.Errorf("%v %s on one node: analytic %g s, exact closed form %g s", c, a.Algorithm, a.Time, *a.Model)
			}
			if math.Abs(a.Time-flow[i].Time) > 1e-9*a.Time {
				t.Errorf("%v %s on one node: analytic %g s, flow %g s", c, a.Algorithm, a.Time, flow[i].Time)
			}
		}
	}
	two := runs("analytic", "-n", "64", "-c", "alltoall", "-a", "two_level")
	if len(two) != 1 || !two[0].SharedNICs {
		t.Errorf("two nodes of cori: %+v, want the closed form marked as sharing NICs", two)
	}
}

// TestScheduleFullDisk: a schedule written to a full device fails (exit
// 1) even when it fits the writer's buffer: the flush's error was
// deferred and lost, leaving an empty file and exit 0.
func TestScheduleFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here (Linux has one)")
	}
	if _, stderr, code := collsim(t, "schedule", "-a", "ring", "-n", "2", "-s", "8", "-o", "/dev/full"); code != 1 || !strings.Contains(stderr, "no space left") {
		t.Errorf("exit %d, %q; want 1 and no space left", code, stderr)
	}
}

// TestAnalyticLinkBoundNote: the analytic network shares no link, so a
// 512-rank 64 MiB alltoall on gpu-cluster ran faster than its nodes' NICs
// allow, without a word. By hand: each node's 8 GPUs send 128 KiB to each
// of the 504 ranks on other nodes through one 50 GB/s NIC: 8 x 504 x 128
// KiB = 504 MiB, 10.5696 ms at 50 GB/s; the note says so. The default
// run (a 1 MiB allreduce on small's crossbar) breaks no link's bound.
func TestAnalyticLinkBoundNote(t *testing.T) {
	out, stderr, code := collsim(t, "run", "-m", "gpu-cluster", "-c", "alltoall", "-n", "512", "-s", "64MiB", "--json", "--verify", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Time float64 `json:"time_s"`
		Note string  `json:"note"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Note, "carried 504MiB, 10.5696ms at its 50GB/s") || !(r.Time < 10.5696e-3) {
		t.Errorf("time %g s, note %q; want the NIC's 504 MiB and 10.5696 ms named", r.Time, r.Note)
	}
	out, _, _ = collsim(t, "run", "--json")
	if strings.Contains(out, "shares no link") {
		t.Errorf("the default run got the note: %s", out)
	}
}

// A machine file that is wrong by itself is reported at its own line, and
// exits 1, even when --set is given (the error was put on the --set).
func TestSetOnABadMachine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("name: x\nnetwork:\n  crossbar: {hosts: 4, link: {bandwidth: -1GB/s, latency: 1us}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := collsim(t, "run", "-m", path, "--set", "host.eager_limit=1KiB")
	if code != 1 || !strings.Contains(errs, path+":3: network.crossbar.link.bandwidth") || strings.Contains(errs, "--set") {
		t.Errorf("exit %d: %q; want exit 1 at %s:3, not blaming --set", code, errs, path)
	}
}

// TestTopoSet: topo describes the machine a run with the same --set would
// use (it had no --set; a new user's trial): a 2:1 taper keeps 16 of a
// 32-ary leaf's uplinks.
func TestTopoSet(t *testing.T) {
	out, errs, code := collsim(t, "topo", "-m", "fattree-1024", "--set", "network.fat_tree.taper=2")
	if code != 0 || !strings.Contains(out, "taper 2:1 (16 of 32 leaf uplinks)") {
		t.Errorf("exit %d: %s%s", code, out, errs)
	}
	// The config's description, of the machine without the setting ("full
	// bisection"), says so (a new user's trial).
	if !strings.Contains(out, "description     (the config's, without --set, --degrade and --fail) ") {
		t.Errorf("the description is not said to be the config's:\n%s", out)
	}
	if _, errs, code := collsim(t, "topo", "--set", "network.crossbar.hosts=x"); code != 2 || !strings.Contains(errs, "network.crossbar.hosts: x is not a whole number") {
		t.Errorf("a bad value: exit %d %q", code, errs)
	}
	// YAML reads 010 as octal 8 (it built 8 hosts: an audit).
	if _, errs, code := collsim(t, "topo", "--set", "network.crossbar.hosts=010"); code != 2 || !strings.Contains(errs, `network.crossbar.hosts: "010" has a leading zero, which YAML reads as octal`) {
		t.Errorf("an octal value: exit %d %q", code, errs)
	}
}

// TestOneRankHasNoBandwidth: a call on 1 rank takes no time, and its
// bandwidth is none, not 0 GB/s (as if nothing got through: a new user's
// trial); the table of several points shows "-". 2 ranks of the small
// machine do by hand two steps of 512 KiB, each alpha = 1 us, a
// rendezvous handshake of 2 alpha and 512 KiB / 12.5 GB/s = 41.943 us,
// and one reduction of 512 KiB at 10 GB/s, 52.429 us: 142.315 us, and
// 1 MiB over that is 7.368 GB/s.
func TestOneRankHasNoBandwidth(t *testing.T) {
	stdout, stderr, code := collsim(t, "run", "-n", "1", "-s", "1MiB")
	if code != 0 || !strings.Contains(stdout, "algbw        n/a (the call took no time)") || strings.Contains(stdout, "0 GB/s") {
		t.Errorf("1 rank: exit %d:\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = collsim(t, "run", "-n", "1,2", "-s", "1MiB")
	if lines := strings.Split(stdout, "\n"); code != 0 || len(lines) < 4 || strings.Count(lines[2], " - ") != 2 || !strings.Contains(lines[3], "7.368") {
		t.Errorf("1 and 2 ranks: exit %d:\n%s%s", code, stdout, stderr)
	}
}
