package explain

import (
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

// TestElementsListsShortVectors: a short vector's elements are listed, by
// hand: 2 elements in blocks of 1 from 1, every 2, are elements 1 and 3;
// 3 elements from 2 going back 1 are 2, 1 and 0, in that order; blocks
// of 2 from 0 every 4 of 5 elements are 0..1, 4..5 and 8. A long one is
// said by its blocks.
func TestElementsListsShortVectors(t *testing.T) {
	for _, c := range []struct {
		r    sim.Region
		want string
	}{
		{sim.Region{Buf: 2, Off: 1, Count: 2, Block: 1, Stride: 2}, "elements 1 and 3 of the scratch 2"},
		{sim.Region{Buf: 1, Off: 2, Count: 3, Block: 1, Stride: -1}, "elements 2, 1 and 0, in that order, of the receive buffer"},
		{sim.Region{Buf: 2, Off: 0, Count: 5, Block: 2, Stride: 4}, "elements 0..1, 4..5 and 8 of the scratch 2"},
		{sim.Region{Buf: 2, Off: 0, Count: 8, Block: 1, Stride: 2}, "8 elements of the scratch 2 in 8 blocks of 1 from 0, every 2"},
	} {
		if got := elements(collectives.Alltoall, c.r); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
