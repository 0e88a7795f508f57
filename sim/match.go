package sim

import "github.com/collsim/collsim/sim/hugepage"

// Wildcards a receive may use (GOAL's -1).
const (
	AnySource int32 = -1
	AnyTag    int32 = -1
)

// matchQueue is one of a rank's two MPI matching queues: posted receives
// (whose source or tag may be a wildcard) or unexpected messages (always
// exact). Entries leave in MPI order: the oldest entry that matches.
//
// Short queues are scanned. Once a queue holds more than indexAt live
// entries it also keeps an index from exact (source, tag) to the oldest and
// newest live entries of that key, the others linked between them through
// the entries, so that a linear alltoall, which posts p receives at once,
// matches in O(1) per message instead of O(p): O(p^2) in all rather than
// O(p^3). (A list per key in the index itself cost an allocation per key:
// a million for a linear alltoall on 1,024 ranks.)
type matchQueue struct {
	items []matchItem
	head  int32 // items before head are all dead
	live  int32
	// more holds what only some queues need: made when the queue first
	// holds a wildcard or grows past indexAt, and kept. (In the queue
	// itself they made it 112 bytes, two a rank: 235 MB of a
	// 1,048,576-rank run whose queues never hold more than one entry.)
	more *matchMore
	// arena, when not nil, holds the entries and the index (a run's
	// tables, freed with it); else they are on Go's heap.
	arena *hugepage.Arena
}

// matchMore is a matchQueue's wildcard list and index.
type matchMore struct {
	wild  []int32 // positions of live entries with a wildcard, oldest first
	index keyTable
	// indexed: the index is in use (the queue grew past indexAt live
	// entries since it was last empty or rebuilt short).
	indexed bool
}

// extra returns q.more, made if need be.
func (q *matchQueue) extra() *matchMore {
	if q.more == nil {
		q.more = new(matchMore)
	}
	return q.more
}

// indexed reports whether q's index is in use.
func (q *matchQueue) indexed() bool { return q.more != nil && q.more.indexed }

type matchItem struct {
	src, tag int32
	val      uint32 // a slot index or a message ID
	next     int32  // indexed: the next live entry of the same key, or -1
	dead     bool
}

// keyRange is the oldest and newest live entry of one exact key.
type keyRange struct{ first, last int32 }

const indexAt = 16

// arenaItems is the length from which a queue with an arena grows there
// (a variable for tests): from its first entries, since on the heap a
// run's queues touch fresh memory in 4 KiB pages (a 256-rank linear
// alltoall's simulation took 0.026-0.029 s on the command line with
// queues and indexes moving to the arena from 64 entries, and 0.019-0.020
// s with them there from the first; two series of 3 runs, each alternated
// with the build before the arena, which took 0.027-0.034 s in both).
var arenaItems = 0

func matchKey(src, tag int32) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(tag)) }

func (it *matchItem) accepts(src, tag int32) bool {
	return (it.src == src || it.src == AnySource) && (it.tag == tag || it.tag == AnyTag)
}

func (q *matchQueue) push(src, tag int32, val uint32) {
	pos := int32(len(q.items))
	if q.arena != nil && len(q.items) == cap(q.items) && cap(q.items) >= arenaItems {
		t := hugepage.Alloc[matchItem](q.arena, max(2*cap(q.items), 2))
		q.items = t[:copy(t, q.items)]
	}
	q.items = append(q.items, matchItem{src: src, tag: tag, val: val})
	q.live++
	if src == AnySource || tag == AnyTag {
		m := q.extra()
		m.wild = append(m.wild, pos)
		return
	}
	if q.indexed() {
		q.link(pos)
	} else if q.live > indexAt {
		q.rebuild()
	}
}

// link appends the exact entry at pos to its key's list.
func (q *matchQueue) link(pos int32) {
	it := &q.items[pos]
	it.next = -1
	k := matchKey(it.src, it.tag)
	index := &q.more.index
	if r, ok := index.get(k, q.items); ok {
		q.items[r.last].next = pos
		index.set(k, keyRange{r.first, pos}, q.items, q.arena)
		return
	}
	index.set(k, keyRange{pos, pos}, q.items, q.arena)
}

// takeFor removes and returns the oldest entry that accepts a message from
// src with tag (the posted-receive queue's question).
func (q *matchQueue) takeFor(src, tag int32) (uint32, bool) {
	pos, ok := q.findFor(src, tag)
	if !ok {
		return 0, false
	}
	return q.remove(pos), true
}

