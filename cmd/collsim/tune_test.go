package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
)

// tune's rules file names, for each rank count, the algorithm that tune's
// own table reports as fastest at each size, and that algorithm is no
// slower in simulation than any other candidate (checked through collsim
// run, a separate path); where the table flags the fastest as winning only
// at zero overhead ((!)), the file takes the one its note names.
func TestTuneWritesItsChoices(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.txt")
	out, errs, code := collsim(t, "tune", "-c", "allreduce,barrier", "-n", "5,8", "-s", "8,64KiB,1MiB", "-o", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The table: collective ranks size fastest ompi# time ...
	type key struct{ c, ranks, size string }
	fastest := map[key]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 6 || (f[0] != "allreduce" && f[0] != "barrier") {
			continue
		}
		fastest[key{f[0], f[1], f[2]}] = f[4]
		if f[0] == "allreduce" {
			best := runTime(t, f[3], f[1], f[2])
			for _, a := range []string{"ring", "recursive_doubling", "rabenseifner", "basic_linear", "reduce_bcast", "segmented_ring"} {
				if other := runTime(t, a, f[1], f[2]); other < best {
					t.Errorf("%s ranks %s: tune picked %s (%g s) but %s takes %g s", f[2], f[1], f[3], best, a, other)
				}
			}
		}
	}
	// "(!) allreduce on 5 ranks, 8B: ... with o = 500ns, NAME is fastest, and the rules file takes it"
	flagged := regexp.MustCompile(`^\(!\) (\w+) on (\d+) ranks, (\w+): .* (\w+) is fastest, and the rules file takes it$`)
	for _, line := range strings.Split(out, "\n") {
		if m := flagged.FindStringSubmatch(line); m != nil {
			n, _, ok := collectives.OmpiAlgorithm(collectives.Collective(m[1]), m[4])
			if !ok {
				t.Fatalf("%q: no Open MPI number for %s", line, m[4])
			}
			fastest[key{m[1], m[2], m[3]}] = strconv.Itoa(n)
		}
	}
	if len(fastest) != 2*3+2 {
		t.Fatalf("table has %d rows, want 8:\n%s", len(fastest), out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// Walk the rules: each (size in bytes -> algorithm) must agree with the
	// table at the sizes tuned.
	var toks []int64
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("rules file token %q", f)
			}
			toks = append(toks, v)
		}
	}
	next := func() int64 { v := toks[0]; toks = toks[1:]; return v }
	names := map[int64]string{2: "allreduce", 6: "barrier"}
	fixedBelow := 0 // collectives whose rules start with communicator size 0
	for range next() {
		coll := names[next()]
		for range next() {
			ranks := strconv.FormatInt(next(), 10)
			n := next()
			rules := make([][2]int64, n)
			for i := range rules {
				rules[i] = [2]int64{next(), next()}
				next()
				next()
			}
			if ranks == "0" {
				// Below the smallest size tuned: Open MPI's fixed rules.
				if len(rules) != 1 || rules[0] != [2]int64{0, 0} {
					t.Errorf("%s: communicator size 0 has rules %v, want one of algorithm 0", coll, rules)
				}
				fixedBelow++
				continue
			}
			sizes := map[string]int64{"8B": 8, "64KiB": 64 << 10, "1MiB": 1 << 20}
			if coll == "barrier" {
				sizes = map[string]int64{"0B": 0}
			}
			for label, bytes := range sizes {
				var alg int64
				for _, r := range rules {
					if bytes >= r[0] {
						alg = r[1]
					}
				}
				if want := fastest[key{coll, ranks, label}]; strconv.FormatInt(alg, 10) != want {
					t.Errorf("%s %s ranks %s: rules give algorithm %d, table says %s", coll, label, ranks, alg, want)
				}
			}
		}
	}
	if len(toks) != 0 {
		t.Errorf("%d numbers left over in the rules file", len(toks))
	}
	if fixedBelow != 2 {
		t.Errorf("%d of 2 collectives start with communicator size 0 (Open MPI's fixed rules below the sizes tuned)", fixedBelow)
	}
}

