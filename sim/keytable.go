package sim

// keyTable maps exact (source, tag) keys to their entries' range in a
// matchQueue: an open-addressed table with linear probing in one slice, so
// that matching does no map operation and a rebuilt index reuses its
// memory (a Go map was a third of a linear alltoall's run time and an
// allocation per rebuild). The zero table has no slots: reset it before
// use (matchQueue does when it turns its index on). It keeps its slots
// when its queue empties, so a rank's memory stays at its peak.
type keyTable struct {
	slots []keySlot // a power of two long; at most half used
	n     int
}

type keySlot struct {
	key  uint64
	r    keyRange
	used bool
}

// reset empties the table and sizes it for n keys, keeping its memory when
// it is large enough.
func (t *keyTable) reset(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if cap(t.slots) >= size {
		t.slots = t.slots[:size]
		clear(t.slots)
	} else {
		t.slots = make([]keySlot, size)
	}
	t.n = 0
}

// home is the slot where k's probe starts (Fibonacci hashing: the high bits
// of k times 2^64 / golden ratio).
func (t *keyTable) home(k uint64) int {
	return int((k * 0x9E3779B97F4A7C15) >> 32 & uint64(len(t.slots)-1))
}

// find returns the slot of k, or of the empty slot where it would go.
func (t *keyTable) find(k uint64) int {
	mask := len(t.slots) - 1
	i := t.home(k)
	for t.slots[i].used && t.slots[i].key != k {
		i = (i + 1) & mask
	}
	return i
}

func (t *keyTable) get(k uint64) (keyRange, bool) {
	s := &t.slots[t.find(k)]
	return s.r, s.used
}

func (t *keyTable) set(k uint64, r keyRange) {
	i := t.find(k)
	if !t.slots[i].used {
		if 2*(t.n+1) > len(t.slots) {
			t.grow()
			i = t.find(k)
		}
		t.n++
	}
	t.slots[i] = keySlot{key: k, r: r, used: true}
}

func (t *keyTable) grow() {
	old := t.slots
	t.slots = make([]keySlot, 2*len(old))
	for _, s := range old {
		if s.used {
			t.slots[t.find(s.key)] = s
		}
	}
}

// del removes k, shifting back the entries after it in its probe run so
// that every key stays reachable from its home slot without tombstones.
func (t *keyTable) del(k uint64) {
	mask := len(t.slots) - 1
	i := t.find(k)
	if !t.slots[i].used {
		return
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].used; j = (j + 1) & mask {
		// The entry at j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if h := t.home(t.slots[j].key); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = keySlot{}
}
