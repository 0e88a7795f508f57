package sim

import "github.com/collsim/collsim/sim/hugepage"

// keyTable maps exact (source, tag) keys to their entries' range in a
// matchQueue: an open-addressed table with linear probing in one slice, so
// that matching does no map operation and a rebuilt index reuses its
// memory (a Go map was a third of a linear alltoall's run time and an
// allocation per rebuild). A slot holds only the range, 8 bytes: its key
// is its oldest entry's, read from the queue's items, which every method
// takes. (Keys kept in the slots tripled the table, and a linear alltoall
// on 2,048 ranks holds 2,047 keys on each rank at once; the item a lookup
// reads is the one a match touches next anyway.) The zero table has no
// slots: reset it before use (matchQueue does when it turns its index on).
// It keeps its slots when its queue empties, so a rank's memory stays at
// its peak.
type keyTable struct {
	slots []keySlot // a power of two long; at most half used
	n     int
}

// keySlot is a keyRange with both positions one more, so that the zero
// slot is empty.
type keySlot struct{ first1, last1 int32 }

func (s keySlot) used() bool { return s.first1 != 0 }

func (s keySlot) keyRange() keyRange { return keyRange{s.first1 - 1, s.last1 - 1} }

func slotOf(r keyRange) keySlot { return keySlot{r.first + 1, r.last + 1} }

// reset empties the table and sizes it for n keys, keeping its memory when
// it is large enough.
func (t *keyTable) reset(n int, a *hugepage.Arena) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if cap(t.slots) >= size {
		t.slots = t.slots[:size]
		clear(t.slots)
	} else {
		t.slots = newSlots(size, a)
	}
	t.n = 0
}

// home is the slot where k's probe starts (Fibonacci hashing: the high bits
// of k times 2^64 / golden ratio).
func (t *keyTable) home(k uint64) int {
	return int((k * 0x9E3779B97F4A7C15) >> 32 & uint64(len(t.slots)-1))
}

// keyAt is the key of the entries of used slot i.
func (t *keyTable) keyAt(i int, items []matchItem) uint64 {
	it := &items[t.slots[i].first1-1]
	return matchKey(it.src, it.tag)
}

// find returns the slot of k, or of the empty slot where it would go.
func (t *keyTable) find(k uint64, items []matchItem) int {
	mask := len(t.slots) - 1
	i := t.home(k)
	for t.slots[i].used() && t.keyAt(i, items) != k {
		i = (i + 1) & mask
	}
	return i
}

func (t *keyTable) get(k uint64, items []matchItem) (keyRange, bool) {
	s := t.slots[t.find(k, items)]
	return s.keyRange(), s.used()
}

// set maps k to r, whose oldest entry, r.first, must have key k.
func (t *keyTable) set(k uint64, r keyRange, items []matchItem, a *hugepage.Arena) {
	i := t.find(k, items)
	if !t.slots[i].used() {
		if 2*(t.n+1) > len(t.slots) {
			t.grow(items, a)
			i = t.find(k, items)
		}
		t.n++
	}
	t.slots[i] = slotOf(r)
}

func (t *keyTable) grow(items []matchItem, a *hugepage.Arena) {
	old := t.slots
	t.slots = newSlots(2*len(old), a)
	for _, s := range old {
		if s.used() {
			it := &items[s.first1-1]
			t.slots[t.find(matchKey(it.src, it.tag), items)] = s
		}
	}
}

// del removes k, shifting back the entries after it in its probe run so
// that every key stays reachable from its home slot without tombstones.
func (t *keyTable) del(k uint64, items []matchItem) {
	mask := len(t.slots) - 1
	i := t.find(k, items)
	if !t.slots[i].used() {
		return
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].used(); j = (j + 1) & mask {
		// The entry at j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if h := t.home(t.keyAt(j, items)); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = keySlot{}
}

// arenaSlots is the size from which an index goes to its queue's arena (a
// variable for tests; see arenaItems).
var arenaSlots = 0

// newSlots returns n empty slots, in a from arenaSlots.
func newSlots(n int, a *hugepage.Arena) []keySlot {
	if n < arenaSlots {
		a = nil
	}
	return hugepage.Alloc[keySlot](a, n)
}
