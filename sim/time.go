package sim

import (
	"fmt"
	"math"
)

// Time is simulated time in picoseconds, used both for instants and for
// durations. Integer time makes event order exact and reproducible; int64
// picoseconds last about 106 days and a difference of two Times cannot wrap.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000 * Picosecond
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// MaxTime is the largest representable instant.
const MaxTime Time = math.MaxInt64

// Plus is t+d for a duration d >= 0, or MaxTime where the sum would pass
// it: sums of simulated time saturate instead of wrapping, and a run that
// reaches MaxTime fails with ErrClockLimit (Engine.At) rather than going
// on at a wrapped, small time.
func (t Time) Plus(d Time) Time {
	if d > MaxTime-t {
		return MaxTime
	}
	return t + d
}

// FromSeconds converts seconds to Time, rounding up to the next picosecond so
// that a nonzero cost never becomes free; a value within floating-point
// noise (relative 1e-12) of a whole picosecond is that picosecond, so that
// "0.75us" is 750000ps and not 750001ps. Values beyond MaxTime saturate;
// negative and NaN inputs give 0.
func FromSeconds(s float64) Time { return FromPicoseconds(s * 1e12) }

// FromPicoseconds converts a float count of picoseconds to Time, rounding
// as FromSeconds does. Costs given per byte in picoseconds should come
// through here, not through seconds, so that no scaling adds noise.
func FromPicoseconds(ps float64) Time {
	if r := math.Round(ps); math.Abs(ps-r) <= 1e-12*math.Abs(ps) {
		ps = r
	} else {
		ps = math.Ceil(ps)
	}
	switch {
	case !(ps > 0): // also catches NaN
		return 0
	case ps >= float64(MaxTime):
		return MaxTime
	}
	return Time(ps)
}

// Seconds returns t in seconds, for output.
func (t Time) Seconds() float64 { return float64(t) / 1e12 }

// String formats t with an SI prefix, for example "1.5µs".
func (t Time) String() string {
	if t == 0 {
		return "0s"
	}
	abs := t
	if abs < 0 {
		abs = -abs
	}
	units := []struct {
		size Time
		name string
	}{{Second, "s"}, {Millisecond, "ms"}, {Microsecond, "µs"}, {Nanosecond, "ns"}}
	for _, u := range units {
		if abs >= u.size {
			return trimFloat(float64(t)/float64(u.size)) + u.name
		}
	}
	return fmt.Sprintf("%dps", int64(t))
}

// trimFloat prints f with up to 4 significant decimals and no trailing zeros.
func trimFloat(f float64) string {
	s := fmt.Sprintf("%.4f", f)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}
