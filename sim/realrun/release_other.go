//go:build !amd64 && !arm64

package realrun

import "sync/atomic"

// storeRelease stores val at addr; elsewhere than amd64 and arm64, with
// sync/atomic's sequentially consistent store.
func storeRelease(addr *uint64, val uint64) { atomic.StoreUint64(addr, val) }
