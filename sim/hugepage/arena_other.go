//go:build !linux

package hugepage

import "unsafe"

const canReserve = false

// mapAligned maps nothing elsewhere than Linux: arenas hand out Go memory.
func mapAligned(uintptr, bool, bool) (unsafe.Pointer, uintptr) { return nil, 0 }

func unmap(unsafe.Pointer, uintptr) {}

func addressLimit() uint64 { return 0 }

func protect(unsafe.Pointer, uintptr, bool) {}

func adviseMapping(unsafe.Pointer, uintptr, bool) {}
