package validate

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

func summary(name string, bytes int64, median time.Duration) realrun.Summary {
	return realrun.Summary{Timing: realrun.Timing{Name: name, Bytes: bytes}, Median: median}
}

// The channel's fit, by hand: a one-way message of b bytes takes
// 1µs + b ns (alpha 1µs, beta 1 ns/B).
func TestFitChannel(t *testing.T) {
	h := cost.Hockney{Alpha: 1e-6, Beta: 1e-9}
	const mib = 1 << 20
	oneWay := func(b int64) time.Duration { return time.Microsecond + time.Duration(b) }
	sums := []realrun.Summary{
		summary("pingpong/0-1", mib, oneWay(mib)), // ignored
		summary("allreduce/ring", mib, time.Second),
		// Ratios 2, 1.9 and 2.2: median 2. The duplex share is what an
		// exchange of b bytes takes beyond b beta, over b beta: 1.0019,
		// 0.9009 and 1.2005 by size (2 x 1.049576 ms / 1.048576 ms - 1,
		// ...), its median above 1: half duplex, 1. The reducing ones
		// add 0.5, 0.25 and 1 ns/B: median 0.5 ns/B.
		summary("exchange/0-1", mib, 2*oneWay(mib)),
		summary("exchange-reduce/0-1", mib, 2*oneWay(mib)+mib/2),
		summary("exchange/0-1", 2*mib, oneWay(2*mib)*19/10),
		summary("exchange-reduce/0-1", 2*mib, oneWay(2*mib)*19/10+2*mib/4),
		summary("exchange/0-1", 4*mib, oneWay(4*mib)*22/10),
		summary("exchange-reduce/0-1", 4*mib, oneWay(4*mib)*22/10+4*mib),
	}
	ch, err := fitChannel(sums, h)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ch.Ratio-2) > 1e-9 || ch.DuplexShare != 1 || math.Abs(ch.ReduceSecondsPerByte-0.5e-9) > 1e-15 || len(ch.Sizes) != 3 {
		t.Errorf("got %+v, want ratio 2, duplex share 1, 0.5 ns/B, 3 sizes", ch)
	}
	// An exchange of 1 MiB in 1.1 x 1 MiB x 1 ns: a share of 0.1, and
	// 1.1 x 1.048576 / 1.049576 = 1.098952 a one-way message; reducing
	// exchanges faster than plain ones: reductions cost nothing.
	full := []realrun.Summary{
		summary("exchange/0-1", mib, mib*11/10),
		summary("exchange-reduce/0-1", mib, oneWay(mib)),
	}
	if ch, err := fitChannel(full, h); err != nil || math.Abs(ch.Ratio-1.098952) > 1e-6 || math.Abs(ch.DuplexShare-0.1) > 1e-6 || ch.ReduceSecondsPerByte != 0 {
		t.Errorf("1.1 b beta: got %+v, %v, want ratio 1.098952, duplex share 0.1", ch, err)
	}
	// 1000 B take 1µs on the channel: an exchange of 1.5µs is a share of
	// 0.5; one faster than that is full duplex, 0; one of 4µs would be a
	// share of 3, and is half duplex, 1.
	for _, c := range []struct {
		exchange time.Duration
		share    float64
	}{{1500 * time.Nanosecond, 0.5}, {900 * time.Nanosecond, 0}, {4000 * time.Nanosecond, 1}} {
		sums := []realrun.Summary{
			summary("exchange/0-1", 1000, c.exchange),
			summary("exchange-reduce/0-1", 1000, c.exchange),
		}
		if ch, err := fitChannel(sums, h); err != nil || math.Abs(ch.DuplexShare-c.share) > 1e-9 {
			t.Errorf("exchange of %v: got %+v, %v, want duplex share %v", c.exchange, ch, err, c.share)
		}
	}
	// Four sizes, the first not the median, one of them given twice, and
	// a size 0 that says nothing: ratios 1, 1.2, 1.6 and 2.2 by size,
	// median (1.2+1.6)/2 = 1.4; duplex shares r (alpha + b beta) / (b
	// beta) - 1 by size, 0.00095, 0.20057, 1.20029 and 0.60019, median
	// (0.20057+0.60019)/2 = 0.40038; gammas 0.1, 0.2, 0.3, 0.4 ns/B,
	// median 0.25.
	var four []realrun.Summary
	for i, c := range []struct {
		mibs  int64
		ratio float64
	}{{4, 2.2}, {1, 1}, {2, 1.2}, {2, 1.2}, {8, 1.6}} {
		b := c.mibs * mib
		t := time.Duration(c.ratio * float64(oneWay(b)))
		gammas := []float64{0.4, 0.1, 0.2, 0.2, 0.3}
		four = append(four, summary("exchange/0-1", b, t), summary("exchange-reduce/0-1", b, t+time.Duration(gammas[i]*float64(b))))
	}
	four = append(four, summary("exchange/0-1", 0, time.Microsecond), summary("exchange-reduce/0-1", 0, 2*time.Microsecond))
	if ch, err := fitChannel(four, h); err != nil || math.Abs(ch.Ratio-1.4) > 1e-6 || math.Abs(ch.DuplexShare-0.40038) > 1e-5 || math.Abs(ch.ReduceSecondsPerByte-0.25e-9) > 1e-14 ||
		!slices.Equal(ch.Sizes, []int64{mib, 2 * mib, 4 * mib, 8 * mib}) {
		t.Errorf("four sizes: got %+v, %v; want ratio 1.4, duplex share 0.40038, 0.25 ns/B, sizes 1, 2, 4, 8 MiB", ch, err)
	}
	// A line that gives a size no positive one-way time (a negative
	// alpha: 1000 B in -1µs) cannot judge that size: no Inf, no negative
	// ratio.
	neg := cost.Hockney{Alpha: -2e-6, Beta: 1e-9}
	small := []realrun.Summary{summary("exchange/0-1", 1000, 3*time.Microsecond), summary("exchange-reduce/0-1", 1000, 4*time.Microsecond)}
	if ch, err := fitChannel(small, neg); err == nil {
		t.Errorf("a size the line gives a negative time was fitted: %+v", ch)
	}
	// A line that is not a line of time growing with size gives no share
	// (it would divide by zero).
	if ch, err := fitChannel(full, cost.Hockney{Alpha: 1e-6}); err == nil {
		t.Errorf("beta 0 was fitted: %+v", ch)
	}
	if _, err := fitChannel(sums[:2], h); err == nil || !strings.Contains(err.Error(), "--exchange") {
		t.Errorf("no exchanges: %v", err)
	}
}

