// Package workers runs goroutines whose panics are not lost: a panic in a
// worker is carried back to the goroutine that waits for it and raised
// there, so that collsim's top-level guard (which can only recover panics
// of its own goroutine) reports it as an internal error instead of the Go
// runtime killing the process with a goroutine dump.
package workers

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Group is a sync.WaitGroup that remembers the first panic of its
// goroutines. The zero Group is ready to use.
type Group struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	panic *Panic
}

// Panic is a worker's panic, raised again by Wait: the value and the
// worker's stack, which the waiter's own stack would not show.
type Panic struct {
	Value any
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("%v", p.Value) }

// Go runs f in a new goroutine.
func (g *Group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() {
			if v := recover(); v != nil {
				g.mu.Lock()
				if g.panic == nil {
					g.panic = &Panic{Value: v, Stack: debug.Stack()}
				}
				g.mu.Unlock()
			}
		}()
		f()
	}()
}

// Wait waits for every goroutine started by Go; if one of them panicked, it
// panics with that *Panic.
func (g *Group) Wait() {
	g.wg.Wait()
	if g.panic != nil {
		panic(g.panic)
	}
}

// Each calls f(i) for every i in 0..n-1 on GOMAXPROCS goroutines, handing
// out indices in increasing order, and returns when all calls have; a
// panic in one of them is raised again here once the others have stopped
// (they take no new index after it).
func Each(n int, f func(i int)) {
	var next atomic.Int64
	var failed atomic.Bool
	var g Group
	for range min(runtime.GOMAXPROCS(0), n) {
		g.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					failed.Store(true)
					panic(v)
				}
			}()
			for i := next.Add(1) - 1; i < int64(n) && !failed.Load(); i = next.Add(1) - 1 {
				f(int(i))
			}
		})
	}
	g.Wait()
}
