package tiles

import (
	"fmt"
	"math"
	"slices"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

// The schedulers.
//
//   - locality: each task to the device holding the tile it writes, so
//     that a tile stays where it was last written and its first placement
//     makes its owner; a tile on no device yet goes where the task is
//     estimated to finish first, counting the fetches (StarPU's dmda).
//     Dependency-driven.
//   - dynamic: each task to the device estimated to be free first,
//     wherever its inputs are (an eager list scheduler, dependency-driven).
//   - bsp: bulk-synchronous: each task to the owner of the tile it writes
//     (1D block-cyclic by tile column; GEMM: by tile), and every device
//     waits for all after each step of the algorithm (a host thread
//     synchronizing the devices, as a fork-join multi-GPU library does).
var Schedulers = []string{"locality", "dynamic", "bsp"}

// Job is one tiled algorithm on a node's devices.
type Job struct {
	Algorithm string
	Tiles     int   // T: the matrices are T x T tiles
	B         int   // tile order
	Elem      int64 // bytes per element
	Devices   int
	// Peak is a device's FLOP/s; a kernel on b x b tiles runs at
	// Peak x b / (b + HalfTile) x its efficiency relative to GEMM.
	Peak     float64
	HalfTile int
	// Capacity is the tiles a device holds at once (its memory over a
	// tile's bytes); 0: no limit.
	Capacity  int
	Scheduler string
	// Staged moves tiles between devices through host memory rather than
	// peer to peer.
	Staged bool
	// PeerFirst fetches a tile another device holds from the nearest such
	// device whose copy is in place when the fetch could start, host
	// memory only when none has it: BLASX's second-level tile cache
	// (blasx_mem_control.c searches the other GPUs' caches, nearest
	// first, on a miss in its own). Without it the plan takes a peer's
	// copy only when the estimate has it arrive no later than host
	// memory's, as StarPU's dmda would.
	PeerFirst bool
	// Cost gives the latency (s) and seconds per byte between two ranks
	// (devices 0..D-1, host memory ports D..2D-1), for the plan's
	// estimates: the machine's, from the caller.
	Cost func(src, dst int) (alpha, beta float64)
	// Data makes every tile an element that carries the token of the
	// task that wrote it, and every task record the tokens it read, so
	// that a data-mode run shows whether each task saw the version the
	// sequential algorithm would (see Buffers).
	Data bool
}

// Data mode's buffers: a rank's tiles (one element each), the tokens it
// writes (a device's: token id+1 for task id), and the tokens each task
// read (three per task).
const (
	bufTiles = iota
	bufTokens
	bufSeen
)

// maxTasks bounds the DAG (a T = 256 Cholesky has 2.8 million tasks).
const maxTasks = 1 << 23

// Check refuses a job that cannot run.
func (j *Job) Check() error {
	switch {
	case !slices.Contains(Algorithms, j.Algorithm):
		return fmt.Errorf("algorithm %q; valid: %v", j.Algorithm, Algorithms)
	case !slices.Contains(Schedulers, j.Scheduler):
		return fmt.Errorf("scheduler %q; valid: %v", j.Scheduler, Schedulers)
	case j.Tiles < 1 || j.B < 1 || j.Elem < 1:
		return fmt.Errorf("%d x %d tiles of order %d, %d-byte elements: all at least 1", j.Tiles, j.Tiles, j.B, j.Elem)
	case taskCount(j.Algorithm, j.Tiles) > maxTasks:
		return fmt.Errorf("%s on %d x %d tiles: %.0f tasks, more than %d; use larger tiles", j.Algorithm, j.Tiles, j.Tiles, taskCount(j.Algorithm, j.Tiles), maxTasks)
	case float64(j.B)*float64(j.B)*float64(j.Elem) > 1<<40:
		return fmt.Errorf("tiles of order %d are above a TiB", j.B)
	case j.Devices < 1 || j.Devices > 64:
		return fmt.Errorf("%d devices: from 1 to 64", j.Devices)
	case !(j.Peak > 0) || math.IsInf(j.Peak, 0):
		return fmt.Errorf("peak %g FLOP/s: give a positive rate", j.Peak)
	case j.HalfTile < 0:
		return fmt.Errorf("half-efficiency tile order %d: not negative", j.HalfTile)
	case j.Capacity < 0 || j.Capacity > 0 && j.Capacity < maxInputs:
		return fmt.Errorf("a device holding %d tiles: %s needs at least %d (a task's tiles), and more to cache any", j.Capacity, j.Algorithm, maxInputs)
	case j.Cost == nil:
		return fmt.Errorf("no transfer costs to plan with")
	}
	return nil
}

// maxInputs is the most tiles a task touches (GEMM: A, B and C): a device
// must hold them at once.
const maxInputs = 3

// Ranks is the devices and their host memory ports.
func (j *Job) Ranks() int { return 2 * j.Devices }

func (j *Job) tileBytes() int64 { return int64(j.B) * int64(j.B) * j.Elem }

// kernelTime is a kernel's time on one device.
func (j *Job) kernelTime(k kernel) float64 {
	b := float64(j.B)
	eff := b / (b + float64(j.HalfTile)) * relEfficiency[k]
	return flopsPerB3[k] * b * b * b / (j.Peak * eff)
}

// FLOPs is the algorithm's FLOP count.
func (j *Job) FLOPs() (float64, error) {
	d, err := build(j.Algorithm, j.Tiles)
	if err != nil {
		return 0, err
	}
	b := float64(j.B)
	return d.flops * b * b * b, nil
}

// Stats is what the plan moved and how often a device had a tile it
// needed.
type Stats struct {
	Tasks                                  int
	Hits, Misses                           int64 // task inputs found on the device, or brought
	HostToDevice, DeviceToHost, PeerToPeer int64 // bytes
	// DeviceIn and DeviceOut are each device's bytes received and sent.
	DeviceIn, DeviceOut []int64
	Estimate            float64 // the plan's own estimate of the makespan (s)
}

// HitRate is hits over task inputs.
func (s *Stats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// Plan plans the job and returns it as per-rank programs.
func (j *Job) Plan() (collectives.Composition, *Stats, error) {
	if err := j.Check(); err != nil {
		return collectives.Composition{}, nil, err
	}
	d, err := build(j.Algorithm, j.Tiles)
	if err != nil {
		return collectives.Composition{}, nil, err
	}
	p := newPlanner(j, d)
	if err := p.run(); err != nil {
		return collectives.Composition{}, nil, err
	}
	items := p.items
	c := collectives.Composition{
		Name:   "tiles-" + j.Algorithm,
		Ranks:  j.Ranks(),
		Lanes:  3, // devices: compute, copy in, copy out
		Script: func(r int) collectives.Script { return &listScript{items: items[r]} },
	}
	if j.Data {
		n := int64(len(d.tasks))
		c.Buffers = func(r int) []int64 { return []int64{int64(d.tiles), n, 3 * n} }
	}
	return c, &p.stats, nil
}

// listScript hands out a planned rank's items.
type listScript struct {
	items []collectives.Item
	next  int
}

func (s *listScript) Next(out []collectives.Item) []collectives.Item {
	end := min(s.next+256, len(s.items))
	out = append(out, s.items[s.next:end]...)
	s.next = end
	return out
}

// The lanes of a device: kernels run in order on one, tiles come in on
// another and leave on a third (a GPU's compute stream and its two copy
// engines).
const (
	laneCompute = 0
	laneIn      = 1
	laneOut     = 2
)

// readyQueue orders ready tasks by estimated ready time, then by
// insertion order (and for bsp, by step first).
type readyQueue struct {
	ids   []int32
	at    []float64
	step  []int32
	byStp bool
}

func (q *readyQueue) Len() int { return len(q.ids) }
func (q *readyQueue) Less(a, b int) bool {
	x, y := q.ids[a], q.ids[b]
	if q.byStp && q.step[x] != q.step[y] {
		return q.step[x] < q.step[y]
	}
	if q.at[x] != q.at[y] {
		return q.at[x] < q.at[y]
	}
	return x < y
}
func (q *readyQueue) Swap(a, b int) { q.ids[a], q.ids[b] = q.ids[b], q.ids[a] }
func (q *readyQueue) Push(x any)    { q.ids = append(q.ids, x.(int32)) }
func (q *readyQueue) Pop() any {
	n := len(q.ids)
	x := q.ids[n-1]
	q.ids = q.ids[:n-1]
	return x
}

func seconds(s float64) sim.Time { return sim.FromSeconds(s) }
