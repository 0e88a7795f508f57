//go:build !linux

package hugepage

import "unsafe"

func advise(unsafe.Pointer, uintptr) {}

func autoAdvises() bool { return false }
