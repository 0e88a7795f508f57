package realrun

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/collsim/collsim/sim"
)

// TestFailedCallLeavesBuffersAlone: once a call has failed, nothing writes
// into its buffers. Rank 0 writes a 4 MiB message's header and half its
// elements by hand; rank 1's receive is posted, so they land in its
// region, and the call then fails (no progress within its timeout). Rank
// 0 writes the other half, and rank 1 reads it while closing: it must go
// nowhere, whether the receive copies or reduces. (It went on into the
// caller's buffer.)
func TestFailedCallLeavesBuffersAlone(t *testing.T) {
	const n = 1 << 19 // elements: 4 MiB
	for _, tc := range []struct {
		via    Transport
		reduce bool
	}{{TCP, false}, {SharedMemoryRings, false}, {TCP, true}, {SharedMemoryRings, true}} {
		via := tc.via
		t.Run(fmt.Sprintf("%v/reduce=%t", via, tc.reduce), func(t *testing.T) {
			if via.shares() {
				if err := SharedMemoryAvailable(); err != nil {
					t.Skipf("needs shared memory between processes: %v", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			meshes, err := ConnectLocal(ctx, 2, 11, via)
			if err != nil {
				t.Fatal(err)
			}
			recv := sim.Op{Kind: sim.OpRecv, Peer: 0, Tag: 1, Bytes: 8 * n, Data: sim.Region{Count: n}, Reduce: tc.reduce}
			s := sim.FromPrograms("half", []sim.Program{nil, {recv}}, 1)
			frame := make([]byte, headerBytes+8*n)
			(&header{kind: kindData | flagElements, epoch: 1, tag: 1, bytes: 8 * n, payload: 8 * n}).put(frame)
			for i := headerBytes; i < len(frame); i++ {
				frame[i] = 7
			}
			half := headerBytes + 4*n
			rest := make(chan struct{})
			wrote := make(chan error, 1)
			go func() {
				c := meshes[0].conns[1]
				if _, err := c.Write(frame[:half]); err != nil {
					wrote <- err
					return
				}
				<-rest
				_, err := c.Write(frame[half:])
				wrote <- err
			}()
			r := NewRank(meshes[1])
			r.Timeout = 300 * time.Millisecond
			buf := make([]uint64, n)
			if err := r.Execute(s, [][]uint64{buf}); err == nil {
				t.Fatal("the call with half its message succeeded")
			}
			landed := func() (k int) {
				for _, v := range buf {
					if v != 0 {
						k++
					}
				}
				return k
			}
			before := landed()
			if before == 0 || before == n {
				t.Fatalf("%d of %d elements had landed when the call failed: the test did not catch the frame halfway", before, n)
			}
			close(rest)
			// Rank 1 reads the rest while it waits for rank 0's goodbye,
			// which comes once the rest is written.
			closed := make(chan struct{})
			go func() { meshes[1].Close(time.Now().Add(5 * time.Second)); close(closed) }()
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			meshes[0].Close(time.Now().Add(5 * time.Second))
			<-closed
			if after := landed(); after != before {
				t.Errorf("the failed call's buffer changed after it returned: %d elements of the message before, %d after", before, after)
			}
		})
	}
}
