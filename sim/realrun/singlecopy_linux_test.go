//go:build linux

package realrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/collsim/collsim/sim"
)

// TestReadRemote: process_vm_readv copies exactly the bytes at an address
// of a process (this one), and fails, without copying, for a process that
// does not exist or an address that is not mapped; mayRead says yes only
// when the bytes read are the ones expected.
func TestReadRemote(t *testing.T) {
	src := []byte("the quick brown fox jumps over the lazy dog")
	addr := uintptr(unsafe.Pointer(&src[0]))
	got := make([]byte, len(src)-4)
	if err := readRemote(os.Getpid(), addr+4, got); err != nil {
		t.Skipf("process_vm_readv is not allowed here: %v", err)
	}
	if string(got) != string(src[4:]) {
		t.Errorf("read %q, want %q", got, src[4:])
	}
	if !mayRead(os.Getpid(), addr, src[:9]) {
		t.Error("mayRead: no, for the bytes that are there")
	}
	if mayRead(os.Getpid(), addr, []byte("the slow ")) {
		t.Error("mayRead: yes, for bytes that are not there")
	}
	// A process ID above the kernel's limit (4194304) cannot exist.
	if err := readRemote(1<<23, addr, got); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("reading a process that does not exist: %v, want ESRCH", err)
	}
	if err := readRemote(os.Getpid(), 8, got); !errors.Is(err, syscall.EFAULT) {
		t.Errorf("reading address 8: %v, want EFAULT", err)
	}
}

// TestForgedGotFrame: a got frame for a message the rank never offered
// (another program, or a corrupt peer) fails the connection, naming the
// peer, rather than completing some other send.
func TestForgedGotFrame(t *testing.T) {
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, via := range []Transport{SharedMemory, SharedMemory | goroutinePerPeer, TCP} {
		meshes, err := ConnectLocal(ctx, 2, 7, via)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := meshes[0].send(1, header{kind: kindGot, bytes: 3}, nil, -1); err != nil {
			t.Fatal(err)
		}
		e, ok := meshes[1].next(time.Now().Add(10 * time.Second))
		if !ok || e.kind != evError || !strings.Contains(e.err.Error(), "rank 0 said it read a message (token 3) this rank had not offered it") {
			t.Errorf("over %v: rank 1 took %+v (%t), want the forged got frame's error", via, e, ok)
		}
		for _, m := range meshes {
			m.Abort(nil)
		}
	}
}

// TestOversizedGetFrame: a get frame offering more elements than any
// message may hold (a corrupt or hostile peer) fails the receive it
// matches with an error naming the peer, over either transport, instead of
// wrapping to a negative length.
func TestOversizedGetFrame(t *testing.T) {
	// 2^62 elements would be refused as more than the receive holds; 2^63+5
	// would wrap, as an int64, to a negative count that passes that check.
	for _, elems := range []uint64{1 << 62, 1<<63 + 5} {
		for _, via := range []Transport{TCP, SharedMemory} {
			if via == SharedMemory && SharedMemoryAvailable() != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			meshes, err := ConnectLocal(ctx, 2, 11, via)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			// Rank 0 receives one element from rank 1, which offers elems.
			progs := []sim.Program{
				{{Kind: sim.OpRecv, Peer: 1, Tag: 0, Bytes: 8, Data: sim.Region{Count: 1}}},
				{},
			}
			done := make(chan error, 1)
			go func() {
				r := NewRank(meshes[0])
				r.Timeout = 10 * time.Second
				done <- r.Execute(sim.FromPrograms("get", progs, 8), [][]uint64{make([]uint64, 1)})
			}()
			forged := outItem{h: header{kind: kindGet, epoch: 1, bytes: 8, payload: getDescBytes}, desc: getDesc{0, elems, 0}, op: -1}
			if _, err := meshes[1].queue(0, forged, true); err != nil {
				t.Fatal(err)
			}
			err = <-done
			if want := fmt.Sprintf("rank 1 offered a message of %d elements", elems); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("over %v: rank 0's receive returned %v, want an error saying %q", via, err, want)
			}
			for _, m := range meshes {
				m.Abort(nil)
			}
		}
	}
}

