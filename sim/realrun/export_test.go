package realrun

// TCPGoroutines and SharedMemoryGoroutines are TCP and SharedMemory with
// a reader and a writer goroutine per channel rather than the rank's
// goroutine serving them, so that tests reach that path (TCP peers beyond
// the served ones take it).
const (
	TCPGoroutines          = TCP | goroutinePerPeer
	SharedMemoryGoroutines = SharedMemory | goroutinePerPeer
)

// LowerInPlaceLimit makes sends of contiguous regions of more than 4 KiB
// go straight from the rank's buffer (64 KiB by default), so that tests
// with small messages reach that path.
func (m *Mesh) LowerInPlaceLimit() { m.inPlaceAbove = 4 << 10 }

// Yields reports whether the rank gives its core up between looks.
func (m *Mesh) Yields() bool { return m.yield }

// ServedPeers is how many of the rank's channels its own goroutine serves.
func (m *Mesh) ServedPeers() int { return len(m.polled) }

// SharedMemoryRings is SharedMemory with every message through the rings,
// none as a single copy, so that tests keep reaching that path.
const SharedMemoryRings = SharedMemory | ringsOnly

// Landed reports how many data frames with elements the rank's goroutine
// read straight into their receive's region, and how many into pool
// buffers.
func (r *Rank) Landed() (landed, pooled int) { return r.mesh.landed, r.mesh.pooled }

// LandedFromRing is how many landed frames the rank read where they lay
// in a shared-memory ring (Mesh.landWhole).
func (r *Rank) LandedFromRing() int { return r.mesh.fromRing }

// CompletedInPlace is how many landed frames completed their receive as
// soon as they were read, without an event.
func (r *Rank) CompletedInPlace() int { return r.mesh.inPlace }

// ProbeSingleCopy runs the rank's single-copy probe (probeSingleCopy).
func (r *Rank) ProbeSingleCopy(jobs []Job) (*Probe, error) { return probeSingleCopy(r, jobs) }

// Mesh is the rank's mesh.
func (r *Rank) Mesh() *Mesh { return r.mesh }
