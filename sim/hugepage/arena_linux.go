package hugepage

import (
	"math"
	"unsafe"

	"golang.org/x/sys/unix"
)

const canReserve = true

// mapAligned maps size bytes (rounded up to whole pages) of zero memory,
// starting on a huge page boundary when it spans one, so that every whole
// huge page of it can be one; with huge, it advises huge pages before any
// is touched. It returns the start and the length mapped, or nil when
// mapping fails.
func mapAligned(size uintptr, reserve, huge bool) (unsafe.Pointer, uintptr) {
	p, n := mapOnBoundary(size, reserve)
	if p != nil {
		adviseMapping(p, n, huge)
	}
	return p, n
}

// mapOnBoundary is mapAligned without the advice (which Auto's
// measurement must not ask for).
func mapOnBoundary(size uintptr, reserve bool) (unsafe.Pointer, uintptr) {
	page := uintptr(unix.Getpagesize())
	n := (size + page - 1) &^ (page - 1)
	extra := uintptr(0)
	if n >= Size {
		extra = Size // room to slide the start to a boundary
	}
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	if reserve {
		flags |= unix.MAP_NORESERVE
	}
	p, err := unix.MmapPtr(-1, 0, nil, n+extra, unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return nil, 0
	}
	if extra > 0 {
		head, tail := trim(uintptr(p), extra)
		if head > 0 {
			unmap(p, head)
		}
		if tail > 0 {
			unmap(unsafe.Add(p, head+n), tail)
		}
		p = unsafe.Add(p, head)
	}
	return p, n
}

// adviseMapping gives the n bytes mapped at p the advice the policy asks
// for now: huge pages where huge and asked for, none at all where the
// policy is off (as Go's runtime marks its heap when GODEBUG has
// disablethp=1, for machines whose setting is "always": the kernel may
// merge even a small mapping with its neighbours into one that holds
// huge pages); other mappings keep the kernel's default. A mapping
// smaller than a huge page never makes Auto measure (a small run makes
// only such): it is marked where no huge pages are known without
// measuring, or Auto has measured and said no.
func adviseMapping(p unsafe.Pointer, n uintptr, huge bool) {
	b := unsafe.Slice((*byte)(p), n)
	if n < Size {
		if pol := Policy(policy.Load()); pol == Off || pol == Auto && (ruledOut() || autoSaidNo.Load()) {
			_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
		}
		return
	}
	switch {
	case !Advising():
		_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	case huge:
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
}

// protect makes a pooled chunk unreachable (no access) or gives it back
// its access. (An error leaves it as it was: reads of freed tables then
// go unnoticed, as they would in heap memory.)
func protect(p unsafe.Pointer, n uintptr, off bool) {
	prot := unix.PROT_READ | unix.PROT_WRITE
	if off {
		prot = unix.PROT_NONE
	}
	_ = unix.Mprotect(unsafe.Slice((*byte)(p), n), prot)
}

// addressLimit returns the process's limit on address space (RLIMIT_AS),
// the largest uint64 when there is none.
func addressLimit() uint64 {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &l) != nil || l.Cur == unix.RLIM_INFINITY {
		return math.MaxUint64
	}
	return l.Cur
}

func unmap(p unsafe.Pointer, n uintptr) {
	// An error leaves the memory mapped: nothing else to do about it.
	_ = unix.MunmapPtr(p, n)
}

// trim returns how much of a mapping at start, extra bytes longer than the
// table it is for, to unmap before the table (so that it starts on a huge
// page boundary) and after it. (Linux 6.7 and later align such mappings
// themselves; earlier ones do not.)
func trim(start, extra uintptr) (head, tail uintptr) {
	head = -start & (Size - 1)
	return head, extra - head
}
