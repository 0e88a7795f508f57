//go:build !linux

package realcmd

// coresFor binds no rank here.
func coresFor(int) []int { return nil }

// bindToCPU does nothing here.
func bindToCPU(string) error { return nil }
