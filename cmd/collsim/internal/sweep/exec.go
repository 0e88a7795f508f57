package sweep

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/collsim/collsim/cmd/collsim/internal/run"
)

// Plan says which points a run of the sweep takes and how.
type Plan struct {
	Jobs          int // points run at once; 0: one per processor (GOMAXPROCS)
	Shard, Shards int // run the Shard-th (1-based) of Shards slices; 0, 0: all
	// Done are points already written (--resume); they are not run again.
	Done map[int]bool
	// Progress, if set, is told after each point is written.
	Progress func(done, total, failed int, last string)
	// Stop, when it closes, ends the run after the rows written so far
	// (Ctrl-C): Run returns ErrStopped.
	Stop <-chan struct{}
}

// ErrStopped is Run's error when Plan.Stop closed.
var ErrStopped = errors.New("stopped")

// InShard says whether point p belongs to the plan's shard: point p is in
// shard p mod n + 1, so that every shard gets a share of each axis's
// values (the costly large points of a grid's end are spread out).
func (pl *Plan) InShard(p int) bool {
	return pl.Shards == 0 || p%pl.Shards == pl.Shard-1
}

// todo lists the points the plan runs, in order.
func (s *Spec) todo(pl *Plan) []int {
	var pts []int
	for p := range s.Points() {
		if pl.InShard(p) && !pl.Done[p] {
			pts = append(pts, p)
		}
	}
	return pts
}

// Run runs the plan's points on Jobs workers and writes their rows to w
// in point order, whatever order they finish in, so that the output is
// the same (but for wall times) for any number of workers. At most a few
// rows per worker wait to be written; the plan's points are held from the
// start (about 160 bytes each). A point that fails is a row with its
// error; Run returns how many failed, and an error only when writing
// fails.
func (s *Spec) Run(w *writer, pl Plan) (failed int, err error) {
	jobs := pl.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	// Each point allocates and drops its simulation's state (about 120
	// KiB for 64 ranks) over a small live heap, so the default GOGC=100
	// collects every few MiB and the collector, not the points, limits how
	// a sweep scales with cores (BenchmarkSweep, 2 cores against 1: 1.26x
	// at GOGC=100, 1.6x at 400, 1.78x at 800; two separate processes
	// manage 1.95x). Unless the user set GOGC, the heap may grow to 9x
	// what the workers hold (43 MiB in the benchmark).
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(800))
	}
	todo := s.todo(&pl)
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// 9x would apply to the points too: 9 M points (1.5 GB) grew to
		// 17.7 GB in 40 s (a new user's trial). A soft limit above what
		// the points hold bounds that, with room for the workers.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(sweepMemoryLimit(ms.HeapAlloc)))
	}
	type job struct {
		point int
		out   chan outcome
	}
	queue := make(chan job)
	order := make(chan chan outcome, 4*jobs) // the window of points under way, in point order
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(queue)
		defer close(order)
		for _, p := range todo {
			out := make(chan outcome, 1)
			select {
			case order <- out:
			case <-stop:
				return
			}
			select {
			case queue <- job{p, out}:
			case <-stop:
				return
			}
		}
	}()
	cache := &machines{}
	for range jobs {
		go func() {
			points := run.NewPoints() // one flag set for all the worker's points
			for j := range queue {
				o := s.runPoint(j.point, cache, points)
				o.row = s.row(o) // here, not in the writer: it runs beside the workers
				j.out <- o
			}
		}()
	}
	done := 0
	for out := range order {
		var o outcome
		select {
		case o = <-out:
		case <-pl.Stop:
			return failed, ErrStopped
		}
		if o.err != nil {
			failed++
		}
		if err := w.write(o.row); err != nil {
			return failed, fmt.Errorf("writing point %d: %w", o.point, err)
		}
		done++
		if pl.Progress != nil {
			pl.Progress(done, len(todo), failed, s.describe(o.point))
		}
	}
	return failed, nil
}

// sweepMemoryLimit is the soft memory limit of a sweep whose heap holds
// live bytes once its points are made: them, and as much again or 4 GiB
// for the workers, whichever is more. (Twice them and 512 MiB starved
// workers whose points are large: 6 alltoalls on 1,024 ranks, about 0.5
// GB each, took 6.6 s against 4.6 s without a limit.)
func sweepMemoryLimit(live uint64) int64 { return int64(live) + max(int64(live), 4<<30) }
