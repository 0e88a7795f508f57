package cmdutil

import (
	"slices"
	"testing"
)

func TestLists(t *testing.T) {
	if got, err := Ints("2..20"); err != nil || !slices.Equal(got, []int{2, 4, 8, 16}) {
		t.Errorf("Ints(2..20) = %v, %v", got, err)
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
