// Package hugepage makes large tables that the kernel may back with
// transparent huge pages.
//
// Touching fresh memory costs a page fault per 4 KiB page, and on the
// virtual machines collsim is measured on a fault costs over ten
// microseconds: 128 MiB took 380-452 ms to touch for the first time, and
// 9-88 ms when backed by 2 MiB pages (BenchmarkFirstTouch). Linux backs
// anonymous memory with huge pages where the process asks for them
// (madvise(MADV_HUGEPAGE)) whenever transparent huge pages are set to
// "madvise" (the default of many distributions) or "always"; Go's heap does
// not ask. Make asks for the tables it makes; elsewhere than Linux it is
// make.
package hugepage

import "unsafe"

// Size is the huge page size asked for: 2 MiB, x86-64's and arm64's
// usual one.
const Size = 2 << 20

// minBytes is the smallest table advised: below a huge page, the pages
// around the table that the advice also covers (see Make) would weigh more
// than the table.
const minBytes = Size

// Make returns make([]T, n), asking the kernel to back it with huge pages
// when it is large. The advice covers every 2 MiB page the table touches,
// so the heap memory next to it in its first and last huge page may be
// backed by them too (the advice never changes what memory holds). Costs:
// where the kernel's defrag setting is "madvise", a fault there may wait
// for the kernel to compact memory into a free huge page, and the advice
// stays on that heap memory after the table is freed, so the kernel may
// later gather memory Go had returned back into huge pages (a larger
// resident size in a long-lived process).
func Make[T any](n int) []T {
	s := make([]T, n)
	var zero T
	if size := uintptr(n) * unsafe.Sizeof(zero); size >= minBytes {
		advise(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}

// Grow returns s with room for n more elements, as slices.Grow does, in a
// table made by Make when it must move.
func Grow[T any](s []T, n int) []T {
	if n < 0 {
		panic("hugepage.Grow: negative count")
	}
	if cap(s)-len(s) >= n {
		return s
	}
	// Double, as append does for large slices' first growth, so that a
	// table that grows an element at a time moves log(n) times.
	t := Make[T](max(len(s)+n, 2*cap(s)))
	copy(t, s)
	return t[:len(s)]
}
