package realrun

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"net"
	"runtime"
	"strconv"
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
	// goroutinePerPeer, or'ed into a transport, gives every channel a
	// reader and a writer goroutine instead of serving it from the rank's
	// goroutine (progress.go): for tests of that path, which TCP peers
	// beyond maxServedTCP take.
	goroutinePerPeer Transport = 1 << 7
	// ringsOnly, or'ed into a transport, moves every message through the
	// rings, never as a single copy (singlecopy.go): for tests of that path.
	ringsOnly Transport = 1 << 6
)

// String names the transport as the real command's --transport does.
func (t Transport) String() string {
	name := "shm"
	if t&^(goroutinePerPeer|ringsOnly) == TCP {
		name = "tcp"
	}
	if t&goroutinePerPeer != 0 {
		name += "-goroutines"
	}
	if t&ringsOnly != 0 {
		name += "-rings"
	}
	return name
}

// shares reports whether the transport lets ranks on one host share memory.
func (t Transport) shares() bool { return t&^(goroutinePerPeer|ringsOnly) != TCP }

// After the handshake, the two ends of a new connection choose its channel
// (see shm_linux.go). The dialing side offers:
//
//	want byte | host [16]byte | machine [16]byte | cpus [128]byte
//
// where want is 1 if it may use shared memory, host names this boot of its
// host and its network namespace, machine this boot alone (zeros when it
// cannot tell), and cpus the CPUs it may run on (a bit each, CPU 0 the
// lowest bit of the first byte; zeros when it cannot tell). The accepting
// side answers 0 (TCP, another machine), 2 (TCP, the same machine), or 1,
// then its own cpus; after a 1 come the token and the 35-byte name
// of a channel file it created in /dev/shm, then its process ID and the
// address of its mapping of the file (8 bytes each); the dialing side maps
// it, checks the token, removes the name and answers
//
//	mapped byte | reads byte | process ID uint64 | address uint64
//
// where mapped is 1 if it will use the file, 0 if not, and reads is 1 if
// it read the token through the accepting side's mapping with
// process_vm_readv (it may copy messages straight out of that process's
// memory: singlecopy.go). When mapped, the accepting side tries the same
// through the dialing side's mapping and answers one byte, reads. Either
// way the accepting side then removes the name too. The peers
// fall back to TCP whenever one of them cannot map the file: different
// hosts, a /dev/shm that is not shared or full, another system than Linux.
// Both ends learn whether they run on one machine (emulated hosts in
// network namespaces share its cores) and on which of its CPUs, which
// decides whether a rank may poll without yielding (see serveChannels).
const (
	offerBytes   = 1 + 16 + 16 + cpuSetBytes
	segNameBytes = len("collsim-0123456789-0123456789abcdef") // see segmentName
)

const (
	answerTCP         = 0
	answerShared      = 1
	answerSameMachine = 2
)

