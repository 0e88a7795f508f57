package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeSweep writes a sweep file into a fresh folder and returns its path.
func writeSweep(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// readRows reads a sweep's CSV output as maps from column to value.
func readRows(t *testing.T, text string) (cols []string, rows []map[string]string) {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("not CSV with a header (%v):\n%s", err, text)
	}
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		rows = append(rows, m)
	}
	return recs[0], rows
}

// withoutWall is output with the wall_s and ops_per_s values blanked: the
// only values that depend on the machine running the sweep.
func withoutWall(t *testing.T, text string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("not CSV (%v):\n%s", err, text)
	}
	wall, speed := slices.Index(recs[0], "wall_s"), slices.Index(recs[0], "ops_per_s")
	var b strings.Builder
	w := csv.NewWriter(&b)
	for i, r := range recs {
		if i > 0 {
			r[wall], r[speed] = "<wall>", "<wall>"
		}
		w.Write(r)
	}
	w.Flush()
	return b.String()
}

const sweepStudy = `# a small what-if: machines, a machine setting, algorithms and sizes
base:
  ranks: 8
  verify: "on"
axes:
  machine: [small, fattree-1024]
  algo: [ring, recursive_doubling, ompi]
  size: 8..64KiB
`

// TestSweepRowsAreRunResults checks every row of a sweep against collsim
// run --json with the same flags: the sweep must run exactly the
// experiment run does, value for value.
func TestSweepRowsAreRunResults(t *testing.T) {
	file := writeSweep(t, sweepStudy)
	out, stderr, code := collsim(t, "sweep", file, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cols, rows := readRows(t, out)
	if len(rows) != 2*3*14 {
		t.Fatalf("%d rows, want 2 machines x 3 algorithms x 14 sizes = 84", len(rows))
	}
	// The column order: leading, the axes in file order, then the result.
	if want := []string{"point", "points", "sweep", "machine", "algo", "size"}; !slices.Equal(cols[:6], want) {
		t.Errorf("columns start %v, want %v", cols[:6], want)
	}
	if cols[len(cols)-2] != "wall_s" || cols[len(cols)-1] != "error" {
		t.Errorf("columns end %v, want wall_s, error", cols[len(cols)-2:])
	}
	for i, r := range rows {
		// Points in order, the first axis outermost and the last innermost.
		machine, algo, size := []string{"small", "fattree-1024"}[i/42], []string{"ring", "recursive_doubling", "ompi"}[i/14%3], strconv.Itoa(8<<(i%14))
		if r["point"] != strconv.Itoa(i) || r["points"] != "84" || r["machine"] != machine || r["algo"] != algo || r["size"] != size {
			t.Fatalf("row %d is point %s (%s, %s, %s), want %s, %s, %s", i, r["point"], r["machine"], r["algo"], r["size"], machine, algo, size)
		}
		if r["error"] != "" || r["data_verified"] != "true" {
			t.Errorf("point %d failed or its data was not checked: %q", i, r["error"])
		}
		if i%5 != 0 { // a fifth of the points against run, to keep the test short
			continue
		}
		js, stderr, code := collsim(t, "run", "-m", machine, "-a", algo, "-s", size, "-n", "8", "--verify", "on", "--json")
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(js), &want); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"algorithm", "time_s", "busbw_GBps", "finish_mean_s", "events", "messages", "chosen_by"} {
			if got, w := r[k], want[k]; got != fmt.Sprint(w) && !sameNumber(got, w) && !(got == "" && w == nil) {
				t.Errorf("point %d (%s %s %s): %s = %s in the sweep, %v in run", i, machine, algo, size, k, got, want[k])
			}
		}
	}
}

func sameNumber(text string, v any) bool {
	f, err := strconv.ParseFloat(text, 64)
	g, ok := v.(float64)
	return err == nil && ok && f == g
}

