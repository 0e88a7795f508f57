package network

// pairTable maps a pair of ranks (src, dst) to its entry in flowModel.pairs
// while the pair has a message in flight: an open-addressed table with
// linear probing in two slices. Every message of a pairwise alltoall looks
// its pair up, enters it and removes it again; through a Go map those
// three operations took 8-11% of the run of a 256-rank one on a fat-tree,
// hashing included, where a multiplicative hash of the packed pair and a
// probe of a few slots in order does.
type pairTable struct {
	keys []uint64 // 1 + src<<32 | dst; 0: empty
	vals []int32
	n    int   // pairs held
	bits uint8 // len(keys) is 1<<bits
}

// pairKey packs a pair; it is never 0.
func pairKey(src, dst int32) uint64 { return (uint64(uint32(src))<<32 | uint64(uint32(dst))) + 1 }

// home is where key k's probe starts (Fibonacci hashing: the top bits of
// its product with 2^64 over the golden ratio).
func (t *pairTable) home(k uint64) int { return int(k * 0x9E3779B97F4A7C15 >> (64 - t.bits)) }

// get returns the entry of pair (src, dst), if it has one.
func (t *pairTable) get(src, dst int32) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	k, mask := pairKey(src, dst), len(t.keys)-1
	for i := t.home(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.vals[i], true
		case 0:
			return 0, false
		}
	}
}

// put gives pair (src, dst), which has no entry, entry v.
func (t *pairTable) put(src, dst, v int32) {
	if 2*(t.n+1) > len(t.keys) { // at most half full: probes stay short
		t.grow()
	}
	t.n++
	t.insert(pairKey(src, dst), v)
}

func (t *pairTable) insert(k uint64, v int32) {
	mask := len(t.keys) - 1
	i := t.home(k)
	for t.keys[i] != 0 {
		i = (i + 1) & mask
	}
	t.keys[i], t.vals[i] = k, v
}

// grow doubles the table (to 16 slots at first) and enters its pairs anew.
func (t *pairTable) grow() {
	keys, vals := t.keys, t.vals
	t.bits = max(4, t.bits+1)
	t.keys, t.vals = make([]uint64, 1<<t.bits), make([]int32, 1<<t.bits)
	for i, k := range keys {
		if k != 0 {
			t.insert(k, vals[i])
		}
	}
}

// remove takes pair (src, dst)'s entry out, if it has one. The pairs
// after it in its run of full slots move back into the gap when the gap
// lies on their probe (backward-shift deletion): no tombstones, so a miss
// stops at the first empty slot however many pairs came and went.
func (t *pairTable) remove(src, dst int32) {
	if t.n == 0 {
		return
	}
	k, mask := pairKey(src, dst), len(t.keys)-1
	i := t.home(k)
	for t.keys[i] != k {
		if t.keys[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.keys[j] != 0; j = (j + 1) & mask {
		// The pair in j may fill the gap at i unless its home lies
		// cyclically in (i, j]: its probe would then not pass i.
		if h := t.home(t.keys[j]); (j-h)&mask >= (j-i)&mask {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.keys[i] = 0
}

// len is the number of pairs held.
func (t *pairTable) len() int { return t.n }
