package hugepage

import (
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// advise asks for huge pages on the 2 MiB pages that [p, p+size) touches.
// The advice is a hint: where the kernel cannot give huge pages (they are
// off, or none is free) the memory is the same, in small pages, and an
// error changes nothing, so none is returned.
func advise(p unsafe.Pointer, size uintptr) {
	if !Advising() {
		return
	}
	start := uintptr(p) &^ (Size - 1)
	end := (uintptr(p) + size + Size - 1) &^ (Size - 1)
	// The rounded range lies in heap arenas Go has mapped or reserved
	// (reserved space takes the advice harmlessly, and loses it when Go
	// maps it); the address is passed as a number, since the range begins
	// outside the table.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_HUGEPAGE)
}

// autoAdvises is Auto's choice (see Auto): no huge pages where they are
// ruled out, else the kind of page that costs less to touch.
func autoAdvises() bool {
	if hugePagesRuledOut() {
		return false
	}
	small, huge, ok := measureTouch()
	return ok && huge < small
}

// hugePagesRuledOut reports whether Auto asks for no huge pages without
// measuring: GODEBUG turns them off for Go's heap, or the kernel gives
// none.
func hugePagesRuledOut() bool {
	return disablesTHP(os.Getenv("GODEBUG")) || !thpOffered(thpEnabled)
}

// ruledOut is hugePagesRuledOut as it was the first time asked, for
// mappings too small to make Auto measure.
var ruledOut = sync.OnceValue(hugePagesRuledOut)

// measureTouch is touchCosts (tests replace it).
var measureTouch = touchCosts

// thpEnabled is where sysfs tells whether transparent huge pages are
// given (tests point it at files of their own).
var thpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled"

// thpOffered reports whether the setting in file (sysfs's enabled: the
// choices with the one in force in brackets) gives huge pages on advice:
// "always" or "madvise". A missing or unreadable file counts as no.
func thpOffered(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	s := string(b)
	return strings.Contains(s, "[always]") || strings.Contains(s, "[madvise]")
}

// smallSample is how many pages touchCosts touches per sample of small
// pages (fewer where a huge page holds fewer): enough to time (64 faults
// took 20 µs on a fast machine and 0.75 ms on the slowest seen), few
// enough to cost little.
const smallSample = 64

// touchCosts measures what touching fresh memory costs per huge page's
// worth: 2 MiB in small pages (samples of smallSample pages, scaled) and
// 2 MiB asked as a huge page, a byte written in every page, as a table's
// first use does; each the faster of two samples, so that one preempted
// sample decides neither way. Where the kernel gives no huge page there,
// its small pages are timed instead, so the comparison holds either way.
// ok is false when memory cannot be mapped.
func touchCosts() (small, huge time.Duration, ok bool) {
	page := uintptr(unix.Getpagesize())
	pages := min(smallSample, Size/page)
	if pages == 0 { // a page larger than a huge page: nothing to compare
		return 0, 0, false
	}
	small, huge = time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range 2 {
		s, okS := timeTouch(pages*page, page, unix.MADV_NOHUGEPAGE)
		h, okH := timeTouch(Size, page, unix.MADV_HUGEPAGE)
		if !okS || !okH {
			return 0, 0, false
		}
		small = min(small, s*time.Duration(Size/(pages*page)))
		huge = min(huge, h)
	}
	return small, huge, true
}

// timeTouch maps n bytes of fresh memory (mapFresh), gives them advice,
// and times writing a byte every page bytes (tests replace it).
var timeTouch = func(n, page uintptr, advice int) (time.Duration, bool) {
	b, unmap := mapFresh(n)
	if b == nil {
		return 0, false
	}
	defer unmap()
	_ = unix.Madvise(b, advice)
	start := time.Now()
	for i := uintptr(0); i < n; i += page {
		b[i] = 1
	}
	return time.Since(start), true
}

// mapFresh maps n bytes of fresh memory, starting on a huge page boundary
// when n spans one (so that a 2 MiB sample can be one huge page), and
// returns them with the function that unmaps them; nil when mapping fails.
func mapFresh(n uintptr) ([]byte, func()) {
	p, mapped := mapOnBoundary(n, false)
	if p == nil {
		return nil, nil
	}
	return unsafe.Slice((*byte)(p), n), func() { unmap(p, mapped) }
}

// disablesTHP reports whether a GODEBUG value turns disablethp on as Go's
// runtime reads it: the last setting of the key wins, any whole number but
// 0 turns it on, and keys are not trimmed of spaces.
func disablesTHP(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(kv, "disablethp="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				off = n != 0
			}
		}
	}
	return off
}
