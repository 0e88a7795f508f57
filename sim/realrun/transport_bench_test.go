package realrun_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"context"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim/realrun"
)

// BenchmarkTransport times, in this process, a 2-rank ping-pong of 100
// round trips at 8 B and 1 MiB over each transport: what one hand-over
// through the mesh costs, without process start-up. ns/op is one call of
// 100 round trips; us/way is the one-way time.
//
//	go test ./sim/realrun -run '^$' -bench Transport -cpuprofile cpu.out
func BenchmarkTransport(b *testing.B) {
	for _, via := range transports {
		for _, bytes := range []int64{8, 1 << 20} {
			b.Run(fmt.Sprintf("%v/%dB", via, bytes), func(b *testing.B) {
				skipWithoutSharedMemory(b, via)
				const rounds = 100
				s, err := collectives.PingPong(2, 0, 1, bytes, rounds)
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				meshes, err := realrun.ConnectLocal(ctx, 2, 1, via)
				if err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				errs := make([]error, 2)
				start := make(chan struct{})
				for rank, m := range meshes {
					wg.Go(func() {
						r := realrun.NewRank(m)
						r.Timeout = 10 * time.Second
						<-start
						for range b.N {
							if err := r.Execute(s, nil); err != nil {
								errs[rank] = err
								m.Abort(err)
								return
							}
						}
						errs[rank] = m.Close(time.Now().Add(10 * time.Second))
					})
				}
				b.ResetTimer()
				close(start)
				wg.Wait()
				b.StopTimer()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*rounds)/1e3, "us/way")
			})
		}
	}
}