// findFor returns the position of the oldest entry that accepts a message
// from src with tag, without removing it.
func (q *matchQueue) findFor(src, tag int32) (int32, bool) {
	if !q.indexed() {
		for i := int(q.head); i < len(q.items); i++ {
			if it := &q.items[i]; !it.dead && it.accepts(src, tag) {
				return int32(i), true
			}
		}
		return 0, false
	}
	best := int32(-1)
	if r, ok := q.more.index.get(matchKey(src, tag), q.items); ok {
		best = r.first
	}
	for _, pos := range q.more.wild {
		if best >= 0 && pos > best {
			break
		}
		if q.items[pos].accepts(src, tag) {
			best = pos
			break
		}
	}
	return best, best >= 0
}

// takeMatching removes and returns the oldest entry that a receive from src
// with tag (either may be a wildcard) accepts: the unexpected queue's
// question.
func (q *matchQueue) takeMatching(src, tag int32) (uint32, bool) {
	if q.live == 0 {
		return 0, false
	}
	if q.indexed() && src != AnySource && tag != AnyTag {
		if r, ok := q.more.index.get(matchKey(src, tag), q.items); ok {
			return q.remove(r.first), true
		}
		return 0, false
	}
	probe := matchItem{src: src, tag: tag}
	for i := int(q.head); i < len(q.items); i++ {
		if it := &q.items[i]; !it.dead && probe.accepts(it.src, it.tag) {
			return q.remove(int32(i)), true
		}
	}
	return 0, false
}

// remove marks the entry at pos dead and returns its value. (The value is
// read first: compaction below moves entries.)
func (q *matchQueue) remove(pos int32) uint32 {
	it := &q.items[pos]
	val := it.val
	if q.live == 1 {
		// The last live entry: the queue empties, as below, at once. (A
		// rank that posts one receive at a time meets this every time.)
		q.reset()
		return val
	}
	it.dead = true
	q.live--
	if it.src == AnySource || it.tag == AnyTag {
		m := q.more
		for i, p := range m.wild {
			if p == pos {
				m.wild = append(m.wild[:i], m.wild[i+1:]...)
				break
			}
		}
	} else if q.indexed() {
		q.unlink(pos)
	}
	for int(q.head) < len(q.items) && q.items[q.head].dead {
		q.head++
	}
	if len(q.items)-int(q.head) > 2*int(q.live)+64 {
		q.rebuild()
	}
	return val
}

// reset empties the queue, keeping its memory.
func (q *matchQueue) reset() {
	q.items, q.head, q.live = q.items[:0], 0, 0
	if m := q.more; m != nil {
		m.wild, m.indexed = m.wild[:0], false
	}
}

// rebuild drops dead entries and rebuilds the positions (and the index if
// the queue is long).
func (q *matchQueue) rebuild() {
	live := q.items[:0]
	for _, it := range q.items[q.head:] {
		if !it.dead {
			live = append(live, it)
		}
	}
	q.items, q.head = live, 0
	m := q.more
	if m == nil && q.live <= indexAt {
		return // no wildcard (it would have made more), and no index
	}
	m = q.extra()
	m.wild, m.indexed = m.wild[:0], q.live > indexAt
	if m.indexed {
		m.index.reset(int(q.live), q.arena)
	}
	for i, it := range q.items {
		switch {
		case it.src == AnySource || it.tag == AnyTag:
			m.wild = append(m.wild, int32(i))
		case m.indexed:
			q.link(int32(i))
		}
	}
}

// unlink removes the exact entry at pos from its key's list. It is nearly
// always the oldest (entries leave in MPI order); the walk is for the rest.
func (q *matchQueue) unlink(pos int32) {
	it := &q.items[pos]
	k := matchKey(it.src, it.tag)
	index := &q.more.index
	r, _ := index.get(k, q.items)
	if r.first == pos {
		if it.next < 0 {
			index.del(k, q.items)
			return
		}
		index.set(k, keyRange{it.next, r.last}, q.items, q.arena)
		return
	}
	prev := r.first
	for q.items[prev].next != pos {
		prev = q.items[prev].next
	}
	q.items[prev].next = it.next
	if r.last == pos {
		index.set(k, keyRange{r.first, prev}, q.items, q.arena)
	}
}

// each calls f for every live entry, oldest first.
func (q *matchQueue) each(f func(*matchItem)) {
	for i := int(q.head); i < len(q.items); i++ {
		if !q.items[i].dead {
			f(&q.items[i])
		}
	}
}
