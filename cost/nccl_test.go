package cost

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/topology"
)

// ncclOutput formats times as all_reduce_perf prints them (microseconds,
// two decimals as nccl-tests does for large times, more for small ones).
func ncclOutput(ranks int, sizes []int64, times []float64) string {
	var b strings.Builder
	b.WriteString("# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
	for r := range ranks {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on     node%02d device  0 [0x07] NVIDIA A100-SXM4-80GB\n", r, 1000+r, r)
	}
	b.WriteString("#\n#                                                              out-of-place                       in-place          \n")
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n")
	for i, s := range sizes {
		us := times[i] * 1e6
		alg := float64(s) / times[i] / 1e9
		bus := alg * 2 * float64(ranks-1) / float64(ranks)
		fmt.Fprintf(&b, "%12d  %12d     float     sum      -1  %9.6g  %6.2f  %6.2f      0  %9.6g  %6.2f  %6.2f      0\n", s, s/4, us, alg, bus, us, alg, bus)
	}
	b.WriteString("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.3456 \n#\n")
	return b.String()
}

// TestFitCollectiveRecoversTheMachine: ring allreduce times simulated on a
// crossbar of known alpha, beta and gamma, printed as nccl-tests prints
// them, parsed and fitted, give back alpha and beta (to the precision of
// the printed times).
func TestFitCollectiveRecoversTheMachine(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6} // alpha 1.5 µs, beta 100 ps/B
	const gammaPs = 30.0
	a, _ := collectives.Lookup(collectives.Allreduce, "ring")
	for _, ranks := range []int{2, 8, 6} {
		var sizes []int64
		var times []float64
		for s := int64(8 * ranks); s <= 64<<20; s *= 4 {
			s = s / int64(8*ranks) * int64(8*ranks) // whole blocks: the form is exact
			p := collectives.Params{Ranks: ranks, Count: s / 8}
			sizes = append(sizes, s)
			times = append(times, simulate(t, a, p, link, gammaPs).Seconds())
		}
		res, err := ParseNCCLTests("all_reduce_perf.txt", strings.NewReader(ncclOutput(ranks, sizes, times)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Ranks != ranks || len(res.Points) != len(sizes) {
			t.Fatalf("parsed %d ranks, %d points; want %d, %d", res.Ranks, len(res.Points), ranks, len(sizes))
		}
		fit, err := FitCollective(a, res.Ranks, gammaPs*1e-12, res.Samples())
		if err != nil {
			t.Fatal(err)
		}
		// Times are printed to 6 significant digits.
		if math.Abs(fit.Model.Alpha-1.5e-6)/1.5e-6 > 1e-4 || math.Abs(fit.Model.Beta-1e-10)/1e-10 > 1e-4 {
			t.Errorf("p=%d: fitted alpha %g, beta %g; the machine has 1.5e-6 and 1e-10", ranks, fit.Model.Alpha, fit.Model.Beta)
		}
	}
	bad, _ := collectives.Lookup(collectives.Allreduce, "double_binary_tree")
	if _, err := FitCollective(bad, 8, 0, nil); err == nil {
		t.Error("fitted an algorithm without a closed form")
	}
}

// TestParseNCCLTestsBadInput: each problem is an error naming the line.
func TestParseNCCLTestsBadInput(t *testing.T) {
	good := ncclOutput(2, []int64{8, 1024}, []float64{2e-5, 3e-5})
	for _, tc := range []struct {
		name, text, want string
	}{
		{"truncated row", good[:strings.LastIndex(good, "      0  ")] + "\n", "columns"},
		{"no header", "           8             2     float     sum      -1    38.02    0.00    0.00      0    37.68    0.00    0.00      0\n", ":1: a data row before the column header"},
		{"wrong elements", strings.Replace(good, "      0  ", "      7  ", 1), "counted 7 wrong elements"},
		{"bad time", strings.Replace(good, "20  ", "x20  ", 1), "time"},
		{"empty", "# nThread 1\n", "no data rows"},
		// In-place wrong elements, and two runs pasted together, were
		// taken (an audit).
		{"wrong in place", good[:strings.LastIndex(good, "      0")] + "      7" + good[strings.LastIndex(good, "      0")+7:], "counted 7 wrong elements"},
		{"two runs", good + good, "two nccl-tests runs pasted together"},
	} {
		_, err := ParseNCCLTests("perf.txt", strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "perf.txt") {
			t.Errorf("%s: error %v, want one naming the file and saying %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseNCCLTests(f *testing.F) {
	f.Add(ncclOutput(3, []int64{8, 4096, 1 << 20}, []float64{2e-5, 3e-5, 4e-4}))
	f.Add("#  size count type redop root time algbw busbw #wrong\n 8 2 float sum -1 1 0 0 0 1 0 0 0\n")
	f.Fuzz(func(t *testing.T, text string) {
		res, err := ParseNCCLTests("fuzz", strings.NewReader(text))
		if err != nil {
			return
		}
		for _, p := range res.Points {
			if p.Bytes < 0 || !(p.Seconds > 0) || math.IsInf(p.Seconds, 0) {
				t.Fatalf("accepted point %+v", p)
			}
		}
	})
}

// TestParseNCCLTestsOldColumns: nccl-tests before 2.0 (and rccl-tests)
// print no root column and an error figure where #wrong is now. Read by
// fixed columns, the in-place time was taken for a count of wrong
// elements (a new user's trial); the columns are found by name now.
func TestParseNCCLTestsOldColumns(t *testing.T) {
	text := `# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 4(factor) warmup iters: 5 iters: 20 validation: 1
#   Rank  0 Pid  12345 on     node01 device  0 [0x1a] Tesla V100-SXM2-16GB
#   Rank  1 Pid  12345 on     node01 device  1 [0x1b] Tesla V100-SXM2-16GB
#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2   float     sum    12.51    0.00    0.00  0e+00    12.23    0.00    0.00  0e+00
        1024           256   float     sum    14.02    0.07    0.07  2e-07    13.88    0.07    0.07  2e-07
     1048576        262144   float     sum    95.40   10.99   10.99  1e-07    96.01   10.92   10.92  1e-07
`
	r, err := ParseNCCLTests("old.txt", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []NCCLPoint{{8, 12.51e-6, 0, 8}, {1024, 14.02e-6, 0.07, 9}, {1048576, 95.40e-6, 10.99, 10}}
	if r.Ranks != 2 || len(r.Points) != len(want) {
		t.Fatalf("%d ranks, points %+v; want 2 ranks and %+v", r.Ranks, r.Points, want)
	}
	for i, p := range r.Points {
		if p.Bytes != want[i].Bytes || math.Abs(p.Seconds-want[i].Seconds) > 1e-15 || p.BusBW != want[i].BusBW || p.Line != want[i].Line {
			t.Errorf("row %d: %+v, want %+v", i, p, want[i])
		}
	}
	// An error of the size of the data is a broken run, as #wrong > 0 is.
	broken := strings.Replace(text, "10.99  1e-07    96.01", "10.99  4e+00    96.01", 1)
	if _, err := ParseNCCLTests("old.txt", strings.NewReader(broken)); err == nil || !strings.Contains(err.Error(), "old.txt:10: nccl-tests found an error of 4e+00 at 1048576 bytes") {
		t.Errorf("a broken run: %v", err)
	}
}

// TestNCCLSamplesSkipZeroBytes: a row of 0 bytes times no message (NCCL
// returns at once) and is no sample for a fit (one such row set alpha to
// 20 ns: an audit).
func TestNCCLSamplesSkipZeroBytes(t *testing.T) {
	res, err := ParseNCCLTests("perf.txt", strings.NewReader(ncclOutput(2, []int64{0, 8, 1024}, []float64{2.5e-7, 2e-5, 3e-5})))
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Samples(); len(s) != 2 || s[0].Bytes != 8 {
		t.Errorf("samples %v, want the 8 and 1024 B rows", s)
	}
}

// A pipeline's form charges its segments' (p-2)s beta whatever the size:
// no line through its times gives alpha and beta, and the chain bcast's
// gave beta 6% fast with no warning (an audit); it is refused, as a bound
// is, while the ring's form, proportional to the size, is fitted.
func TestFitCollectiveRefusesPipelines(t *testing.T) {
	samples := []Sample{{Bytes: 1 << 20, Seconds: 1e-3}, {Bytes: 4 << 20, Seconds: 3e-3}, {Bytes: 16 << 20, Seconds: 11e-3}}
	chain, err := collectives.Lookup(collectives.Bcast, "chain")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FitCollective(chain, 8, 0, samples); err == nil || !strings.Contains(err.Error(), "not alpha times a count plus beta and gamma times the size") {
		t.Errorf("chain: %v, want refused", err)
	}
	ring, err := collectives.Lookup(collectives.Allreduce, "ring")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FitCollective(ring, 8, 0, samples); err != nil {
		t.Errorf("ring: %v", err)
	}
}

// TestParseNCCLTestsPerIteration: with per-iteration timing (-I 1)
// nccl-tests puts i_min, i_max, i_p99 and i_cv% after each #wrong
// (src/util.cu's writeResultHeader), so the in-place #wrong is 8 columns
// after the out-of-place one, not 4: read at 4, i_cv% (1.20 here) was
// taken for a count of wrong elements and the log refused as broken (an
// audit). Rows as nccl-tests prints them, times by hand; an in-place
// #wrong of 3 is still refused.
func TestParseNCCLTestsPerIteration(t *testing.T) {
	text := `# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid   1000 on     node00 device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid   1001 on     node01 device  0 [0x07] NVIDIA A100-SXM4-80GB
#
#                                                             out-of-place (+ per-iteration)                                in-place (+ per-iteration)
#       size         count      type   redop    root     time   algbw   busbw #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw #wrong    i_min    i_max    i_p99    i_cv%
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)            (us)     (us)     (us)      (%)
     1048576        131072     float    none      -1    47.50   22.08   11.04      0    46.90    48.80    48.60     1.20    47.70   21.98   10.99      0    47.00    49.10    48.90     1.30
     2097152        262144     float    none      -1    89.40   23.46   11.73      0    88.70    91.00    90.80     0.90    89.60   23.41   11.70      0    88.80    91.20    91.00     0.80
`
	r, err := ParseNCCLTests("iter.txt", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 2 || math.Abs(r.Points[0].Seconds-47.50e-6) > 1e-15 || r.Points[1].Bytes != 2097152 || r.Points[1].BusBW != 11.73 {
		t.Errorf("points %+v", r.Points)
	}
	broken := strings.Replace(text, "10.99      0", "10.99      3", 1)
	if _, err := ParseNCCLTests("iter.txt", strings.NewReader(broken)); err == nil || !strings.Contains(err.Error(), "iter.txt:8: nccl-tests counted 3 wrong elements at 1048576 bytes") {
		t.Errorf("in-place #wrong 3: %v", err)
	}
}
