package hugepage

import "testing"

func TestMakeIsMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		s := Make[int32](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("Make(%d)[%d] = %d, want 0", n, i, v)
			}
		}
	}
}

func TestGrowKeepsTheElements(t *testing.T) {
	var s []uint64
	for i := range uint64(3 << 20) {
		if len(s) == cap(s) {
			before := cap(s)
			s = Grow(s, 1)
			if cap(s) < 2*before || cap(s) < 1 {
				t.Fatalf("Grow at %d: cap %d, want at least %d", len(s), cap(s), max(2*before, 1))
			}
		}
		s = append(s, i)
	}
	for i, v := range s {
		if v != uint64(i) {
			t.Fatalf("s[%d] = %d after growing", i, v)
		}
	}
	if g := Grow(s[:10], 5); &g[0] != &s[0] {
		t.Fatal("Grow moved a slice that had room")
	}
}
