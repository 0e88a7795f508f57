package cost

import (
	"bytes"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestNetgaugeRoundTrip: PRTT series simulated in LogGOPS mode, written in
// Netgauge's format and read back, give the parameters the simulator ran
// with (to the microsecond file's six decimals).
func TestNetgaugeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawLogGOPS(t)
		m := simulatedPRTTDelay(t, p, prttSizes, 0, 1, nil, true)
		var buf bytes.Buffer
		if err := WriteNetgauge(&buf, m, LogGP{}); err != nil {
			t.Fatal(err)
		}
		back, err := ParseNetgauge("loggp.out", &buf)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := FitLogGP(back)
		if err != nil {
			t.Fatal(err)
		}
		checkLogGP(t, fit.Model, p, 1e-5, 1e-5)
	})
}

// TestParseNetgaugeFile reads a file as Netgauge writes it (header,
// comments, a line repeated at a protocol change, trailing fitted columns).
func TestParseNetgaugeFile(t *testing.T) {
	const file = `# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)
# to get o: plot "./loggp.out" using 1:(($5-$3)/($2-1)-$3)
1 10 10.000000 28.000000 120.000000 5.000000 2.000000 2.000000 2.000000 0.001000 0.000000
1025 10 12.048000 48.432000 122.048000 5.000000 2.000000 2.000000 2.000000 0.002000 0.000000
1025 10 12.048000 48.432000 122.048000 5.000000 2.000000 2.000000 2.000000 0.002000 0.000000
`
	m, err := ParseNetgauge("loggp.out", strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	near := func(x, want float64) bool { return relErr(x, want) < 1e-12 }
	if m.N != 10 || len(m.One) != 2 || !near(m.One[1025][0], 12.048e-6) || !near(m.D[1], 10e-6) || !near(m.Spaced[1][0], 120e-6) {
		t.Errorf("parsed %+v", m)
	}
	for _, c := range []struct{ file, want string }{
		{"", "f: no measurements"},
		{"# only a header\n", "f: no measurements"},
		{"1 10 10 28\n", "f:1: 4 fields"},
		{"0 10 10 28 120\n", "f:1: size \"0\""},
		{"8 1 10 28 120\n", "f:1: n \"1\""},
		{"8 10 10 -28 120\n", "f:1: PRTT(n,0,s) \"-28\""},
		{"8 10 10 28 NaN\n", "f:1: PRTT(n,d,s) \"NaN\""},
		{"8 10 10 28 120\n16 5 10 28 120\n", "f:2: n = 5, but earlier lines have n = 10"},
		{"8 10 10 28 120\n8 10 10 29 120\n", "f:2: size 8 again"},
	} {
		if _, err := ParseNetgauge("f", strings.NewReader(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}

// FuzzParseNetgauge: any input gives a PRTT or an error, never a panic;
// what it accepts has positive times and a burst length of at least 2.
func FuzzParseNetgauge(f *testing.F) {
	f.Add("# header\n1 10 10 28 120 5 2 2 2 0.001 0\n1025 10 12.048 48.432 122.048\n")
	f.Add("8 10 1e3 2e3 3e3\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ParseNetgauge("fuzz", strings.NewReader(in))
		if err != nil {
			return
		}
		if m.N < 2 {
			t.Fatalf("accepted n = %d", m.N)
		}
		for s, v := range m.One {
			if s < 1 || !(v[0] > 0) || !(m.Burst[s][0] > 0) || !(m.Spaced[s][0] > 0) {
				t.Fatalf("accepted size %d: %v", s, v)
			}
		}
	})
}