// TestTuneLeavesShiftingScattersToTheFixedRules: where the fastest scatter
// changes with the size, the rules file leaves that communicator size to
// Open MPI's fixed rules (algorithm 0) and says why: Open MPI measures a
// scatter's size from the send count, which non-roots may pass as 0, and
// rules by size then split the ranks between algorithms (a 12-rank
// scatter hung: an audit). Where one algorithm wins at every size, it is
// written.
func TestTuneLeavesShiftingScattersToTheFixedRules(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.txt")
	out, errs, code := collsim(t, "tune", "-c", "scatter", "-n", "6,12", "-s", "8..1MiB", "-o", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var winners = map[string]map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[0] == "scatter" {
			if winners[f[1]] == nil {
				winners[f[1]] = map[string]bool{}
			}
			winners[f[1]][f[4]] = true
		}
	}
	data, _ := os.ReadFile(file)
	for _, ranks := range []string{"6", "12"} {
		entry := regexp.MustCompile(`(?m)^` + ranks + ` # communicator size\n1 # message sizes\n0 0 0 0$`)
		if shifts := len(winners[ranks]) > 1; shifts != entry.Match(data) || shifts != strings.Contains(errs, "leaves scatter on") {
			t.Errorf("%s ranks, winners %v: the file's entry and the note disagree with them:\n%s\n%s", ranks, winners[ranks], data, errs)
		}
	}
	if len(winners["6"])+len(winners["12"]) < 3 {
		t.Errorf("no winner changes with the size (%v): the case tests nothing", winners)
	}
}

func runTime(t *testing.T, algo, ranks, size string) float64 {
	t.Helper()
	return simTime(t, "-a", algo, "-n", ranks, "-s", size)
}

func TestTuneBadInput(t *testing.T) {
	expectErrors(t, []badCase{
		{[]string{"tune", "-c", "gather2"}, 2, `"gather2" is not a collective; choose from allreduce`},
		// Empty alltoalls were tuned under the sizes asked; run refuses them.
		{[]string{"tune", "-c", "alltoall", "-n", "48", "-s", "8,64"}, 2, "--sizes: alltoall on 48 ranks sends nothing at any size given: each rank's data is split evenly over the ranks in whole 8-byte elements; give a multiple of 384B"},
		{[]string{"tune", "-n", "1"}, 2, "--ranks 1: 1 is too few"},
		{[]string{"tune", "-n", "128"}, 1, "--ranks 128: 128 does not fit on small"}, // README: exit 1, as run
		{[]string{"tune", "-s", "lots"}, 2, "--sizes"},
	})
}

