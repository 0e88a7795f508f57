package sim

import (
	"math"
	"math/bits"
)

// opLayout says where a GOAL schedule's tables by op store each op: its
// slot. The ops, their CPUs and NICs, and a run's counts of unmet
// dependencies are stored by slot, and a run names ops by their slots (in
// users lists, ready lists, messages), so that it never computes one; ids
// (rank-major) serve the parser and the reports, which name an op by its
// rank and its index in the rank's program.
//
// Ids number ops rank by rank, but the ranks of a collective advance in
// lockstep: at any moment every rank works near the same index of its
// program. Stored by id, one step of a 2,048-rank pairwise alltoall reads
// one cache line (and one page) per rank in each table, 2,048 places spread
// over 200 MB, and nearly every read misses the caches. So ranks are stored
// in blocks of consecutive ranks (a power of two, at most maxBlockRanks
// and maxBlockOps ops) that have the same number of ops, n: within a
// block, op i of the block's ranks lie side by side, in rank order, and a
// step over the ranks reads each table in order, a line serving several
// ranks. The run of a 2,048-rank pairwise alltoall took 59% less time for
// it, and a 256-rank one 8% less (BenchmarkRunLogGOPSAlltoallGrowth, 6
// alternated runs).
//
// Only ranks 0 .. cutRank-1 (ids 0 .. cutID-1) are in blocks: those before
// the first rank whose op count differs from rank 0's (from the start of
// its block), and never the ranks after the last whole block. The others
// are stored by id (slot = id), as every op is when the layout is zero.
type opLayout struct {
	n       uint32 // ops of each rank in blocks
	magic   uint64 // ceil(2^64/n): id/n as the high word of magic*id
	shift   uint8  // log2 of the ranks in a block
	cutRank uint32 // the first rank not in a block
	cutID   uint32 // its first op's id: cutRank*n
}

// maxBlockRanks is the most ranks in a block. A block's op i of every rank
// spans maxBlockRanks ops (6 KiB of ops): long enough runs for the
// hardware's prefetching; a rank whose op count differs re-stores at most
// the part of a block read so far.
const maxBlockRanks = 256

// maxBlockOps bounds a block's ops (16 MiB of them), fewer ranks a block
// when ranks have many ops: a block's first rank makes room for the whole
// block before the next rank is read, so the table runs at most this far
// ahead of the schedule read (a rank 0 of 200,000 ops followed by ranks of
// one would otherwise make room for 51 million).
var maxBlockOps uint32 = 1 << 20 // (tests lower it: blocks of few ranks)

// blockRanks decides whether ranks are stored in blocks at all (tests
// compare runs with and without).
var blockRanks = true

// planLayout returns the layout for a schedule of ranks ranks when its
// rank 0 has n ops: every whole block of ranks is laid out for n ops
// each, until a rank shows otherwise (unblock). A block holds a power of
// two ranks, at most maxBlockRanks and maxBlockOps ops; none when two
// ranks would pass maxBlockOps.
func planLayout(ranks int, n uint32) opLayout {
	if !blockRanks || ranks < 2 || n < 2 {
		return opLayout{}
	}
	most := min(ranks, maxBlockRanks, int(maxBlockOps/n))
	if most < 2 {
		return opLayout{}
	}
	shift := uint8(bits.Len(uint(most)) - 1)
	per := uint64(n) << shift // ops in a block
	blocks := min(uint64(ranks>>shift), (math.MaxUint32-1)/per)
	if blocks == 0 {
		return opLayout{}
	}
	return opLayout{
		n:       n,
		magic:   math.MaxUint64/uint64(n) + 1,
		shift:   shift,
		cutRank: uint32(blocks << shift),
		cutID:   uint32(blocks * per),
	}
}

// slot returns where op id is stored.
func (l *opLayout) slot(id uint32) uint32 {
	if id >= l.cutID {
		return id
	}
	hi, _ := bits.Mul64(l.magic, uint64(id))
	r := uint32(hi) // id's rank: id / n, exact for 32-bit ids (Lemire et al. 2019)
	i := id - r*l.n // its index in the rank's program
	in := r & (1<<l.shift - 1)
	return (r-in)*l.n + i<<l.shift + in
}

// rankSlots returns where rank r's ops are stored: its op i in slot
// base + i*stride (first is its first op's id), so that a walk over a
// rank's program needs no division by its length, as slot does.
func (l *opLayout) rankSlots(r int, first uint32) (base, stride uint32) {
	if !l.blocked(r) {
		return first, 1
	}
	in := uint32(r) & (1<<l.shift - 1)
	return (uint32(r)-in)*l.n + in, 1 << l.shift
}

// step returns how far apart the op stored in slot and the next op of its
// rank's program are stored.
func (l *opLayout) step(slot uint32) uint32 {
	if slot < l.cutID {
		return 1 << l.shift
	}
	return 1
}

// id returns the id of the op stored in slot: slot's inverse.
func (l *opLayout) id(slot uint32) uint32 {
	if slot >= l.cutID {
		return slot
	}
	per := l.n << l.shift // ops in a block
	start := slot / per * per
	i, in := (slot-start)>>l.shift, (slot-start)&(1<<l.shift-1)
	return start + in*l.n + i
}

// blocked reports whether rank r is stored in a block.
func (l *opLayout) blocked(r int) bool { return uint32(r) < l.cutRank }

// extent returns the length the table of ops must have to store rank r,
// whose first op is id first, with n ops: a block's first rank makes room
// for its whole block.
func (l *opLayout) extent(r int, first, n uint32) uint32 {
	if !l.blocked(r) {
		return first + n
	}
	start := uint32(r) &^ (1<<l.shift - 1)
	return (start + 1<<l.shift) * l.n
}

// unblock stores rank r and every rank after it by id, because rank r has
// a number of ops other than the layout's: the ranks of r's block read so
// far move from their block's slots to their ids, and ops, which holds
// them, is cut after them. first is the ids' table (GOAL.first) up to r.
func (l *opLayout) unblock(r int, ops *chunked[goalOp], first []uint32) {
	b := uint32(r) &^ (1<<l.shift - 1)
	start, end := first[b], first[r]
	moved := make([]goalOp, end-start)
	for id := start; id < end; id++ {
		moved[id-start] = *ops.at(l.slot(id))
	}
	l.cutRank, l.cutID = b, start
	ops.truncate(start)
	for _, o := range moved {
		ops.add(o)
	}
}
