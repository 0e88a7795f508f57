//go:build linux

package realrun

import (
	"runtime"
	"sync"
	"testing"
)

func BenchmarkZZRawRing(b *testing.B) {
	a, c := sharedPair(b, shmDir, 1<<20)
	defer a.Close()
	defer c.Close()
	var wg sync.WaitGroup
	side := func(conn *sharedConn, first bool) {
		runtime.LockOSThread()
		buf := make([]byte, 40)
		in := make([]byte, 40)
		recv := func() {
			got := 0
			for got < 40 {
				n, _ := conn.readSome(in[got:])
				got += n
			}
		}
		for range b.N {
			if first {
				conn.writeSome(buf)
				recv()
			} else {
				recv()
				conn.writeSome(buf)
			}
		}
	}
	b.ResetTimer()
	wg.Go(func() { side(a, true) })
	wg.Go(func() { side(c, false) })
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/way")
}