// TestTuneFlagsZeroOverheadWins: on a machine that charges nothing per
// message, tune flags a choice that a modest overhead overturns, and the
// alternative it names is what run finds fastest with that overhead set
// (--set host.overhead=500ns); on a machine that charges o, nothing is
// flagged.
func TestTuneFlagsZeroOverheadWins(t *testing.T) {
	res := tuneJSON(t, 2, "-m", "small", "-n", "16", "-s", "8,1MiB")
	// The rules file, for a real MPI library (which pays some overhead),
	// takes recursive doubling (Open MPI's allreduce 3) from 0 bytes, not
	// the linear one (1) that wins only at o = 0; and says so.
	if !strings.Contains(res.Rules, "\n0 3 0 0\n") || strings.Contains(res.Rules, "\n0 1 0 0\n") || !strings.Contains(res.Rules, "these rules take the fastest at o = 500ns") {
		t.Errorf("rules file:\n%s", res.Rules)
	}
	small, large := res.Choices[0], res.Choices[1]
	if small.Fastest != "basic_linear" || !strings.Contains(small.Note, "with o = 500ns, recursive_doubling is fastest") || large.Note != "" {
		t.Errorf("8 B: %s %q; 1 MiB: %s %q", small.Fastest, small.Note, large.Fastest, large.Note)
	}
	// The JSON says what the file gives as well as the fastest: 1 (basic_linear)
	// is the fastest at 8 B, 3 (recursive doubling) the rule there (a
	// script reading ompi_algorithm got 1; a new user's trial).
	if small.Number != 1 || small.Rules != 3 || large.Rules != large.Number {
		t.Errorf("8 B: ompi_algorithm %d, rules_algorithm %d; 1 MiB: %d, %d", small.Number, small.Rules, large.Number, large.Rules)
	}
	timeOf := func(algo string) float64 {
		return simTime(t, "-a", algo, "-n", "16", "-s", "8", "--set", "host.overhead=500ns")
	}
	if lin, rd := timeOf("linear"), timeOf("recursive_doubling"); !(rd < lin) {
		t.Errorf("with o = 500ns: linear %g s, recursive_doubling %g s", lin, rd)
	}
	machine := filepath.Join(t.TempDir(), "o.yaml")
	os.WriteFile(machine, []byte("network:\n  crossbar: {hosts: 64, link: {bandwidth: 100Gbit/s, latency: 500ns}}\nhost: {overhead: 1us, reduce_bandwidth: 10GB/s}\n"), 0o644)
	out, _, _ := collsim(t, "tune", "-m", machine, "-n", "16", "-s", "8,1MiB")
	if strings.Contains(out, "(!)") {
		t.Errorf("a machine with o = 1 µs got a flag:\n%s", out)
	}
}

