package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReport writes a sweep's report and checks what it holds: the
// commands that reproduce it (each point's collsim run line gives the
// point's row), the plots, the table and the machine; then opens it in
// headless Chromium (skipped with a message where Chromium is missing;
// .ci/run installs it), which must log no console message, and
// screenshots it.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(file, []byte("base: {ranks: 8, verify: \"off\"}\naxes:\n  machine: [small, fattree-1024]\n  algo: [ring, recursive_doubling]\n  size: 1KiB..1MiB\n  link.bandwidth: [100Gbit/s, 200Gbit/s]\n"), 0o644)
	results := filepath.Join(dir, "results.csv")
	if _, stderr, code := collsim(t, "sweep", file, "-q", "-o", results); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	html := filepath.Join(dir, "report.html")
	if _, stderr, code := collsim(t, "report", results, "--sweep", file, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(html)
	page := string(data)
	for _, want := range []string{
		"collsim sweep " + file + " -o " + results,
		// The link bandwidth, left over, gets plots of its own.
		"<h2>time_s against size, where link.bandwidth=100Gbit/s</h2>", "<h2>busbw_GBps against size, where link.bandwidth=200Gbit/s</h2>", "<h2>Results</h2>",
		// The algorithms compared are the series (a sweep of two
		// libraries over two collectives drew each collective's line as
		// the mean of the libraries': a new user's trial).
		"axis link.bandwidth", "--series algo --facet machine",
		// Each machine as its points built it, the swept link bandwidth
		// applied (the base machine alone was described: a new user's
		// trial): small's 64 hosts cut in half cross 32 links, 400 GB/s
		// at 100 Gbit/s and 800 at 200.
		"<h2>Machine small, link.bandwidth=100Gbit/s</h2>", "<h2>Machine small, link.bandwidth=200Gbit/s</h2>",
		"<h2>Machine fattree-1024, link.bandwidth=100Gbit/s</h2>", "<h2>Machine fattree-1024, link.bandwidth=200Gbit/s</h2>",
		"<td>400GB/s each way</td>", "<td>800GB/s each way</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report has no %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n < 8 {
		t.Errorf("%d pictures, want 4 plots and 4 machines", n)
	}
	// Each point's command line runs that point: three of them, against
	// their rows.
	_, rows := readRows(t, func() string { b, _ := os.ReadFile(results); return string(b) }())
	command := regexp.MustCompile(`<td>(collsim run [^<]*)</td>`)
	lines := command.FindAllStringSubmatch(page, -1)
	if len(lines) != len(rows) {
		t.Fatalf("%d command lines for %d rows", len(lines), len(rows))
	}
	for _, i := range []int{0, 17, len(rows) - 1} {
		args := strings.Fields(strings.ReplaceAll(lines[i][1], "&#43;", "+"))[1:]
		out, stderr, code := collsim(t, append(args, "--json")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", lines[i][1], code, stderr)
		}
		got := regexp.MustCompile(`"time_s": ([^,]+),`).FindStringSubmatch(out)
		if got == nil || !sameNumber(rows[i]["time_s"], mustFloat(got[1])) {
			t.Errorf("point %d: %s gives %v s, the row %s s", i, lines[i][1], got, rows[i]["time_s"])
		}
	}
	if _, stderr, code := collsim(t, "report", results, "--sweep", writeSweep(t, "axes: {ranks: [2]}\n"), "-o", html); code != 2 || !strings.Contains(stderr, "not of that sweep") {
		t.Errorf("another sweep's file: exit %d: %s", code, stderr)
	}

	for _, args := range [][]string{{"--max-rows", "-5"}, {"-o", filepath.Join(dir, "x.pdf")}} {
		if _, stderr, code := collsim(t, append([]string{"report", results}, args...)...); code != 2 {
			t.Errorf("report %v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	if _, stderr, code := collsim(t, "merge"); code != 2 {
		t.Errorf("merge with no parts: exit %d, want 2: %s", code, stderr)
	}
	if _, stderr, code := collsim(t, "merge", results, "-o", filepath.Join(dir, "m.jsonl")); code != 2 || !strings.Contains(stderr, "would hold jsonl, but the parts are csv") {
		t.Errorf("merge of CSV into .jsonl: exit %d: %s", code, stderr)
	}

	chromium := browser(t)
	shot := filepath.Join(dir, "report.png")
	if logs := openInChromium(t, chromium, html, shot); len(logs) > 0 {
		t.Errorf("the report logs to the console:\n%s", strings.Join(logs, "\n"))
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("no screenshot of the report (%v)", err)
	}
	// A study's page: its tables, its plot and its machine.
	study := filepath.Join(dir, "lp.html")
	if _, stderr, code := collsim(t, "study", "lp", "-n", "2..16", "-o", dir, "--html", study); code != 0 {
		t.Fatalf("study lp --html: exit %d: %s", code, stderr)
	}
	text, _ := os.ReadFile(study)
	for _, want := range []string{"collsim study lp --out " + dir + " --ranks 2..16", "chain (LP): time at", "<h2>Plot study-lp.svg</h2>", "<h2>Machine fattree-1024</h2>"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the study's page has no %q", want)
		}
	}
	if logs := openInChromium(t, chromium, study, filepath.Join(dir, "lp.png")); len(logs) > 0 {
		t.Errorf("the study's page logs to the console:\n%s", strings.Join(logs, "\n"))
	}
	// The check can fail: a page with a script error is caught.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte("<!DOCTYPE html><title>x</title><script>undefinedFunction();</script>"), 0o644)
	if logs := openInChromium(t, chromium, bad, filepath.Join(dir, "bad.png")); len(logs) == 0 {
		t.Error("a page with a script error logged nothing: the console check sees nothing")
	}
}

// browser is Chromium's path, or the test skips saying how to get it.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("headless Chromium not found: install Debian's chromium package (.ci/run does) to open the report")
	return ""
}

