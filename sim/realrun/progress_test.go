package realrun

import (
	"bytes"
	"fmt"
	"testing"
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

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
