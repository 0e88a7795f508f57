package network

import (
	"testing"

	"pgregory.net/rapid"
)

// A pairTable answers as a Go map does through any sequence of entries,
// lookups and removals, including removals of pairs it does not hold and
// runs of pairs whose probes overlap (few distinct ranks, so that homes
// collide and removals shift pairs back across the table's wrap).
func TestPairTableMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var table pairTable
		want := map[[2]int32]int32{}
		ranks := rapid.Int32Range(1, 40).Draw(t, "ranks")
		pair := func(label string) (int32, int32) {
			return rapid.Int32Range(0, ranks-1).Draw(t, label+" src"), rapid.Int32Range(0, ranks-1).Draw(t, label+" dst")
		}
		for step := range rapid.IntRange(0, 400).Draw(t, "steps") {
			src, dst := pair("pair")
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				if _, ok := want[[2]int32{src, dst}]; !ok {
					v := int32(step)
					table.put(src, dst, v)
					want[[2]int32{src, dst}] = v
				}
			case 1:
				table.remove(src, dst)
				delete(want, [2]int32{src, dst})
			}
			if table.len() != len(want) {
				t.Fatalf("step %d: %d pairs held, want %d", step, table.len(), len(want))
			}
			for k, v := range want {
				if got, ok := table.get(k[0], k[1]); !ok || got != v {
					t.Fatalf("step %d: pair %v: got %d, %v; want %d", step, k, got, ok, v)
				}
			}
			if s, d := pair("absent"); true {
				_, inMap := want[[2]int32{s, d}]
				if _, ok := table.get(s, d); ok != inMap {
					t.Fatalf("step %d: pair %d->%d held %v, want %v", step, s, d, ok, inMap)
				}
			}
		}
	})
}

// Negative ranks never reach the table, but the packing must not collide
// for the largest ones, and the empty key is never a pair's.
func TestPairKeyDistinct(t *testing.T) {
	seen := map[uint64][2]int32{}
	for _, src := range []int32{0, 1, 1<<31 - 1} {
		for _, dst := range []int32{0, 1, 1<<31 - 1} {
			k := pairKey(src, dst)
			if k == 0 {
				t.Fatalf("pair %d->%d packs to the empty key", src, dst)
			}
			if p, ok := seen[k]; ok {
				t.Fatalf("pairs %v and %d->%d pack alike", p, src, dst)
			}
			seen[k] = [2]int32{src, dst}
		}
	}
}

// Probes stay short on the pairs a collective puts in flight: every pair
// of p ranks at once, as a linear alltoall does. Linear probing with a
// random hash at a load of at most one half expects a held pair 0.5 slots
// past its home (Knuth: (1 + 1/(1-a))/2 probes, less the first); this
// allows twice that on average, and checks the load, so that a hash that
// ignores part of the key or part of the table, or a table let fill up,
// fails here rather than only running slowly.
func TestPairTableProbesStayShort(t *testing.T) {
	for _, p := range []int32{64, 256, 1024} {
		var table pairTable
		for src := range p {
			for dst := range p {
				table.put(src, dst, src^dst)
				if 2*table.len() > len(table.keys) {
					t.Fatalf("%d ranks: %d pairs in %d slots, more than half full", p, table.len(), len(table.keys))
				}
			}
		}
		mask, total := len(table.keys)-1, 0
		for i, k := range table.keys {
			if k != 0 {
				total += (i - table.home(k)) & mask
			}
		}
		if avg := float64(total) / float64(table.len()); avg > 1 {
			t.Fatalf("%d ranks: pairs sit %.2f slots past their homes on average, want at most 1", p, avg)
		}
	}
}
