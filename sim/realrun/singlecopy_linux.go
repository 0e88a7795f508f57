package realrun

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readRemote copies len(dst) bytes at addr in process pid's memory into
// dst with process_vm_readv (cross-memory attach: one copy, by the kernel,
// between the two processes' pages).
func readRemote(pid int, addr uintptr, dst []byte) error {
	for len(dst) > 0 {
		local := []unix.Iovec{{Base: &dst[0]}}
		local[0].SetLen(len(dst))
		n, err := unix.ProcessVMReadv(pid, local, []unix.RemoteIovec{{Base: addr, Len: len(dst)}}, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 { // the rest is not mapped there
			return syscall.EFAULT
		}
		dst, addr = dst[n:], addr+uintptr(n)
	}
	return nil
}

// mayRead reports whether this process may read process pid's memory:
// whether want is what it reads at addr there.
func mayRead(pid int, addr uintptr, want []byte) bool {
	got := make([]byte, len(want))
	return readRemote(pid, addr, got) == nil && bytes.Equal(got, want)
}

// describe writes where this process maps the segment (its process ID and
// the mapping's address, little-endian) to b, for the peer's probeReads.
func (s *segment) describe(b []byte) {
	binary.LittleEndian.PutUint64(b, uint64(os.Getpid()))
	binary.LittleEndian.PutUint64(b[8:], uint64(uintptr(unsafe.Pointer(&s.mem[0]))))
}
