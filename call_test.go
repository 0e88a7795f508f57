package collsim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/collectives"
)

// An alltoall moves whole elements to each rank: multiples of elem x
// ranks bytes, 24 B for 8-byte elements on 3 ranks; for element sizes
// whose product overflows, the message says so, where it said "a
// multiple of 0B".
func TestAlltoallQuantum(t *testing.T) {
	if got := collsim.AlltoallQuantum(8, 3); got != "24B" {
		t.Errorf("8-byte elements on 3 ranks: %q, want 24B", got)
	}
	if got := collsim.AlltoallQuantum(1<<62, 4); got != "more than 2^63 bytes" {
		t.Errorf("2^62-byte elements on 4 ranks: %q", got)
	}
	if got := collsim.AlltoallQuantum(math.MaxInt64, 1); got == "more than 2^63 bytes" {
		t.Errorf("one rank never overflows: %q", got)
	}
	_, err := collsim.Shortfall(collectives.Alltoall, collectives.Params{Ranks: 4, Count: 0, ElemSize: 1 << 62}, 8)
	if err == nil || !strings.Contains(err.Error(), "a multiple of more than 2^63 bytes moves everything") {
		t.Errorf("8 B over 4 ranks of 2^62-byte elements: %v", err)
	}
}

// --steps 1, which SUARA refuses, is refused by run as by explain: the
// grid the closed forms choose replaced it with 2 and the call ran (a new
// user's trial); --steps 3 is taken as given.
func TestSuaraStepsOneRefused(t *testing.T) {
	_, err := (&collsim.Experiment{Algorithm: "suara", Ranks: 16, Size: 1 << 20, Shape: collsim.Shape{Steps: 1}}).Run()
	if err == nil || !strings.Contains(err.Error(), "--steps 1: at least 2 steps") {
		t.Errorf("steps 1: %v", err)
	}
	if _, err := (&collsim.Experiment{Algorithm: "suara", Ranks: 16, Size: 1 << 20, Shape: collsim.Shape{Steps: 3}}).Run(); err != nil {
		t.Errorf("steps 3: %v", err)
	}
}
