package redist

import "testing"

// TestIntervalsCountsCuts: the count Check refuses by is the number of
// intervals cuts makes, for sizes and tilings that share and do not share
// boundaries.
func TestIntervalsCountsCuts(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for a := 1; a <= 13; a++ {
			for b := 1; b <= 13; b++ {
				if got, want := intervals(n, a, b), len(cuts(n, a, b))-1; got != want {
					t.Fatalf("n=%d a=%d b=%d: intervals %d, cuts %d", n, a, b, got, want)
				}
			}
		}
	}
}
