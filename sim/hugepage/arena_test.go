package hugepage

import (
	"strings"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

type odd struct {
	a int64
	b uint8
}

// Tables from an arena are zero, aligned for their elements, as long as
// asked and apart from one another: each is filled with its own number
// and all are read back after the last is made.
func TestAllocIsZeroAlignedAndApart(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := NewArena()
		defer a.Free()
		var checks []func()
		tables := rapid.IntRange(1, 40).Draw(t, "tables")
		for k := range tables {
			// Small ones share chunks; some pass ownBytes and have mappings of their own.
			n := rapid.OneOf(rapid.IntRange(0, 300), rapid.IntRange(0, 1<<18)).Draw(t, "n")
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				checks = append(checks, fillFresh(t, a, n, uint8(k)))
			case 1:
				checks = append(checks, fillFresh(t, a, n, odd{int64(k), uint8(k)}))
			case 2:
				checks = append(checks, fillFresh(t, a, n, uint32(k)))
			}
		}
		for _, check := range checks {
			check()
		}
	})
}

// fillFresh allocates n elements of T from a, requires them zero and
// aligned, fills them with v and returns a check that they still hold it.
func fillFresh[T comparable](t *rapid.T, a *Arena, n int, v T) (check func()) {
	s := Alloc[T](a, n)
	checkFresh(t, s, n)
	for i := range s {
		s[i] = v
	}
	return func() {
		for i, x := range s {
			if x != v {
				t.Fatalf("table of %d %T filled with %v holds %v at %d: another table overlaps it", n, v, v, x, i)
			}
		}
	}
}

func checkFresh[T comparable](t *rapid.T, s []T, n int) {
	t.Helper()
	if len(s) != n || cap(s) < n {
		t.Fatalf("Alloc(%d): len %d cap %d", n, len(s), cap(s))
	}
	var zero T
	if n > 0 && uintptr(unsafe.Pointer(&s[0]))%unsafe.Alignof(zero) != 0 {
		t.Fatalf("Alloc(%d) of %T at %p: not aligned to %d", n, zero, &s[0], unsafe.Alignof(zero))
	}
	for i, v := range s {
		if v != zero {
			t.Fatalf("Alloc(%d)[%d] = %v, want zero", n, i, v)
		}
	}
}

// A nil arena hands out Go memory, as make does.
func TestAllocFromNoArenaIsMake(t *testing.T) {
	s := Alloc[uint64](nil, 1000)
	if len(s) != 1000 || s[999] != 0 {
		t.Fatalf("len %d", len(s))
	}
	if Reserve[uint64](nil, 1000) != nil {
		t.Fatal("Reserve from no arena gave room")
	}
	var a *Arena
	a.Free() // does nothing
}

// A table that holds pointers must not leave Go's heap: Alloc and Reserve
// refuse it, whatever the pointer's kind or depth.
func TestAllocRefusesPointers(t *testing.T) {
	refuses := func(name string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "holds pointers") {
				t.Errorf("%s: recovered %v, want a panic about pointers", name, r)
			}
		}()
		f()
	}
	a := NewArena()
	defer a.Free()
	refuses("*int", func() { Alloc[*int](a, 4) })
	refuses("[]int", func() { Alloc[[]int](a, 4) })
	refuses("string", func() { Reserve[string](a, 4) })
	refuses("map", func() { Alloc[map[int]int](a, 4) })
	refuses("a struct's nested array of func", func() {
		Alloc[struct {
			n int32
			f [2]struct{ g func() }
		}](a, 4)
	})
	refuses("unsafe.Pointer", func() { Alloc[unsafe.Pointer](a, 4) })
	// A refusal is not remembered as a pass (passes are remembered).
	refuses("*int again", func() { Alloc[*int](a, 4) })
	refuses("string again", func() { Alloc[string](a, 4) })
	// Pointer-free kinds pass.
	_ = Alloc[struct {
		x [3]float64
		c complex128
		b bool
		e [0]*int // no element: nothing to point with
	}](a, 4)
}
