//go:build linux

package realrun

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkRingPingPong passes a 40-byte record (an 8-byte message's
// frame) back and forth between two goroutines, each on its own thread,
// through one shared-memory channel and nothing else: the floor under
// BenchmarkTransport's shared-memory ping-pong, which adds the ranks'
// matching, completion and framing. ns/way is the one-way time.
//
//	go test ./sim/realrun -run '^$' -bench RingPingPong -count 3
func BenchmarkRingPingPong(b *testing.B) {
	a, c := sharedPair(b, shmDir, 1<<20)
	defer a.Close()
	defer c.Close()
	const frame = headerBytes + 8
	var failed atomic.Bool // a side that fails stops the other's wait
	side := func(conn *sharedConn, first bool) {
		runtime.LockOSThread()
		out, in := make([]byte, frame), make([]byte, frame)
		receive := func() bool {
			for got := 0; got < frame; {
				n, err := conn.readSome(in[got:])
				if err != nil {
					b.Error(err)
					failed.Store(true)
				}
				if failed.Load() {
					return false
				}
				got += n
			}
			return true
		}
		for range b.N {
			if !first && !receive() {
				return
			}
			if n, err := conn.writeSome(out); n != frame || err != nil {
				b.Errorf("wrote %d of %d bytes: %v", n, frame, err)
				failed.Store(true)
				return
			}
			if first && !receive() {
				return
			}
		}
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	wg.Go(func() { side(a, true) })
	wg.Go(func() { side(c, false) })
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/way")
}
