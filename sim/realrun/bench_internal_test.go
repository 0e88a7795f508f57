package realrun

import (
	"slices"
	"testing"
)

// TestReuse: an iteration's fresh buffers are copied into the kept ones
// when their shapes match, and replace them when not.
func TestReuse(t *testing.T) {
	kept := [][]uint64{{1, 2}, {3}}
	first := &kept[0][0]
	got := reuse(kept, [][]uint64{{7, 8}, {9}})
	if &got[0][0] != first || !slices.Equal(got[0], []uint64{7, 8}) || !slices.Equal(got[1], []uint64{9}) {
		t.Errorf("same shape: got %v (kept buffers reused: %t), want [[7 8] [9]] in the kept buffers", got, &got[0][0] == first)
	}
	for _, fresh := range [][][]uint64{{{7, 8}}, {{7, 8}, {9, 10}}, {{7}, {9}}} {
		if got := reuse(kept, fresh); &got[0][0] != &fresh[0][0] {
			t.Errorf("shape %v against %v: the kept buffers were used", fresh, kept)
		}
	}
	if got := reuse(nil, [][]uint64{{5}}); !slices.Equal(got[0], []uint64{5}) {
		t.Errorf("nothing kept: got %v", got)
	}
}