// TestTuneSegmentsAtAModestOverhead: on a machine that charges nothing per
// message, the chain's segment in the rules file is the one collsim
// chooses at o = 500 ns (run with that overhead picks it too), not the
// model's tiny one at o = 0, and the choice says so; on a machine that
// charges its own overhead the segment is chosen at it, without a note.
func TestTuneSegmentsAtAModestOverhead(t *testing.T) {
	segmentOf := func(args ...string) int64 {
		js, errs, code := collsim(t, append([]string{"run", "-c", "bcast", "-a", "chain", "-n", "64", "-s", "16MiB", "--verify", "off", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("run %v: exit %d: %s", args, code, errs)
		}
		var r struct {
			Tuned string `json:"tuned"`
		}
		json.Unmarshal([]byte(js), &r)
		var seg int64
		if _, err := fmt.Sscanf(r.Tuned, "segment %d elements", &seg); err != nil {
			t.Fatalf("tuned %q: %v", r.Tuned, err)
		}
		return 8 * seg
	}
	var probed int64 // the rules file's segment on fattree-1024
	for _, tc := range []struct {
		machine []string
		note    bool
		at      []string // run's flags that give the same segment
	}{
		{[]string{"-m", "fattree-1024"}, true, []string{"-m", "fattree-1024", "--set", "host.overhead=500ns"}},
		{[]string{"-m", "../../configs/examples/fattree-1024-overhead.yaml"}, false, []string{"-m", "../../configs/examples/fattree-1024-overhead.yaml"}},
	} {
		machine := tc.machine
		out, errs, code := collsim(t, append([]string{"tune", "-c", "bcast", "-n", "64", "-s", "16MiB", "--json"}, machine...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", machine, code, errs)
		}
		var res struct {
			Choices []struct {
				Fastest string `json:"fastest"`
				Segment int64  `json:"segment_bytes"`
				Note    string `json:"segment_note"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Choices) != 1 {
			t.Fatalf("%v: %s", err, out)
		}
		c := res.Choices[0]
		if c.Fastest != "chain" {
			t.Fatalf("%v: fastest %s, want chain (the test needs a pipeline)", machine, c.Fastest)
		}
		if tc.note {
			probed = c.Segment
		}
		if want := segmentOf(tc.at...); c.Segment != want || (c.Note != "") != tc.note {
			t.Errorf("%v: segment %d B, note %q; want %d B (run %v), a note: %t", machine, c.Segment, c.Note, want, tc.at, tc.note)
		}
	}
	if tiny := segmentOf("-m", "fattree-1024"); tiny >= probed {
		t.Errorf("at o = 0 run picks %d B: the test needs o = 0 to pick a smaller segment than the rules file's", tiny)
	}
}

// TestTuneNeverSlowerThanTheFixedRule: tune simulates the fixed rule's
// algorithm too, so its choice can be no slower, by its definition. On a
// machine charging o = 1 µs the alpha-beta-gamma forms underestimate: a
// linear alltoall's form (no o) set the pruning bar and Bruck, 3.4x
// faster simulated, was pruned (gain 0.29x at 1-32 KiB).
// tuneResult is tune --json's output, the fields the tests read.
type tuneResult struct {
	Choices []struct {
		Collective string  `json:"collective"`
		SizeBytes  int64   `json:"size_bytes"`
		Fastest    string  `json:"fastest"`
		Time       float64 `json:"time_s"`
		Fixed      string  `json:"ompi_fixed"`
		FixedTime  float64 `json:"ompi_fixed_time_s"`
		Note       string  `json:"zero_overhead_note"`
		Number     int     `json:"ompi_algorithm"`
		Rules      int     `json:"rules_algorithm"`
	} `json:"choices"`
	Rules string `json:"rules"`
}

// tuneJSON runs tune --json with args and reads its output, which must
// hold choices choices.
func tuneJSON(t *testing.T, choices int, args ...string) tuneResult {
	t.Helper()
	out, stderr, code := collsim(t, append([]string{"tune", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("tune %v: exit %d: %s", args, code, stderr)
	}
	var r tuneResult
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Choices) != choices {
		t.Fatalf("tune %v: %v, %d choices, want %d", args, err, len(r.Choices), choices)
	}
	return r
}

func TestTuneNeverSlowerThanTheFixedRule(t *testing.T) {
	r := tuneJSON(t, 9, "-m", "../../configs/examples/fattree-1024-overhead.yaml", "-c", "alltoall,allreduce,bcast", "-n", "64", "-s", "1KiB,32KiB,1MiB")
	for _, c := range r.Choices {
		if c.FixedTime > 0 && c.Time > c.FixedTime*(1+1e-12) {
			t.Errorf("%s %d B: tune chose %s (%g s), slower than the fixed rule's %s (%g s)", c.Collective, c.SizeBytes, c.Fastest, c.Time, c.Fixed, c.FixedTime)
		}
	}
}

// Sizes of which an alltoall would send nothing (8 B to 64 B over 16
// ranks: 0 elements a pair) are skipped with a note, not tuned under the
// size asked (a new user's trial); the rules start at the first size
// tuned, 128 B, and cover from 0.
func TestTuneSkipsEmptyAlltoalls(t *testing.T) {
	out, stderr, code := collsim(t, "tune", "-c", "alltoall", "-n", "16", "-s", "8..256")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"8B", "16B", "32B", "64B"} {
		if !strings.Contains(stderr, "note: skipped: alltoall of "+s+" on 16 ranks: nothing would be sent (a multiple of 128B moves everything)") {
			t.Errorf("no note for %s:\n%s", s, stderr)
		}
		if strings.Contains(out, "alltoall    16     "+s+" ") {
			t.Errorf("a row for %s:\n%s", s, out)
		}
	}
	if strings.Count(stderr, "note: skipped") != 4 || !strings.Contains(out, "alltoall    16     128B") {
		t.Errorf("want 4 notes and a row for 128B:\n%s%s", out, stderr)
	}
}

// The rules file measures sizes as Open MPI reads one
// (coll_tuned_decision_dynamic.c, v4.1.8 = v5.0.10): dsize times scount
// times the ranks for allgather, alltoall, gather and scatter, that is -s
// itself; it was written in the fixed decisions' measure, a rank's block
// (a pair's for alltoall), p times too small, so that Open MPI switched
// algorithms p times too early (an audit). Each rule after the first
// starts at the -s of the first size whose choice it takes (on a machine
// that charges o, so that the rules take the fastest everywhere).
func TestTuneRulesFileMeasure(t *testing.T) {
	changes := 0
	for _, c := range []string{"scatter", "gather", "allgather", "alltoall"} {
		out, stderr, code := collsim(t, "tune", "-m", "../../configs/examples/fattree-1024-overhead.yaml", "-c", c, "-n", "16", "-s", "1KiB..4MiB", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c, code, stderr)
		}
		var r struct {
			Choices []struct {
				Size    int64 `json:"size_bytes"`
				Number  int   `json:"ompi_algorithm"`
				Segment int64 `json:"segment_bytes"`
			} `json:"choices"`
			Rules string `json:"rules"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var want []int64 // where the choice changes, in -s
		for i, ch := range r.Choices {
			if i == 0 || ch.Number != r.Choices[i-1].Number || ch.Segment != r.Choices[i-1].Segment {
				want = append(want, ch.Size)
			}
		}
		want[0] = 0
		var got []int64 // the rules' first column ("bytes algorithm fan segment" lines)
		for _, line := range strings.Split(r.Rules, "\n") {
			if f := strings.Fields(line); len(f) == 4 && !strings.Contains(line, "#") {
				var b int64
				fmt.Sscan(f[0], &b)
				got = append(got, b)
			}
		}
		got = got[1:] // communicator size 0's rule: the fixed rules
		if (c == "scatter" || c == "gather") && len(want) > 1 {
			// Left to the fixed rules (TestTuneLeavesShiftingScattersToTheFixedRules).
			if !strings.Contains(r.Rules, "16 # communicator size\n1 # message sizes\n0 0 0 0\n") {
				t.Errorf("%s: the choice changes at %v B, but the rules are not the fixed ones:\n%s", c, want, r.Rules)
			}
			changes += len(want) - 1
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rules start at %v B, the choices change at %v B:\n%s", c, got, want, r.Rules)
		}
		changes += len(want) - 1
	}
	if changes == 0 {
		t.Error("no choice changed with the size: the test proves nothing")
	}
}

// TestTuneOutputFails: a rules file that cannot be written fails the run
// without the table (it printed the table, then failed; a new user's
// trial), and a missing directory is refused before any simulation.
func TestTuneOutputFails(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	out, stderr, code := collsim(t, "tune", "-m", "small", "-c", "allreduce", "-n", "8", "-s", "8", "-o", filepath.Join(blocker, "rules.txt"))
	if code != 1 || out != "" || !strings.Contains(stderr, "there is no directory") {
		t.Errorf("-o under a file: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// A directory where no file can be made, even by root: Linux's /proc.
	if st, err := os.Stat("/proc/self"); err != nil || !st.IsDir() {
		t.Skip("no /proc here: no directory that refuses a new file")
	}
	out, stderr, code = collsim(t, "tune", "-m", "small", "-c", "allreduce", "-n", "8", "-s", "8", "-o", "/proc/collsim-rules.txt")
	if code != 1 || out != "" || stderr == "" {
		t.Errorf("-o /proc/collsim-rules.txt: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// Where the machine's routes differ, a form priced at the slowest route
// is no bound and prunes nothing: on gpu-cluster a 4 KiB bcast on 24
// ranks is fastest by knomial, whose form (10.9 us) was more than twice
// linear's, so it was pruned and linear named the winner (a new user's
// trial). The winner's time is no more than every other candidate's, as
// run simulates them.
func TestTunePrunesOnlyByBounds(t *testing.T) {
	out, stderr, code := collsim(t, "tune", "-m", "gpu-cluster", "-c", "bcast", "-n", "24", "-s", "4KiB", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Choices []struct {
			Fastest string  `json:"fastest"`
			Time    float64 `json:"time_s"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Choices) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, a := range []string{"linear", "knomial", "binomial", "binary"} {
		run, stderr, code := collsim(t, "run", "-m", "gpu-cluster", "-c", "bcast", "-n", "24", "-s", "4KiB", "-a", a, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", a, code, stderr)
		}
		var r struct {
			Time float64 `json:"time_s"`
		}
		json.Unmarshal([]byte(run), &r)
		if r.Time < res.Choices[0].Time {
			t.Errorf("%s takes %g s, less than tune's winner %s's %g", a, r.Time, res.Choices[0].Fastest, res.Choices[0].Time)
		}
	}
}

// A tie at no overhead is broken by the overhead that tune probes with,
// not flagged as a win at none: an 8-byte allreduce on 4 ranks of a
// crossbar whose links move 8 bytes in no time and whose hosts reduce in
// none takes 2 us by linear and by recursive doubling alike, and recursive
// doubling is faster with o = 500 ns. (An empty allreduce on small was the
// tie until calls of no elements sent nothing.) A barrier's rules file
// says it has no sizes (it wrote the default sizes). (A new user's
// trial.)
func TestTuneTiesAndBarrierSizes(t *testing.T) {
	machine := filepath.Join(t.TempDir(), "instant.yaml")
	if err := os.WriteFile(machine, []byte("network:\n  crossbar: {hosts: 4, link: {bandwidth: 1000TB/s, latency: 500ns}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := collsim(t, "tune", "-m", machine, "-n", "4", "-s", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Choices []struct {
			Fastest      string `json:"fastest"`
			ZeroOverhead string `json:"zero_overhead_note"`
		} `json:"choices"`
		Rules string `json:"rules"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Choices) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	if c := res.Choices[0]; c.Fastest != "recursive_doubling" || c.ZeroOverhead != "" {
		t.Errorf("empty allreduce on 4 ranks: %+v; want recursive_doubling, unflagged", c)
	}
	out, stderr, code = collsim(t, "tune", "-c", "barrier", "-n", "4,5", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("barrier: exit %d: %s%s", code, out, stderr)
	}
	if !strings.Contains(res.Rules, "sizes none: a barrier has none") {
		t.Errorf("barrier's rules file header:\n%s", res.Rules)
	}
}

// A size of no elements is skipped with a note, as Open MPI's MPI_
// functions return before they read their rules: every algorithm tied
// at 0 s there, and the first in the list (linear) was written as the
// rule from 0 bytes, which Open MPI then ran for every message below the
// next size tuned (1 to 7 bytes here; an audit). On small, whose hosts
// charge no overhead, the file's one rule for 8 ranks is the 8-byte
// point's own rule (rules_algorithm), from 0 bytes. A list of zero sizes
// alone is a usage error.
func TestTuneSkipsZeroSizes(t *testing.T) {
	out, stderr, code := collsim(t, "tune", "-c", "allreduce", "-n", "8", "-s", "0,8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "note: skipped: allreduce of 0B on 8 ranks: a call of no elements sends nothing") {
		t.Errorf("no note for 0B:\n%s", stderr)
	}
	var res struct {
		Choices []struct {
			SizeBytes int64 `json:"size_bytes"`
			Rules     int   `json:"rules_algorithm"`
		} `json:"choices"`
		Rules string `json:"rules"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Choices) != 1 || res.Choices[0].SizeBytes != 8 {
		t.Fatalf("choices %+v, want the 8-byte point alone", res.Choices)
	}
	if want := fmt.Sprintf("8 # communicator size\n1 # message sizes\n0 %d 0 0\n", res.Choices[0].Rules); !strings.Contains(res.Rules, want) {
		t.Errorf("rules for 8 ranks, want the 8-byte point's (%d) from 0 bytes alone:\n%s", res.Choices[0].Rules, res.Rules)
	}
	_, stderr, code = collsim(t, "tune", "-c", "bcast", "-n", "8", "-s", "0")
	if code != 2 || !strings.Contains(stderr, "--sizes: bcast on 8 ranks sends nothing at any size given (a call of no elements sends nothing)") {
		t.Errorf("bcast of 0B alone: exit %d: %s", code, stderr)
	}
}
