package validate

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/collsim/collsim/cmd/collsim/internal/realcmd"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/realrun"
)

// pingPongs are one-way ping-pong summaries of 8 B and 1-16 MiB on a line
// of alpha 1µs and beta ns per byte.
func pingPongs(beta float64) []realrun.Summary {
	var out []realrun.Summary
	for _, b := range []int64{8, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20} {
		out = append(out, summary("pingpong/0-1", b, time.Microsecond+time.Duration(beta*float64(b))))
	}
	return out
}

// A run with --pairs-again: its pairs before the collectives, then the
// same pairs again; anything else is not split.
func TestPairsAgain(t *testing.T) {
	pairs := pingPongs(1)
	coll := summary("allreduce/ring", 1<<20, time.Millisecond)
	sums := append(append(append([]realrun.Summary{}, pairs...), coll), pingPongs(1.3)...)
	before, after, ok := realcmd.PairsAgain(sums)
	if !ok || len(before) != len(pairs) || len(after) != len(pairs) || after[1].Median != pingPongs(1.3)[1].Median {
		t.Errorf("split: %v, %d before, %d after", ok, len(before), len(after))
	}
	for name, bad := range map[string][]realrun.Summary{
		"no pairs after":    append(append([]realrun.Summary{}, pairs...), coll),
		"other sizes after": append(append(append([]realrun.Summary{}, pairs...), coll), pingPongs(1)[1:]...),
		"no collective":     pairs,
		"no pairs":          {coll},
	} {
		if _, _, ok := realcmd.PairsAgain(bad); ok {
			t.Errorf("%s: split", name)
		}
	}
}

// The pairs timed again fit as those before: beta 1 ns/B before and 1.3
// after is a change of +30%, which the notes name; 1.05 is not named.
func TestDriftNote(t *testing.T) {
	fit, err := realcmd.FitPingPong(pingPongs(1))
	if err != nil {
		t.Fatal(err)
	}
	d := measureDrift(aroundCollectives, pingPongs(1.3), fit, nil, nil)
	if d == nil || math.Abs(d.BetaAfter-1.3e-9) > 1e-15 || math.Abs(d.BetaChange-0.3) > 1e-6 {
		t.Fatalf("drift %+v, want beta 1.3 ns/B after, +30%%", d)
	}
	if note := driftNote(d); !strings.Contains(note, "the machine changed during the run: the ping-pong's beta was 1e-09 s/B before the collectives and 1.3e-09 after (+30%)") || !strings.Contains(note, "--max-drift") {
		t.Errorf("note %q", note)
	}
	if note := driftNote(measureDrift(aroundCollectives, pingPongs(1.05), fit, nil, nil)); note != "" {
		t.Errorf("+5%%: note %q", note)
	}
	// On one host the channel is fitted again too: exchanges of 2 b beta
	// before (half duplex) and 1.1 b beta after (a share of 0.1).
	exchanges := func(ratio, beta float64) []realrun.Summary {
		var out []realrun.Summary
		for _, b := range []int64{4 << 20, 16 << 20} {
			e := time.Duration(ratio * beta * float64(b))
			out = append(out, summary("exchange/0-1", b, e), summary("exchange-reduce/0-1", b, e))
		}
		return out
	}
	ch, err := fitChannel(exchanges(2, 1), cost.Hockney{Alpha: fit.Model.Alpha, Beta: fit.Model.Beta})
	if err != nil {
		t.Fatal(err)
	}
	d = measureDrift(aroundCollectives, append(pingPongs(1), exchanges(1.1, 1)...), fit, &ch, nil)
	if d == nil || d.DuplexShareAfter == nil || math.Abs(*d.DuplexShareAfter-0.1) > 1e-3 {
		t.Fatalf("drift %+v, want a duplex share of 0.1 after", d)
	}
	if note := driftNote(d); !strings.Contains(note, "duplex share 1.00 before the collectives, 0.10 after") || strings.Contains(note, "--max-drift") {
		t.Errorf("share from 1 to 0.1, beta steady: note %q, want the share named and no --max-drift, which checks beta", note)
	}
	// The bands are fitted again: the 4 MiB ping-pong taking 1.5 ns/B
	// after instead of 1 moves its band from 1 GB/s (4 MiB over 4 MiB x
	// 1 ns) to 0.667: -33%, named; the 16 MiB band stays.
	slower := pingPongs(1)
	for i, p := range slower {
		if p.Bytes == 4<<20 {
			slower[i] = summary("pingpong/0-1", p.Bytes, time.Microsecond+time.Duration(1.5*float64(p.Bytes)))
		}
	}
	banded, err := fitChannel(append(pingPongs(1), exchanges(2, 1)...), cost.Hockney{Alpha: fit.Model.Alpha, Beta: fit.Model.Beta})
	if err != nil || len(banded.Bands) != 2 {
		t.Fatalf("bands before: %+v, %v", banded, err)
	}
	d = measureDrift(aroundCollectives, append(slower, exchanges(2, 1)...), fit, &banded, nil)
	if d == nil || d.BandChange == nil || d.BandFrom != 4<<20 || math.Abs(*d.BandChange+1.0/3) > 1e-3 {
		t.Fatalf("drift %+v, want the 4 MiB band -33%%", d)
	}
	if note := driftNote(d); !strings.Contains(note, "the channel's band from 4MiB moved its bandwidth by -33% after") {
		t.Errorf("note %q does not name the 4 MiB band", note)
	}
}

// Interleaved, the drift is between the halves of the rounds: a ping-pong
// whose first 3 rounds take 1 ns/B and whose last 3 take 1.3 (with
// alpha 1µs) moved by +30%, measured from the rounds' own times; the model
// is fitted to all six. Rank 0's ping-pong times are those of
// PairRounds(b) round trips.
func TestRoundsDrift(t *testing.T) {
	var results []realrun.Result
	for _, b := range []int64{8, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20} {
		trip := func(beta float64) time.Duration {
			return time.Duration(2*realcmd.PairRounds(b)) * (time.Microsecond + time.Duration(beta*float64(b)))
		}
		res := realrun.Result{Timing: realrun.Timing{Name: "pingpong/0-1", Bytes: b, Iterations: 6}}
		for it := range 6 {
			res.Times = append(res.Times, trip([]float64{1, 1.3}[it/3]))
		}
		results = append(results, res)
	}
	reports := []realrun.Report{{Rank: 0, Results: results}, {Rank: 1, Results: results}}
	d := measureRoundsDrift(reports, 6, false, nil)
	if d == nil || d.Between != acrossRounds || math.Abs(d.BetaBefore-1e-9) > 1e-15 || math.Abs(d.BetaAfter-1.3e-9) > 1e-15 || math.Abs(d.BetaChange-0.3) > 1e-6 {
		t.Fatalf("drift %+v, want beta 1 ns/B then 1.3 across the rounds, +30%%", d)
	}
	if note := driftNote(d); !strings.Contains(note, "1e-09 s/B in the first half of the rounds and 1.3e-09 in the second (+30%)") {
		t.Errorf("note %q", note)
	}
	// The halves' fits are of their own rounds: none moved, no drift.
	for i := range results {
		results[i].Times = slices.Repeat(results[i].Times[:1], 6)
	}
	if d := measureRoundsDrift(reports, 6, false, nil); d == nil || math.Abs(d.BetaChange) > 1e-9 || driftNote(d) != "" {
		t.Errorf("steady rounds: drift %+v, note %q", d, driftNote(d))
	}
}
