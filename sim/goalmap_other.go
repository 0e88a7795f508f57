//go:build !linux

package sim

import "os"

// mapFile does not map files here: ParseGOALFile reads them.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	return nil, nil, false
}

func releasePages(b []byte) {}
