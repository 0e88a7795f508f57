package realrun

import (
	"fmt"
	"io"
	"net"
	"runtime"
)

// Transport says how the ranks of a run that share a host talk.
type Transport uint8

const (
	// SharedMemory connects ranks on one host (the same /dev/shm and
	// network namespace) through shared memory and the others over TCP, as
	// MPI libraries do by default.
	SharedMemory Transport = iota
	// TCP connects every pair over TCP, as Open MPI's --mca btl tcp,self.
	TCP
	// sharedMemoryServed is SharedMemory with the rank's goroutine serving
	// the channels (progress.go) however many ranks share the cores: for
	// tests of that path with more ranks than cores.
	sharedMemoryServed
)

// String names the transport as the real command's --transport does.
func (t Transport) String() string {
	switch t {
	case TCP:
		return "tcp"
	case sharedMemoryServed:
		return "shm-served"
	}
	return "shm"
}

// After the handshake, the two ends of a new connection choose its channel
// (see shm_linux.go). The dialing side offers:
//
//	want byte | host [16]byte
//
// where want is 1 if it may use shared memory and host names this boot of
// its host and its network namespace. The accepting side answers 0, or 1
// followed by the token and the 35-byte name of a channel file it created
// in /dev/shm; the dialing side maps it, checks the token, removes the name
// and answers 1 if it will use it, 0 if not. Either way the accepting side
// then removes the name too. The peers fall back to TCP whenever one of
// them cannot map the file: different hosts, a /dev/shm that is not shared
// or full, another system than Linux.
const (
	offerBytes   = 1 + 16
	segNameBytes = len("collsim-0123456789-0123456789abcdef") // see segmentName
)

// offerShared runs the dialing side of the choice on c, the connection to
// peer; it returns the channel to use (c itself, or a shared one over it).
func (m *Mesh) offerShared(c net.Conn, peer int) (net.Conn, error) {
	var offer [offerBytes]byte
	if id, ok := sharedHostID(); ok && m.transport != TCP {
		offer[0] = 1
		copy(offer[1:], id[:])
	}
	if _, err := c.Write(offer[:]); err != nil {
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	var answer [1 + tokenBytes + segNameBytes]byte
	if _, err := io.ReadFull(c, answer[:1]); err != nil {
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	if answer[0] == 0 {
		return c, nil
	}
	if _, err := io.ReadFull(c, answer[1:]); err != nil {
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	var token [tokenBytes]byte
	copy(token[:], answer[1:])
	seg, err := openSegment(shmDir, string(answer[1+tokenBytes:]), token, ringBytes(m.size))
	mapped := []byte{0}
	if err == nil {
		mapped[0] = 1
	}
	if _, err := c.Write(mapped); err != nil {
		if seg != nil {
			seg.release()
		}
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	if seg == nil {
		return c, nil
	}
	return seg.conn(false, c), nil
}

// answerShared runs the accepting side of the choice on c, the connection
// from peer.
func (m *Mesh) answerShared(c net.Conn, peer int) (net.Conn, error) {
	var offer [offerBytes]byte
	if _, err := io.ReadFull(c, offer[:]); err != nil {
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	var seg *segment
	if id, ok := sharedHostID(); ok && m.transport != TCP && offer[0] == 1 && string(offer[1:]) == string(id[:]) {
		seg, _ = createSegment(shmDir, ringBytes(m.size)) // cannot: TCP
	}
	if seg == nil {
		if _, err := c.Write([]byte{0}); err != nil {
			return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
		}
		return c, nil
	}
	defer seg.unlink()
	answer := append(append([]byte{1}, seg.token[:]...), seg.base...)
	var mapped [1]byte
	_, err := c.Write(answer)
	if err == nil {
		_, err = io.ReadFull(c, mapped[:])
	}
	if err != nil || mapped[0] == 0 {
		seg.release()
		if err != nil {
			return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
		}
		return c, nil
	}
	return seg.conn(true, c), nil
}

// pollIfCoresSuffice lets the shared-memory channels poll before they
// sleep when this host has a core for each of the run's ranks on it (this
// one and its shared-memory peers), as MPI libraries poll; with fewer
// cores, polling ranks would take the cores their peers need. It reports
// whether they poll.
func (m *Mesh) pollIfCoresSuffice() bool {
	shared := m.SharedPeers()
	if shared == 0 || shared+1 > runtime.NumCPU() && m.transport != sharedMemoryServed {
		return false
	}
	for _, c := range m.conns {
		if sc, ok := c.(*sharedConn); ok {
			sc.pollWhenAlone()
		}
	}
	return true
}

// SharedPeers is how many of this rank's peers it reaches through shared
// memory.
func (m *Mesh) SharedPeers() int {
	n := 0
	for _, c := range m.conns {
		if _, ok := c.(*sharedConn); ok {
			n++
		}
	}
	return n
}
