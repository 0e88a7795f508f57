package realrun_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

// TestEmptyMessageIntoNilBuffer: an empty message into an empty receive
// whose buffer is nil completes that receive, and the next message the
// next. (Landing once matched the receive at the header, then took the
// nil region for "not landing" and matched the frame again: the first
// receive never completed.)
func TestEmptyMessageIntoNilBuffer(t *testing.T) {
	progs := []sim.Program{
		{
			{Kind: sim.OpSend, Peer: 1, Tag: 1, Bytes: 0, Data: sim.Region{Buf: 0, Count: 0}},
			{Kind: sim.OpSend, Peer: 1, Tag: 1, Bytes: 32, Data: sim.Region{Buf: 1, Count: 4}},
		},
		{
			{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 0, Data: sim.Region{Buf: 0, Count: 0}},
			{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 32, Data: sim.Region{Buf: 1, Count: 4}},
		},
	}
	s := sim.FromPrograms("zero", progs, 8)
	for _, via := range []realrun.Transport{realrun.TCP, realrun.SharedMemoryRings, realrun.TCPGoroutines} {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error {
				r.Timeout = 2 * time.Second
				u := uint64(rank * 10)
				d := [][]uint64{nil, {u + 1, u + 2, u + 3, u + 4}}
				if err := r.Execute(s, d); err != nil {
					return err
				}
				if rank == 1 && (d[1][0] != 1 || d[1][3] != 4) {
					return fmt.Errorf("rank 1 buf1 = %v, want [1 2 3 4]", d[1])
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestSameTagReceivesInOrder: receives from one peer with one tag, every
// other one from any source, each posted when the one before completes,
// of messages sent at once (empty to 1 MiB, some reduced), six calls back
// to back with no barrier between them: frames land, wait in buffers and
// come early for the next call, and each receive gets the message MPI's
// order gives it. Without landingFor's check of the peer's waiting
// messages, a later message landed in an earlier receive.
func TestSameTagReceivesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const k = 16
	var sizes [k]int64
	var red [k]bool
	for i := range k {
		sizes[i] = []int64{0, 1, 500, 9000, 70000, 130000}[rng.IntN(6)]
		red[i] = rng.IntN(2) == 0
	}
	const room = 140000
	var p0, p1 sim.Program
	for i := range k {
		p0 = append(p0, sim.Op{Kind: sim.OpSend, Peer: 1, Tag: 5, Bytes: 8 * sizes[i], Data: sim.Region{Buf: uint8(i), Count: sizes[i]}})
	}
	for i := range k {
		op := sim.Op{Kind: sim.OpRecv, Peer: []int32{0, sim.AnySource}[i%2], Tag: 5, Bytes: 8 * room, Data: sim.Region{Buf: uint8(i), Count: room}, Reduce: red[i]}
		if i > 0 {
			op.After = []int32{int32(i - 1)}
		}
		p1 = append(p1, op)
	}
	s := sim.FromPrograms("chained", []sim.Program{p0, p1}, 8)
	for _, via := range []realrun.Transport{realrun.TCP, realrun.SharedMemoryRings, realrun.SharedMemory} {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error {
				for call := range 6 {
					d := make([][]uint64, k)
					for i := range k {
						d[i] = make([]uint64, room)
						for j := range room {
							d[i][j] = uint64(call*7 + rank*1_000_000_000 + i*1_000_000 + j)
						}
					}
					if err := r.Execute(s, d); err != nil {
						return err
					}
					if rank != 1 {
						continue
					}
					for i := range k {
						for j := range int64(room) {
							own := uint64(call*7 + 1_000_000_000 + i*1_000_000 + int(j))
							want := own
							if j < sizes[i] {
								in := uint64(call*7 + i*1_000_000 + int(j))
								if red[i] {
									want = own + in
								} else {
									want = in
								}
							}
							if d[i][j] != want {
								return fmt.Errorf("call %d recv %d (size %d red %v) elem %d = %d, want %d", call, i, sizes[i], red[i], j, d[i][j], want)
							}
						}
					}
				}
				l, p := r.Landed()
				t.Logf("rank %d landed %d pooled %d", rank, l, p)
				return r.Barrier()
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestSwapInPlace: two ranks each send a 3.2 MB region (lent: sent from
// the buffer itself) and receive into the same region, neither waiting
// for its send: the receive must not land while the region is still
// lent. Without landing's check for waiting writes, the received data
// came out wrong.
func TestSwapInPlace(t *testing.T) {
	const n = 400_000 // 3.2 MB: beyond a ring
	mk := func(peer int32) sim.Program {
		return sim.Program{
			{Kind: sim.OpSend, Peer: peer, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}},
			{Kind: sim.OpRecv, Peer: peer, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}},
		}
	}
	s := sim.FromPrograms("swap", []sim.Program{mk(1), mk(0)}, 8)
	for _, via := range []realrun.Transport{realrun.TCP, realrun.SharedMemoryRings, realrun.SharedMemory} {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error {
				for call := range 5 {
					d := [][]uint64{make([]uint64, n)}
					for i := range n {
						d[0][i] = uint64(1_000_000*(rank+1) + i + call)
					}
					if err := r.Execute(s, d); err != nil {
						return err
					}
					if err := r.Barrier(); err != nil {
						return err
					}
					for i := range n {
						if want := uint64(1_000_000*(2-rank) + i + call); d[0][i] != want {
							return fmt.Errorf("call %d rank %d elem %d = %d, want %d", call, rank, i, d[0][i], want)
						}
					}
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}