// TestSweepMachineSettings checks the machine config settings an axis
// sets against values found without the sweep: a 2:1 taper of the built-in
// fat-tree is the example config written tapered, and halving the default
// machine's link bandwidth gives the ring allreduce's closed form
// 2(p-1)(alpha + n/p beta) + (p-1) n/p gamma with beta doubled.
func TestSweepMachineSettings(t *testing.T) {
	file := writeSweep(t, `
base: {network: flow, ranks: 64, c: alltoall, size: 1MiB, verify: "off"}
axes:
  machine: [fattree-1024]
  network.fat_tree.taper: [1, 2]
`)
	// c is run's shorthand, not a flag name: refused with the names.
	if _, stderr, code := collsim(t, "sweep", file, "-q"); code != 1 || !strings.Contains(stderr, `sweep.yaml:2: "c" is not a setting`) || !strings.Contains(stderr, "collective") {
		t.Fatalf("exit %d, want 1 naming the line and the valid settings: %s", code, stderr)
	}
	os.WriteFile(file, []byte(`
base: {network: flow, ranks: 256, collective: alltoall, size: 1MiB, verify: "off"}
axes:
  machine: [fattree-1024]
  network.fat_tree.taper: [1, 2]
`), 0o644)
	out, stderr, code := collsim(t, "sweep", file, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, rows := readRows(t, out)
	tapered, _, code := collsim(t, "run", "-m", "../../configs/examples/fattree-1024-tapered.yaml", "--network", "flow", "-n", "256", "-c", "alltoall", "-s", "1MiB", "--verify", "off", "--json")
	full, _, _ := collsim(t, "run", "-m", "fattree-1024", "--network", "flow", "-n", "256", "-c", "alltoall", "-s", "1MiB", "--verify", "off", "--json")
	if code != 0 {
		t.Fatal(tapered)
	}
	set, _, _ := collsim(t, "run", "-m", "fattree-1024", "--set", "network.fat_tree.taper=2", "--network", "flow", "-n", "256", "-c", "alltoall", "-s", "1MiB", "--verify", "off", "--json")
	if ts := regexp.MustCompile(`"time_s": [^,]+`); ts.FindString(set) != ts.FindString(tapered) {
		t.Errorf("run --set network.fat_tree.taper=2: %s, the tapered config: %s", ts.FindString(set), ts.FindString(tapered))
	}
	for i, js := range []string{full, tapered} {
		var want struct {
			Time float64 `json:"time_s"`
		}
		json.Unmarshal([]byte(js), &want)
		if rows[i]["time_s"] != strconv.FormatFloat(want.Time, 'g', -1, 64) {
			t.Errorf("taper %s: %s s, want %v s as the config written that way gives", rows[i]["network.fat_tree.taper"], rows[i]["time_s"], want.Time)
		}
	}
	if rows[0]["time_s"] == rows[1]["time_s"] {
		t.Errorf("a 2:1 taper took as long as a full tree (%s s) on 256 ranks' alltoall", rows[0]["time_s"])
	}

	file = writeSweep(t, `
base: {ranks: 4, size: 256KiB}
axes:
  link.bandwidth: [100Gbit/s, 50Gbit/s]
`)
	out, stderr, code = collsim(t, "sweep", file, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, rows = readRows(t, out)
	const n, p, alpha, gamma = 262144.0, 4.0, 1e-6, 1 / 10e9 // small: 1 µs host to host, reductions at 10 GB/s
	for i, bw := range []float64{12.5e9, 6.25e9} {
		want := 2*(p-1)*(alpha+n/p/bw) + (p-1)*n/p*gamma
		got, _ := strconv.ParseFloat(rows[i]["time_s"], 64)
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("link.bandwidth %s: %g s, want %g s", rows[i]["link.bandwidth"], got, want)
		}
	}
}

// TestSweepWorkersResumeShards checks that the output does not depend on
// how the sweep ran: 1 worker or 4, interrupted and resumed, or in 3
// shards merged (CSV and JSON Lines); and that a failed point is a row.
func TestSweepWorkersResumeShards(t *testing.T) {
	file := writeSweep(t, sweepStudy+"  collective: [allreduce, alltoall]\n")
	dir := filepath.Dir(file)
	one, _, code := collsim(t, "sweep", file, "-q", "-j", "1")
	if code != 1 { // alltoall of 8 B on 8 ranks sends nothing: those points fail
		t.Fatalf("exit %d, want 1 for the failed points", code)
	}
	_, rows := readRows(t, one)
	failed := 0
	for _, r := range rows {
		if r["error"] != "" {
			failed++
			// Alltoall of 8, 16 and 32 B on 8 ranks sends nothing (under
			// one 8-byte element to each rank; checked first), and
			// allreduce's ring and recursive doubling are not alltoall's.
			sends := slices.Contains([]string{"8", "16", "32"}, r["size"])
			if r["collective"] != "alltoall" || r["time_s"] != "" || !strings.Contains(r["error"], "unknown alltoall algorithm") && !sends ||
				sends && !strings.Contains(r["error"], "nothing would be sent") {
				t.Errorf("point %s failed: %q", r["point"], r["error"])
			}
		}
	}
	if want := 2 * (2*14 + 3); failed != want {
		t.Errorf("%d points failed, want %d", failed, want)
	}
	four, _, _ := collsim(t, "sweep", file, "-q", "-j", "4")
	if withoutWall(t, four) != withoutWall(t, one) {
		t.Error("4 workers wrote another output than 1")
	}

	// Interrupted after 50 rows and in the middle of the 51st.
	lines := strings.SplitAfter(one, "\n")
	partial := filepath.Join(dir, "partial.csv")
	os.WriteFile(partial, []byte(strings.Join(lines[:51], "")+lines[51][:20]), 0o644)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", partial); code != 2 || !strings.Contains(stderr, "--resume") {
		t.Errorf("an existing output without --resume: exit %d, want 2 saying --resume: %s", code, stderr)
	}
	// The exit status is one run's: 1 when a point run fails (those of
	// the 118 rows past the first 50 that failed in one run).
	failing := func(rows []map[string]string) (n int) {
		for _, r := range rows {
			if r["error"] != "" {
				n++
			}
		}
		return n
	}
	rerun := failing(rows[50:])
	_, stderr, code := collsim(t, "sweep", file, "-o", partial, "--resume")
	if rerun == 0 || code != 1 || !strings.Contains(stderr, fmt.Sprintf("118 points run, 50 already done, %d failed", rerun)) {
		t.Errorf("resume: exit %d, want 1 for %d failed points: %s", code, rerun, stderr)
	}
	resumed, _ := os.ReadFile(partial)
	if withoutWall(t, string(resumed)) != withoutWall(t, one) {
		t.Error("an interrupted and resumed sweep wrote another output than one run")
	}
	// A row removed from the middle (as resume asks of an edited one)
	// runs again, and the file comes out in point order, as one run's.
	gap := filepath.Join(dir, "gap.csv")
	os.WriteFile(gap, []byte(strings.Join(lines[:10], "")+strings.Join(lines[11:], "")), 0o644)
	wantCode := min(failing(rows[9:10]), 1) // the removed row, line 11: point 10
	if _, stderr, code := collsim(t, "sweep", file, "-o", gap, "--resume"); code != wantCode || !strings.Contains(stderr, "1 points run, 167 already done") {
		t.Errorf("resume of a file with a gap: exit %d, want %d: %s", code, wantCode, stderr)
	}
	if filled, _ := os.ReadFile(gap); withoutWall(t, string(filled)) != withoutWall(t, one) {
		t.Errorf("a gap filled by resume is not in point order:\n%s", filled)
	}
	if _, stderr, code := collsim(t, "merge", gap); code != 0 {
		t.Errorf("merge of a resumed file: exit %d: %s", code, stderr)
	}

	for _, ext := range []string{"csv", "jsonl"} {
		var parts []string
		for i := 1; i <= 3; i++ {
			part := filepath.Join(dir, fmt.Sprintf("part-%d.%s", i, ext))
			collsim(t, "sweep", file, "-q", "--shard", fmt.Sprintf("%d/3", i), "-o", part)
			parts = append(parts, part)
		}
		merged, stderr, code := collsim(t, append([]string{"merge"}, parts...)...)
		if code != 0 {
			t.Fatalf("merge: exit %d: %s", code, stderr)
		}
		whole := filepath.Join(dir, "whole."+ext)
		collsim(t, "sweep", file, "-q", "-o", whole)
		want, _ := os.ReadFile(whole)
		if ext == "jsonl" {
			merged, want = maskJSONWall(merged), []byte(maskJSONWall(string(want)))
			checkJSONLines(t, merged, rows)
		} else {
			merged = withoutWall(t, merged)
			want = []byte(withoutWall(t, string(want)))
		}
		if merged != string(want) {
			t.Errorf("%s: 3 shards merged differ from one run", ext)
		}
		// What merge refuses: a part missing, a part twice, another sweep.
		if _, stderr, code := collsim(t, "merge", parts[0], parts[2]); code != 1 || !strings.Contains(stderr, "56 of the 168 points are in no part (1, 4, 7, 10, 13, ...)") {
			t.Errorf("%s: a missing shard: exit %d: %s", ext, code, stderr)
		}
		if _, stderr, code := collsim(t, "merge", parts[0], parts[1], parts[2], parts[1]); code != 1 || !strings.Contains(stderr, "also in another part") {
			t.Errorf("%s: a shard twice: exit %d: %s", ext, code, stderr)
		}
	}
	// Rows edited or cut by hand are refused by resume and merge, naming
	// the line, not carried into an output nothing can read.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte(strings.Join(lines[:30], "")+"garbage,row\n"), 0o644)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", bad, "--resume"); code != 1 || !strings.Contains(stderr, "bad.csv:31: not a row of collsim sweep output") {
		t.Errorf("resume of a garbage row: exit %d: %s", code, stderr)
	}
	crlf := filepath.Join(dir, "crlf.csv")
	os.WriteFile(crlf, []byte(strings.ReplaceAll(strings.Join(lines[:30], ""), "\n", "\r\n")), 0o644)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", crlf, "--resume"); code != 1 || !strings.Contains(stderr, "crlf.csv:1: its lines end in CR LF") {
		t.Errorf("resume of a CR LF file: exit %d: %s", code, stderr)
	}
	edited := strings.Replace(strings.Join(lines[:30], ""), ",ring,", `,ri"ng,`, 1)
	os.WriteFile(bad, []byte(edited), 0o644)
	if _, stderr, code := collsim(t, "merge", bad); code != 1 || !strings.Contains(stderr, "a quote inside an unquoted field") {
		t.Errorf("merge of an edited row: exit %d: %s", code, stderr)
	}
	os.WriteFile(bad, []byte(strings.Join(lines[:30], "")+strings.Join(strings.Split(lines[30], ",")[:20], ",")+"\n"), 0o644)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", bad, "--resume"); code != 1 || !strings.Contains(stderr, "bad.csv:31: 20 fields, the header") {
		t.Errorf("resume of a cut row: exit %d: %s", code, stderr)
	}
	// A row whose axis value was edited would stand for a point it did
	// not measure; a row twice, for one point measured twice.
	fields := strings.Split(lines[5], ",") // point 4: point, points, sweep, machine, algo, size, ...
	if fields[0] != "4" || fields[5] != "32" {
		t.Fatalf("row 5 is %q, want point 4 of size 32", lines[5])
	}
	fields[5] = "256"
	os.WriteFile(bad, []byte(strings.Join(lines[:5], "")+strings.Join(fields, ",")), 0o644)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", bad, "--resume"); code != 1 || !strings.Contains(stderr, "bad.csv:6: point 4 has size 32, but the row says 256") {
		t.Errorf("resume of a row with an edited size: exit %d: %s", code, stderr)
	}
	os.WriteFile(bad, []byte(strings.Join(lines[:6], "")+lines[3]), 0o644)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", bad, "--resume"); code != 1 || !strings.Contains(stderr, "bad.csv:7: point 2 again (line 4 has it)") {
		t.Errorf("resume of a row twice: exit %d: %s", code, stderr)
	}
	whole, _ := os.ReadFile(filepath.Join(dir, "whole.jsonl"))
	jl := strings.SplitAfter(string(whole), "\n")
	badJSON := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(badJSON, []byte(strings.Join(jl[:4], "")+strings.Replace(jl[4], `"algo":"ring"`, `"algo":"ompi"`, 1)), 0o644)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", badJSON, "--resume"); code != 1 || !strings.Contains(stderr, `bad.jsonl:5: point 4 has algo "ring", but the row says "ompi"`) {
		t.Errorf("resume of a JSON row with an edited algorithm: exit %d: %s", code, stderr)
	}
	other := writeSweep(t, strings.Replace(sweepStudy, "ranks: 8", "ranks: 16", 1)+"  collective: [allreduce, alltoall]\n")
	collsim(t, "sweep", other, "-q", "--shard", "2/3", "-o", filepath.Join(dir, "other.csv"))
	if _, stderr, code := collsim(t, "merge", filepath.Join(dir, "part-1.csv"), filepath.Join(dir, "other.csv"), filepath.Join(dir, "part-3.csv")); code != 1 || !strings.Contains(stderr, "merge the parts of one sweep") {
		t.Errorf("parts of two sweeps: exit %d: %s", code, stderr)
	}
	if _, stderr, code := collsim(t, "sweep", other, "-q", "-o", partial, "--resume"); code != 1 || !strings.Contains(stderr, "a machine or noise-trace file it names changed") {
		t.Errorf("resuming another sweep's output: exit %d: %s", code, stderr)
	}
}

