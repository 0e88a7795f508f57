// Package hugepage makes large tables that the kernel may back with
// transparent huge pages.
//
// Touching fresh memory costs a page fault per 4 KiB page, and on the
// virtual machines collsim is measured on a fault costs over ten
// microseconds: 128 MiB took 380-452 ms to touch for the first time, and
// 9-88 ms when backed by 2 MiB pages (BenchmarkFirstTouch, which frees
// and maps again in a loop: huge pages freed moments before). Linux backs
// anonymous memory with huge pages where the process asks for them
// (madvise(MADV_HUGEPAGE)) whenever transparent huge pages are set to
// "madvise" (the default of many distributions) or "always"; Go's heap does
// not ask. Make asks for the tables it makes, as the Policy says (by
// default not on virtual machines whose balloon reports free pages, where
// huge pages the host took back cost more to touch than small ones);
// elsewhere than Linux it is make.
package hugepage

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Policy says whether large tables ask for huge pages.
type Policy int

const (
	// Auto asks for huge pages, except where GODEBUG has disablethp=1
	// (as Go's runtime reads it) and on a virtual machine whose balloon
	// device reports free memory to its host (Linux's free page
	// reporting, which Firecracker and QEMU's virtio-balloon offer). The
	// guest reports free memory in blocks of a huge page's size, and a
	// huge page is made of such a block: its first touch waits for the
	// host to supply all of it again, where small pages come first from
	// memory freed recently, which the host still backs. There, tables in
	// huge pages cost more to touch than they save in TLB misses unless
	// the huge pages were freed moments before (README, "Huge pages").
	Auto Policy = iota
	// On always asks for huge pages.
	On
	// Off never asks for them, and marks arenas' mappings not to be given
	// any (for machines whose transparent huge pages are "always").
	Off
)

// ParsePolicy reads a policy's name: auto, on or off.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "auto":
		return Auto, nil
	case "on":
		return On, nil
	case "off":
		return Off, nil
	}
	return Auto, fmt.Errorf("%q is not a huge page policy: auto, on or off", s)
}

// advising is whether tables ask for huge pages now (SetPolicy).
var advising atomic.Bool

// Advising reports whether the tables made from now on ask for huge pages
// (the policy as decided on this machine).
func Advising() bool { return advising.Load() }

func init() { SetPolicy(Auto) }

// SetPolicy decides whether the tables made from now on ask for huge
// pages; tables made before keep what they asked for.
func SetPolicy(p Policy) {
	switch p {
	case On:
		advising.Store(true)
	case Off:
		advising.Store(false)
	default:
		advising.Store(autoAdvises())
	}
}

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
