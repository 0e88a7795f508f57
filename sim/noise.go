package sim

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/collsim/collsim/sim/lines"
)

// Noise is OS noise read from a trace of detours: lines "start<TAB>duration"
// in nanoseconds, '#' comments (the format LogGOPSim reads). The trace
// repeats with the period of its last detour's start. Each rank starts at
// its own seeded random offset into the trace, or all at one offset when
// CoScheduled.
//
// A CPU interval [t, t+d) is stretched by the rest of a detour already
// running at t plus every detour that starts in (t, t+d], wrapping around
// the trace; the detours that fall into the stretch itself are not added
// again (as LogGOPSim does). Calcs, the o of every send and of every
// received message are stretched.
type Noise struct {
	starts, durs []Time
	period       Time // 0: no detours (stragglers only)
	CoScheduled  bool
	offset       []Time // per rank, set when a run starts
	// Stragglers ranks, drawn from the seed when a run starts, run every
	// CPU interval Factor times as long (a slow or overloaded node).
	Stragglers int
	Factor     float64
	slow       []bool // per rank, set when a run starts
	// longest is a trace's longest detour, written at longestAt
	// ("file:line").
	longest   Time
	longestAt string
}

// Detours reports whether the noise has OS detours (else stragglers
// only, which stretch CPU work and leave a rank that does none alone).
func (n *Noise) Detours() bool { return n != nil && n.period > 0 }

// Describe says what the noise is, in a line: its detours (how many in
// how long a period, and how much CPU time they take) and stragglers.
func (n *Noise) Describe() string {
	if n == nil {
		return ""
	}
	var parts []string
	if n.period > 0 {
		var busy Time
		for _, d := range n.durs {
			busy += d
		}
		co := ""
		if n.CoScheduled {
			co = ", co-scheduled (every rank at one phase)"
		}
		what := fmt.Sprintf("%d detours, %v of CPU in all,", len(n.durs), busy)
		if len(n.durs) == 1 {
			what = fmt.Sprintf("a detour of %v", busy)
		}
		parts = append(parts, fmt.Sprintf("%s in every %v (%.3g%% of CPU time)%s", what, n.period, 100*busy.Seconds()/n.period.Seconds(), co))
	}
	if n.Stragglers > 0 {
		who := fmt.Sprintf("%d stragglers", n.Stragglers)
		if n.Stragglers == 1 {
			who = "1 straggler"
		}
		parts = append(parts, fmt.Sprintf("%s %gx slower", who, n.Factor))
	}
	return strings.Join(parts, "; ")
}

// LongestDetour returns a trace's longest detour and where it is written
// ("file:line"), for naming it when a run passes the clock's limit; "" for
// noise that is not from a trace.
func (n *Noise) LongestDetour() (Time, string) {
	if n == nil {
		return 0, ""
	}
	return n.longest, n.longestAt
}

// SetStragglers makes count ranks, drawn at run time from the seed, run
// their CPU work factor times slower.
func (n *Noise) SetStragglers(count int, factor float64) error {
	if count < 0 || !(factor >= 1) || factor > 1e6 {
		return fmt.Errorf("stragglers: %d ranks %gx slower; need a count >= 0 and a factor from 1 to 1e6", count, factor)
	}
	n.Stragglers, n.Factor = count, factor
	return nil
}

// maxNoiseDetours bounds a trace: a trace is read whole into memory.
const maxNoiseDetours = 1 << 24

