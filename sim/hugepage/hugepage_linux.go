package hugepage

import (
	"math"
	"os"
	"strconv"
	"strings"
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

// autoAdvises is Auto's choice (see Auto): no huge pages where GODEBUG
// turns them off for Go's heap or the kernel gives none, else the kind of
// page that costs less to touch.
func autoAdvises() bool {
	if disablesTHP(os.Getenv("GODEBUG")) || !thpOffered(thpEnabled) {
		return false
	}
	small, huge, ok := measureTouch()
	return ok && huge < small
}

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

// smallSample is how many 4 KiB pages touchCosts touches per sample of
// small pages: enough to time (64 faults take 20 µs on a fast machine and
// 0.75 ms on the slowest seen), few enough to cost little.
const smallSample = 64

// touchCosts measures what touching fresh memory costs per huge page's
// worth: 2 MiB in small pages (the faster of two samples of smallSample
// pages, scaled) and 2 MiB asked as a huge page, a byte written in every
// 4 KiB page, as a table's first use does. Where the kernel gives no huge
// page there, its 512 small pages are timed instead, so the comparison
// holds either way. ok is false when memory cannot be mapped.
func touchCosts() (small, huge time.Duration, ok bool) {
	page := uintptr(unix.Getpagesize())
	small = time.Duration(math.MaxInt64)
	for range 2 {
		t, ok := timeTouch(smallSample*page, page, unix.MADV_NOHUGEPAGE)
		if !ok {
			return 0, 0, false
		}
		small = min(small, t*time.Duration(Size/(smallSample*page)))
	}
	huge, ok = timeTouch(Size, page, unix.MADV_HUGEPAGE)
	return small, huge, ok
}

// timeTouch maps n bytes of fresh memory on a huge page boundary, gives
// them advice, and times writing a byte every page bytes.
func timeTouch(n, page uintptr, advice int) (time.Duration, bool) {
	m, err := unix.Mmap(-1, 0, int(n+Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return 0, false
	}
	defer unix.Munmap(m)
	head, _ := trim(uintptr(unsafe.Pointer(&m[0])), Size)
	b := m[head : head+n]
	_ = unix.Madvise(b, advice)
	start := time.Now()
	for i := uintptr(0); i < n; i += page {
		b[i] = 1
	}
	return time.Since(start), true
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