var jsonWall = regexp.MustCompile(`"(wall_s|wall_total_s|ops_per_s)":[0-9.e+-]+`)

func maskJSONWall(s string) string { return jsonWall.ReplaceAllString(s, `"$1":0`) }

// checkJSONLines checks that each JSON line holds the CSV row's values,
// numbers as numbers.
func checkJSONLines(t *testing.T, jsonl string, rows []map[string]string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(jsonl))
	i := 0
	for ; sc.Scan(); i++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for _, k := range []string{"point", "size", "time_s", "events"} {
			if rows[i][k] == "" {
				continue
			}
			if !sameNumber(rows[i][k], m[k]) {
				t.Errorf("line %d: %s = %v, CSV %s", i+1, k, m[k], rows[i][k])
			}
		}
		if m["algo"] != rows[i]["algo"] || (m["error"] == nil) != (rows[i]["error"] == "") {
			t.Errorf("line %d: %v against %v", i+1, m, rows[i])
		}
	}
	if i != len(rows) {
		t.Errorf("%d JSON lines, %d CSV rows", i, len(rows))
	}
}

// TestSweepBadFiles checks that every mistake in a sweep file is answered
// with its file:line, what is wrong and the valid choices, exit 2 or 1,
// before any point runs.
func TestSweepBadFiles(t *testing.T) {
	cases := []struct {
		text, want string
		code       int
	}{
		{"axes:\n  rank: [4, 8]\n", `sweep.yaml:2: "rank" is not a setting of a sweep; did you mean ranks\?; valid: machine, .*ranks`, 1},
		// A misspelt algorithm passed --dry-run and failed every point.
		{"axes:\n  algo: [ring, rign]\n", `sweep.yaml:2: algo "rign" is not an algorithm of any collective, nor a library's choice`, 1},
		// A misspelt collective failed every point, with no line; an axis
		// with nothing after it ran one point of the default.
		{"base: {collective: allreduse}\naxes:\n  ranks: [4, 8]\n", `sweep.yaml:1: collective "allreduse" is not one of allreduce, bcast`, 1},
		{"axes:\n  ranks: [4, 8]\n  algo:\n", `sweep.yaml:3: axis algo has no values`, 1},
		{"base: {algo: }\naxes:\n  ranks: [4, 8]\n", `sweep.yaml:1: algo has no value; give one, or leave the key out`, 1},
		{"base: {collective: \"allreduce,bcast\"}\naxes:\n  ranks: [4, 8]\n", `sweep.yaml:1: collective "allreduce,bcast" is not one of`, 1},
		{"axes:\n  ranks: [4, ~]\n", `sweep.yaml:2: ranks: an empty value in the list; give one`, 1},
		{"axes:\n  ranks: [4, eight]\n", `sweep.yaml:2: .*eight`, 1},
		{"axes:\n  ranks: [4, 0]\n", `sweep.yaml:2: ranks "0": give a whole number of at least 1`, 1},
		{"axes:\n  network.fat_tree.tapir: [1, 2]\n", `sweep.yaml:2: network.fat_tree has no setting "tapir"; valid: k, levels, taper`, 1},
		{"axes:\n  network.fat_tree.taper: [1, two]\n", `sweep.yaml:2: network.fat_tree.taper: two is not a number`, 1},
		// A new user's trial: values twice made identical points that read
		// as replicas; a flag's value in Go's words.
		{"axes:\n  size: [8, 8, 1KiB]\n", `sweep.yaml:2: axis size: 8 is given twice; give each value once`, 1},
		{"axes:\n  size: [1024, 1KiB]\n", `sweep.yaml:2: axis size: 1024 and 1KiB are the same value`, 1},
		{"axes:\n  algo: [ring, ring]\n", `sweep.yaml:2: axis algo: ring is given twice`, 1},
		{"axes:\n  ranks: [4, 04]\n", `sweep.yaml:2: axis ranks: 4 and 04 are the same value`, 1},
		{"axes:\n  seed: [abc]\n", `sweep.yaml:2: seed: invalid argument "abc" for "--seed" flag: not a whole number of 0 or more`, 1},
		{"axes:\n  sise: [8]\n", `sweep.yaml:2: "sise" is not a setting of a sweep; did you mean size\?`, 1},
		{"axes:\n  link.bandwith: [1Gbit/s]\n", `sweep.yaml:2: no machine setting is or ends with "link.bandwith"; did you mean link.bandwidth\?`, 1},
		{"axes:\n  algo: [ring]\n  size: [8, 16]\nzip: [[algo, size]]\n", `sweep.yaml:4: zipped axes need lists of one length`, 1},
		{"axes:\n  algo: [ring]\nzip: [[algo, seed]]\n", `sweep.yaml:3: zip names "seed", which is not an axis; axes: algo`, 1},
		{"axis:\n  algo: [ring]\n", `sweep.yaml:1: "axis" is not a key of a sweep file; valid: base, axes, zip, replicas`, 1},
		{"base:\n  ranks: [4, 8]\n", `sweep.yaml:2: ranks takes one value \(a list of values belongs in axes\)`, 1},
		{"axes:\n  machine: [small, nosuch]\n", `sweep.yaml:2: machine "nosuch" is neither a built-in machine`, 1},
		{"axes:\n  network: [analytic, fluid]\n", `sweep.yaml:2: .*fluid`, 1},
		{"axes: [ranks]\n", `sweep.yaml:1: axes is a mapping`, 1},
		{"axes:\n  size: 8..1ZiB\n", `sweep.yaml:2: size:`, 1},
		{"axes:\n  ranks: 1..4\n  size: 1..1TiB\n  seed: [" + numbers(100) + "]\n  root: [" + numbers(100) + "]\n  segment: [" + numbers(10) + "]\n", `sweep.yaml: 1.23e\+07 points; a sweep has at most 10000000`, 1},
		{"axes:\n  ranks: [4]\n  ranks: [8]\n", `sweep.yaml:3: axis ranks is given twice`, 1},
		{"axes:\n  size: [-5]\n", `sweep.yaml:2: size "-5" must be a whole number of bytes from 0 to 2\^62\n`, 1},
		{"replicas: 0\n", `sweep.yaml:1: replicas 0: give a whole number of 1 to 10000000`, 1},
		{"axes: {ranks: [4\n", `sweep.yaml:1: the \[ opened here is never closed`, 1},
		// A huge replicas is refused at once, not after making its seeds.
		{"axes:\n  size: [8, 16]\nreplicas: 9000000\n", `sweep.yaml: 1.8e\+07 points; a sweep has at most 10000000`, 1},
		{"base: {seed: 18446744073709551615}\nreplicas: 2\n", `sweep.yaml:2: replicas 2 from seed 18446744073709551615 pass the largest seed`, 1},
		{"axes:\n  size: [8, 16]\n---\nbase: {}\n", `sweep.yaml:3: a second YAML document`, 1},
		{"axes:\n  size: [8, 16\xff]\n", `sweep.yaml:2: byte 0xff is not UTF-8 text`, 1},
		{"axes:\n\tsize: [8]\n", `sweep.yaml:2: a tab; YAML indents with spaces only`, 1},
	}
	for _, c := range cases {
		file := writeSweep(t, c.text)
		_, stderr, code := collsim(t, "sweep", file, "--dry-run")
		if code != c.code || !regexp.MustCompile(c.want).MatchString(stderr) {
			t.Errorf("%q: exit %d, want %d and %q:\n%s", c.text, code, c.code, c.want, stderr)
		}
	}
	file := writeSweep(t, "axes:\n  ranks: [4]\n")
	dir := filepath.Dir(file)
	for _, args := range [][]string{{"--shard", "0/4"}, {"--shard", "5/4"}, {"--shard", "2"}, {"--jobs", "-1"}, {"--format", "xml"}, {"--resume"},
		// A format the name contradicts: merge, plot and report would
		// read the file as the other.
		{"--format", "jsonl", "-o", filepath.Join(dir, "a.csv")}, {"--format", "csv", "-o", filepath.Join(dir, "a.jsonl")}, {"--format", "jsonl", "-o", filepath.Join(dir, "a.txt")}} {
		if _, stderr, code := collsim(t, append([]string{"sweep", file}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.csv")); err == nil {
		t.Error("a refused sweep wrote its output")
	}
	// A name in capitals is JSON Lines for every command alike.
	upper := filepath.Join(dir, "x.JSONL")
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", upper); code != 0 {
		t.Fatalf("sweep -o x.JSONL: exit %d: %s", code, stderr)
	}
	if _, stderr, code := collsim(t, "plot", upper, "--x", "ranks", "--y", "time_s", "-o", filepath.Join(dir, "p.png")); code != 0 {
		t.Errorf("plot x.JSONL: exit %d: %s", code, stderr)
	}
}

// TestSweepDryRun checks the points a dry run lists: a grid with a zipped
// pair and replicas, and a shard's share of it.
func TestSweepDryRun(t *testing.T) {
	file := writeSweep(t, `
base: {seed: 7}
axes:
  algo: [ring, recursive_doubling]
  ranks: [4, 8]
  size: [64, 128]
zip: [[ranks, size]]
replicas: 2
`)
	out, stderr, code := collsim(t, "sweep", file, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// algo outermost; ranks and size together; the replicas' seeds 7 and 8
	// innermost.
	want := [][]string{
		{"0", "ring", "4", "64", "7", "ok"}, {"1", "ring", "4", "64", "8", "ok"}, {"2", "ring", "8", "128", "7", "ok"}, {"3", "ring", "8", "128", "8", "ok"},
		{"4", "recursive_doubling", "4", "64", "7", "ok"}, {"5", "recursive_doubling", "4", "64", "8", "ok"}, {"6", "recursive_doubling", "8", "128", "7", "ok"}, {"7", "recursive_doubling", "8", "128", "8", "ok"},
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "8 points (2 x 2 x 2)") || !slices.Equal(strings.Fields(lines[1]), []string{"point", "algo", "ranks", "size", "seed", "check"}) {
		t.Fatalf("dry run:\n%s", out)
	}
	for i, w := range want {
		if got := strings.Fields(lines[2+i]); !slices.Equal(got, w) {
			t.Errorf("point %d: %v, want %v", i, got, w)
		}
	}
	out, _, _ = collsim(t, "sweep", file, "--dry-run", "--shard", "2/3")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2+3 || strings.Fields(lines[2])[0] != "1" || strings.Fields(lines[4])[0] != "7" {
		t.Errorf("shard 2/3 runs points 1, 4 and 7:\n%s", out)
	}
	// Points that would fail are named, with why, without running any: a
	// machine setting the machine lacks, more ranks than slots.
	bad := writeSweep(t, "axes:\n  machine: [small, fattree-1024]\n  network.fat_tree.k: [4]\n  ranks: [8, 64]\n")
	out, stderr, code = collsim(t, "sweep", bad, "--dry-run")
	for _, w := range []string{
		"point 0: " + bad + ":3: network.fat_tree.k: machine small has no network.fat_tree", "point 1: " + bad + ":3: network.fat_tree.k",
		"point 3: 64 ranks do not fit on fattree-1024",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run of failing points lacks %q:\n%s", w, out)
		}
	}
	if fails := strings.Count(out, " fails\n"); code != 1 || fails != 3 || !strings.Contains(stderr, "3 of 4 points would fail") || !strings.Contains(out, "2      fattree-1024  4                   8      ok") {
		t.Errorf("dry run of failing points: exit %d, %d marked, %s", code, fails, stderr)
	}
	// The hash names the points, not the file's layout.
	same := writeSweep(t, "# the same sweep, written otherwise\nbase:\n  seed: 7\naxes: {algo: [ring, recursive_doubling], ranks: [4, 8], size: [64, 128]}\nzip:\n  - [ranks, size]\nreplicas: 2\n")
	out2, _, _ := collsim(t, "sweep", same, "--dry-run")
	hash := regexp.MustCompile(`sweep ([0-9a-f]{16})`)
	if h1, h2 := hash.FindStringSubmatch(lines[0]), hash.FindStringSubmatch(out2); h1 == nil || h2 == nil || h1[1] != h2[1] {
		t.Errorf("one sweep written two ways has two hashes: %q %q", lines[0], strings.SplitN(out2, "\n", 2)[0])
	}
}

// numbers is "1, 2, ..., n".
func numbers(n int) string {
	var b []string
	for i := 1; i <= n; i++ {
		b = append(b, strconv.Itoa(i))
	}
	return strings.Join(b, ", ")
}

// TestSweepAliases: YAML anchors and aliases stand for their values, in
// base and in axes.
func TestSweepAliases(t *testing.T) {
	file := writeSweep(t, "base: {seed: &one 1, root: *one, collective: bcast}\naxes:\n  size: &s [8, 16]\n  ranks: *s\n")
	out, stderr, code := collsim(t, "sweep", file, "--dry-run")
	if code != 0 || !strings.Contains(out, "4 points (2 x 2)") {
		t.Errorf("exit %d: %s%s", code, out, stderr)
	}
}

// TestSweepOutputLocked: a second sweep on an output another is writing
// stops before it reads or writes a row.
func TestSweepOutputLocked(t *testing.T) {
	file := writeSweep(t, "axes:\n  ranks: [2, 4]\n")
	out := filepath.Join(t.TempDir(), "r.csv")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", out); code != 1 || !strings.Contains(stderr, "another collsim sweep is writing it") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", out); code != 0 {
		t.Errorf("once free: exit %d: %s", code, stderr)
	}
}

