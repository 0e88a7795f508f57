package cmdutil

import (
	"slices"
	"testing"
)

func TestLists(t *testing.T) {
	// A range ends at its end, a doubling of its start or not.
	if got, err := Ints("2..20"); err != nil || !slices.Equal(got, []int{2, 4, 8, 16, 20}) {
		t.Errorf("Ints(2..20) = %v, %v", got, err)
	}
	if got, err := Ints("2..1000"); err != nil || len(got) != 10 || got[8] != 512 || got[9] != 1000 {
		t.Errorf("Ints(2..1000) = %v, %v; want 2, 4, ..., 512, 1000", got, err)
	}
	if got, err := Ints("5..5"); err != nil || !slices.Equal(got, []int{5}) {
		t.Errorf("Ints(5..5) = %v, %v", got, err)
	}
	// Up to the largest size: 63 values, no doubling past it (which would
	// wrap negative and never end).
	if got, err := Sizes("1..4611686018427387904"); err != nil || len(got) != 63 || got[62] != 1<<62 {
		t.Errorf("Sizes(1..2^62) = %d values ending %v, %v; want 63 ending 2^62", len(got), got[len(got)-1:], err)
	}
	if got, err := Ints("3, 5,7"); err != nil || !slices.Equal(got, []int{3, 5, 7}) {
		t.Errorf("Ints(3, 5,7) = %v, %v", got, err)
	}
	if got, err := Sizes("8..64"); err != nil || !slices.Equal(got, []int64{8, 16, 32, 64}) {
		t.Errorf("Sizes(8..64) = %v, %v", got, err)
	}
	if got, err := Sizes("1KiB,1MiB"); err != nil || !slices.Equal(got, []int64{1024, 1 << 20}) {
		t.Errorf("Sizes(1KiB,1MiB) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "0..8", "8..2", "1,,2"} {
		if _, err := Ints(bad); err == nil {
			t.Errorf("Ints(%q) accepted", bad)
		}
	}
}