// The machine fitted on one host loads, and runs what was measured: an
// exchange of b bytes between its two ranks takes alpha + b beta when
// full duplex; with a duplex share s, each channel takes in once its
// send's share is done, max(alpha, s b beta) + b beta (2 b beta when
// half: b beta is more than alpha, which the sending hides); a reducing
// one b gamma more. And fitted to its own exchanges, the machine gives
// back its share (to within alpha / b beta, which a share below that
// cannot show) and its gamma.
func TestOneHostMachine(t *testing.T) {
	h := cost.Hockney{Alpha: 1e-6, Beta: 1e-9, Gamma: 0.5e-9}
	const b = 1 << 20
	for _, share := range []float64{0, 0.3, 1} {
		ch := channelFit{Ratio: 1 + share, DuplexShare: share, ReduceSecondsPerByte: h.Gamma}
		m, err := configs.Parse("fitted.yaml", oneHostYAML(2, h, ch))
		if err != nil {
			t.Fatal(err)
		}
		if m.RanksPerHost != 2 || m.LocalDuplexShare != share {
			t.Fatalf("share %v: %d ranks per host, duplex share %v", share, m.RanksPerHost, m.LocalDuplexShare)
		}
		var own []realrun.Summary // the analytic model's exchanges, as measured
		for _, reduce := range []bool{false, true} {
			s, err := collectives.Exchange(2, 0, 1, b, 1, reduce)
			if err != nil {
				t.Fatal(err)
			}
			want := max(h.Alpha, share*h.Beta*b) + h.Beta*b
			if reduce {
				want += h.Gamma * b
			}
			for model, factory := range map[string]func([]int32) (sim.NetworkFactory, error){"analytic": m.Analytic, "flow": m.Flow} {
				net, err := factory([]int32{0, 0})
				if err != nil {
					t.Fatal(err)
				}
				res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: m.Host})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Makespan.Seconds(); math.Abs(got-want) > 1e-11 {
					t.Errorf("share %v, reduce %v, %s: %gs, want %gs", share, reduce, model, got, want)
				}
				if model == "analytic" {
					name := map[bool]string{false: "exchange/0-1", true: "exchange-reduce/0-1"}[reduce]
					own = append(own, summary(name, b, time.Duration(res.Makespan/sim.Nanosecond)))
				}
			}
		}
		again, err := fitChannel(own, h)
		if err != nil || math.Abs(again.DuplexShare-share) > 1.001*h.Alpha/(h.Beta*b) || math.Abs(again.ReduceSecondsPerByte-h.Gamma) > 1e-15 {
			t.Errorf("share %v: fitted to its own exchanges, %+v, %v", share, again, err)
		}
	}
	// No reduction cost measured: none in the machine.
	m, err := configs.Parse("fitted.yaml", oneHostYAML(3, h, channelFit{Ratio: 2, DuplexShare: 1}))
	if err != nil || m.Host.ReducePsPerByte != 0 || m.RanksPerHost != 3 {
		t.Errorf("no gamma: %v, %v", m, err)
	}
}

