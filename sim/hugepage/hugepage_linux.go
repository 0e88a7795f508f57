package hugepage

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// advise asks for huge pages on the 2 MiB pages that [p, p+size) touches.
// The advice is a hint: where the kernel cannot give huge pages (they are
// off, or none is free) the memory is the same, in small pages, and an
// error changes nothing, so none is returned.
func advise(p unsafe.Pointer, size uintptr) {
	if thpOff {
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

// thpOff is whether GODEBUG's disablethp asks Go not to use huge pages for
// its heap (for machines whose setting is "always"): the tables respect it.
var thpOff = disablesTHP(os.Getenv("GODEBUG"))

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
