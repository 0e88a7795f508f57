package realrun

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"unsafe"
)

// The wire format. Every frame starts with a 32-byte little-endian header:
//
//	magic uint32 | kind uint32 | epoch uint32 | tag int32 | bytes int64 | payload int64
//
// then payload bytes. bytes is the message size the program declared (what
// matching checks); payload is what follows: the elements of the send's
// data region in data mode (8 bytes each), or bytes zero bytes otherwise.
// Between ranks that can read each other's memory, a large message with
// data travels as a get frame instead (see singlecopy.go), whose payload is
//
//	address uint64 | elements uint64 | token uint64
//
// where the receiver reads the elements, and a got frame (bytes: the token,
// no payload) answers it once they are read.
// A connection opens with a handshake (see auth.go): the dialing rank
// sends a 40-byte hello, the accepting rank answers with its own hello and
// its proof (proofBytes), and the dialing rank sends its proof. A hello is
//
//	magic uint32 | protocol uint32 | job uint64 | rank uint32 | size uint32 | nonce [16]byte
//
// The two ends then choose the connection's channel: TCP, or shared memory
// on one host (see shm.go).
const (
	frameMagic  = 0x31525343 // "CSR1"
	helloMagic  = 0x48525343 // "CSRH"
	protocol    = 6
	headerBytes = 32
	helloBytes  = 24 + nonceBytes
	proofBytes  = sha256.Size
)

// MaxMessageBytes is the largest message a real run carries: one frame,
// whose payload a receiving rank takes no larger (16 GiB), so that a
// corrupt header cannot make it allocate without limit.
const MaxMessageBytes = 1 << 34

// Frame kinds.
const (
	kindData    = 1 // a message of the program
	kindBarrier = 2 // a round of the barrier between timed iterations (tag: round)
	kindBye     = 3 // the sender is done and will close the connection
	kindAbort   = 4 // the sender gives up because of a failure; the payload says which
	kindGet     = 5 // a message whose elements the receiver reads from the sender's memory
	kindGot     = 6 // the receiver has read a get frame's elements (bytes: its token)

	// maxAbortReason bounds an abort frame's text.
	maxAbortReason = 4 << 10

	// flagElements, or'ed into a data frame's kind, says that the payload is
	// the send's data elements rather than filler.
	flagElements = 1 << 8
)

type header struct {
	kind    uint32
	epoch   uint32
	tag     int32
	bytes   int64
	payload int64
}

func (h *header) put(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], frameMagic)
	le.PutUint32(b[4:], h.kind)
	le.PutUint32(b[8:], h.epoch)
	le.PutUint32(b[12:], uint32(h.tag))
	le.PutUint64(b[16:], uint64(h.bytes))
	le.PutUint64(b[24:], uint64(h.payload))
}

// parseHeader decodes and checks a frame header from peer.
func parseHeader(b []byte, peer int) (header, error) {
	le := binary.LittleEndian
	if m := le.Uint32(b[0:]); m != frameMagic {
		return header{}, fmt.Errorf("rank %d sent a malformed frame (magic %#x, want %#x): a different program, or corrupted data", peer, m, frameMagic)
	}
	h := header{kind: le.Uint32(b[4:]), epoch: le.Uint32(b[8:]), tag: int32(le.Uint32(b[12:])),
		bytes: int64(le.Uint64(b[16:])), payload: int64(le.Uint64(b[24:]))}
	switch {
	case h.kind&^flagElements < kindData || h.kind&^flagElements > kindGot || h.kind&flagElements != 0 && h.kind&^flagElements != kindData:
		return h, fmt.Errorf("rank %d sent a frame of unknown kind %#x", peer, h.kind)
	case h.bytes < 0 || h.payload < 0 || h.payload > MaxMessageBytes:
		return h, fmt.Errorf("rank %d sent a frame of %d bytes with a payload of %d: out of range", peer, h.bytes, h.payload)
	case h.kind&flagElements != 0 && h.payload%8 != 0:
		return h, fmt.Errorf("rank %d sent a data payload of %d bytes, not whole elements", peer, h.payload)
	case h.kind == kindAbort && (h.payload != h.bytes || h.payload > maxAbortReason):
		return h, fmt.Errorf("rank %d sent an abort frame with %d bytes of reason: out of range", peer, h.payload)
	case h.kind == kindGet && h.payload != getDescBytes || h.kind == kindGot && h.payload != 0:
		return h, fmt.Errorf("rank %d sent a single-copy frame (kind %d) with a payload of %d bytes", peer, h.kind, h.payload)
	case h.kind&flagElements == 0 && h.kind != kindGet && h.payload != 0 && h.payload != h.bytes:
		return h, fmt.Errorf("rank %d sent %d bytes of filler for a %d-byte message", peer, h.payload, h.bytes)
	}
	return h, nil
}

type hello struct {
	job        uint64
	rank, size uint32
	nonce      [nonceBytes]byte
}

func (h *hello) encode() []byte {
	b := make([]byte, helloBytes)
	le := binary.LittleEndian
	le.PutUint32(b[0:], helloMagic)
	le.PutUint32(b[4:], protocol)
	le.PutUint64(b[8:], h.job)
	le.PutUint32(b[16:], h.rank)
	le.PutUint32(b[20:], h.size)
	copy(b[24:], h.nonce[:])
	return b
}

func parseHello(b []byte) (hello, error) {
	le := binary.LittleEndian
	if m := le.Uint32(b[0:]); m != helloMagic {
		return hello{}, fmt.Errorf("hello has magic %#x, want %#x: not a collsim rank", m, helloMagic)
	}
	if p := le.Uint32(b[4:]); p != protocol {
		return hello{}, fmt.Errorf("peer speaks protocol %d, this rank %d: run the same collsim build everywhere", p, protocol)
	}
	h := hello{job: le.Uint64(b[8:]), rank: le.Uint32(b[16:]), size: le.Uint32(b[20:])}
	copy(h.nonce[:], b[24:])
	return h, nil
}

// bytesOf views elements as their in-memory bytes. The wire carries them
// little-endian; Connect refuses big-endian hosts.
func bytesOf(e []uint64) []byte {
	if len(e) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&e[0])), 8*len(e))
}

// wordsOf views b, which starts 8-byte aligned and holds whole elements,
// as elements (bytesOf's inverse).
func wordsOf(b []byte) []uint64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// littleEndian reports whether this host stores integers little-endian, as
// the wire carries them.
func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