// --exchange's auto: each power of two from the smallest -s size over
// the ranks (at least 4 KiB) up to the largest -s size.
func TestExchangeSizes(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		sizes []int64
		ranks int
		want  string
	}{
		{[]int64{8}, 2, "4KiB"},
		{[]int64{8, 16 << 10}, 2, "4KiB,8KiB,16KiB"},
		{[]int64{mib, 2 * mib, 4 * mib}, 2, "512KiB,1MiB,2MiB,4MiB"},
		{[]int64{64 * mib, mib}, 4, "256KiB,512KiB,1MiB,2MiB,4MiB,8MiB,16MiB,32MiB,64MiB"},
		// Not powers of two: from the power of two at or below the
		// smallest message (3 MiB / 2), up to the largest size.
		{[]int64{3 * mib, 5 * mib}, 2, "1MiB,2MiB,4MiB"},
		{[]int64{mib}, 1000, "4KiB,8KiB,16KiB,32KiB,64KiB,128KiB,256KiB,512KiB,1MiB"},
	} {
		if got := exchangeSizes(c.sizes, c.ranks); got != c.want {
			t.Errorf("sizes %v on %d ranks: %q, want %q", c.sizes, c.ranks, got, c.want)
		}
	}
}

// The closed forms know no duplex share: where the channel has one, the
// notes say so, with what it can cost; where it has none, they do not.
func TestDuplexShareNote(t *testing.T) {
	o := &options{}
	o.NP = 2
	mentions := func(notes []string) bool {
		return slices.ContainsFunc(notes, func(n string) bool {
			return strings.Contains(n, "closed forms take each rank's channel as full duplex")
		})
	}
	notes := caveats(o, &channelFit{DuplexShare: 0.44}, nil)
	if !mentions(notes) || !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "up to 1.44x") }) {
		t.Errorf("share 0.44: notes %q, want the closed forms' full duplex and up to 1.44x", notes)
	}
	// With bands, the largest share of any: 0.9 here, up to 1.9x.
	banded := &channelFit{DuplexShare: 0.2, Bands: []bandFit{{From: 1 << 20, Bandwidth: 1e9, DuplexShare: 0.9}, {From: 2 << 20, Bandwidth: 1e9, DuplexShare: 0.5}}}
	if notes := caveats(o, banded, nil); !mentions(notes) || !slices.ContainsFunc(notes, func(n string) bool {
		return strings.Contains(n, "up to 0.9 by size") && strings.Contains(n, "up to 1.9x")
	}) {
		t.Errorf("bands: notes %q, want shares up to 0.9 by size and up to 1.9x", notes)
	}
	for _, ch := range []*channelFit{nil, {DuplexShare: 0}} {
		if notes := caveats(o, ch, nil); mentions(notes) {
			t.Errorf("channel %+v: notes %q mention a duplex share", ch, notes)
		}
	}
}

