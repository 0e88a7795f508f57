package realrun

import (
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"
)

// Single copy. Open MPI's shared-memory transport (vader, with its default
// single_copy_mechanism cma) moves a message above its eager limit in one
// copy: the sender announces where the data is, the receiver copies it
// straight out of the sender's memory with process_vm_readv (Linux's
// cross-memory attach) once the receive is matched, and tells the sender,
// whose send completes then (a rendezvous). Through the rings a message is
// copied twice more (into the ring, out of it), and on a machine with
// fewer cores than ranks every copy is time another rank waits for.
//
// collsim does the same between two ranks that share memory and proved,
// while choosing their channel, that each may read the other's memory (see
// shm.go), for messages with data too large for the channel's ring: a send
// of one becomes a get frame holding the address, length and token of the elements it captured
// when it started; the receiver reads them into the receive's region
// (straight into it when it is one contiguous run and the receive does not
// reduce) and answers with a got frame carrying the token. A send without
// data (a run with --verify=false), over TCP, or between ranks that cannot
// read each other goes through the channel as before.
//
// Vader copies once from 4 KiB (its eager limit) up. Here that was slower
// below the ring's size (1 MiB in jobs of up to 33 ranks): a message the
// ring holds leaves at once, its send completes, and the reader copies it
// out while the writer copies the rest in, whereas a single copy waits for
// the round trip and pays process_vm_readv's fixed cost (about 2 us here
// against 0.1 us for a 16 KiB copy). Two ranks' bcast of 128-512 KiB took
// 69-128 us through the rings and 75-274 us as single copies, of 1 MiB
// 267-457 us and 185-283 us (README, "Single copy").
//
// The simulator's protocol (sim/protocol.go) treats large sends as
// rendezvous too; a program that needs a large eager send to finish before
// its receive is posted deadlocks there as it would under MPI.

// getDescBytes is a get frame's payload: address, elements, token.
const getDescBytes = 24

// getDesc is a get frame's payload: where the elements are in the sender's
// memory, how many there are, and the token the got frame returns.
type getDesc [3]uint64

// pendingGet is a get frame whose got frame has not come back: its
// elements must stay where they are until then.
type pendingGet struct {
	payload []uint64 // nil: the token is free
	lent    bool     // payload is the rank's own buffer, not the pool's
	peer    int32
	op      int32 // the send's program index, completed by the got frame
	epoch   uint32
}

// singleCopy is a mesh's state for single copies.
type singleCopy struct {
	// readsMe says which peers may read this rank's memory: large sends to
	// them are get frames.
	readsMe []bool
	// readable holds, for each peer whose memory this rank may read, its
	// process ID (0: none).
	readable []int
	// singleCopyAbove is the largest message that goes through the rings.
	singleCopyAbove int64

	// copies counts the messages this rank copied out of peers' memory,
	// probeCopies those of them its probe copied (probeSingleCopy).
	copies, probeCopies int64

	getMu    sync.Mutex
	gets     []pendingGet // by token
	freeGets []uint64
}

// SingleCopyOff, given to SetSingleCopyAbove, sends every message through
// the rings, as Open MPI's btl_vader_single_copy_mechanism none does.
const SingleCopyOff = math.MaxInt64

// SetSingleCopyAbove makes the rank send messages with data of more than
// bytes as single copies to the peers that may read its memory (4096:
// vader's limit), SingleCopyOff none, 0 those too large for a ring (the
// default), or none when the host's ranks outnumber its cores. Call it
// before the rank sends.
//
// Why none there: a single copy keeps the sender waiting while the
// receiver copies, and the sender's send ends only when the receiver,
// having copied, gets a core again to say so; through the rings both copy
// at once and the send ends when written. With 3 and 4 ranks on 2 cores,
// 1 MiB bcasts took 1.6-2.6x as long with single copies as without
// (`collsim real --np 3|4 -c bcast -a ompi -s 1MiB --single-copy ring|off`,
// alternated), 16 MiB allreduces on 4 ranks 1.2x; the other calls of the
// comparison with Open MPI (allreduce, bcast and alltoall of 1 and 16 MiB)
// were the same within the host's noise. With a core for each rank, single
// copies stay: on 2 ranks, 16 MiB allreduces, where both ranks copy at
// once, were 1.2x faster with them (bcasts 1.2-1.5x slower).
func (m *Mesh) SetSingleCopyAbove(bytes int64) {
	if bytes == 0 {
		bytes = m.ringAbove()
		if m.yield {
			bytes = SingleCopyOff
		}
	}
	m.singleCopyAbove = bytes
}

// ringAbove is the largest message with data a ring of this job takes.
func (m *Mesh) ringAbove() int64 { return int64(ringBytes(m.size)) - headerBytes }

// Oversubscribed reports whether the rank's machine has more of the run's
// ranks than the cores they may run on between them (machineCores): the
// rank yields its core between looks at its channels, and by default
// copies no message once (SetSingleCopyAbove).
func (m *Mesh) Oversubscribed() bool { return m.yield }

