package hugepage

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Arena hands out tables of pointer-free elements from memory mapped
// outside Go's heap, advised for huge pages before anything touches it, and
// returns them all to the kernel at once (Free).
//
// Make's advice comes after Go has placed the table, so a table on heap
// memory that was touched before (the garbage of an earlier run, or of the
// text a schedule was read from) stays in 4 KiB pages; a table made of
// thousands of small ones (a queue and an index per rank) gets none at
// all. A 2,048-rank linear alltoall's queues and indexes, 150 MB read at
// random, then cost a TLB miss per access: in that run's benchmark, moving
// them and the tables of messages and ready ops here took half off its
// time (BenchmarkRunLogGOPSAlltoallGrowth in package sim). Memory from an
// arena is zero when handed out and never moves: a table that outgrows
// its room is copied to a new one, the old one staying mapped until Free.
// Elsewhere than Linux an arena hands out Go memory and Free does nothing.
type Arena struct {
	m *mappings // what it has mapped, for Free and the cleanup
}

// mappings are what an arena has mapped: apart from the Arena itself, so
// that the cleanup that unmaps them when Free was never called does not
// keep the arena reachable.
type mappings struct {
	spans    []span  // tables with a mapping of their own
	chunks   []span  // the chunks small tables are cut from, oldest first
	rest     []byte  // the unused end of the newest chunk
	reserved uintptr // the room of the spans that Reserve made (reservedBytes)
}

// reservedBytes is the room every live arena's reservations hold
// together, which Reserve keeps within a quarter of the limit on address
// space.
var reservedBytes atomic.Uint64

type span struct {
	p unsafe.Pointer
	n uintptr
}

// pool keeps a few chunks that arenas freed, with how much of each was
// handed out, for the next arenas: a process that runs many small
// simulations (a sweep, a benchmark's loop) then clears the part a run
// used instead of faulting in fresh pages at every run, as heap memory
// would be reused. Beyond poolChunks, freed chunks are unmapped.
var pool struct {
	sync.Mutex
	chunks []pooled
}

type pooled struct {
	span
	used uintptr
}

// poolChunks is how many chunks of each size the pool keeps.
const poolChunks = 4

// chunkBytes is the size of the chunks small tables are cut from, but an
// arena's first, firstChunkBytes long and in 4 KiB pages: a small run
// touches a few kilobytes of it, where a huge page would add 2 MiB to its
// memory (the 1,024-rank ring's peak was 196-198 MB with one, 193-196 MB
// before the arena), and a 4 MiB first chunk in small pages cost a fault
// per page used (the 256-rank linear alltoall's simulation took 0.034-0.039
// s against 0.030-0.031 s for the build before the arena, 3 alternated
// runs; with that chunk in huge pages, 0.026-0.033 s against 0.034-0.045 s
// in another series). Huge pages save TLB misses only in large arenas.
// ownBytes is the size from which a table has a mapping of its own.
const (
	chunkBytes      = 2 * Size
	firstChunkBytes = 256 << 10
	ownBytes        = chunkBytes / 4
)

// NewArena returns an empty arena. What it maps is unmapped by Free. An
// arena never freed is unmapped once the collector finds it unreachable,
// which may be late: its memory does not count toward the heap that paces
// the collector (20 arenas of 64 MiB, touched and dropped, held 1.3 GB).
// Free every arena.
func NewArena() *Arena {
	a := &Arena{m: new(mappings)}
	runtime.AddCleanup(a, (*mappings).unmap, a.m)
	return a
}

// Free unmaps everything a has handed out (but a few chunks, kept for the
// next arenas): no table from it may be used after. a stays usable, empty.
// Free of a nil arena does nothing.
func (a *Arena) Free() {
	if a == nil {
		return
	}
	a.m.unmap()
	// Until unmap has returned: were this call a's last use, the collector
	// could run its cleanup, the same unmap, at once (a fault in a test
	// that freed arenas while another goroutine ran the collector).
	runtime.KeepAlive(a)
}

func (m *mappings) unmap() {
	for _, s := range m.spans {
		unmap(s.p, s.n)
	}
	reservedBytes.Add(-uint64(m.reserved))
	m.reserved = 0
	pool.Lock()
	for i, c := range m.chunks {
		used := c.n
		if i == len(m.chunks)-1 {
			used -= uintptr(len(m.rest))
		}
		kept := 0
		for _, q := range pool.chunks {
			if q.n == c.n {
				kept++
			}
		}
		if kept < poolChunks {
			protect(c.p, c.n, true) // a table used after Free faults, as unmapped
			pool.chunks = append(pool.chunks, pooled{c, used})
		} else {
			unmap(c.p, c.n)
		}
	}
	pool.Unlock()
	m.spans, m.chunks, m.rest = nil, nil, nil
}

