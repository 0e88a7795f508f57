package configs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/collsim/collsim/sim"
)

// splitNumber splits "12.5GB/s" into 12.5 and "GB/s". The number may have
// a sign, a fraction and an exponent ("1e9B/s").
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i+1 < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if s[j] == '+' || s[j] == '-' {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if i > 0 && (errors.Is(err, strconv.ErrRange) || math.IsInf(v, 0)) {
		// 1e400us said it did not start with a number (a new user's trial).
		return 0, "", fmt.Errorf("%q: %s is out of range (a float64 goes to about 1.8e308)", s, s[:i])
	}
	if err != nil || math.IsNaN(v) {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	return v, strings.TrimSpace(s[i:]), nil
}

var bandwidthUnits = map[string]float64{
	"B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
	"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30, "TiB/s": 1 << 40,
	"bit/s": 1.0 / 8, "Kbit/s": 1e3 / 8, "Mbit/s": 1e6 / 8, "Gbit/s": 1e9 / 8, "Tbit/s": 1e12 / 8,
	"bps": 1.0 / 8, "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
	"Kb/s": 1e3 / 8, "Mb/s": 1e6 / 8, "Gb/s": 1e9 / 8, "Tb/s": 1e12 / 8,
}

// ParseBandwidth reads a bandwidth such as "100Gbit/s", "100Gbps",
// "12.5GB/s" or "25GiB/s" and returns bytes per second. A lower-case b is a
// bit, an upper-case B a byte.
func ParseBandwidth(s string) (float64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" && !(v > 0) {
		return 0, fmt.Errorf("bandwidth %q must be positive, with a unit such as GB/s", s)
	}
	scale, ok := bandwidthUnits[unit]
	if !ok {
		return 0, fmt.Errorf("bandwidth %q: unknown unit %q; use B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, bit/s, Mbit/s, Gbit/s, Gbps or Gb/s", s, unit)
	}
	if !(v > 0) {
		return 0, fmt.Errorf("bandwidth %q must be positive", s)
	}
	// A finite number times its unit can still overflow (1e300TB/s), or
	// underflow to 0 (5e-324bit/s).
	switch bw := v * scale; {
	case math.IsInf(bw, 0):
		return 0, fmt.Errorf("bandwidth %q is too large to compute with", s)
	case bw == 0:
		return 0, fmt.Errorf("bandwidth %q is too small to compute with", s)
	default:
		return bw, nil
	}
}

var durationUnits = map[string]float64{"ps": 1, "ns": 1e3, "us": 1e6, "µs": 1e6, "μs": 1e6, "ms": 1e9, "s": 1e12}

// ParseDuration reads a duration such as "1.2us", "500ns" or "0" and
// returns it as simulated time.
func ParseDuration(s string) (sim.Time, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" && v == 0 {
		return 0, nil
	}
	scale, ok := durationUnits[unit]
	if !ok {
		return 0, fmt.Errorf("duration %q: unknown or missing unit %q; use ps, ns, us, ms or s", s, unit)
	}
	if v < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	if v*scale >= float64(sim.MaxTime) {
		return 0, fmt.Errorf("duration %q is too long", s)
	}
	return sim.FromPicoseconds(v * scale), nil
}

var sizeUnits = map[string]float64{
	"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"K": 1 << 10, "M": 1 << 20, "G": 1 << 30,
}

// ParseSize reads a size in bytes such as "8", "64KiB", "1MB" or "4M"
// (single letters are binary, as in the OSU benchmarks' output).
func ParseSize(s string) (int64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	scale, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q; use B, KB, MB, GB, TB (powers of 10), KiB, MiB, GiB, TiB or K, M, G (powers of 2), or a plain number of bytes", s, unit)
	}
	tooBig := fmt.Errorf("size %q must be a whole number of bytes from 0 to 2^62", s)
	// A whole number is read exactly: through a float64, 2^53+1 bytes
	// would be 2^53 and 2^62+1 would pass as 2^62.
	if digits := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), unit)); digits != "" && strings.Trim(digits, "0123456789") == "" {
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n > (1<<62)/int64(scale) {
			return 0, tooBig
		}
		return n * int64(scale), nil
	}
	b := v * scale
	if b < 0 || b != math.Trunc(b) || b > 1<<62 {
		return 0, tooBig
	}
	return int64(b), nil
}

// FormatBytes prints a byte count with a binary prefix: "64KiB".
func FormatBytes(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(units)-1 && math.Mod(v, 1024) == 0 {
		v /= 1024
		i++
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + units[i]
}

// FormatBandwidth prints bytes per second as GB/s with 4 significant digits.
func FormatBandwidth(bps float64) string {
	switch {
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'g', 4, 64) + "GB/s"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'g', 4, 64) + "MB/s"
	}
	return strconv.FormatFloat(bps, 'g', 4, 64) + "B/s"
}

// ParseDurations reads a list of durations, one a line ("120us"; a bare
// number is seconds, as a Python task log writes them); blank lines and
// text after # are skipped. Errors name source:line.
func ParseDurations(source string, data []byte) ([]sim.Time, error) {
	var out []sim.Time
	for i, line := range strings.Split(string(data), "\n") {
		text, _, _ := strings.Cut(line, "#")
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if v, err := strconv.ParseFloat(text, 64); err == nil {
			if !(v >= 0) || v >= sim.MaxTime.Seconds() {
				return nil, fmt.Errorf("%s:%d: duration %q: from 0 seconds up", source, i+1, text)
			}
			out = append(out, sim.FromSeconds(v))
			continue
		}
		d, err := ParseDuration(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", source, i+1, err)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no durations; give one a line, e.g. 120us or 0.00012 (seconds)", source)
	}
	return out, nil
}
