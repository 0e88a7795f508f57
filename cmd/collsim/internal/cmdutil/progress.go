package cmdutil

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/collsim/collsim/sim"
)

// Progress shows how far a long simulation has got on stderr: nothing for
// the first ProgressDelay (most runs end before it), then one line that
// rewrites itself on a terminal, or, where the output is a file or a pipe
// (a batch job's log), a line every ProgressLogEvery.
type Progress struct {
	w        io.Writer
	terminal bool
	now      func() time.Time
	start    time.Time
	last     time.Time // of the last line printed
	shown    bool
	// The events rate is measured from rateAt, when rateEv events had
	// run: the first report, then each line. (Time before the first
	// report, reading a schedule, is not the simulation's.)
	rateAt time.Time
	rateEv uint64
	rated  bool
}

// How often a progress line appears.
const (
	ProgressDelay    = 2 * time.Second
	ProgressTerminal = 250 * time.Millisecond // between rewrites on a terminal
	ProgressLogEvery = 10 * time.Second       // between lines in a log
)

// IsTerminal reports whether f is a terminal (a character device).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Display returns the progress display of a command on streams.Err: a
// line after 2 s on a terminal (or with --progress in a log), nil (none)
// with --quiet. It never writes to streams.Out, so --json stays clean.
func Display(streams *IO, quiet, progress bool) *Progress {
	f, isFile := streams.Err.(*os.File)
	terminal := isFile && IsTerminal(f)
	if quiet || !terminal && !progress {
		return nil
	}
	return NewProgress(streams.Err, terminal, time.Now)
}

// NewProgress returns a display on w, started now; terminal says whether w
// is a terminal (rewrite one line) or a log (append lines). now is the
// clock, time.Now outside tests.
func NewProgress(w io.Writer, terminal bool, now func() time.Time) *Progress {
	t := now()
	return &Progress{w: w, terminal: terminal, now: now, start: t, last: t}
}

// due reports whether a line is due at t.
func (p *Progress) due(t time.Time) bool {
	every := ProgressLogEvery
	if p.terminal {
		every = ProgressTerminal
	}
	return t.Sub(p.start) >= ProgressDelay && (!p.shown || t.Sub(p.last) >= every)
}

// show prints line, in place on a terminal.
func (p *Progress) show(t time.Time, line string) {
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s\033[K", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.last, p.shown = t, true
}

// Reading is told how many of a file's total bytes have been read: a
// line while a big schedule loads.
func (p *Progress) Reading(name string, done, total int64) {
	t := p.now()
	if !p.due(t) {
		return
	}
	wall := t.Sub(p.start).Round(time.Second)
	if total <= 0 { // a pipe: its size is not known
		p.show(t, fmt.Sprintf("collsim: %s wall, reading %s: %.0f MB", wall, name, float64(done)/1e6))
		return
	}
	p.show(t, fmt.Sprintf("collsim: %s wall, reading %s: %.0f of %.0f MB (%.0f%%)",
		wall, name, float64(done)/1e6, float64(total)/1e6, 100*float64(done)/float64(total)))
}

// Writing is told how many bytes of an output have been written: a line
// while a big schedule is written (its size is not known ahead).
func (p *Progress) Writing(name string, done int64) {
	t := p.now()
	if !p.due(t) {
		return
	}
	wall := t.Sub(p.start)
	p.show(t, fmt.Sprintf("collsim: %s wall, writing %s: %.0f MB (%.0f MB/s)", wall.Round(time.Second), name, float64(done)/1e6, float64(done)/1e6/wall.Seconds()))
}

// Count is told how many of total items (simulations of a search) are
// done: a line when one is due. Call it on a timer as well as on each
// item, so that a line appears while long items run.
func (p *Progress) Count(name string, done, total int) {
	t := p.now()
	if !p.due(t) {
		return
	}
	p.show(t, fmt.Sprintf("collsim: %s wall, %s: %d of %d done", t.Sub(p.start).Round(time.Second), name, done, total))
}

// Update is a sim.Config.Progress: it prints when a line is due.
func (p *Progress) Update(s sim.Progress) {
	t := p.now()
	if !p.rated || s.Events < p.rateEv {
		// The first report of a run (of a list's next point, after Done),
		// or one whose events count from 0 again.
		p.rateAt, p.rateEv, p.rated = t, s.Events, true
		return // no rate yet
	}
	if !p.due(t) {
		return
	}
	rate := float64(s.Events-p.rateEv) / t.Sub(p.rateAt).Seconds()
	ops := fmt.Sprintf("%d ops", s.Ops)
	if s.OpsTotal > 0 {
		ops = fmt.Sprintf("%d of %d ops (%.0f%%)", s.Ops, s.OpsTotal, 100*float64(s.Ops)/float64(s.OpsTotal))
	}
	line := fmt.Sprintf("collsim: %s wall, simulated %s, %d events (%.2f M/s), %s, %d messages",
		t.Sub(p.start).Round(time.Second), Seconds(s.Now.Seconds()), s.Events, rate/1e6, ops, s.Messages)
	p.show(t, line)
	p.rateAt, p.rateEv = t, s.Events
}

// Done clears the line on a terminal, so that what is printed next (a
// result, a note, a point's row) starts on a clean line; in a log the
// lines stay. A later report shows the line again (the next point of a
// list).
func (p *Progress) Done() {
	if p.terminal && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
	p.rated = false // the next report is the first of another run
}

// Counter shows on p how many of total things (what: "strategies
// simulated") are done: report is told the count as each finishes, and a
// line is due every second too, so that it shows while long ones run.
// stop ends it. Both are no-ops when p is nil (no display).
func Counter(p *Progress, what string, total int) (report func(done int), stop func()) {
	if p == nil {
		return func(int) {}, func() {}
	}
	var mu sync.Mutex
	finished := 0
	report = func(done int) {
		mu.Lock()
		defer mu.Unlock()
		finished = done
		p.Count(what, done, total)
	}
	tick := time.NewTicker(time.Second)
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-tick.C:
				mu.Lock()
				p.Count(what, finished, total)
				mu.Unlock()
			case <-quit:
				return
			}
		}
	}()
	// stop waits for the ticker's goroutine, so that no line comes after
	// Done has cleared it.
	return report, func() {
		tick.Stop()
		close(quit)
		<-ended
		mu.Lock()
		p.Done()
		mu.Unlock()
	}
}