// openInChromium loads page in headless Chromium, screenshots it, and
// returns the console messages it logged (script errors among them).
func openInChromium(t *testing.T, chromium, page, shot string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr", "--v=0", "--window-size=1280,2000", "--screenshot="+shot, "file://"+page)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	var logs []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			logs = append(logs, line)
		}
	}
	return logs
}

func mustFloat(s string) any {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return f
}

// TestReportPicksTheAxisWithMostValues: a table of a user's own, with the
// sweep file's names (algo, size), is plotted against size, its axis of
// most values (5 sizes against 3 rank counts), as --help says; it was
// plotted against ranks, averaging over the sizes.
func TestReportPicksTheAxisWithMostValues(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("algo,size,ranks,time_s\n")
	for _, a := range []string{"ring", "rabenseifner"} {
		for _, r := range []int{8, 16, 64} {
			for i, s := range []int{8, 1024, 65536, 1048576, 16777216} {
				fmt.Fprintf(&b, "%s,%d,%d,%g\n", a, s, r, float64(r*(i+1))*1e-6)
			}
		}
	}
	in, out := filepath.Join(dir, "own.csv"), filepath.Join(dir, "own.html")
	os.WriteFile(in, []byte(b.String()), 0o644)
	if _, stderr, code := collsim(t, "report", in, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, _ := os.ReadFile(out)
	if !strings.Contains(string(html), "against size") || strings.Contains(string(html), "against ranks") {
		t.Errorf("the report's plots are not against size")
	}
}

// Axes left over after the x, the series and the panels get figures of
// their own, a pair for each value, not a line through the mean of rows
// that differ in them (a new user's trial: the README's taper sweep drew
// allreduce and alltoall as one line). Here x is size, the series algo,
// the panels ranks; collective is left over.
func TestReportSplitsLeftoverAxes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("collective,algo,ranks,size,time_s\n")
	for ci, c := range []string{"allreduce", "alltoall"} {
		for _, a := range []string{"ring", "bruck"} {
			for _, r := range []int{8, 16} {
				for i, s := range []int{8, 1024, 65536} {
					fmt.Fprintf(&b, "%s,%s,%d,%d,%g\n", c, a, r, s, float64((ci+1)*r*(i+1))*1e-6)
				}
			}
		}
	}
	in, out := filepath.Join(dir, "own.csv"), filepath.Join(dir, "own.html")
	os.WriteFile(in, []byte(b.String()), 0o644)
	if _, stderr, code := collsim(t, "report", in, "-o", out, "--x", "size", "--series", "algo", "--facet", "ranks"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, _ := os.ReadFile(out)
	for _, want := range []string{"time_s against size, where collective=allreduce", "time_s against size, where collective=alltoall", "--where collective=alltoall"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	if strings.Contains(string(html), "the rows differ in") {
		t.Error("the report still draws rows of two collectives as one line")
	}

	// At most 8 sets of figures: algorithm is the series, collective the
	// panels; of the two axes left, of 3 values each, machine splits (3
	// sets) and ranks, which would make 9, is drawn through its mean,
	// said so; algo, of one value, never splits.
	b.Reset()
	b.WriteString("collective,algorithm,machine,ranks,algo,size,time_s\n")
	for _, c := range []string{"allreduce", "alltoall", "bcast"} {
		for _, a := range []string{"ring", "bruck", "linear"} {
			for _, m := range []string{"a", "b", "c"} {
				for _, r := range []int{8, 16, 32} {
					for i, s := range []int{8, 1024, 65536} {
						fmt.Fprintf(&b, "%s,%s,%s,%d,ring,%d,%g\n", c, a, m, r, s, float64(r*(i+1))*1e-6)
					}
				}
			}
		}
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	if _, stderr, code := collsim(t, "report", in, "-o", out, "--x", "size"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, _ = os.ReadFile(out)
	if n := strings.Count(string(html), "<h2>time_s against size"); n != 3 || strings.Contains(string(html), "algo=ring") || !strings.Contains(string(html), "the rows differ in") {
		t.Errorf("two leftover axes of 3 values: %d sets of time plots (want 3, split by machine, ranks averaged and said so; none by the one-valued algo)", n)
	}
}

// A sweep whose every point failed still gets its report, the errors in
// its table, where it was refused ("no row has numbers": a new user's
// trial).
func TestReportOfFailedPoints(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(file, []byte("base: {machine: small, ranks: 8}\naxes:\n  algo: [ring, recursive_doubling]\n  size: [8, 1KiB]\n  network.fat_tree.taper: [2]\n"), 0o644)
	results := filepath.Join(dir, "results.csv")
	if _, _, code := collsim(t, "sweep", file, "-q", "-o", results); code != 1 {
		t.Fatalf("sweep of failing points: exit %d, want 1", code)
	}
	html := filepath.Join(dir, "report.html")
	if _, stderr, code := collsim(t, "report", results, "--sweep", file, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), "every point failed") || !strings.Contains(string(page), "<h2>Results</h2>") {
		t.Errorf("the report does not say every point failed, with the results")
	}
}

// The example sweep file of sweep --help runs (it zipped an axis it did
// not have, and swept segment where no algorithm took one: a new user's
// trial): its lines between "A sweep file:" and the next paragraph, as a
// file, pass a dry run.
func TestSweepHelpExampleRuns(t *testing.T) {
	help, _, code := collsim(t, "sweep", "--help")
	if code != 0 {
		t.Fatalf("sweep --help: exit %d", code)
	}
	_, rest, ok := strings.Cut(help, "A sweep file:\n\n")
	example, _, ok2 := strings.Cut(rest, "\n\n")
	if !ok || !ok2 {
		t.Fatalf("no example sweep file in:\n%s", help)
	}
	var lines []string
	for _, l := range strings.Split(example, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	file := filepath.Join(t.TempDir(), "study.yaml")
	os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if out, stderr, code := collsim(t, "sweep", file, "--dry-run"); code != 0 || !strings.Contains(out, "points") {
		t.Errorf("the help's sweep file: exit %d: %s%s", code, out, stderr)
	}
}

// A results table's machine files are found beside it, as a sweep names
// them relative to its file, from any working directory (it looked in the
// working directory only: "Not drawn: sub/m.yaml ...": a new user's
// trial).
func TestReportFindsMachinesBesideTheTable(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "m.yaml"), []byte("name: mine\nnetwork:\n  crossbar: {hosts: 4, link: {bandwidth: 1GB/s, latency: 1us}}\n"), 0o644)
	results := filepath.Join(dir, "r.csv")
	os.WriteFile(results, []byte("machine,size,time_s\nsub/m.yaml,8,0.001\nsub/m.yaml,16,0.002\n"), 0o644)
	html := filepath.Join(dir, "r.html")
	if _, stderr, code := collsim(t, "report", results, "-o", html); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, _ := os.ReadFile(html)
	if strings.Contains(string(page), "Not drawn") || !strings.Contains(string(page), "crossbar 4 hosts") {
		t.Errorf("the machine beside the table was not described")
	}
}
