package main

import (
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTrace reads back the Chrome trace and the timeline of runs and
// checks them against the runs' own report: one slice per op, one arrow
// per message, each rank's last slice ending at its finish time, no two
// slices of one track overlapping; and for a 2-rank bcast of 1 KiB on the
// small machine, the one message's times derived by hand.
func TestTrace(t *testing.T) {
	dir := t.TempDir()
	for _, c := range [][]string{
		{"-a", "ring", "-n", "6", "-s", "96KiB"},
		{"-c", "alltoall", "-a", "linear", "-n", "5", "-s", "40KiB"}, // concurrent sends: overlapping ops on a rank
		{"-c", "bcast", "-a", "binomial", "-n", "7", "-s", "1MiB", "--network", "flow", "-m", "fattree-1024"},
	} {
		tr, svg := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.svg")
		out, stderr, code := collsim(t, append([]string{"run", "--json", "--trace", tr, "--timeline", svg}, c...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, stderr)
		}
		var res struct {
			Ranks      int     `json:"ranks"`
			Time       float64 `json:"time_s"`
			FinishMin  float64 `json:"finish_min_s"`
			Ops        int     `json:"ops"`
			Messages   int     `json:"messages"`
			Collective string  `json:"collective"`
		}
		json.Unmarshal([]byte(out), &res)
		data, _ := os.ReadFile(tr)
		var file struct {
			TraceEvents []struct {
				Ph   string          `json:"ph"`
				Tid  int             `json:"tid"`
				Name string          `json:"name"`
				Ts   float64         `json:"ts"`
				Dur  float64         `json:"dur"`
				Args json.RawMessage `json:"args"`
			} `json:"traceEvents"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			t.Fatalf("%v: the trace is not JSON: %v", c, err)
		}
		rankOf := map[int]int{} // thread -> rank, from the thread names
		type span struct{ start, end float64 }
		tracks := map[int][]span{}
		var slicesN, starts, finishes int
		var last float64
		var reductions []span // each with its track
		var reduceTids []int
		reduced := 0.0
		lastOf := map[int]float64{}
		for _, e := range file.TraceEvents {
			switch e.Ph {
			case "M":
				var a struct{ Name string }
				json.Unmarshal(e.Args, &a)
				var r int
				if _, err := fmt.Sscanf(a.Name, "rank %d", &r); err == nil && e.Name == "thread_name" {
					rankOf[e.Tid] = r
				}
			case "X":
				if e.Name == "reduce" {
					reductions, reduceTids = append(reductions, span{e.Ts, e.Ts + e.Dur}), append(reduceTids, e.Tid)
					reduced += e.Dur
					continue
				}
				slicesN++
				tracks[e.Tid] = append(tracks[e.Tid], span{e.Ts, e.Ts + e.Dur})
				last = math.Max(last, e.Ts+e.Dur)
				lastOf[rankOf[e.Tid]] = math.Max(lastOf[rankOf[e.Tid]], e.Ts+e.Dur)
			case "s":
				starts++
			case "f":
				finishes++
			}
		}
		if slicesN != res.Ops || starts != res.Messages || finishes != res.Messages {
			t.Errorf("%v: %d slices and %d/%d arrow ends, want %d ops and %d messages", c, slicesN, starts, finishes, res.Ops, res.Messages)
		}
		if math.Abs(last-res.Time*1e6) > 1e-6*res.Time*1e6 {
			t.Errorf("%v: the last slice ends at %g µs, the run at %g µs", c, last, res.Time*1e6)
		}
		first := math.Inf(1)
		for _, v := range lastOf {
			first = math.Min(first, v)
		}
		if len(lastOf) != res.Ranks || math.Abs(first-res.FinishMin*1e6) > 1e-6*res.Time*1e6 {
			t.Errorf("%v: %d ranks' tracks, the first to finish at %g µs; want %d and %g µs", c, len(lastOf), first, res.Ranks, res.FinishMin*1e6)
		}
		// A reducing receive's reduction is a slice nested at its end.
		for i, r := range reductions {
			if !slices.ContainsFunc(tracks[reduceTids[i]], func(v span) bool { return v.start <= r.start+1e-9 && math.Abs(v.end-r.end) < 1e-6 }) {
				t.Errorf("%v: a reduction at %g..%g µs ends no receive of its track", c, r.start, r.end)
			}
		}
		// By hand: each of the 6 ring ranks reduces 5 blocks of 16 KiB at
		// the small machine's 10 GB/s, 8.192 µs: 49.152 µs in all.
		if want := map[string]float64{"allreduce": 49.152}[res.Collective]; math.Abs(reduced-want) > 1e-6 {
			t.Errorf("%v: reductions take %g µs in all, want %g", c, reduced, want)
		}
		for tid, spans := range tracks {
			slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
			for i := 1; i < len(spans); i++ {
				if spans[i].start < spans[i-1].end-1e-9 {
					t.Errorf("%v: track %d: a slice at %g µs starts before the one before ends (%g µs)", c, tid, spans[i].start, spans[i-1].end)
					break
				}
			}
		}
		// The timeline: well-formed SVG, a labelled row per rank, a bar
		// (with its tooltip) per op.
		pic, _ := os.ReadFile(svg)
		if err := xml.Unmarshal(pic, new(struct{})); err != nil {
			t.Errorf("%v: the timeline is not XML: %v", c, err)
		}
		if n := strings.Count(string(pic), "<title>") - strings.Count(string(pic), "<title>reduction"); n != res.Ops {
			t.Errorf("%v: %d bars, want %d ops", c, n, res.Ops)
		}
		if n := strings.Count(string(pic), "<title>reduction"); n != len(reductions) {
			t.Errorf("%v: %d reductions drawn, %d in the trace", c, n, len(reductions))
		}
		// The legend names reductions only where the chart draws some.
		if named := strings.Contains(string(pic), ">calc, reduction<"); named != (len(reductions) > 0) {
			t.Errorf("%v: the legend names reductions %t, with %d drawn", c, named, len(reductions))
		}
		if !strings.Contains(string(pic), ">rank 0<") || !strings.Contains(string(pic), ">simulated time<") {
			t.Errorf("%v: the timeline names no ranks or no time axis", c)
		}
	}

	// By hand: a 1 KiB bcast from rank 0 to rank 1 on the small machine
	// (1 µs host to host, 12.5 GB/s, no host overhead, eager): the send
	// starts at 0, takes 1024 B / 12.5 GB/s = 81.92 ns to leave, and the
	// receive, posted at 0, ends when the last byte lands, 1 µs later.
	tr := filepath.Join(dir, "b.json")
	if _, stderr, code := collsim(t, "run", "-c", "bcast", "-a", "binomial", "-n", "2", "-s", "1KiB", "--trace", tr); code != 0 {
		t.Fatal(stderr)
	}
	data, _ := os.ReadFile(tr)
	text := string(data)
	for _, want := range []string{`"name":"send","cat":"op","ts":0,"dur":0.08192,"args":{"bytes":1024,"peer":1,"tag":`, `"name":"recv","cat":"op","ts":0,"dur":1.08192,"args":{"bytes":1024,"peer":0,"tag":`} {
		if !strings.Contains(text, want) {
			t.Errorf("the trace has no %s:\n%s", want, text)
		}
	}
	// Reductions as noise stretches them (they were drawn at their own
	// cost: an audit): a 4-rank ring of 1 MiB on small reduces 3 blocks of
	// 256 KiB a rank at 10 GB/s, 4 x 78.6432 us = 314.5728 us; with every
	// rank a 3x straggler, 943.7184 us.
	for _, c := range []struct {
		args []string
		want float64
	}{{nil, 314.5728}, {[]string{"--stragglers", "4:3"}, 943.7184}} {
		if _, stderr, code := collsim(t, append([]string{"run", "-a", "ring", "-n", "4", "-s", "1MiB", "--trace", tr}, c.args...)...); code != 0 {
			t.Fatal(stderr)
		}
		data, _ := os.ReadFile(tr)
		var file struct {
			TraceEvents []struct {
				Name string  `json:"name"`
				Dur  float64 `json:"dur"`
			} `json:"traceEvents"`
		}
		json.Unmarshal(data, &file)
		sum := 0.0
		for _, e := range file.TraceEvents {
			if e.Name == "reduce" {
				sum += e.Dur
			}
		}
		if math.Abs(sum-c.want) > 1e-6 {
			t.Errorf("%v: reductions take %g us in all, want %g", c.args, sum, c.want)
		}
	}
	// One run only, and not with a GOAL file.
	if _, stderr, code := collsim(t, "run", "-n", "2,4", "--trace", tr); code != 2 || !strings.Contains(stderr, "record one run") {
		t.Errorf("two runs traced: exit %d: %s", code, stderr)
	}
	if _, stderr, code := collsim(t, "run", "-n", "300", "-m", "fattree-1024", "--timeline", filepath.Join(dir, "big.svg")); code != 1 || !strings.Contains(stderr, "at most 256") {
		t.Errorf("a 300-rank timeline: exit %d: %s", code, stderr)
	}
}

// TestLinksOverTime checks the busiest links' utilization over time
// against the links' own totals, which the flow model counts separately
// (bytes routed over each link): the spans' utilization times bandwidth
// times span adds up to the link's bytes, and no span is above 1 (a link
// carries at most its bandwidth). The CSV draws as a heat map, and the
// trace carries a counter track per link.
func TestLinksOverTime(t *testing.T) {
	dir := t.TempDir()
	csvFile, tr := filepath.Join(dir, "links.csv"), filepath.Join(dir, "t.json")
	out, stderr, code := collsim(t, "run", "-c", "alltoall", "-n", "64", "-s", "1MiB", "-m", "../../configs/examples/fattree-1024-tapered.yaml", "--network", "flow",
		"--links", "6", "--links-csv", csvFile, "--link-bins", "40", "--json", "--trace", tr, "--verify", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Time  float64 `json:"time_s"`
		Links []struct {
			From, To string
			Bytes    float64 `json:"bytes"`
		} `json:"busiest_links"`
	}
	json.Unmarshal([]byte(out), &res)
	data, _ := os.ReadFile(csvFile)
	_, rows := readRows(t, string(data))
	if len(res.Links) != 6 || len(rows) != 6*40 {
		t.Fatalf("%d links and %d rows, want 6 and 240", len(res.Links), len(rows))
	}
	const bandwidth = 12.5e9 // the config's 100 Gbit/s links
	for i, l := range res.Links {
		var bytes float64
		for b := range 40 {
			r := rows[i*40+b]
			u, _ := strconv.ParseFloat(r["utilization"], 64)
			start, _ := strconv.ParseFloat(r["start_s"], 64)
			end, _ := strconv.ParseFloat(r["end_s"], 64)
			if r["from"] != l.From || r["to"] != l.To || u < 0 || u > 1 {
				t.Errorf("row %d: %v (link %s -> %s)", i*40+b, r, l.From, l.To)
			}
			bytes += u * bandwidth * (end - start)
		}
		if math.Abs(bytes-l.Bytes) > 1e-6*l.Bytes {
			t.Errorf("link %s -> %s: %g bytes over time, %g in all", l.From, l.To, bytes, l.Bytes)
		}
	}
	trace, _ := os.ReadFile(tr)
	if n := strings.Count(string(trace), `"ph":"C"`); n != 6*40 {
		t.Errorf("%d counter events, want 240", n)
	}
	png := filepath.Join(dir, "h.png")
	if _, stderr, code := collsim(t, "plot", csvFile, "--heatmap", "-o", png); code != 0 {
		t.Errorf("heat map: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"--link-bins", "5"}, {"--timeline", filepath.Join(dir, "x.png")}} {
		if _, stderr, code := collsim(t, append([]string{"run", "-n", "4"}, args...)...); code != 2 {
			t.Errorf("run %v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	if _, stderr, code := collsim(t, "run", "--links-csv", csvFile); code != 2 || !strings.Contains(stderr, "--links") {
		t.Errorf("--links-csv without --links: exit %d: %s", code, stderr)
	}
}

// TestRunSaysConditions: run's JSON says which routing, faults and noise
// a run had, as given.
func TestRunSaysConditions(t *testing.T) {
	out, stderr, code := collsim(t, "run", "-m", "fattree-1024", "-n", "16", "-s", "64KiB", "--network", "flow", "--routing", "ecmp",
		"--fail", "s1.0->s0.0", "--degrade", "s0.1->s1.1:0.5", "--noise-periodic", "1ms:25us", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Routing string   `json:"routing"`
		Faults  []string `json:"faults"`
		Noise   string   `json:"noise_model"`
	}
	json.Unmarshal([]byte(out), &r)
	// fattree-1024's links carry 12.5 GB/s: half is 6.25.
	if r.Routing != "ecmp" || !slices.Equal(r.Faults, []string{"failed s0.0->s1.0", "degraded s0.1->s1.1 to 6.25GB/s"}) || r.Noise != "a detour of 25µs in every 1ms (2.5% of CPU time)" {
		t.Errorf("%+v", r)
	}
	// A config's own degraded links are faults too.
	cfg := filepath.Join(t.TempDir(), "slow.yaml")
	os.WriteFile(cfg, []byte("name: slow\nnetwork:\n  fat_tree: {k: 4, levels: 2, link: {bandwidth: 1GB/s, latency: 1us}}\nfaults:\n  degraded: {s0.0->s1.0: 0.25}\n"), 0o644)
	out, stderr, code = collsim(t, "run", "-m", cfg, "-n", "4", "--network", "flow", "--json")
	r.Faults = nil
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || !slices.Equal(r.Faults, []string{"degraded s0.0->s1.0 to 250MB/s"}) {
		t.Errorf("a config's degraded link: exit %d, faults %q: %s", code, r.Faults, stderr)
	}
	// A config's routing and jitter, which only the flow network models,
	// are said to be left out of an analytic run (the flags are refused).
	df := filepath.Join(t.TempDir(), "df.yaml")
	os.WriteFile(df, []byte("name: dfu\nnetwork:\n  dragonfly: {p: 2, a: 4, h: 2, g: 9, host_link: {bandwidth: 10GB/s, latency: 100ns}, local_link: {bandwidth: 10GB/s, latency: 100ns}, global_link: {bandwidth: 5GB/s, latency: 300ns}}\n  routing: ugal\nnoise:\n  jitter: {normal: 200ns}\n"), 0o644)
	if out, stderr, code := collsim(t, "run", "-m", df, "-n", "16"); code != 0 || !strings.Contains(stderr, "dfu asks for ugal routing and link jitter, which only --network flow models") || !strings.Contains(out, "routing      minimal") {
		t.Errorf("analytic run of a ugal, jittered config: exit %d: %s%s", code, out, stderr)
	}
	if _, stderr, code := collsim(t, "run", "-m", df, "-n", "16", "--network", "flow"); code != 0 || strings.Contains(stderr, "only --network flow") {
		t.Errorf("flow run of a ugal, jittered config: exit %d: %s", code, stderr)
	}
	// Stragglers slow CPU work; a bcast on small has none (o 0, nothing
	// to reduce): the note says they change nothing, and the time shows
	// it; an allreduce reduces, and slows.
	for _, c := range []struct {
		coll    string
		nothing bool
	}{{"bcast", true}, {"allreduce", false}} {
		quiet, slow := simTime(t, "-c", c.coll, "-n", "8"), simTime(t, "-c", c.coll, "-n", "8", "--stragglers", "2:10")
		_, stderr, _ := collsim(t, "run", "-c", c.coll, "-n", "8", "--stragglers", "2:10")
		if noted := strings.Contains(stderr, "stragglers do their CPU work"); noted != c.nothing || (quiet == slow) != c.nothing {
			t.Errorf("%s with stragglers: %v s against %v s quiet, note %v: %s", c.coll, slow, quiet, noted, stderr)
		}
	}
	out, _, _ = collsim(t, "run", "-n", "4", "--json")
	r.Faults, r.Noise = nil, ""
	json.Unmarshal([]byte(out), &r)
	if r.Routing != "minimal" || r.Faults != nil || r.Noise != "" {
		t.Errorf("a plain run: %+v", r)
	}
}