// The channel's bands, by hand (alpha 1µs): a ping-pong of 1 MiB whose
// one-way time is 1µs + 0.5 ms gives a band of 1 MiB / 0.5 ms =
// 2.097152 GB/s, and an exchange of 0.8 ms a duplex share of 0.8/0.5 - 1
// = 0.6; at 2 MiB, 1µs + 1.5 ms and 4 ms: 1.398101 GB/s, share 1.67, held
// at 1 (half duplex); an exchange size without a ping-pong (4 MiB) gets
// no band, nor does one whose one-way time is not above alpha (8 MiB).
func TestFitChannelBands(t *testing.T) {
	h := cost.Hockney{Alpha: 1e-6, Beta: 1e-9}
	const mib = 1 << 20
	us := func(v float64) time.Duration { return time.Duration(v * 1e3) }
	sums := []realrun.Summary{
		summary("pingpong/0-1", mib, us(1+500)),
		summary("exchange/0-1", mib, us(800)),
		summary("exchange-reduce/0-1", mib, us(900)),
		summary("pingpong/0-1", 2*mib, us(1+1500)),
		summary("exchange/0-1", 2*mib, us(4000)),
		summary("exchange-reduce/0-1", 2*mib, us(4100)),
		summary("exchange/0-1", 4*mib, us(9000)),
		summary("exchange-reduce/0-1", 4*mib, us(9100)),
		summary("pingpong/0-1", 8*mib, us(1)),
		summary("exchange/0-1", 8*mib, us(16000)),
		summary("exchange-reduce/0-1", 8*mib, us(16100)),
		summary("pingpong/0-1", 16*mib, us(1+8000)), // no exchange: no band
	}
	ch, err := fitChannel(sums, h)
	if err != nil {
		t.Fatal(err)
	}
	want := []bandFit{
		{From: mib, OneWay: 501e-6, Exchange: 800e-6, Bandwidth: mib / 500e-6, DuplexShare: 0.6},
		{From: 2 * mib, OneWay: 1501e-6, Exchange: 4000e-6, Bandwidth: 2 * mib / 1500e-6, DuplexShare: 1},
	}
	if len(ch.Bands) != len(want) {
		t.Fatalf("bands %+v, want %+v", ch.Bands, want)
	}
	for i, w := range want {
		g := ch.Bands[i]
		if g.From != w.From || math.Abs(g.OneWay-w.OneWay) > 1e-12 || math.Abs(g.Exchange-w.Exchange) > 1e-12 ||
			math.Abs(g.Bandwidth/w.Bandwidth-1) > 1e-9 || math.Abs(g.DuplexShare-w.DuplexShare) > 1e-9 {
			t.Errorf("band %d: %+v, want %+v", i, g, w)
		}
	}
	if !slices.Equal(ch.Unbanded, []int64{8 * mib}) {
		t.Errorf("sizes without a band %v, want 8 MiB's (its one-way time is alpha's)", ch.Unbanded)
	}
	// The medians: where a size has a band, its ratio is to the one-way
	// time measured there and its share the band's; elsewhere (4 MiB, no
	// ping-pong; 8 MiB, no band) both are the fitted line's. Against the
	// line everywhere, 1 MiB's exchange (800 us) was 0.76x its line's
	// 1.05 ms: the headline said "full duplex" above bands of share 0.6
	// and 1 (an audit).
	line := func(b float64) float64 { return 1e-6 + 1e-9*b }
	ratios := []float64{800.0 / 501, 4000.0 / 1501, 9000e-6 / line(4*mib), 16000e-6 / line(8*mib)}
	shares := []float64{0.6, 1, 9000e-6/(1e-9*4*mib) - 1, 16000e-6/(1e-9*8*mib) - 1}
	slices.Sort(ratios)
	slices.Sort(shares)
	if want := (ratios[1] + ratios[2]) / 2; math.Abs(ch.Ratio-want) > 1e-9 {
		t.Errorf("exchange over one-way, median: %g, want %g", ch.Ratio, want)
	}
	if want := (shares[1] + shares[2]) / 2; math.Abs(ch.DuplexShare-want) > 1e-9 {
		t.Errorf("duplex share, median: %g, want %g", ch.DuplexShare, want)
	}
	o := &options{}
	o.NP = 2
	// 8 MiB lies above the 2 MiB band, which prices it (bands run up to
	// the next), not the fitted line.
	if notes := caveats(o, &ch, nil); !slices.ContainsFunc(notes, func(n string) bool {
		return strings.Contains(n, "the channel has no band at 8MiB:") && strings.Contains(n, "the band below prices 8MiB (2MiB's band)") && !strings.Contains(n, "fitted line")
	}) {
		t.Errorf("notes %q do not say 8 MiB has no band and takes 2 MiB's", notes)
	}
	below := channelFit{Bands: ch.Bands, Unbanded: []int64{512 << 10, 8 * mib}}
	if n := unbandedNote(below); !strings.Contains(n, "no band at 512KiB, 8MiB:") || !strings.Contains(n, "the fitted line and the median duplex share price 512KiB; the band below prices 8MiB (2MiB's band)") {
		t.Errorf("note %q: 512 KiB lies below every band, 8 MiB above 2 MiB's", n)
	}
	if text := channelText(ch); !strings.Contains(text, "1MiB 2.097GB/s 0.60; 2MiB 1.398GB/s 1.00") {
		t.Errorf("channel text %q does not list the bands", text)
	}
}