// sharedPairOfRanks connects two ranks of job through shared memory in
// this process; they are aborted when the test ends.
func sharedPairOfRanks(t *testing.T, job uint64) []*Mesh {
	t.Helper()
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meshes, err := ConnectLocal(ctx, 2, job, SharedMemory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, m := range meshes {
			m.Abort(nil)
		}
	})
	return meshes
}

// TestSendWaitsForTheGot: a single-copy send completes only when the
// receiver has read it (the got frame), and its elements stay lent until
// then; the receiver reads them while the sender's buffer still holds them.
func TestSendWaitsForTheGot(t *testing.T) {
	meshes := sharedPairOfRanks(t, 8)
	if meshes[0].SingleCopyPeers() != 1 || meshes[1].SingleCopyPeers() != 1 {
		t.Skip("the ranks may not read each other's memory here")
	}
	n := int(meshes[0].singleCopyAbove/8) + 5 // too large for a ring
	payload := make([]uint64, n)
	for i := range payload {
		payload[i] = uint64(i) * 2654435761
	}
	want := append([]uint64(nil), payload...)
	written, err := meshes[0].send(1, header{kind: kindData | flagElements, epoch: 1, tag: 9, bytes: int64(8 * n), payload: int64(8 * n)}, payload, 4)
	if err != nil || written {
		t.Fatalf("send: written %t, %v; want queued, waiting for the got frame", written, err)
	}
	e, ok := meshes[1].next(time.Now().Add(10 * time.Second))
	if !ok || e.h.kind != kindGet || e.desc[1] != uint64(n) || e.h.tag != 9 || e.h.bytes != int64(8*n) {
		t.Fatalf("rank 1 took %+v (%t), want a get frame of %d elements, tag 9", e, ok, n)
	}
	if e, ok := meshes[0].next(time.Now().Add(50 * time.Millisecond)); ok {
		t.Fatalf("the send completed (%+v) before the receiver read it", e)
	}
	got := make([]uint64, n)
	if err := meshes[1].fetch(0, e.desc, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("element %d: read %d, want %d", i, got[i], want[i])
		}
	}
	if err := meshes[1].got(0, 1, e.desc); err != nil {
		t.Fatal(err)
	}
	e, ok = meshes[0].next(time.Now().Add(10 * time.Second))
	if !ok || e.kind != evSent || e.op != 4 || e.epoch != 1 {
		t.Errorf("rank 0 took %+v (%t), want its send (op 4 of call 1) completed", e, ok)
	}
}

// TestSingleCopyLimit: by default a message goes as a single copy when it
// and its header would not fit in a ring, and through the ring when they
// would; SetSingleCopyAbove moves the limit (vader's 4 KiB) or turns single
// copies off.
func TestSingleCopyLimit(t *testing.T) {
	meshes := sharedPairOfRanks(t, 9)
	if meshes[0].SingleCopyPeers() != 1 {
		t.Skip("the ranks may not read each other's memory here")
	}
	ring := int64(ringBytes(2))
	for _, c := range []struct {
		above int64
		elems int64
		get   bool
	}{
		{0, (ring - headerBytes) / 8, false},
		{0, (ring-headerBytes)/8 + 1, true},
		{4096, 512, false},
		{4096, 513, true},
		{SingleCopyOff, 3 * ring / 8, false},
	} {
		meshes[0].SetSingleCopyAbove(c.above)
		payload := make([]uint64, c.elems)
		h := header{kind: kindData | flagElements, epoch: 1, bytes: 8 * c.elems, payload: 8 * c.elems}
		if _, err := meshes[0].send(1, h, payload, -1); err != nil {
			t.Fatal(err)
		}
		flushed := make(chan struct{})
		go func() { // what the ring did not take at once
			meshes[0].flushPolled(time.Now().Add(10 * time.Second))
			close(flushed)
		}()
		e, ok := meshes[1].next(time.Now().Add(10 * time.Second))
		<-flushed
		if !ok || (e.h.kind == kindGet) != c.get {
			t.Fatalf("limit %d, %d elements: rank 1 took a frame of kind %d (%t), want a get frame: %t", c.above, c.elems, e.h.kind, ok, c.get)
		}
		if c.get {
			if err := meshes[1].got(0, 1, e.desc); err != nil {
				t.Fatal(err)
			}
		}
	}
}