// TestMergeIntoDevice: merge -o onto a device writes into it, as a
// shell's > would; it renamed its finished file onto the path, which as
// root replaced /dev/null with a regular file (a helper's session found
// /dev/null so replaced). Here on a null device made for the test.
func TestMergeIntoDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a device node")
	}
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // the null device, major 1 minor 3
		t.Skipf("cannot make a device node here: %v", err)
	}
	file := writeSweep(t, "axes:\n  ranks: [2, 4]\n")
	part := filepath.Join(dir, "part.csv")
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", part); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	if _, stderr, code := collsim(t, "merge", part, "-o", null); code != 0 {
		t.Fatalf("merge -o %s: exit %d: %s", null, code, stderr)
	}
	if fi, err := os.Stat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("merge -o onto the null device left %v (%v), not the device", fi.Mode(), err)
	}
}

// TestSweepRefusesOptionsPerPoint: a sweep point with an option none of
// its algorithms takes is an error row, as run refuses it; the others run
// (a sweep ran the ring with --segment, and its report then printed a run
// command that exits 2). A setting checked alone, such as base's root
// before the collective applies, is not refused.
func TestSweepRefusesOptionsPerPoint(t *testing.T) {
	file := writeSweep(t, "base: {ranks: 16, size: 64KiB, segment: 512}\naxes:\n  algo: [ring, segmented_ring]\n")
	out := filepath.Join(t.TempDir(), "r.csv")
	_, stderr, code := collsim(t, "sweep", file, "-q", "-o", out)
	if code != 1 || !strings.Contains(stderr, "1 of 2 points failed") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(rows) != 3 || !strings.Contains(rows[1], "--segment does not apply to allreduce/ring") || !strings.Contains(rows[2], "segmented_ring,allreduce,segmented_ring") {
		t.Errorf("rows:\n%s", data)
	}
	rooted := writeSweep(t, "base: {collective: bcast, root: 1}\naxes:\n  ranks: [2, 4]\n")
	if _, stderr, code := collsim(t, "sweep", rooted, "-q", "-o", filepath.Join(t.TempDir(), "b.csv")); code != 0 {
		t.Errorf("a bcast's root: exit %d: %s", code, stderr)
	}
}

