package realrun_test

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

// transports are the channels every test of the transport runs over.
var transports = []realrun.Transport{realrun.TCP, realrun.SharedMemory, realrun.TCPGoroutines, realrun.SharedMemoryGoroutines, realrun.SharedMemoryRings}

// skipWithoutSharedMemory skips a test of the shared-memory transport on a
// host where ranks cannot share memory (no writable /dev/shm, not Linux).
func skipWithoutSharedMemory(t testing.TB, via realrun.Transport) {
	if via == realrun.TCP || via == realrun.TCPGoroutines {
		return
	}
	if err := realrun.SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
}

// shmFree is the room left in /dev/shm, in bytes (0 if it cannot say).
func shmFree() uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

// runLocal runs fn on every rank of a mesh of size ranks in this process,
// over loopback TCP or shared memory, and returns the ranks' errors.
func runLocal(t *testing.T, size int, via realrun.Transport, fn func(r *realrun.Rank, rank int) error) []error {
	t.Helper()
	skipWithoutSharedMemory(t, via)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meshes, err := realrun.ConnectLocal(ctx, size, 42, via)
	if err != nil {
		t.Fatal(err)
	}
	for rank, m := range meshes {
		if want := map[realrun.Transport]int{realrun.SharedMemory: size - 1, realrun.SharedMemoryGoroutines: size - 1, realrun.SharedMemoryRings: size - 1}[via]; m.SharedPeers() != want {
			for _, m := range meshes {
				m.Abort(nil) // their mappings would hold /dev/shm's pages for the next tests
			}
			if free := shmFree(); free < 1<<30 {
				t.Skipf("rank %d reaches %d peers through shared memory, not %d: /dev/shm has %d MiB free, too little while other tests share it", rank, m.SharedPeers(), want, free>>20)
			}
			t.Fatalf("rank %d reaches %d peers through shared memory, want %d over %v", rank, m.SharedPeers(), want, via)
		}
		// By default, no single copies where the ranks outnumber the
		// cores.
		if over := size > runtime.NumCPU(); m.Oversubscribed() != over || over && m.SingleCopyPeers() != 0 {
			t.Fatalf("rank %d: oversubscribed %t, reading %d peers' memory by default; want %t and, if so, none (%d ranks on %d cores)", rank, m.Oversubscribed(), m.SingleCopyPeers(), over, size, runtime.NumCPU())
		}
		// Vader's limit rather than a ring's, and sends from the buffer
		// itself from the same size: most messages of the tests take those
		// paths.
		m.SetSingleCopyAbove(4 << 10)
		m.LowerInPlaceLimit()
		// Ranks in one process may read each other's memory wherever the
		// system call is allowed: every shared channel copies large
		// messages once, unless told not to.
		want := map[realrun.Transport]int{realrun.SharedMemory: size - 1, realrun.SharedMemoryGoroutines: size - 1}[via]
		if realrun.SingleCopyAvailable() != nil {
			want = 0
		}
		if m.SingleCopyPeers() != want {
			t.Fatalf("rank %d reads the memory of %d peers, want %d over %v", rank, m.SingleCopyPeers(), want, via)
		}
		// The rank's goroutine serves the channels, unless the test says
		// not to; TCP ones only up to 8 and only on Linux. It yields its
		// core between looks when the ranks (all in this process, on this
		// machine) outnumber the cores.
		served := size - 1
		if via == realrun.SharedMemoryGoroutines || via == realrun.TCPGoroutines || via == realrun.TCP && (size-1 > 8 || runtime.GOOS != "linux") {
			served = 0
		}
		if got := m.ServedPeers(); got != served {
			t.Fatalf("rank %d's goroutine serves %d channels, want %d over %v", rank, got, served, via)
		}
		if yields := size > runtime.NumCPU(); m.Yields() != yields {
			t.Fatalf("rank %d yields its core between looks: %t, want %t with %d ranks on %d cores", rank, m.Yields(), yields, size, runtime.NumCPU())
		}
	}
	errs := make([]error, size)
	var wg sync.WaitGroup
	for rank, m := range meshes {
		wg.Go(func() {
			r := realrun.NewRank(m)
			r.Timeout = 10 * time.Second
			errs[rank] = fn(r, rank)
			if errs[rank] != nil {
				m.Abort(nil)
				return
			}
			errs[rank] = m.Close(time.Now().Add(10 * time.Second))
		})
	}
	wg.Wait()
	return errs
}

