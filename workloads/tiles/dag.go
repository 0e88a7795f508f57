// Package tiles simulates tiled dense linear algebra on the devices of
// one node (the BLASX, HSA and out-of-core GEMM seeds): GEMM, Cholesky
// and LU (without pivoting, as tile algorithms on GPUs run it) as DAGs of
// tile kernels, run by a runtime that assigns each task to a device,
// moves the tiles it reads (peer to peer, or staged through host memory),
// caches them on the device (LRU, a capacity from its memory) and writes
// back what it must.
//
// The runtime plans as StarPU's dm/dmda schedulers do: tasks are taken
// in order of their estimated ready time, each placed by a policy using
// the estimated kernel and transfer times (the machine's bandwidths,
// without contention), and each device runs its tasks in the order
// planned. The simulation then runs that plan on the machine, with the
// links shared: what the estimates left out shows in the makespan.
//
// Ranks: 0..D-1 are the devices; D..2D-1 are host memory, one port per
// device position: a tile written back by device d lies behind port D+d,
// and the initial matrices are behind every port (host memory is shared).
// A machine for this workload has a second node standing for host memory,
// reached over its bridge (see the gpu-node-* machines).
package tiles

import (
	"fmt"
	"slices"
)

// The algorithms.
var Algorithms = []string{"gemm", "cholesky", "lu"}

// Kernel kinds, with their FLOPs per tile of order b (b^3 units) and
// their efficiency relative to GEMM's (panel factorizations run far from
// peak on GPUs).
type kernel uint8

const (
	kGEMM kernel = iota
	kSYRK
	kTRSM
	kPOTRF
	kGETRF
)

var kernelNames = [...]string{"gemm", "syrk", "trsm", "potrf", "getrf"}

// flopsPerB3 is each kernel's FLOPs over b^3: GEMM 2, SYRK and TRSM 1,
// POTRF 1/3, GETRF 2/3 (the standard counts, lower-order terms dropped).
var flopsPerB3 = [...]float64{2, 1, 1, 1.0 / 3, 2.0 / 3}

// relEfficiency is each kernel's efficiency over GEMM's at the same
// tile size: SYRK and TRSM as vendor BLAS reach them, the panel
// factorizations a quarter (a Job can override none of these; they are
// documented inputs).
var relEfficiency = [...]float64{1, 0.9, 0.8, 0.25, 0.25}

// task is one tile kernel: it reads tiles and writes one.
type task struct {
	kind  kernel
	step  int32 // the factorization's step k (GEMM: its k)
	write int32 // tile
	reads []int32
}

// dag is an algorithm's tasks in sequential (insertion) order and their
// dependencies: read after write, write after write and write after
// read, as a sequential task flow (StarPU's, PaRSEC's DTD) derives them.
type dag struct {
	tasks []task
	deps  [][]int32
	succ  [][]int32
	tiles int
	flops float64 // in b^3 units
	steps int
}

// tile numbers tile (i, j) of matrix m in a T x T grid.
func tileID(m, i, j, t int) int32 { return int32((m*t+i)*t + j) }

// taskCount is how many tasks build makes for algo on t x t tiles, as a
// float64 so that no t overflows it (Check bounds the DAG with it; T^3/3
// for every algorithm let a GEMM of 3x the bound through and refused a
// Cholesky of half of it: an audit). Step k of T works on the m = T-k-1
// tiles below or right of its diagonal tile:
//   - GEMM: T^2 updates a step, T^3;
//   - Cholesky: POTRF, m TRSM, m SYRK and m(m-1)/2 GEMM, summed over m < T:
//     T + T(T-1) + T(T-1)(T-2)/6;
//   - LU: GETRF, 2m TRSM and m^2 GEMM: T + T(T-1) + (T-1)T(2T-1)/6.
func taskCount(algo string, t int) float64 {
	x := float64(t)
	switch algo {
	case "gemm":
		return x * x * x
	case "cholesky":
		return x + x*(x-1) + x*(x-1)*(x-2)/6
	case "lu":
		return x + x*(x-1) + (x-1)*x*(2*x-1)/6
	}
	return 0
}

func build(algo string, t int) (*dag, error) {
	d := &dag{}
	add := func(k kernel, step int, write int32, reads ...int32) {
		d.tasks = append(d.tasks, task{kind: k, step: int32(step), write: write, reads: reads})
		d.flops += flopsPerB3[k]
	}
	switch algo {
	case "gemm": // C += A B: matrices A 0, B 1, C 2
		d.tiles, d.steps = 3*t*t, t
		for k := range t {
			for i := range t {
				for j := range t {
					add(kGEMM, k, tileID(2, i, j, t), tileID(0, i, k, t), tileID(1, k, j, t))
				}
			}
		}
	case "cholesky": // lower, right-looking
		d.tiles, d.steps = t*t, t
		for k := range t {
			add(kPOTRF, k, tileID(0, k, k, t))
			for i := k + 1; i < t; i++ {
				add(kTRSM, k, tileID(0, i, k, t), tileID(0, k, k, t))
			}
			for i := k + 1; i < t; i++ {
				add(kSYRK, k, tileID(0, i, i, t), tileID(0, i, k, t))
				for j := k + 1; j < i; j++ {
					add(kGEMM, k, tileID(0, i, j, t), tileID(0, i, k, t), tileID(0, j, k, t))
				}
			}
		}
	case "lu": // no pivoting, right-looking
		d.tiles, d.steps = t*t, t
		for k := range t {
			add(kGETRF, k, tileID(0, k, k, t))
			for j := k + 1; j < t; j++ {
				add(kTRSM, k, tileID(0, k, j, t), tileID(0, k, k, t))
			}
			for i := k + 1; i < t; i++ {
				add(kTRSM, k, tileID(0, i, k, t), tileID(0, k, k, t))
			}
			for i := k + 1; i < t; i++ {
				for j := k + 1; j < t; j++ {
					add(kGEMM, k, tileID(0, i, j, t), tileID(0, i, k, t), tileID(0, k, j, t))
				}
			}
		}
	default:
		return nil, fmt.Errorf("algorithm %q; valid: %v", algo, Algorithms)
	}
	// Dependencies: the last writer of every tile a task touches, and,
	// for the tile it writes, the readers since that write.
	lastWriter := make([]int32, d.tiles)
	for i := range lastWriter {
		lastWriter[i] = -1
	}
	readers := make([][]int32, d.tiles)
	d.deps = make([][]int32, len(d.tasks))
	d.succ = make([][]int32, len(d.tasks))
	for id := range d.tasks {
		tk := &d.tasks[id]
		var deps []int32
		for _, r := range tk.reads {
			if w := lastWriter[r]; w >= 0 {
				deps = append(deps, w)
			}
		}
		if w := lastWriter[tk.write]; w >= 0 {
			deps = append(deps, w)
		}
		deps = append(deps, readers[tk.write]...)
		slices.Sort(deps)
		deps = slices.Compact(deps)
		deps = slices.DeleteFunc(deps, func(x int32) bool { return x == int32(id) })
		d.deps[id] = deps
		for _, p := range deps {
			d.succ[p] = append(d.succ[p], int32(id))
		}
		for _, r := range tk.reads {
			readers[r] = append(readers[r], int32(id))
		}
		lastWriter[tk.write], readers[tk.write] = int32(id), readers[tk.write][:0]
	}
	return d, nil
}
