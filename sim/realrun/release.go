//go:build amd64 || arm64

package realrun

// storeRelease stores val at addr with release ordering only: every
// earlier store of this thread is visible to a thread that sees val, but
// unlike sync/atomic's stores it is no full fence, so the thread does not
// stall until the line is its own. A ring's writer publishes its records'
// words and its position with it (see sharedConn.put).
//
//go:noescape
func storeRelease(addr *uint64, val uint64)