// TestEveryAlgorithmForReal runs every algorithm of the library for real,
// each rank a goroutine with its own channels (loopback TCP, then shared
// memory), several calls in a row on the same channels, and checks every
// rank's data.
func TestEveryAlgorithmForReal(t *testing.T) {
	algos := collectives.All()
	for _, via := range transports {
		for _, p := range []int{1, 2, 3, 5, 8} {
			t.Run(fmt.Sprint(via, "/p=", p), func(t *testing.T) {
				t.Parallel()
				errs := runLocal(t, p, via, func(r *realrun.Rank, rank int) error {
					for _, a := range algos {
						// 4999 elements: most messages above the 4 KiB single-copy limit.
						for _, count := range []int64{0, 1, 7, 1000, 4999} {
							params := collectives.Params{Ranks: p, Count: count, Root: p / 2, NodeSize: 2, GroupSize: 2}
							s, err := a.Build(params)
							if err != nil {
								continue // unsupported here; the collective library tests say why
							}
							seed := uint64(count)*31 + uint64(p)
							data, err := a.RankData(params, seed, rank)
							if err != nil {
								return err
							}
							if err := r.Execute(s, data); err != nil {
								return fmt.Errorf("%s count %d: %w", a.ID(), count, err)
							}
							if err := a.VerifyRank(params, seed, rank, data); err != nil {
								return fmt.Errorf("%s count %d: %w", a.ID(), count, err)
							}
							if err := r.Barrier(); err != nil {
								return err
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
}

// TestStalledPeer: rank 1 never runs its part; the others give up after
// their timeout and say what they wait for.
func TestStalledPeer(t *testing.T) {
	a, err := collectives.Lookup(collectives.Allreduce, "ring")
	if err != nil {
		t.Fatal(err)
	}
	params := collectives.Params{Ranks: 3, Count: 30}
	s, err := a.Build(params)
	if err != nil {
		t.Fatal(err)
	}
	for _, via := range transports {
		t.Run(via.String(), func(t *testing.T) {
			skipWithoutSharedMemory(t, via)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			meshes, err := realrun.ConnectLocal(ctx, 3, 1, via)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for rank, m := range meshes {
				if rank == 1 {
					continue
				}
				wg.Go(func() {
					r := realrun.NewRank(m)
					r.Timeout = 300 * time.Millisecond
					errs[rank] = r.Execute(s, nil)
				})
			}
			wg.Wait()
			for _, m := range meshes {
				m.Abort(nil)
			}
			// Rank 2 waits for rank 1's first message; rank 0 sends to
			// rank 1 and then waits for rank 2's, which never comes.
			for _, rank := range []int{0, 2} {
				err := errs[rank]
				if err == nil || !strings.Contains(err.Error(), "made no progress for 300ms") || !strings.Contains(err.Error(), "posted; no matching message arrived") {
					t.Errorf("rank %d: %v", rank, err)
				}
			}
		})
	}
}

// TestDeadPeerAndGarbage: a peer whose connections close mid-run, and one
// that sends bytes that are no frame, are named in the others' errors.
func TestDeadPeerAndGarbage(t *testing.T) {
	for _, tc := range []struct {
		fault string
		via   realrun.Transport
	}{{"dies", realrun.TCP}, {"garbage", realrun.TCP}, {"dies", realrun.SharedMemory}, {"garbage", realrun.SharedMemory},
		{"dies", realrun.SharedMemoryGoroutines}, {"garbage", realrun.SharedMemoryGoroutines}, {"dies", realrun.TCPGoroutines}, {"garbage", realrun.TCPGoroutines}} {
		fault := tc.fault
		t.Run(fmt.Sprint(tc.via, "/", fault), func(t *testing.T) {
			skipWithoutSharedMemory(t, tc.via)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			meshes, err := realrun.ConnectLocal(ctx, 2, 1, tc.via)
			if err != nil {
				t.Fatal(err)
			}
			defer meshes[0].Abort(nil)
			r := realrun.NewRank(meshes[0])
			r.Timeout = 5 * time.Second
			if fault == "dies" {
				meshes[1].Abort(nil)
			} else {
				meshes[1].Corrupt()
			}
			s, _ := collectives.Lookup(collectives.Allreduce, "recursive_doubling")
			sched, _ := s.Build(collectives.Params{Ranks: 2, Count: 4})
			err = r.Execute(sched, nil)
			want := map[string]string{"dies": "rank 1 exited or crashed", "garbage": "rank 1 sent a malformed frame"}[fault]
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want an error saying %q", err, want)
			}
		})
	}
}

// TestDifferentJobsRefuse: ranks that hash their jobs differently do not
// connect.
func TestDifferentJobsRefuse(t *testing.T) {
	lns := make([]net.Listener, 2)
	addrs := make([]string, 2)
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		lns[i], addrs[i] = ln, ln.Addr().String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	secret, err := realrun.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			m, err := realrun.Connect(ctx, r, 2, uint64(100+r), secret, lns[r], addrs, realrun.SharedMemory)
			if m != nil {
				m.Abort(nil)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	if errs[0] == nil && errs[1] == nil {
		t.Fatal("ranks with different jobs connected")
	}
	if !strings.Contains(fmt.Sprint(errs), "runs a different job") {
		t.Errorf("errors %v do not say the jobs differ", errs)
	}
}

// TestStridedRegionsAndCopies runs, over real sockets, what
// sim.TestStridedMessagesAndCopies runs in the simulator: a vector send
// into a backwards receive, a strided reducing receive and a strided local
// copy; the expected buffers are worked out by hand there.
func TestStridedRegionsAndCopies(t *testing.T) {
	progs := []sim.Program{
		{
			{Kind: sim.OpSend, Peer: 1, Bytes: 32, Data: sim.Region{Off: 1, Count: 4, Block: 2, Stride: 3}}, // 11,12, 14,15
			{Kind: sim.OpSend, Peer: 1, Tag: 1, Bytes: 16, Data: sim.Region{Off: 0, Count: 2}},
		},
		{
			{Kind: sim.OpRecv, Peer: 0, Bytes: 32, Data: sim.Region{Off: 3, Count: 4, Block: 1, Stride: -1}}, // into 3,2,1,0
			{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 16, Reduce: true, Data: sim.Region{Off: 4, Count: 2, Block: 1, Stride: 2}, After: []int32{0}},
			{Kind: sim.OpCalc, Src: sim.Region{Off: 0, Count: 4, Block: 2, Stride: 4}, Data: sim.Region{Buf: 1, Count: 4}, After: []int32{1}},
		},
	}
	s := sim.FromPrograms("strided", progs, 0)
	for _, via := range transports {
		data := [][][]uint64{{{10, 11, 12, 13, 14, 15, 16, 17}}, {{0, 0, 0, 0, 1, 1, 1, 1}, make([]uint64, 4)}}
		errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error { return r.Execute(s, data[rank]) })
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got, want := data[1][0], []uint64{15, 14, 12, 11, 11, 1, 12, 1}; !slices.Equal(got, want) {
			t.Errorf("%v: rank 1 buffer 0: %v, want %v", via, got, want)
		}
		if got, want := data[1][1], []uint64{15, 14, 11, 1}; !slices.Equal(got, want) {
			t.Errorf("%v: rank 1 buffer 1 (the copy): %v, want %v", via, got, want)
		}
	}
}

// TestMixedTransportsFallBack: a rank that may share memory and one that
// may not agree on TCP, and work together.
func TestMixedTransportsFallBack(t *testing.T) {
	skipWithoutSharedMemory(t, realrun.SharedMemory)
	lns := []net.Listener{listen(t), listen(t)}
	addrs := []string{lns[0].Addr().String(), lns[1].Addr().String()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret := newSecret(t)
	a, err := collectives.Lookup(collectives.Allreduce, "ring")
	if err != nil {
		t.Fatal(err)
	}
	params := collectives.Params{Ranks: 2, Count: 1000}
	s, err := a.Build(params)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, via := range []realrun.Transport{realrun.SharedMemory, realrun.TCP} {
		wg.Go(func() {
			m, err := realrun.Connect(ctx, r, 2, 1, secret, lns[r], addrs, via)
			if err != nil {
				errs[r] = err
				return
			}
			if m.SharedPeers() != 0 {
				errs[r] = fmt.Errorf("rank %d (%v) shares memory with a rank that may not", r, via)
				m.Abort(errs[r])
				return
			}
			data, err := a.RankData(params, 7, r)
			if err == nil {
				rank := realrun.NewRank(m)
				rank.Timeout = 5 * time.Second
				err = rank.Execute(s, data)
			}
			if err == nil {
				err = a.VerifyRank(params, 7, r, data)
			}
			if err != nil {
				m.Abort(err)
			} else {
				err = m.Close(time.Now().Add(5 * time.Second))
			}
			errs[r] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestFramesLargerThanTheRing sends frames several times a ring's size
// both ways at once, with data and as filler without data, so that the
// writes and reads of a rank that serves its own channels stop at a full
// or empty ring mid-frame and resume where they stopped.
func TestFramesLargerThanTheRing(t *testing.T) {
	const count = 400_000 // 3.2 MB per message: more than a 1 MiB ring
	for _, via := range transports {
		for _, p := range []int{2, 3} {
			t.Run(fmt.Sprint(via, "/p=", p), func(t *testing.T) {
				errs := runLocal(t, p, via, func(r *realrun.Rank, rank int) error {
					for _, c := range []struct {
						coll collectives.Collective
						algo string
					}{{collectives.Allreduce, "ring"}, {collectives.Alltoall, "pairwise"}, {collectives.Alltoall, "linear"}, {collectives.Bcast, "binomial"}} {
						a, err := collectives.Lookup(c.coll, c.algo)
						if err != nil {
							return err
						}
						params := collectives.Params{Ranks: p, Count: count}
						s, err := a.Build(params)
						if err != nil {
							return err
						}
						data, err := a.RankData(params, 7, rank)
						if err != nil {
							return err
						}
						if err := r.Execute(s, data); err != nil {
							return fmt.Errorf("%s: %w", a.ID(), err)
						}
						if err := a.VerifyRank(params, 7, rank, data); err != nil {
							return fmt.Errorf("%s: %w", a.ID(), err)
						}
						if err := r.Execute(s, nil); err != nil { // filler
							return fmt.Errorf("%s without data: %w", a.ID(), err)
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
}

// TestLentRegionsKeepWhatTheySent: a send that lends its region to a
// single copy still carries what the region held when it started, though a
// receive or a local copy of the same rank writes there before the peer
// has copied it out (the simulator's capture semantics): two ranks swap
// their buffers with sends and receives that do not wait for each other,
// and rank 0 packs other data into a region it lent to rank 1, which only
// copies it out later.
func TestLentRegionsKeepWhatTheySent(t *testing.T) {
	// 8 MiB: more than a ring or a socket takes at once, so that sends
	// through them are still being written when the receives land.
	const n = 1 << 20
	whole := func(buf uint8, off int64) sim.Region { return sim.Region{Buf: buf, Off: off, Count: n} }
	progs := []sim.Program{
		{
			{Kind: sim.OpSend, Peer: 1, Tag: 0, Bytes: 8 * n, Data: whole(0, 0)},
			{Kind: sim.OpRecv, Peer: 1, Tag: 1, Bytes: 8 * n, Data: whole(0, 0)},
			{Kind: sim.OpSend, Peer: 1, Tag: 2, Bytes: 8 * n, Data: whole(0, n)},
			{Kind: sim.OpCalc, Src: whole(1, 0), Data: whole(0, n)},
		},
		{
			{Kind: sim.OpSend, Peer: 0, Tag: 1, Bytes: 8 * n, Data: whole(0, 0)},
			{Kind: sim.OpRecv, Peer: 0, Tag: 0, Bytes: 8 * n, Data: whole(0, 0)},
			{Kind: sim.OpRecv, Peer: 0, Tag: 2, Bytes: 8 * n, Data: whole(0, n), After: []int32{1}},
		},
	}
	s := sim.FromPrograms("swap", progs, 8)
	fill := func(rank int) [][]uint64 {
		b := [][]uint64{make([]uint64, 2*n), make([]uint64, n)}
		for i := range b[0] {
			b[0][i] = uint64(rank)<<32 | uint64(i)
		}
		for i := range b[1] {
			b[1][i] = 7<<32 | uint64(i)
		}
		return b
	}
	for _, via := range transports {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error {
				for call := range 5 {
					data := fill(rank)
					if err := r.Execute(s, data); err != nil {
						return err
					}
					want := fill(1 - rank)[0][:n] // the peer's first half
					if rank == 0 {
						want = append(want, fill(0)[1]...) // the packed copy
					} else {
						want = append(want, fill(0)[0][n:]...) // what rank 0's second half held
					}
					for i, w := range want {
						if data[0][i] != w {
							return fmt.Errorf("call %d: rank %d element %d is %#x, want %#x", call, rank, i, data[0][i], w)
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

// TestSelfSendsAndLocalCopies: a send to the rank itself carries what its
// region held when it started, though a local copy or a receive writes
// into the region before the send's receive is posted, and lands right when the receive's region overlaps
// it; a local copy between overlapping regions of one buffer copies what
// the source held. The overlapping destinations are vectors (a contiguous
// one would come out right by chance: copy moves as memmove does). The
// expected buffers are worked out here step by step.
func TestSelfSendsAndLocalCopies(t *testing.T) {
	const n = 16
	reg := func(buf uint8, off int64) sim.Region { return sim.Region{Buf: buf, Off: off, Count: n} }
	// Element j of a vector lands at Off + j/Block*Stride + j%Block.
	vec3 := sim.Region{Buf: 0, Off: 1, Count: n, Block: 2, Stride: 3}
	vec5 := sim.Region{Buf: 0, Off: n / 4, Count: n, Block: 4, Stride: 5}
	place := func(buf []uint64, r sim.Region, elems []uint64) {
		for j, e := range elems {
			buf[r.Off+int64(j)/r.Block*r.Stride+int64(j)%r.Block] = e
		}
	}
	prog := sim.Program{
		{Kind: sim.OpSend, Peer: 0, Tag: 0, Bytes: 8 * n, Data: reg(0, 0)},                                // 0: unexpected
		{Kind: sim.OpCalc, Src: reg(1, 0), Data: reg(0, 0), After: []int32{0}},                            // 1: overwrite its region
		{Kind: sim.OpRecv, Peer: 0, Tag: 0, Bytes: 8 * n, Data: reg(2, 0), After: []int32{1}},             // 2: gets the old region
		{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 8 * n, Data: vec3, After: []int32{2}},                  // 3: posted first,
		{Kind: sim.OpSend, Peer: 0, Tag: 1, Bytes: 8 * n, Data: reg(0, 0), After: []int32{2}},             // 4: overlapping it
		{Kind: sim.OpCalc, Src: reg(0, 0), Data: vec5, After: []int32{3, 4}},                              // 5: overlapping copy
		{Kind: sim.OpCalc, Src: sim.Region{Buf: 2, Off: 0, Count: n}, Data: reg(1, 0), After: []int32{5}}, // 6: between buffers
		{Kind: sim.OpSend, Peer: 0, Tag: 3, Bytes: 8 * n, Data: reg(1, 0), After: []int32{6}},             // 7: unexpected again,
		{Kind: sim.OpRecv, Peer: 0, Tag: 4, Bytes: 8 * n, Data: reg(1, 0), After: []int32{7}},             // 8: its region received into
		{Kind: sim.OpSend, Peer: 0, Tag: 4, Bytes: 8 * n, Data: reg(0, 0), After: []int32{7}},             // 9: from here
		{Kind: sim.OpRecv, Peer: 0, Tag: 3, Bytes: 8 * n, Data: reg(2, 0), After: []int32{8, 9}},          // 10: gets what 7 sent
	}
	s := sim.FromPrograms("self", []sim.Program{prog}, 8)
	fill := func() [][]uint64 {
		b := [][]uint64{make([]uint64, 2*n), make([]uint64, n), make([]uint64, n)}
		for k := range b {
			for i := range b[k] {
				b[k][i] = uint64(k+1)<<32 | uint64(i)
			}
		}
		return b
	}
	want := fill()
	b0 := slices.Clone(want[0][:n])
	copy(want[0][:n], want[1]) // op 1
	copy(want[2], b0)          // op 2: the region as op 0 found it
	sent := slices.Clone(want[0][:n])
	place(want[0], vec3, sent) // ops 3, 4
	moved := slices.Clone(want[0][:n])
	place(want[0], vec5, moved) // op 5
	copy(want[1], want[2])      // op 6
	sent7 := slices.Clone(want[1])
	copy(want[1], want[0][:n]) // ops 8, 9
	copy(want[2], sent7)       // op 10
	for _, via := range transports {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 1, via, func(r *realrun.Rank, rank int) error {
				data := fill()
				if err := r.Execute(s, data); err != nil {
					return err
				}
				for k := range want {
					if !slices.Equal(data[k], want[k]) {
						return fmt.Errorf("buffer %d is %x, want %x", k, data[k], want[k])
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

// TestSmallFramesFillTheStream: small messages, which a served channel
// writes with their header in one piece, arrive whole and in order when
// the ring or socket fills up mid-frame and the rest of a frame follows
// in later writes. Rank 1 spins for a while before it posts its receives,
// so rank 0's sends (about 15 MB, more than a ring or the sockets' buffers
// take) wait for room at every offset their sizes lead to; sizes reach
// either side of the one-piece limit, and tags repeat, so that a frame
// out of order would land in another message's place.
func TestSmallFramesFillTheStream(t *testing.T) {
	sizes := []int64{1, 7, 64, 511, 512, 513, 3, 300} // elements: 513 is above 4 KiB
	const msgs = 8000
	var progs [2]sim.Program
	progs[1] = append(progs[1], sim.Op{Kind: sim.OpCalc, Dur: 100 * sim.Millisecond})
	var off int64
	for i := range msgs {
		reg := sim.Region{Off: off, Count: sizes[i%len(sizes)]}
		off += reg.Count
		tag := int32(i % 5)
		progs[0] = append(progs[0], sim.Op{Kind: sim.OpSend, Peer: 1, Tag: tag, Bytes: 8 * reg.Count, Data: reg})
		progs[1] = append(progs[1], sim.Op{Kind: sim.OpRecv, Peer: 0, Tag: tag, Bytes: 8 * reg.Count, Data: reg, After: []int32{0}})
	}
	s := sim.FromPrograms("small frames", progs[:], 64)
	for _, via := range transports {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error {
				data := [][]uint64{make([]uint64, off)}
				if rank == 0 {
					for i := range data[0] {
						data[0][i] = 1<<40 | uint64(i)
					}
				}
				if err := r.Execute(s, data); err != nil {
					return err
				}
				for i, v := range data[0] {
					if want := 1<<40 | uint64(i); v != want {
						return fmt.Errorf("rank %d element %d is %#x, want %#x", rank, i, v, want)
					}
				}
				return r.Execute(s, nil) // filler frames: zeros of the same lengths
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestReceivesLandInTheirRegions: rank 1 posts three receives of n
// elements, then tells rank 0 to send. The plain receive's message is read
// straight into its region, the reducing one's reduced into its region a
// piece at a time (n is not a whole number of pieces); the vector's goes
// through a pool buffer. Over the channels the rank's goroutine serves
// (TCP, and shared memory without single copies); the expected buffers are
// worked out here.
func TestReceivesLandInTheirRegions(t *testing.T) {
	const n = 100_000 // 800 KB: read in several pieces
	whole := func(buf uint8) sim.Region { return sim.Region{Buf: buf, Count: n} }
	vec := sim.Region{Buf: 2, Off: 3, Count: n, Block: 10, Stride: 20}
	progs := []sim.Program{
		{
			{Kind: sim.OpRecv, Peer: 1, Tag: 9, Bytes: 8, Data: sim.Region{Buf: 0, Count: 1}},
			{Kind: sim.OpSend, Peer: 1, Tag: 0, Bytes: 8 * n, Data: whole(1), After: []int32{0}},
			{Kind: sim.OpSend, Peer: 1, Tag: 1, Bytes: 8 * n, Data: whole(1), After: []int32{0}},
			{Kind: sim.OpSend, Peer: 1, Tag: 2, Bytes: 8 * n, Data: whole(1), After: []int32{0}},
		},
		{
			{Kind: sim.OpRecv, Peer: 0, Tag: 0, Bytes: 8 * n, Data: whole(0)},
			{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 8 * n, Data: whole(1), Reduce: true},
			{Kind: sim.OpRecv, Peer: 0, Tag: 2, Bytes: 8 * n, Data: vec},
			{Kind: sim.OpSend, Peer: 0, Tag: 9, Bytes: 8, Data: sim.Region{Buf: 3, Count: 1}},
		},
	}
	s := sim.FromPrograms("landing", progs, 8)
	sent := func(i int) uint64 { return 3*uint64(i) + 1 }
	fill := func(rank int) [][]uint64 {
		b := [][]uint64{make([]uint64, n), make([]uint64, n), make([]uint64, 2*n+3), make([]uint64, 1)}
		for i := range n {
			b[1][i] = sent(i)
			if rank == 1 {
				b[1][i] = 1000 + uint64(i)
			}
		}
		return b
	}
	for _, via := range []realrun.Transport{realrun.TCP, realrun.SharedMemoryRings} {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error {
				const calls = 3
				for call := range calls {
					data := fill(rank)
					if err := callThenBarrier(r, s, data); err != nil {
						return err
					}
					if rank == 0 {
						continue
					}
					for i := range n {
						at := vec.Off + int64(i)/vec.Block*vec.Stride + int64(i)%vec.Block
						if data[0][i] != sent(i) || data[1][i] != 1000+uint64(i)+sent(i) || data[2][at] != sent(i) {
							return fmt.Errorf("call %d, element %d: plain %d, reduced %d, vector %d; want %d, %d, %d",
								call, i, data[0][i], data[1][i], data[2][at], sent(i), 1000+uint64(i)+sent(i), sent(i))
						}
					}
				}
				if landed, pooled := r.Landed(); rank == 1 && (landed != 2*calls || pooled != calls) {
					return fmt.Errorf("rank 1 read %d frames into their regions and %d into pool buffers; want %d and %d", landed, pooled, 2*calls, calls)
				}
				// Each call's two landed frames come first, with nothing
				// queued before them, so both complete as they are read.
				if in := r.CompletedInPlace(); rank == 1 && in != 2*calls {
					return fmt.Errorf("rank 1 completed %d receives as their frames were read; want %d", in, 2*calls)
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

// callThenBarrier runs s on r with data, then a barrier: no frame of the
// rank's next call comes before that call's receives are posted.
func callThenBarrier(r *realrun.Rank, s sim.Schedule, data [][]uint64) error {
	if err := r.Execute(s, data); err != nil {
		return err
	}
	return r.Barrier()
}

// TestSmallFramesLandFromTheRing: through shared memory, a small data
// frame whose receive is posted lands from where it lies in the ring
// (Mesh.landWhole), plain and reducing, and one whose region is a vector
// goes the usual way, through a pool buffer. Rank 1 posts its four
// receives and then tells rank 0 to send; rank 0's frames come in program
// order, the vector's last, so that nothing unmatched waits before the
// others. The expected buffers and counts are worked out here.
func TestSmallFramesLandFromTheRing(t *testing.T) {
	vec := sim.Region{Buf: 1, Off: 1, Count: 6, Block: 2, Stride: 3} // elements 1,2, 4,5, 7,8
	progs := []sim.Program{
		{
			{Kind: sim.OpRecv, Peer: 1, Tag: 9, Bytes: 8, Data: sim.Region{Buf: 0, Count: 1}},
			{Kind: sim.OpSend, Peer: 1, Tag: 0, Bytes: 40, Data: sim.Region{Buf: 1, Count: 5}, After: []int32{0}},
			{Kind: sim.OpSend, Peer: 1, Tag: 1, Bytes: 24, Data: sim.Region{Buf: 1, Off: 5, Count: 3}, After: []int32{0}},
			{Kind: sim.OpSend, Peer: 1, Tag: 4, Bytes: 1024, Data: sim.Region{Buf: 1, Off: 8, Count: 128}, After: []int32{0}},
			{Kind: sim.OpSend, Peer: 1, Tag: 2, Bytes: 48, Data: sim.Region{Buf: 1, Off: 136, Count: 6}, After: []int32{0}},
		},
		{
			{Kind: sim.OpRecv, Peer: 0, Tag: 0, Bytes: 40, Data: sim.Region{Buf: 0, Count: 5}},
			{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 24, Data: sim.Region{Buf: 0, Off: 5, Count: 3}, Reduce: true},
			{Kind: sim.OpRecv, Peer: 0, Tag: 4, Bytes: 1024, Data: sim.Region{Buf: 0, Off: 8, Count: 128}},
			{Kind: sim.OpRecv, Peer: 0, Tag: 2, Bytes: 48, Data: vec},
			{Kind: sim.OpSend, Peer: 0, Tag: 9, Bytes: 8, Data: sim.Region{Buf: 2, Count: 1}},
		},
	}
	s := sim.FromPrograms("small frames", progs, 8)
	sent := func(i int) uint64 { return 3*uint64(i) + 1 } // rank 0's buffer 1
	errs := runLocal(t, 2, realrun.SharedMemoryRings, func(r *realrun.Rank, rank int) error {
		const calls = 3
		for call := range calls {
			data := [][]uint64{make([]uint64, 136), make([]uint64, 142), make([]uint64, 1)}
			for i := range data[1] {
				data[1][i] = sent(i)
			}
			if rank == 1 {
				for i := range data[0] {
					data[0][i] = 1000 + uint64(i)
				}
				clear(data[1])
			}
			if err := callThenBarrier(r, s, data); err != nil {
				return err
			}
			if rank == 0 {
				continue
			}
			for i, got := range data[0] {
				want := sent(i) // plain: elements 0-4 and 8-135
				if i >= 5 && i < 8 {
					want += 1000 + uint64(i) // reduced (summed) into what was there
				}
				if got != want {
					return fmt.Errorf("call %d: buffer 0 element %d is %d, want %d", call, i, got, want)
				}
			}
			wantVec := []uint64{0, sent(136), sent(137), 0, sent(138), sent(139), 0, sent(140), sent(141), 0, 0}
			if got := data[1][:len(wantVec)]; !slices.Equal(got, wantVec) {
				return fmt.Errorf("call %d: the vector's buffer is %v, want %v", call, got, wantVec)
			}
		}
		if rank == 1 {
			if landed, pooled := r.Landed(); landed != 3*calls || pooled != calls {
				return fmt.Errorf("rank 1 read %d frames into their regions and %d into pool buffers; want %d and %d", landed, pooled, 3*calls, calls)
			}
			if got := r.LandedFromRing(); got != 3*calls {
				return fmt.Errorf("rank 1 read %d landed frames where they lay in the ring; want all %d", got, 3*calls)
			}
			// Nothing of rank 1's own is queued before them: each completes
			// its receive as it is read.
			if got := r.CompletedInPlace(); got != 3*calls {
				return fmt.Errorf("rank 1 completed %d receives as their frames were read; want %d", got, 3*calls)
			}
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// landingVias are the channels of the landing tests: two the rank's own
// goroutine serves, where frames land, and one with a reader goroutine per
// peer, where none do.
var landingVias = []realrun.Transport{realrun.TCP, realrun.SharedMemoryRings, realrun.TCPGoroutines}

// TestLandingCapturesSelfSends: on rank 1 a send to itself, not yet
// received, still views its region (buffer 0) when a message from rank 0
// lands in that region; the self-send must carry what the region held
// before (rank 1's own values), not the landed ones. Rank 0's 2.4 MB send
// is lent from its buffer meanwhile. Values worked out here.
func TestLandingCapturesSelfSends(t *testing.T) {
	const n = 300_000 // 2.4 MB: beyond a ring, lent
	progs := []sim.Program{
		{
			{Kind: sim.OpRecv, Peer: 1, Tag: 9, Bytes: 8, Data: sim.Region{Buf: 3, Count: 1}},
			{Kind: sim.OpSend, Peer: 1, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}, After: []int32{0}},
			{Kind: sim.OpRecv, Peer: 1, Tag: 2, Bytes: 8 * n, Data: sim.Region{Buf: 1, Count: n}},
		},
		{
			{Kind: sim.OpSend, Peer: 1, Tag: 4, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}},
			{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}},
			{Kind: sim.OpSend, Peer: 0, Tag: 9, Bytes: 8, Data: sim.Region{Buf: 3, Count: 1}},
			{Kind: sim.OpSend, Peer: 0, Tag: 2, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}},
			{Kind: sim.OpRecv, Peer: 1, Tag: 4, Bytes: 8 * n, Data: sim.Region{Buf: 2, Count: n}, After: []int32{1}},
		},
	}
	s := sim.FromPrograms("overlap", progs, 8)
	for _, via := range landingVias {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 2, via, func(r *realrun.Rank, rank int) error {
				for call := range 10 {
					d := [][]uint64{make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, 1)}
					for i := range n {
						d[0][i] = uint64(1_000_000*(rank+1) + i)
					}
					if err := r.Execute(s, d); err != nil {
						return fmt.Errorf("call %d: %w", call, err)
					}
					if err := r.Barrier(); err != nil {
						return err
					}
					for i := range n {
						if rank == 1 && (d[0][i] != uint64(1_000_000+i) || d[2][i] != uint64(2_000_000+i)) {
							return fmt.Errorf("call %d rank 1 elem %d: buf0 %d (want %d) buf2 %d (want %d)", call, i, d[0][i], 1_000_000+i, d[2][i], 2_000_000+i)
						}
						if rank == 0 && d[1][i] != uint64(2_000_000+i) {
							return fmt.Errorf("call %d rank 0 elem %d: buf1 %d want %d", call, i, d[1][i], 2_000_000+i)
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

// TestLandingKeepsToItsCall: rank 2's two any-source reducing receives of
// one call must not take a faster peer's message of the next call (calls
// back to back, no barrier between them): the message's header says its
// call, and only the current call's messages land.
func TestLandingKeepsToItsCall(t *testing.T) {
	const n = 2000
	progs := []sim.Program{
		{
			{Kind: sim.OpSend, Peer: 1, Tag: 7, Bytes: 8, Data: sim.Region{Buf: 1, Count: 1}},
			{Kind: sim.OpSend, Peer: 2, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}},
		},
		{
			{Kind: sim.OpRecv, Peer: 0, Tag: 7, Bytes: 8, Data: sim.Region{Buf: 1, Count: 1}},
			{Kind: sim.OpSend, Peer: 2, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}, After: []int32{0}},
		},
		{
			{Kind: sim.OpRecv, Peer: sim.AnySource, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}, Reduce: true},
			{Kind: sim.OpRecv, Peer: sim.AnySource, Tag: 1, Bytes: 8 * n, Data: sim.Region{Buf: 0, Count: n}, Reduce: true},
		},
	}
	s := sim.FromPrograms("anysource", progs, 8)
	for _, via := range landingVias {
		t.Run(via.String(), func(t *testing.T) {
			errs := runLocal(t, 3, via, func(r *realrun.Rank, rank int) error {
				for call := range 20 {
					d := [][]uint64{make([]uint64, n), make([]uint64, 1)}
					for i := range n {
						d[0][i] = uint64(1000*call + 100*rank)
					}
					if err := r.Execute(s, d); err != nil {
						return fmt.Errorf("call %d: %w", call, err)
					}
					if rank == 2 {
						want := uint64(1000*call+200) + uint64(1000*call) + uint64(1000*call+100)
						for i := range n {
							if d[0][i] != want {
								return fmt.Errorf("call %d elem %d = %d, want %d", call, i, d[0][i], want)
							}
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
