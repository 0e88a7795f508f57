// Package hugepage makes large tables that the kernel may back with
// transparent huge pages.
//
// Touching fresh memory costs a page fault per 4 KiB page, and a fault's
// cost depends on the machine far more than the rest of a run does: on
// the virtual machines collsim is measured on, 128 MiB took 380-452 ms to
// touch for the first time in small pages and 9-88 ms in 2 MiB pages
// freed moments before (BenchmarkFirstTouch); on one such machine huge
// pages the host had taken back cost more than small ones, on another,
// hours later, a small page's fault cost 10-12 µs and a fresh huge page
// 0.1-3.3 ms, at most about half what its 512 small pages cost. Linux
// backs anonymous memory with huge pages where the process asks for them
// (madvise(MADV_HUGEPAGE)) whenever transparent huge pages are set to
// "madvise" (the default of many distributions) or "always"; Go's heap does
// not ask. Make asks for the tables it makes, as the Policy says (by
// default where a measurement says huge pages are cheaper to touch);
// elsewhere than Linux it is make.
package hugepage

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Policy says whether large tables ask for huge pages.
type Policy int

const (
	// Auto asks for huge pages where touching fresh memory costs less in
	// them than in small pages: the first time a table or an arena's
	// mapping is large enough to ask, it maps 2 MiB of each kind, writes a
	// byte in every page, and compares the times (a few milliseconds, once
	// per process; longer where the kernel must compact memory to find a
	// huge page, which the tables would wait for too; see touchCosts). It
	// never asks where GODEBUG has disablethp=1 (as Go's runtime reads it)
	// or where transparent huge pages are "never" or absent. The
	// measurement, not a rule, decides, since which kind is cheaper
	// differs between machines and between days of the same virtual
	// machine (README, "Huge pages"). It changes speed only, never a
	// result.
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

// policy is the Policy in force (SetPolicy).
var policy atomic.Int32

// Advising reports whether the tables made from now on ask for huge pages
// (the policy as decided on this machine; under Auto, the first call
// measures).
func Advising() bool {
	switch Policy(policy.Load()) {
	case On:
		return true
	case Off:
		return false
	}
	return autoDecision()
}

// autoDecision is Auto's choice, made once per process (tests replace
// it); autoSaidNo records a choice of no, for mappings too small to ask
// (adviseMapping).
var (
	autoDecision = sync.OnceValue(func() bool {
		yes := autoAdvises()
		autoSaidNo.Store(!yes)
		return yes
	})
	autoSaidNo atomic.Bool
)

// SetPolicy decides whether the tables made from now on ask for huge
// pages; tables made before keep what they asked for. Auto is the policy
// until it is called.
func SetPolicy(p Policy) {
	switch p {
	case On, Off:
	default:
		p = Auto
	}
	policy.Store(int32(p))
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
