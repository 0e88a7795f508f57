package realrun

// TCPServed and SharedMemoryServed are TCP and SharedMemory with every
// rank's goroutine serving its channels however many ranks share the
// cores, so that tests reach that path with more ranks than this machine
// has cores.
const (
	TCPServed          = TCP | serveAlways
	SharedMemoryServed = SharedMemory | serveAlways
)

// ServedPeers is how many of the rank's channels its own goroutine serves.
func (m *Mesh) ServedPeers() int { return len(m.polled) }

// SharedMemoryRings is SharedMemory with every message through the rings,
// none as a single copy, so that tests keep reaching that path.
const SharedMemoryRings = SharedMemory | ringsOnly
