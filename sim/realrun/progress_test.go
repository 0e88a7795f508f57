package realrun

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/collsim/collsim/sim"
)

// cutConn is a channel that takes everything but once: the write that
// would carry the stream past offset at stops there, as a ring or socket
// that is full at that point does.
type cutConn struct {
	at  int
	cut bool
	got []byte
}

func (c *cutConn) readSome([]byte) (int, error) { return 0, nil }
func (c *cutConn) writeSome(p []byte) (int, error) {
	n := len(p)
	if !c.cut && len(c.got)+n > c.at {
		n, c.cut = c.at-len(c.got), true
	}
	c.got = append(c.got, p[:n]...)
	return n, nil
}
func (c *cutConn) writeWhole([]byte) {}
func (c *cutConn) waitReadable()     {}
func (c *cutConn) waitRoom()         {}

// TestFramesCutAnywhere: a frame written in one piece with its header
// (payload up to wholeBytes), or in its own pieces (longer), reaches the
// stream byte for byte however its writing is cut, at every offset from
// its start to its end, the header's bytes included, between a frame
// before it (whose bytes the one-piece copy then held) and one after; a
// filler frame's payload is zeros.
func TestFramesCutAnywhere(t *testing.T) {
	elems := func(n int) []uint64 {
		e := make([]uint64, n)
		for i := range e {
			e[i] = 0x0101010101010101 * uint64(i%251+1)
		}
		return e
	}
	frame := func(it outItem) []byte {
		b := make([]byte, headerBytes, headerBytes+it.h.payload)
		it.h.put(b)
		if it.payload != nil {
			return append(b, bytesOf(it.payload)...)
		}
		return append(b, make([]byte, it.h.payload)...)
	}
	for _, c := range []struct {
		name string
		it   outItem
	}{
		{"3 elements", outItem{h: header{kind: kindData | flagElements, tag: 5, bytes: 24, payload: 24}, payload: elems(3)}},
		{"filler of 24 bytes", outItem{h: header{kind: kindData, tag: 6, bytes: 24, payload: 24}}},
		{"4 KiB, the most in one piece", outItem{h: header{kind: kindData | flagElements, bytes: wholeBytes, payload: wholeBytes}, payload: elems(wholeBytes / 8)}},
		{"4 KiB + 8, in its own pieces", outItem{h: header{kind: kindData | flagElements, bytes: wholeBytes + 8, payload: wholeBytes + 8}, payload: elems(wholeBytes/8 + 1)}},
		{"no payload", outItem{h: header{kind: kindData}}},
	} {
		prev := outItem{h: header{kind: kindData | flagElements, tag: 4, bytes: 64, payload: 64}, payload: elems(8)}
		next := outItem{h: header{kind: kindData | flagElements, tag: 9, bytes: 16, payload: 16}, payload: elems(2)}
		want := append(append(frame(prev), frame(c.it)...), frame(next)...)
		start := len(frame(prev))
		for cut := range headerBytes + int(c.it.h.payload) + 1 {
			t.Run(fmt.Sprintf("%s/cut at %d", c.name, cut), func(t *testing.T) {
				conn := &cutConn{at: start + cut}
				m := &Mesh{}
				out := []outItem{prev, c.it, next}
				for i := range out {
					out[i].op = -1 // nobody waits
				}
				p := &polledPeer{peer: 1, conn: conn, out: out}
				for range 8 {
					m.writeSome(p)
				}
				if len(p.out) != 0 || !bytes.Equal(conn.got, want) {
					t.Fatalf("%d frames left; wrote %d bytes, want %d (first difference at %d)", len(p.out), len(conn.got), len(want), firstDiff(conn.got, want))
				}
			})
		}
	}
}

// TestGatheredFramesCutAnywhere: a small send gathered straight into its
// frame (Mesh.sendGathered) reaches the stream byte for byte however the
// channel cuts its first write, at every offset, the header's bytes
// included (a TCP socket may take part of a header; a ring takes at least
// a line), with the peer's header buffer holding an older frame's header.
func TestGatheredFramesCutAnywhere(t *testing.T) {
	for _, n := range []int64{0, 1, 3, wholeBytes / 8} {
		// The region: every other element of buf, from element 1.
		buf := make([]uint64, 2*n+2)
		for i := range buf {
			buf[i] = 0x0101010101010101 * uint64(i%251+1)
		}
		src := sim.Region{Buf: 0, Off: 1, Count: n, Block: 1, Stride: 2}
		h := header{kind: kindData | flagElements, epoch: 3, tag: 7, bytes: 8 * n, payload: 8 * n}
		want := make([]byte, headerBytes, headerBytes+8*n)
		h.put(want)
		for i := range n {
			want = binary.LittleEndian.AppendUint64(want, buf[1+2*i])
		}
		for cut := range len(want) + 1 {
			t.Run(fmt.Sprintf("%d elements/cut at %d", n, cut), func(t *testing.T) {
				conn := &cutConn{at: cut}
				m := &Mesh{}
				p := &polledPeer{peer: 1, conn: conn}
				(&header{kind: kindBarrier, epoch: 99, tag: 99}).put(p.whdr[:]) // an older frame's
				written, err := m.sendGathered(p, h, src, buf, -1)
				if err != nil || written != (cut == len(want)) {
					t.Fatalf("sendGathered: written %t, %v; want written %t", written, err, cut == len(want))
				}
				for range 4 {
					m.writeSome(p)
				}
				if len(p.out) != 0 || !bytes.Equal(conn.got, want) {
					t.Fatalf("%d frames left; wrote %d bytes, want %d (first difference at %d)", len(p.out), len(conn.got), len(want), firstDiff(conn.got, want))
				}
			})
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// scribblingRecords hands out one record, and overwrites it when it is
// consumed, as the ring's writer may then reuse its room.
type scribblingRecords struct{ rec []byte }

func (s *scribblingRecords) nextRecord() ([]byte, bool, error) { return s.rec, false, nil }

func (s *scribblingRecords) consumeRecord(n int) {
	for i := range s.rec[:n] {
		s.rec[i] = 0xee
	}
}

// TestLandWholeReadsBeforeReleasing: a frame landed where it lies in the
// ring is read, copied or reduced into its receive's region, before the
// record goes back to the writer; landing after consumeRecord would land
// the writer's next bytes (here 0xee).
func TestLandWholeReadsBeforeReleasing(t *testing.T) {
	elems := []uint64{3, 5, 7}
	for _, reduces := range []bool{false, true} {
		h := header{kind: kindData | flagElements, tag: 4, bytes: 24, payload: 24}
		rec := make([]byte, headerBytes+24)
		h.put(rec)
		copy(rec[headerBytes:], bytesOf(elems))
		dst := []uint64{10, 20, 30}
		m := &Mesh{}
		m.landing = func(int32, header) landingSpot {
			return landingSpot{dst: dst, recv: 2, reduces: reduces, op: sim.ReduceSum}
		}
		p := &polledPeer{peer: 1, records: &scribblingRecords{rec: rec}}
		_, recv, ok := m.landWhole(p, rec)
		want := []uint64{3, 5, 7}
		if reduces {
			want = []uint64{13, 25, 37}
		}
		if !ok || recv != 2 || !slices.Equal(dst, want) {
			t.Errorf("reduces %t: landed %t in receive %d: %v, want true, 2, %v", reduces, ok, recv, dst, want)
		}
	}
}
