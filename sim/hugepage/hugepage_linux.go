package hugepage

import (
	"os"
	"path/filepath"
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
	if !advising.Load() {
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
// turns them off for Go's heap, or where a balloon reports free pages.
func autoAdvises() bool {
	return !disablesTHP(os.Getenv("GODEBUG")) && !reportsFreePages(virtioDevices)
}

// virtioDevices is where sysfs lists virtio devices (tests point it at
// trees of their own).
var virtioDevices = "/sys/bus/virtio/devices"

// reportsFreePages reports whether one of the virtio devices under dir
// (sysfs's /sys/bus/virtio/devices) is a memory balloon (device ID 5)
// that negotiated free page reporting (feature bit 5,
// VIRTIO_BALLOON_F_REPORTING; features lists bits from 0, one character
// each). Anything unreadable counts as no.
func reportsFreePages(dir string) bool {
	devices, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, d := range devices {
		id, err := os.ReadFile(filepath.Join(dir, d.Name(), "device"))
		if err != nil || strings.TrimSpace(string(id)) != "0x0005" {
			continue
		}
		features, err := os.ReadFile(filepath.Join(dir, d.Name(), "features"))
		if err == nil && len(features) > 5 && features[5] == '1' {
			return true
		}
	}
	return false
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
