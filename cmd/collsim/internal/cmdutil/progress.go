package cmdutil

import (
	"fmt"
	"io"
	"os"
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
	lastEv   uint64
	shown    bool
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

// NewProgress returns a display on w, started now; terminal says whether w
// is a terminal (rewrite one line) or a log (append lines). now is the
// clock, time.Now outside tests.
func NewProgress(w io.Writer, terminal bool, now func() time.Time) *Progress {
	t := now()
	return &Progress{w: w, terminal: terminal, now: now, start: t, last: t}
}

// Update is a sim.Config.Progress: it prints when a line is due.
func (p *Progress) Update(s sim.Progress) {
	t := p.now()
	every := ProgressLogEvery
	if p.terminal {
		every = ProgressTerminal
	}
	if t.Sub(p.start) < ProgressDelay || p.shown && t.Sub(p.last) < every {
		return
	}
	rate := float64(s.Events-p.lastEv) / t.Sub(p.last).Seconds()
	line := fmt.Sprintf("collsim: %s wall, simulated %s, %d events (%.2f M/s), %d ops, %d messages",
		t.Sub(p.start).Round(time.Second), Seconds(s.Now.Seconds()), s.Events, rate/1e6, s.Ops, s.Messages)
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s\033[K", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.last, p.lastEv, p.shown = t, s.Events, true
}

// Done clears the line on a terminal, so that the result starts on a clean
// line; in a log the lines stay.
func (p *Progress) Done() {
	if p.terminal && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
