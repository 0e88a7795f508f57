package hugepage

import (
	"os"
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
	// The Go heap maps its arenas (64 MiB, aligned) whole, so the rounded
	// range lies in mapped heap memory; the address is passed as a number,
	// since the range begins outside the table.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_HUGEPAGE)
}

// thpOff is whether GODEBUG=disablethp=1 asks Go not to use huge pages for
// its heap (for machines whose setting is "always"): the tables respect it.
var thpOff = disablesTHP(os.Getenv("GODEBUG"))

// disablesTHP reports whether a GODEBUG value sets disablethp=1 (the last
// setting of a key wins, as in Go).
func disablesTHP(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "disablethp="); ok {
			off = v == "1"
		}
	}
	return off
}
