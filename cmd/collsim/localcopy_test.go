package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestLocalCopiesAreFreeUnderLogGOPS: a rank's own block moves by a local
// copy, as Open MPI's and MPICH's alltoalls and Bruck's allgather move it,
// so under LogGOPS (LogGOPSim's defaults: L 2.5 µs, o 1.5 µs, G 6 ns/B,
// S 64 KiB) only the messages to other ranks cost, each o + L + o +
// (s-1)G, derived by hand (a new user's trial found each copy charged as
// a message: 54% more for the Bruck allgather below).
func TestLocalCopiesAreFreeUnderLogGOPS(t *testing.T) {
	msg := func(s float64) float64 { return (1500 + 2500 + 1500 + (s-1)*6) * 1e-9 }
	// A rendezvous message is taken in once matched: the same o + L + o +
	// (s-1)G when the receive is posted ahead (LogGOPSim's rule).
	bruck := 0.0
	for s := 8.0; s <= 256; s *= 2 { // 6 rounds of 1, 2, 4, ... 32 blocks of 8 B
		bruck += msg(s)
	}
	for _, c := range []struct {
		args []string
		want float64
	}{
		// Linear alltoall, 1 MiB a pair on 8 ranks: 7 intakes in a row.
		{[]string{"-c", "alltoall", "-a", "linear", "-n", "8", "-s", "8MiB"}, 7 * msg(1<<20)},
		// Pairwise on 4 ranks, 32 B a pair: 3 exchanges after the copy.
		{[]string{"-c", "alltoall", "-a", "pairwise", "-n", "4", "-s", "128"}, 3 * msg(32)},
		{[]string{"-c", "allgather", "-a", "bruck", "-n", "64", "-s", "512"}, bruck},
	} {
		args := append([]string{"run", "--network", "loggops", "-q", "--json"}, c.args...)
		out, errs, code := collsim(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		var r struct {
			Time float64 `json:"time_s"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Time-c.want) > 1e-12 {
			t.Errorf("%v: %.9g s, want %.9g s", c.args, r.Time, c.want)
		}
	}
}

// TestLogGOPSReductions: the LogGOPS model has no reduction rate, so a
// reducing collective's reductions are free there, which run now says;
// --reduce-bandwidth charges them on the receiving CPU. A ring allreduce
// of 1 MiB on 8 ranks: 14 steps of a 128 KiB block, each o + L + o +
// (s-1)G, and 7 of them reduce it, 131072 B at 10 GB/s = 13107.2 ns, by
// hand (a new user's trial found them dropped without a word).
func TestLogGOPSReductions(t *testing.T) {
	step := (1500 + 2500 + 1500 + 131071*6.0) * 1e-9
	for _, c := range []struct {
		extra []string
		want  float64
		note  bool
	}{
		{nil, 14 * step, true},
		{[]string{"--reduce-bandwidth", "10GB/s"}, 14*step + 7*131072/10e9, false},
	} {
		args := append([]string{"run", "-a", "ring", "-n", "8", "-s", "1MiB", "--network", "loggops", "--json"}, c.extra...)
		out, errs, code := collsim(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.extra, code, errs)
		}
		var r struct {
			Time float64 `json:"time_s"`
			Note string  `json:"note"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Time-c.want) > 1e-12 {
			t.Errorf("%v: %.10g s, want %.10g s", c.extra, r.Time, c.want)
		}
		if got := strings.Contains(r.Note, "reductions are free here: the LogGOPS model has no reduction rate"); got != c.note {
			t.Errorf("%v: note %q; want the free-reductions note: %v", c.extra, r.Note, c.note)
		}
	}
}