// offerShared runs the dialing side of the choice on c, the connection to
// peer; it returns the channel to use (c itself, or a shared one over it).
func (m *Mesh) offerShared(c net.Conn, peer int) (net.Conn, error) {
	var offer [offerBytes]byte
	if id, ok := sharedHostID(); ok && m.transport.shares() {
		offer[0] = 1
		copy(offer[1:], id[:])
	}
	if id, ok := machineID(); ok {
		copy(offer[17:], id[:])
	}
	own := ownCPUs()
	copy(offer[33:], own[:])
	if _, err := c.Write(offer[:]); err != nil {
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	var head [1 + cpuSetBytes]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	m.sameMachine[peer] = head[0] == answerShared || head[0] == answerSameMachine
	if m.sameMachine[peer] {
		copy(m.peerCPUs[peer][:], head[1:])
	}
	if head[0] != answerShared {
		return c, nil
	}
	answer := make([]byte, tokenBytes+segNameBytes+16)
	if _, err := io.ReadFull(c, answer); err != nil {
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	var token [tokenBytes]byte
	copy(token[:], answer)
	seg, err := openSegment(shmDir, string(answer[tokenBytes:tokenBytes+segNameBytes]), token, ringBytes(m.size))
	var reply [2 + 16]byte
	if err == nil {
		reply[0] = 1
		m.probeReads(peer, answer[tokenBytes+segNameBytes:], token[:], &reply[1])
		seg.describe(reply[2:])
	}
	var reads [1]byte
	_, err = c.Write(reply[:])
	if err == nil && seg != nil {
		_, err = io.ReadFull(c, reads[:])
	}
	if err != nil {
		if seg != nil {
			seg.release()
		}
		return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
	}
	if seg == nil {
		return c, nil
	}
	m.readsMe[peer] = reads[0] == 1
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
	if id, ok := sharedHostID(); ok && m.transport.shares() && offer[0] == 1 && string(offer[1:17]) == string(id[:]) {
		seg, _ = createSegment(shmDir, ringBytes(m.size)) // cannot: TCP
	}
	id, ok := machineID()
	m.sameMachine[peer] = ok && string(offer[17:33]) == string(id[:])
	if m.sameMachine[peer] {
		copy(m.peerCPUs[peer][:], offer[33:])
	}
	own := ownCPUs()
	if seg == nil {
		no := append([]byte{answerTCP}, own[:]...)
		if m.sameMachine[peer] {
			no[0] = answerSameMachine
		}
		if _, err := c.Write(no); err != nil {
			return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
		}
		return c, nil
	}
	defer seg.unlink()
	answer := append(append(append([]byte{answerShared}, own[:]...), seg.token[:]...), seg.base...)
	answer = append(answer, make([]byte, 16)...)
	seg.describe(answer[len(answer)-16:])
	var reply [2 + 16]byte
	_, err := c.Write(answer)
	if err == nil {
		_, err = io.ReadFull(c, reply[:])
	}
	if err == nil && reply[0] == 1 {
		var reads [1]byte
		m.probeReads(peer, reply[2:], seg.token[:], &reads[0])
		_, err = c.Write(reads[:])
	}
	if err != nil || reply[0] == 0 {
		seg.release()
		if err != nil {
			return nil, fmt.Errorf("rank %d: choosing a channel with rank %d: %w", m.rank, peer, err)
		}
		return c, nil
	}
	m.readsMe[peer] = reply[1] == 1
	return seg.conn(true, c), nil
}

// probeReads tries to read token through peer's mapping of their channel
// file, described (process ID, address) in where; if it can, single copies
// from peer are possible: it notes peer's process and sets *reads to 1.
func (m *Mesh) probeReads(peer int, where, token []byte, reads *byte) {
	pid, addr := binary.LittleEndian.Uint64(where), binary.LittleEndian.Uint64(where[8:])
	if m.transport&ringsOnly != 0 || pid == 0 || pid > math.MaxInt32 || !mayRead(int(pid), uintptr(addr), token) {
		return
	}
	m.readable[peer] = int(pid)
	*reads = 1
}

// serveChannels decides how the rank waits, and reports whether its
// goroutine serves its channels (progress.go), as an MPI library's
// progress loop polls its transports. When this machine has fewer cores
// than the run's ranks on it that this rank knows of (itself and its peers
// on this machine, whatever their channel), the rank yields its core to
// the others between looks and polls longer before it sleeps, as Open MPI
// does when mpirun oversubscribes a node (mpi_yield_when_idle): a sleeping
// rank waits for a busy core to be woken, and with reader goroutines that
// sleep, four ranks on two cores moved 1 MiB allreduces at 0.09-0.12 of
// vader's bandwidth (README, "Shared memory").
func (m *Mesh) serveChannels() bool {
	local := 0
	for _, same := range m.sameMachine {
		if same {
			local++
		}
	}
	m.yield = local+1 > m.machineCores()
	if !m.yield {
		for _, c := range m.conns {
			if sc, ok := c.(*sharedConn); ok {
				sc.pollWhenAlone()
			}
		}
	}
	return m.transport&goroutinePerPeer == 0
}

// SharedPeers is how many of this rank's peers it reaches through shared
// memory.
func (m *Mesh) SharedPeers() int {
	n := 0
	for peer := range m.conns {
		if m.sharesWith(peer) {
			n++
		}
	}
	return n
}

// sharesWith reports whether the rank reaches peer through shared memory.
func (m *Mesh) sharesWith(peer int) bool {
	_, ok := m.conns[peer].(*sharedConn)
	return ok
}

// cpuSetBytes holds a bit for each of 1,024 CPUs: the CPUs a rank may run
// on, as sched_getaffinity gives them.
const cpuSetBytes = 128

// cpuSet is a set of CPUs, CPU i at bit i%8 of byte i/8.
type cpuSet [cpuSetBytes]byte

// add puts the CPUs of the set b (cpuSetBytes long) into s.
func (s *cpuSet) add(b []byte) {
	for i := range s {
		s[i] |= b[i]
	}
}

// count is how many CPUs s holds.
func (s *cpuSet) count() int {
	n := 0
	for _, b := range s {
		n += bits.OnesCount8(b)
	}
	return n
}

// machineCores is how many cores the rank and the peers on its machine
// may run on between them: the union of their CPU sets, which every rank
// of the machine computes alike (each hears every other's). Ranks pinned
// one to a core (mpirun --bind-to core, srun --cpu-bind=cores) each see a
// single CPU of their own, and have a core each. Where a CPU set is not
// known, the CPUs this process may run on.
func (m *Mesh) machineCores() int {
	own := ownCPUs()
	s := own
	for peer, same := range m.sameMachine {
		if same {
			s.add(m.peerCPUs[peer][:])
		}
	}
	if n := s.count(); n > 0 && own.count() > 0 {
		return n
	}
	return runtime.NumCPU()
}

// CPUList names the CPUs this process may run on, as Linux lists them
// ("0-3,8"); "" where unknown.
func CPUList() string {
	own := ownCPUs()
	return own.String()
}

// CPUs lists the CPUs this process may run on, lowest first (none where
// unknown).
func CPUs() []int {
	own := ownCPUs()
	var cpus []int
	for c := range 8 * cpuSetBytes {
		if own.has(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// String lists s's CPUs as Linux does ("0-3,8").
func (s *cpuSet) String() string {
	var b []byte
	for c := 0; c < 8*cpuSetBytes; c++ {
		if !s.has(c) || c > 0 && s.has(c-1) {
			continue
		}
		end := c
		for end+1 < 8*cpuSetBytes && s.has(end+1) {
			end++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c), 10)
		if end > c {
			b = append(append(b, '-'), strconv.Itoa(end)...)
		}
	}
	return string(b)
}

// has reports whether s holds CPU c.
func (s *cpuSet) has(c int) bool { return s[c/8]&(1<<(c%8)) != 0 }
