package cmdutil

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/collsim/collsim/sim"
)

// A fake clock drives the display: nothing before 2 s, then a line at most
// every 250 ms on a terminal (rewritten in place, cleared at the end) or
// every 10 s in a log (kept).
func TestProgressLines(t *testing.T) {
	for _, c := range []struct {
		terminal bool
		lines    int // lines printed over the 30 s below
	}{
		// Reports every 100 ms from 0 to 30 s: from 2 s on, every 3rd
		// report is 300 ms after the last line (>= 250 ms): 2.0, 2.3, ...
		// 29.9 s is 94 lines.
		{true, 94},
		// In a log: 2, 12 and 22 s.
		{false, 3},
	} {
		var b strings.Builder
		clock := time.Unix(0, 0)
		p := NewProgress(&b, c.terminal, func() time.Time { return clock })
		for i := 1; i <= 300; i++ {
			clock = clock.Add(100 * time.Millisecond)
			p.Update(sim.Progress{Now: sim.Time(i) * sim.Microsecond, Events: uint64(i) * 1000, Ops: uint64(i), Messages: uint64(i)})
		}
		p.Done()
		out := b.String()
		var n int
		if c.terminal {
			n = strings.Count(out, "\r") - 1 // the last one clears
			if !strings.HasSuffix(out, "\r\033[K") || strings.Contains(out, "\n") {
				t.Errorf("terminal: not one line rewritten in place and cleared: %q", out[max(0, len(out)-200):])
			}
		} else {
			n = strings.Count(out, "\n")
			if strings.Contains(out, "\r") {
				t.Errorf("log: carriage returns in %q", out)
			}
		}
		if n != c.lines {
			t.Errorf("terminal %v: %d lines, want %d:\n%s", c.terminal, n, c.lines, out)
		}
		// The first line comes at 2 s: 20 reports of 1,000 events, and the
		// rate is over the 2 s since the start, 10,000 events/s.
		first := strings.SplitN(strings.TrimPrefix(out, "\r"), "\n", 2)[0]
		if want := "collsim: 2s wall, simulated 20µs, 20000 events (0.01 M/s), 20 ops, 20 messages"; !strings.HasPrefix(first, want) {
			t.Errorf("terminal %v: first line %q, want %q", c.terminal, first, want)
		}
	}
}

// A run shorter than the delay prints nothing, not even the clearing.
func TestProgressQuietForShortRuns(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, true, func() time.Time { return clock })
	clock = clock.Add(1999 * time.Millisecond)
	p.Update(sim.Progress{Events: 1})
	p.Done()
	if b.Len() != 0 {
		t.Fatalf("printed %q", b.String())
	}
}

// Reading a big schedule shows how much of it is read, on the same
// schedule of lines; the simulation's rate is then measured from its first
// report, not from the start (which the reading took).
func TestProgressReadingThenRun(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, false, func() time.Time { return clock })
	for done := int64(0); done <= 300e6; done += 10e6 { // 100 MB/s for 3 s
		clock = clock.Add(100 * time.Millisecond)
		p.Reading("s.goal", done, 300e6)
	}
	// The run: 1,000 events more every 100 ms, the first report at 3.2 s
	// (the rate's baseline: 1,000 events); the next line is due 10 s after
	// the first (at 2 s), so at 12 s, the 89th report: 89,000 events, and
	// 88,000 in the 8.8 s since the baseline, 10,000 events/s.
	for i := uint64(1); clock.Before(time.Unix(12, 0)); i++ {
		clock = clock.Add(100 * time.Millisecond)
		p.Update(sim.Progress{Events: i * 1000, Ops: i, OpsTotal: 400, Messages: i})
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"collsim: 2s wall, reading s.goal: 190 of 300 MB (63%)",
		"collsim: 12s wall, simulated 0s, 89000 events (0.01 M/s), 89 of 400 ops (22%), 89 messages",
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %q, want %q", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: %q, want %q", i, lines[i], want[i])
		}
	}
}

// TestProgressWriting: 50 MB written every 100 ms for 12.5 s, in a log:
// the first line at 2 s (19 writes, 950 MB: 475 MB/s), the next 10 s
// later (119 writes, 5950 MB over 12 s: 496 MB/s, rounded).
func TestProgressWriting(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, false, func() time.Time { return clock })
	for n := int64(0); clock.Before(time.Unix(12, 500e6)); {
		clock = clock.Add(100 * time.Millisecond)
		n += 50e6
		p.Writing("big.goal", n-50e6)
	}
	want := "collsim: 2s wall, writing big.goal: 950 MB (475 MB/s)\ncollsim: 12s wall, writing big.goal: 5950 MB (496 MB/s)\n"
	if b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
}

// A list of points runs one simulation after another on one display: the
// line is cleared before each point's row, shown again for the next
// point, and the next point's rate is measured from its own first report
// (its events count from 0 again; measured from the last point's count,
// the rate had wrapped around to 49945395643877.70 M/s).
func TestProgressAcrossPoints(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, true, func() time.Time { return clock })
	run := func(events uint64) {
		for e := uint64(0); e <= events; e += events / 10 {
			p.Update(sim.Progress{Events: e})
			clock = clock.Add(time.Second)
		}
	}
	run(10e6) // 1 M events a second
	p.Done()
	b.WriteString("ROW 1\n")
	run(20e6) // 2 M events a second
	p.Done()
	out := b.String()
	first, second, ok := strings.Cut(out, "ROW 1\n")
	if !ok || !strings.HasSuffix(first, "\r\033[K") || !strings.HasSuffix(second, "\r\033[K") {
		t.Fatalf("the line is not cleared before the row and at the end: %q", out)
	}
	for i, c := range []struct{ lines, rate string }{{first, "1.00"}, {second, "2.00"}} {
		rates := regexp.MustCompile(`\(([^ ]+) M/s\)`).FindAllStringSubmatch(c.lines, -1)
		if len(rates) == 0 {
			t.Fatalf("point %d: no rate in %q", i+1, c.lines)
		}
		for _, r := range rates {
			if r[1] != c.rate {
				t.Fatalf("point %d: a rate of %s M/s, want %s: %q", i+1, r[1], c.rate, c.lines)
			}
		}
	}
}

// A schedule read from a pipe has no known size: the line says how much
// is read, without a total or a share.
func TestProgressReadingAPipe(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, false, func() time.Time { return clock })
	clock = clock.Add(3 * time.Second)
	p.Reading("/dev/stdin", 200e6, 0)
	if got, want := b.String(), "collsim: 3s wall, reading /dev/stdin: 200 MB\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A point too short to show a line leaves no rate behind: the next point's
// rate is measured from its own first report (it was measured from the
// short point's, 2.50 M/s here against the 10.00 M/s it ran at).
func TestProgressAfterAShortPoint(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, true, func() time.Time { return clock })
	for e := uint64(0); e < 10e6; e += 1e6 { // 1.5 s, no line
		p.Update(sim.Progress{Events: e})
		clock = clock.Add(150 * time.Millisecond)
	}
	p.Done()
	for e := uint64(0); e <= 40e6; e += 1e6 { // 10 M events a second
		p.Update(sim.Progress{Events: e})
		clock = clock.Add(100 * time.Millisecond)
	}
	rates := regexp.MustCompile(`\(([^ ]+) M/s\)`).FindAllStringSubmatch(b.String(), -1)
	if len(rates) == 0 {
		t.Fatalf("no line: %q", b.String())
	}
	for _, r := range rates {
		if r[1] != "10.00" {
			t.Fatalf("a rate of %s M/s, want 10.00: %q", r[1], b.String())
		}
	}
}