// newChunk returns a zero chunk of n bytes (firstChunkBytes or
// chunkBytes), from the pool or newly mapped; huge pages are asked for on
// the large ones (nil when mapping fails).
func newChunk(n uintptr) unsafe.Pointer {
	pool.Lock()
	var c pooled
	for i := len(pool.chunks) - 1; i >= 0; i-- {
		if pool.chunks[i].n == n {
			c = pool.chunks[i]
			pool.chunks = append(pool.chunks[:i], pool.chunks[i+1:]...)
			break
		}
	}
	pool.Unlock()
	if c.p != nil {
		protect(c.p, c.n, false)
		// The policy may have changed since the chunk was mapped.
		adviseMapping(c.p, c.n, n == chunkBytes)
		clear(unsafe.Slice((*byte)(c.p), c.used))
		return c.p
	}
	p, _ := mapAligned(n, false, n == chunkBytes)
	return p
}

// Alloc returns a zero table of n elements of T from a, or from Go's heap
// (make) when a is nil, when mapping fails, and under the race detector
// (which sees only Go's memory). T must hold no pointers: Go's
// collector does not see memory outside its heap.
func Alloc[T any](a *Arena, n int) []T {
	var zero T
	size := unsafe.Sizeof(zero)
	if a == nil || n == 0 || size == 0 {
		return make([]T, n)
	}
	mustHoldNoPointers[T]()
	if raceEnabled {
		return make([]T, n)
	}
	if uint64(n) > uint64(^uintptr(0)/2)/uint64(size) {
		panic(fmt.Sprintf("hugepage.Alloc: %d elements of %d bytes", n, size))
	}
	p := a.alloc(uintptr(n)*size, unsafe.Alignof(zero), false)
	if p == nil {
		return make([]T, n)
	}
	return unsafe.Slice((*T)(p), n)
}

// Reserve returns an empty table of T with room for n elements in a
// mapping of its own, whose pages take memory only once touched: room for
// a table's worst case that costs its actual use. It returns nil (room for
// nothing: the caller grows the table as usual) when a is nil, where
// mapping fails (under vm.overcommit_memory=2 the room counts against the
// machine's commit limit), when the room, with what the live arenas'
// reservations already hold, would take more than a quarter of the
// process's limit on address space (ulimit -v; room counts there, and the
// rest of the process needs it more), elsewhere than Linux, and under the
// race detector.
func Reserve[T any](a *Arena, n int) []T {
	var zero T
	size := unsafe.Sizeof(zero)
	if a == nil || n == 0 || size == 0 || !canReserve {
		return nil
	}
	mustHoldNoPointers[T]()
	if raceEnabled {
		return nil
	}
	if uint64(n) > uint64(^uintptr(0)/2)/uint64(size) {
		return nil
	}
	room := uintptr(n) * size
	if !holdRoom(room, addressLimit()/4) {
		return nil
	}
	p := a.alloc(room, unsafe.Alignof(zero), true)
	if p == nil {
		reservedBytes.Add(-uint64(room))
		return nil
	}
	a.m.reserved += room
	return unsafe.Slice((*T)(p), n)[:0]
}

// holdRoom counts room in reservedBytes if that stays within most, and
// reports whether it did.
func holdRoom(room uintptr, most uint64) bool {
	for {
		held := reservedBytes.Load()
		if held+uint64(room) > most || held+uint64(room) < held {
			return false
		}
		if reservedBytes.CompareAndSwap(held, held+uint64(room)) {
			return true
		}
	}
}

// alloc returns size zero bytes aligned to align from a (nil when mapping
// fails); reserve asks for a mapping of their own, not counted against the
// machine's memory until touched.
func (a *Arena) alloc(size, align uintptr, reserve bool) unsafe.Pointer {
	if reserve || size >= ownBytes {
		p, n := mapAligned(size, reserve, true)
		if p == nil {
			return nil
		}
		a.m.spans = append(a.m.spans, span{p, n})
		return p
	}
	m := a.m
	skip := -uintptr(unsafe.Pointer(unsafe.SliceData(m.rest))) & (align - 1)
	if uintptr(len(m.rest)) < skip+size {
		n := uintptr(chunkBytes)
		if len(m.chunks) == 0 && size <= firstChunkBytes {
			n = firstChunkBytes
		}
		p := newChunk(n)
		if p == nil {
			return nil
		}
		m.chunks = append(m.chunks, span{p, n})
		m.rest, skip = unsafe.Slice((*byte)(p), n), 0
	}
	p := unsafe.Pointer(&m.rest[skip])
	m.rest = m.rest[skip+size:]
	return p
}

// mustHoldNoPointers panics when T holds a pointer: a table of it outside
// the heap would hide what it points to from the collector. A type found
// to hold none is remembered: a run allocates queues of the same few
// types for each of its ranks, and walking a struct's fields by
// reflection each time took 2% of a 16,384-rank run.
func mustHoldNoPointers[T any]() {
	t := reflect.TypeFor[T]()
	if _, ok := pointerFree.Load(t); ok {
		return
	}
	if holdsPointers(t) {
		panic("hugepage: a table of " + t.String() + " outside Go's heap holds pointers")
	}
	pointerFree.Store(t, struct{}{})
}

// pointerFree holds the types (reflect.Type) mustHoldNoPointers found to
// hold no pointers.
var pointerFree sync.Map

func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true
}