// SingleCopyPeers is how many peers the rank sends large messages to as
// single copies, for them to read out of its memory (process_vm_readv):
// those that may, unless it copies no message once. Ranks decide apart
// under SingleCopyAuto, so this is the sender's count; SingleCopies counts
// what the rank read.
func (m *Mesh) SingleCopyPeers() int {
	if m.singleCopyAbove == SingleCopyOff {
		return 0
	}
	n := 0
	for _, reads := range m.readsMe {
		if reads {
			n++
		}
	}
	return n
}

// SendsAsGet reports whether a message of elems elements to peer goes
// as a single copy.
func (m *Mesh) sendsAsGet(peer int, elems int64) bool {
	return 8*elems > m.singleCopyAbove && m.readsMe[peer]
}

// asGet turns data frame it to peer into a get frame, keeping its elements
// where they are until the peer has read them (lent: they are the rank's
// own buffer, not the pool's); the caller then queues it as any frame.
func (m *Mesh) asGet(peer int, it outItem, lent bool) outItem {
	m.getMu.Lock()
	var token uint64
	if n := len(m.freeGets); n > 0 {
		token = m.freeGets[n-1]
		m.freeGets = m.freeGets[:n-1]
	} else {
		token = uint64(len(m.gets))
		m.gets = append(m.gets, pendingGet{})
	}
	m.gets[token] = pendingGet{payload: it.payload, lent: lent, peer: int32(peer), op: it.op, epoch: it.h.epoch}
	m.getMu.Unlock()
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(it.payload))))
	return outItem{
		h:    header{kind: kindGet, epoch: it.h.epoch, tag: it.h.tag, bytes: it.h.bytes, payload: getDescBytes},
		desc: getDesc{addr, uint64(len(it.payload)), token},
		op:   -1, // the got frame completes the send
	}
}

// lend sends elems, a run of the rank's own buffer, to peer as a single
// copy straight out of that buffer; the peer's got frame completes op, and
// until then the rank must not write there (see Rank.lent).
func (m *Mesh) lend(peer int, h header, elems []uint64, op int32) error {
	_, err := m.queue(peer, m.asGet(peer, outItem{h: h, payload: elems, op: op}, true), true)
	return err
}

// gotten completes the send whose get frame to peer the token names.
func (m *Mesh) gotten(peer int, token uint64) error {
	m.getMu.Lock()
	if token >= uint64(len(m.gets)) || m.gets[token].payload == nil || m.gets[token].peer != int32(peer) {
		m.getMu.Unlock()
		return fmt.Errorf("rank %d said it read a message (token %d) this rank had not offered it: a different program, or corrupted data", peer, token)
	}
	g := m.gets[token]
	m.gets[token] = pendingGet{}
	m.freeGets = append(m.freeGets, token)
	m.getMu.Unlock()
	if !g.lent {
		m.pool.put(g.payload)
	}
	if g.op >= 0 {
		m.post(event{kind: evSent, from: int32(peer), op: g.op, epoch: g.epoch})
	}
	return nil
}

// fetch reads the elements of peer's get frame d into dst, which holds
// d's element count.
func (m *Mesh) fetch(peer int, d getDesc, dst []uint64) error {
	pid := m.readable[peer]
	if pid == 0 {
		return fmt.Errorf("rank %d: rank %d sent a single-copy message, but this rank may not read its memory: a different program", m.rank, peer)
	}
	if err := readRemote(pid, uintptr(d[0]), bytesOf(dst)); err != nil {
		return fmt.Errorf("rank %d: reading a %d-byte message out of rank %d's memory (process %d): %w", m.rank, 8*len(dst), peer, pid, err)
	}
	m.copies++
	return nil
}

// SingleCopies is how many messages the rank has copied straight out of
// its peers' memory, those of its probe (probeSingleCopy) not counted.
func (m *Mesh) SingleCopies() int64 { return m.copies - m.probeCopies }

// got tells peer its get frame d has been read.
func (m *Mesh) got(peer int, epoch uint32, d getDesc) error {
	_, err := m.send(peer, header{kind: kindGot, epoch: epoch, bytes: int64(d[2])}, nil, -1)
	return err
}

// SingleCopyAvailable reports why this process cannot copy messages out
// of another's memory: process_vm_readv fails even on its own memory (not
// Linux, or a seccomp filter, as containers have without CAP_SYS_PTRACE).
// Peers that may not read each other (Yama's ptrace_scope, other users)
// are found at setup and keep to the rings either way.
func SingleCopyAvailable() error {
	probe := []byte("collsim")
	if err := readRemote(os.Getpid(), uintptr(unsafe.Pointer(&probe[0])), make([]byte, len(probe))); err != nil {
		return fmt.Errorf("process_vm_readv: %w", err)
	}
	return nil
}