// ParseNoise reads a noise trace. Detours must be in order of start and
// must not overlap; the trace must last longer than its detours.
func ParseNoise(r io.Reader, name string) (*Noise, error) {
	n := &Noise{}
	sc := lines.New(r, name, 1<<20)
	line, lastLine := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"start<TAB>duration\" in nanoseconds, got %s", name, line, lines.Quote(text))
		}
		var v [2]Time
		for i, f := range fields {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil || !(x >= 0 && x <= 1e15) { // NaN too
				return nil, fmt.Errorf("%s:%d: %s is not a duration in nanoseconds from 0 to 1e15", name, line, lines.Quote(f))
			}
			v[i] = FromPicoseconds(x * 1000)
		}
		if k := len(n.starts); k > 0 && v[0] < n.starts[k-1]+n.durs[k-1] {
			return nil, fmt.Errorf("%s:%d: detour at %vns starts before the previous one ends; sort the trace and merge overlapping detours", name, line, fields[0])
		}
		if len(n.starts) == maxNoiseDetours {
			return nil, fmt.Errorf("%s:%d: more than %d detours", name, line, maxNoiseDetours)
		}
		n.starts = append(n.starts, v[0])
		n.durs = append(n.durs, v[1])
		lastLine = line
		if v[1] > n.longest {
			n.longest, n.longestAt = v[1], fmt.Sprintf("%s:%d", name, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(n.starts) < 2 {
		return nil, fmt.Errorf("%s: a noise trace needs at least two detours (its period is the last start)", name)
	}
	n.period = n.starts[len(n.starts)-1]
	// The last line only marks the period; a detour there would wrap onto
	// the first one, and dropping its duration unsaid would lose a detour
	// the user wrote (an audit).
	if d := n.durs[len(n.durs)-1]; d > 0 {
		return nil, fmt.Errorf("%s:%d: the last line marks the trace's period (where it repeats) and takes no detour, but its duration is %v; end the trace with a line \"<period><TAB>0\" after the last detour", name, lastLine, d)
	}
	n.starts, n.durs = n.starts[:len(n.starts)-1], n.durs[:len(n.durs)-1]
	if n.period <= n.starts[0] {
		return nil, fmt.Errorf("%s: the trace's period must be longer than its first start", name)
	}
	return n, nil
}

// start draws the ranks' offsets from the engine's "noise" stream.
func (n *Noise) start(eng *Engine, ranks int) error {
	if n == nil {
		return nil
	}
	if n.Stragglers > ranks {
		return fmt.Errorf("stragglers: %d slow ranks asked for, but the run has %d; ask for at most %d", n.Stragglers, ranks, ranks)
	}
	n.slow = nil
	if n.Stragglers > 0 {
		n.slow = make([]bool, ranks)
		for _, r := range eng.NamedStream("noise/stragglers").Perm(ranks)[:n.Stragglers] {
			n.slow[r] = true
		}
	}
	if n.period == 0 {
		return nil
	}
	rng := eng.NamedStream("noise")
	n.offset = make([]Time, ranks)
	shared := Time(rng.Int64N(int64(n.period)))
	for r := range n.offset {
		if n.CoScheduled {
			n.offset[r] = shared
		} else {
			n.offset[r] = Time(rng.Int64N(int64(n.period)))
		}
	}
	return nil
}

// slowdown returns how much longer than d rank r takes over CPU work of
// d: a straggler's Factor-1 times d, else 0.
func (n *Noise) slowdown(r int32, d Time) Time {
	if n.slow != nil && n.slow[r] {
		return Time(float64(d) * (n.Factor - 1))
	}
	return 0
}

// extra returns how much the CPU interval [t, t+d) of rank r is stretched.
func (n *Noise) extra(r int32, t, d Time) Time {
	if n == nil {
		return 0
	}
	// A straggler's interval is longer; detours then fall into all of it.
	slow := n.slowdown(r, d)
	d += slow
	if n.period == 0 {
		return slow
	}
	pos := (t + n.offset[r]) % n.period
	// The last detour that starts at or before pos.
	i := lastAtOrBefore(n.starts, pos)
	extra := slow
	if i >= 0 {
		if end := n.starts[i] + n.durs[i]; end > pos {
			extra += end - pos
		}
	}
	// Every detour starting in (pos, pos+d], wrapping around: each whole
	// period of the window holds every detour once (a 2 ps period hung a
	// long calc, walking its detours one by one: an audit), and the rest
	// of the window is walked.
	if whole := d / n.period; whole > 0 {
		var total Time
		for _, dur := range n.durs {
			total = total.Plus(dur)
		}
		extra = extra.Plus(mulTime(whole, total))
		d -= whole * n.period
	}
	end := pos + d
	base := Time(0)
	for j := i + 1; ; j++ {
		if j == len(n.starts) {
			j, base = 0, base+n.period
		}
		if base+n.starts[j] > end {
			break
		}
		if base+n.starts[j] > pos {
			extra += n.durs[j]
		}
		if base > end {
			break
		}
	}
	return extra
}

// lastAtOrBefore returns the index of the last start <= t, or -1.
func lastAtOrBefore(starts []Time, t Time) int {
	i, found := slices.BinarySearch(starts, t)
	if found {
		return i
	}
	return i - 1
}

// PeriodicNoise is OS noise of one detour of the given duration every
// period (a timer tick, a daemon that wakes up on schedule); each rank's
// phase is drawn at run time, unless CoScheduled.
func PeriodicNoise(period, duration Time) (*Noise, error) {
	if duration <= 0 || period <= duration {
		return nil, fmt.Errorf("periodic noise: a detour of %v every %v; need 0 < duration < period", duration, period)
	}
	return &Noise{starts: []Time{0}, durs: []Time{duration}, period: period}, nil
}

// poissonDetours is how many detours a random noise trace holds before it
// repeats.
const poissonDetours = 4096

// PoissonNoise is OS noise of detours of the given duration arriving at
// random: after each detour, the wait for the next is exponential with
// mean 1/rate seconds, so detours never overlap and come at a rate of
// 1/(1/rate + duration). The trace is drawn from seed (the same seed gives
// the same noise) and repeats after poissonDetours detours.
func PoissonNoise(rate float64, duration Time, seed uint64) (*Noise, error) {
	if !(rate > 0) || rate > 1e9 || duration <= 0 {
		return nil, fmt.Errorf("random noise: %g detours per second of %v; need a rate in (0, 1e9] and a positive duration", rate, duration)
	}
	rng := New(seed).NamedStream("noise/poisson")
	n := &Noise{}
	t := Time(0)
	for range poissonDetours {
		t = t.Plus(FromSeconds(rng.ExpFloat64() / rate))
		n.starts = append(n.starts, t)
		n.durs = append(n.durs, duration)
		t = t.Plus(duration)
	}
	n.period = t.Plus(FromSeconds(rng.ExpFloat64() / rate)).Plus(1)
	if n.period >= MaxTime/2 {
		// The sums wrapped past the clock before (a rate of 1e-9 crashed
		// with exit 70, 1e-5 gave a period of 8.4e6 s for one of 4.1e8: an
		// audit); a trace this sparse is no noise a run can meet.
		return nil, fmt.Errorf("random noise: %g detours per second: %d detours at that rate take past the clock's limit (106 days); give a rate of at least 1e-2", rate, poissonDetours)
	}
	return n, nil
}

// mulTime is k*t for k, t >= 0, or MaxTime where that would overflow.
func mulTime(k, t Time) Time {
	if k != 0 && t > MaxTime/k {
		return MaxTime
	}
	return k * t
}
