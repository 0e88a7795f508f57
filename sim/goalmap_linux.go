package sim

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f; ok is false where it cannot
// (the caller reads the file instead). The mapping is private and
// writable: the parser strips a line's comments in place, and a page it
// writes becomes the process's own copy (the file is never written).
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	if size <= 0 || uint64(size) > uint64(^uint(0)>>1) || unsafe.Sizeof(uintptr(0)) < 8 {
		return nil, nil, false // a 32-bit address space is better left to read
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data, func() { _ = unix.Munmap(data) }, true
}

// releasePages gives back the pages of b, which the parser has read: the
// kernel keeps them in its page cache, and the process no longer counts
// them as resident.
func releasePages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
