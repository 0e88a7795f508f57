package validate

import (
	"strings"
	"testing"
)

// TestThreshold: --max-error as the failure message writes it (0.001 was
// "0%", 0.15 "15.000000000000002%").
func TestThreshold(t *testing.T) {
	for in, want := range map[float64]string{0.001: "0.1%", 0.15: "15%", 1e-9: "1e-07%", 0: "0%", 0.5: "50%"} {
		if got := threshold(in); got != want {
			t.Errorf("threshold(%g) = %q, want %q", in, got, want)
		}
	}
}

// A real validation judges both networks' times: a point fails where
// either is off by more than --max-error, and the failure names the
// network; the worst-point note names it too. (Only the analytic
// network's was judged: a run failed on -24% where the flow network was
// within 1.1%, and one could pass with the flow network far off.)
func TestCheckJudgesBothNetworks(t *testing.T) {
	points := []point{
		{Algorithm: "allreduce/ring", Bytes: 1 << 20, Real: 1, Simulated: 1.05, SimError: 0.05, Flow: 1.3, FlowError: 0.3},
		{Algorithm: "allreduce/recursive_doubling", Bytes: 1 << 20, Real: 1, Simulated: 0.76, SimError: -0.24, Flow: 1.011, FlowError: 0.011},
		{Algorithm: "allreduce/rabenseifner", Bytes: 1 << 20, Real: 1, Simulated: 1.01, SimError: 0.01, Flow: 1.02, FlowError: 0.02},
	}
	err := check(0.1, points)
	if err == nil {
		t.Fatal("two points off by more than 10% passed")
	}
	for _, want := range []string{"2 points", "allreduce/ring 1MiB on the flow network: +30.0%", "allreduce/recursive_doubling 1MiB on the analytic network: -24.0%"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
	if err := check(0.1, points[2:]); err != nil {
		t.Errorf("a point within 10%% on both networks: %v", err)
	}
	o := &options{}
	o.NP = 2
	if notes := strings.Join(caveats(o, nil, points), "\n"); !strings.Contains(notes, "30% off (the flow network's, allreduce/ring 1MiB)") {
		t.Errorf("notes %q do not name the worst point, the flow network's ring", notes)
	}
}
