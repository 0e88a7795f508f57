package sim

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestCopyWordsIsCopy: CopyWords leaves a buffer as Go's copy does, for
// lengths around its 512 KiB pieces and for source and destination that
// overlap either way (memmove semantics), and returns copy's count.
func TestCopyWordsIsCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piece := copyPieceWords
		size := rapid.SampledFrom([]int{0, 1, piece - 1, piece, piece + 1, 2*piece + 3, 3 * piece}).Draw(t, "size")
		size += rapid.IntRange(0, 16).Draw(t, "extra")
		buf := make([]uint64, 2*size+64)
		for i := range buf {
			buf[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
		}
		srcAt := rapid.IntRange(0, len(buf)-size).Draw(t, "srcAt")
		dstAt := rapid.IntRange(0, len(buf)-size).Draw(t, "dstAt")
		dstLen := rapid.IntRange(0, size).Draw(t, "dstLen")
		want := slices.Clone(buf)
		wantN := copy(want[dstAt:dstAt+dstLen], want[srcAt:srcAt+size])
		gotN := CopyWords(buf[dstAt:dstAt+dstLen], buf[srcAt:srcAt+size])
		if gotN != wantN {
			t.Fatalf("copied %d elements, copy copies %d", gotN, wantN)
		}
		if i := firstDifference(buf, want); i >= 0 {
			t.Fatalf("element %d is %#x, copy leaves %#x (src at %d, dst at %d, %d elements)", i, buf[i], want[i], srcAt, dstAt, wantN)
		}
	})
}

func firstDifference(a, b []uint64) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