// The machine fitted on one host runs its bands: a one-way message of a
// band's size takes the ping-pong's time there, and an exchange the
// exchange's (the share above alpha's part: max(alpha, s b/bw) + b/bw);
// a size between two bands takes the smaller's bandwidth. Fitted again to
// its own times, it gives its bands back.
func TestOneHostMachineBands(t *testing.T) {
	h := cost.Hockney{Alpha: 1e-6, Beta: 1e-9}
	const mib = 1 << 20
	bands := []bandFit{{From: mib, Bandwidth: 2e9, DuplexShare: 0.6}, {From: 4 * mib, Bandwidth: 1e9, DuplexShare: 0.2}}
	m, err := configs.Parse("fitted.yaml", oneHostYAML(2, h, channelFit{Ratio: 1.5, DuplexShare: 0.5, Bands: bands}))
	if err != nil {
		t.Fatal(err)
	}
	var own []realrun.Summary
	for _, c := range []struct {
		bytes int64
		bw    float64
		share float64
	}{{mib, 2e9, 0.6}, {2 * mib, 2e9, 0.6}, {4 * mib, 1e9, 0.2}, {mib / 2, 1e9, 0.5}} {
		ser := float64(c.bytes) / c.bw
		oneWay := sim.FromPrograms("one way", []sim.Program{{{Kind: sim.OpSend, Peer: 1, Bytes: c.bytes}}, {{Kind: sim.OpRecv, Peer: 0, Bytes: c.bytes}}}, 2)
		exchange, err := collectives.Exchange(2, 0, 1, c.bytes, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			name string
			s    sim.Schedule
			want float64
		}{{"pingpong/0-1", oneWay, h.Alpha + ser}, {"exchange/0-1", exchange, max(h.Alpha, c.share*ser) + ser}} {
			net, err := m.Analytic([]int32{0, 0})
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.Execute(sim.New(1), r.s, sim.Config{Network: net, Host: m.Host})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Makespan.Seconds(); math.Abs(got-r.want) > 1e-11 {
				t.Errorf("%s of %d B: %gs, want %gs", r.name, c.bytes, got, r.want)
			}
			own = append(own, summary(r.name, c.bytes, time.Duration(res.Makespan/sim.Nanosecond)))
			if r.name == "exchange/0-1" {
				own = append(own, summary("exchange-reduce/0-1", c.bytes, time.Duration(res.Makespan/sim.Nanosecond)))
			}
		}
	}
	again, err := fitChannel(own, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bands {
		i := slices.IndexFunc(again.Bands, func(g bandFit) bool { return g.From == b.From })
		if i < 0 || math.Abs(again.Bands[i].Bandwidth/b.Bandwidth-1) > 1e-5 || math.Abs(again.Bands[i].DuplexShare-b.DuplexShare) > 1e-5 {
			t.Errorf("fitted to its own times, band from %d: %+v, want %+v", b.From, again.Bands, b)
		}
	}
}

// alpha and beta are fitted to --pingpong's sizes alone: ping-pongs
// timed only for bands, off the line (twice as fast: a cache's), change
// nothing.
func TestFitPingPongSizes(t *testing.T) {
	line := func(b int64) time.Duration { return time.Microsecond + time.Duration(b) } // 1µs + 1 ns/B
	var sums []realrun.Summary
	keep := map[int64]bool{}
	for _, b := range []int64{8, 512, 1 << 20, 2 << 20, 4 << 20, 8 << 20} {
		sums = append(sums, summary("pingpong/0-1", b, line(b)))
		keep[b] = true
	}
	for _, b := range []int64{3 << 20, 5 << 20, 6 << 20, 7 << 20, 9 << 20} {
		sums = append(sums, summary("pingpong/0-1", b, line(b)/2))
	}
	sums = append(sums, summary("allreduce/ring", 1<<20, time.Second))
	fit, err := fitPingPong(sums, keep)
	if err != nil || math.Abs(fit.Model.Beta-1e-9) > 1e-15 || math.Abs(fit.Model.Alpha-1e-6) > 1e-9 {
		t.Errorf("fit %+v, %v; want alpha 1µs, beta 1 ns/B", fit.Model, err)
	}
	if all, err := fitPingPong(sums, nil); err != nil || all.Model.Beta == fit.Model.Beta {
		t.Errorf("every size: %+v, %v; want the extra size to move beta", all.Model, err)
	}
}

// A tiny duplex share, which %g would write as 5e-05 (a form
// host.local_duplex refuses), is written so that the machine loads.
func TestOneHostMachineTinyShare(t *testing.T) {
	h := cost.Hockney{Alpha: 1e-6, Beta: 1e-9}
	ch := channelFit{Ratio: 1, DuplexShare: 5e-5, Bands: []bandFit{{From: 1 << 20, Bandwidth: 1e9, DuplexShare: 5e-5}}}
	m, err := configs.Parse("fitted.yaml", oneHostYAML(2, h, ch))
	if err != nil {
		t.Fatal(err)
	}
	if m.LocalDuplexShare != 5e-5 || len(m.LocalBands) != 1 || m.LocalBands[0].DuplexShare != 5e-5 {
		t.Errorf("shares %v and %+v, want 5e-05 both", m.LocalDuplexShare, m.LocalBands)
	}
}