// Ctrl-C stops a sweep with the shell's status for it, 130, and says
// where its rows are and how to run the rest (it said nothing: a new
// user's trial); the rows written are whole, and --resume takes them.
func TestSweepInterrupted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := writeSweep(t, "base: {machine: fattree-1024, network: flow, ranks: 512, collective: alltoall, algo: pairwise, verify: \"off\"}\naxes:\n  size: 1MiB..16MiB\n  seed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n")
	out := filepath.Join(filepath.Dir(file), "r.csv")
	cmd := exec.Command(exe, "sweep", file, "-o", out, "-q")
	cmd.Env = append(os.Environ(), "COLLSIM_TEST_AS_COLLSIM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(out); bytes.Count(b, []byte("\n")) >= 2 {
			break // a row written: the sweep is under way
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no row within 60 s: %s", stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the sweep did not stop within 30 s of Ctrl-C")
	}
	if got := cmd.ProcessState.ExitCode(); got != 130 {
		t.Errorf("exit status %d, want 130", got)
	}
	if want := "-o " + out + " --resume runs the rest"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	// The rows kept are whole, the first points in order.
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 || len(rows) > 51 {
		t.Fatalf("%d rows (%v): want a header and 1 to 50 points", len(rows), err)
	}
	for i, r := range rows[1:] {
		if r[0] != strconv.Itoa(i) {
			t.Errorf("row %d is point %s", i+1, r[0])
		}
	}
	if _, stderr, code := collsim(t, "sweep", file, "-o", out, "--resume", "--dry-run"); code != 0 {
		t.Errorf("--resume of the rows kept: exit %d: %s", code, stderr)
	}
}

