package cost

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/collsim/collsim/sim/lines"
)

// NetgaugeHeader is the comment line that opens a LogGP measurement file,
// Netgauge's ("ng -x loggp -o FILE") and collsim real --prtt's alike.
const NetgaugeHeader = "# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)"

// maxNetgaugeLines bounds what ParseNetgauge reads: one line per size.
const maxNetgaugeLines = 1 << 16

// ParseNetgauge reads a LogGP measurement file as Netgauge's loggp pattern
// writes it: '#' comments, then one line per message size s whose first
// five fields are s, n, PRTT(1,0,s), PRTT(n,0,s) and PRTT(n,d,s) with d =
// PRTT(1,0,s), times in microseconds (medians over its repetitions); the
// parameters Netgauge fitted follow and are ignored, since FitLogGP fits
// them again. Netgauge repeats a size's line when it detects a protocol
// change; a repeated size must repeat its figures. name is used in errors,
// which give the line.
func ParseNetgauge(name string, r io.Reader) (PRTT, error) {
	m := PRTT{D: map[int64]float64{}, One: map[int64][]float64{}, Burst: map[int64][]float64{}, Spaced: map[int64][]float64{}}
	sc := lines.New(r, name, 1<<16)
	line, rows := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		if rows++; rows > maxNetgaugeLines {
			return PRTT{}, fmt.Errorf("%s:%d: more than %d sizes; is this a Netgauge LogGP file?", name, line, maxNetgaugeLines)
		}
		f := strings.Fields(text)
		if len(f) < 5 {
			return PRTT{}, fmt.Errorf("%s:%d: %d fields; a LogGP line starts with size, n, PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) (µs)", name, line, len(f))
		}
		size, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || size < 1 {
			return PRTT{}, fmt.Errorf("%s:%d: size %s: want a whole number of bytes, at least 1", name, line, lines.Quote(f[0]))
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 2 || n > 1<<20 {
			return PRTT{}, fmt.Errorf("%s:%d: n %s: want the burst length, a whole number from 2 (Netgauge uses 10)", name, line, lines.Quote(f[1]))
		}
		if m.N != 0 && n != m.N {
			return PRTT{}, fmt.Errorf("%s:%d: n = %d, but earlier lines have n = %d; one file, one burst length", name, line, n, m.N)
		}
		m.N = n
		var t [3]float64
		for i, label := range []string{"PRTT(1,0,s)", "PRTT(n,0,s)", "PRTT(n,d,s)"} {
			t[i], err = strconv.ParseFloat(f[2+i], 64)
			if err != nil || !(t[i] > 0) || math.IsInf(t[i], 0) {
				return PRTT{}, fmt.Errorf("%s:%d: %s %s: want a positive time in microseconds", name, line, label, lines.Quote(f[2+i]))
			}
			t[i] *= 1e-6
		}
		if old, seen := m.One[size]; seen {
			if old[0] != t[0] || m.Burst[size][0] != t[1] || m.Spaced[size][0] != t[2] {
				return PRTT{}, fmt.Errorf("%s:%d: size %d again, with other times than its first line", name, line, size)
			}
			continue
		}
		m.One[size], m.Burst[size], m.Spaced[size] = []float64{t[0]}, []float64{t[1]}, []float64{t[2]}
		m.D[size] = t[0]
	}
	if err := sc.Err(); err != nil {
		return PRTT{}, err
	}
	if len(m.One) == 0 {
		return PRTT{}, fmt.Errorf("%s: no measurements; expected lines of size, n, PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) after %q", name, NetgaugeHeader)
	}
	return m, nil
}

// WriteNetgauge writes m in ParseNetgauge's format, with fit's parameters
// in Netgauge's trailing columns (L, o as both o_s and o_r, g and G, times
// in microseconds; G in microseconds per byte; lsqu is written as 0).
func WriteNetgauge(w io.Writer, m PRTT, fit LogGP) error {
	if _, err := fmt.Fprintln(w, NetgaugeHeader); err != nil {
		return err
	}
	sizes := make([]int64, 0, len(m.One))
	for s := range m.One {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	us := func(x float64) float64 { return x * 1e6 }
	for _, s := range sizes {
		one, _ := Median(m.One[s])
		burst, _ := Median(m.Burst[s])
		spaced, _ := Median(m.Spaced[s])
		if _, err := fmt.Fprintf(w, "%d %d %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.9f 0\n", s, m.N, us(one), us(burst), us(spaced),
			us(fit.L), us(fit.O), us(fit.O), us(fit.Gap), us(fit.G)); err != nil {
			return err
		}
	}
	return nil
}