// A size axis is written in bytes whether given as a list of units or as
// a range (the list's 64KiB went into the size column as written, beside
// a range's 65536: a new user's trial).
func TestSweepSizesInBytes(t *testing.T) {
	file := writeSweep(t, "axes:\n  size: [64KiB, 1MiB]\n")
	out, stderr, code := collsim(t, "sweep", file, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, " 65536 ") || !strings.Contains(out, " 1048576 ") || strings.Contains(out, "KiB") {
		t.Errorf("dry run:\n%s", out)
	}
	// In JSON Lines every size is a number, written with units or not
	// (1KiB was the string "1024" beside the number 2048).
	file = writeSweep(t, "base: {ranks: 4}\naxes:\n  size: [1KiB, 2048, 4K]\n")
	jsonl := filepath.Join(filepath.Dir(file), "out.jsonl")
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", jsonl); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(jsonl)
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if want := []float64{1024, 2048, 4096}[i]; row["size"] != want {
			t.Errorf("row %d: size %#v, want the number %v", i, row["size"], want)
		}
	}
}

// TestSweepMachineFileInHash: a sweep's hash covers what its machine and
// noise-trace files hold, in the base and in the axes, so that rows run
// before such a file changed are not resumed into rows run after it (a
// new user's trial: a file whose bandwidth was edited between an
// interrupted run and its resume gave half the rows of each machine under
// one hash, exit 0).
func TestSweepMachineFileInHash(t *testing.T) {
	file := writeSweep(t, `
base: {machine: m.yaml, ranks: 4, verify: "off"}
axes:
  size: [1KiB, 1MiB]
`)
	dir := filepath.Dir(file)
	machine := filepath.Join(dir, "m.yaml")
	text, err := os.ReadFile("testdata/tapered-16.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(machine, text, 0o644)
	hash := func(file string) string {
		out, stderr, code := collsim(t, "sweep", file, "--dry-run")
		if code != 0 {
			t.Fatalf("dry run: exit %d: %s", code, stderr)
		}
		m := regexp.MustCompile(`sweep ([0-9a-f]{16})`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("dry run names no hash:\n%s", out)
		}
		return m[1]
	}
	before := hash(file)
	out := filepath.Join(dir, "out.csv")
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	edited := append(slices.Clone(text), []byte("# an edit that changes nothing still changes the file\n")...)
	os.WriteFile(machine, edited, 0o644)
	if after := hash(file); after == before {
		t.Fatalf("the machine file changed and the sweep's hash did not (%s)", after)
	}
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", out, "--resume"); code != 1 || !strings.Contains(stderr, "a machine or noise-trace file it names changed") {
		t.Errorf("resume after the machine file changed: exit %d, want 1 saying the sweep changed: %s", code, stderr)
	}
	os.WriteFile(machine, text, 0o644)
	if after := hash(file); after != before {
		t.Errorf("the machine file restored: hash %s, was %s", after, before)
	}

	// A machine among an axis's values, and a noise trace (run takes its
	// path as written: here an absolute one).
	trace := filepath.Join(dir, "noise.txt")
	os.WriteFile(trace, []byte("0\t100\n1000\t0\n"), 0o644)
	axes := filepath.Join(dir, "axes.yaml")
	os.WriteFile(axes, []byte("base: {ranks: 4, verify: \"off\", noise-trace: "+trace+"}\naxes:\n  machine: [small, m.yaml]\n"), 0o644)
	before = hash(axes)
	os.WriteFile(machine, edited, 0o644)
	if after := hash(axes); after == before {
		t.Errorf("a machine file among the axis's values changed and the hash did not")
	}
	os.WriteFile(machine, text, 0o644)
	os.WriteFile(trace, []byte("0\t200\n1000\t0\n"), 0o644)
	if after := hash(axes); after == before {
		t.Errorf("the noise trace changed and the hash did not")
	}
}
