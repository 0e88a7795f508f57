package network

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// An indexed heap pops what an unindexed one pops after skipping stale
// entries: every link at the share it was last given, in share order,
// then freeze and check entries among them as they were pushed; a link
// whose fill was dropped comes out of neither; and its index always names
// each queued link's entry.
func TestIndexedHeapPopsAsStaleSkipping(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const links = 40 // enough for heaps three levels deep
		indexed := shareHeap{at: make([]int32, links)}
		var plain shareHeap
		current := map[int32]share{} // each queued link's share now
		done := [2]map[int32]bool{{}, {}}
		for range rapid.IntRange(0, 200).Draw(t, "steps") {
			switch rapid.IntRange(0, 11).Draw(t, "op") {
			case 0, 1, 2, 3, 4: // a link's share, new or changed (ties are common)
				l := int32(rapid.IntRange(0, links-1).Draw(t, "link"))
				s := share{left: rapid.Int64Range(0, 6).Draw(t, "left"), users: int32(rapid.IntRange(1, 3).Draw(t, "users")), link: l}
				current[l] = s
				done[0][l], done[1][l] = false, false
				indexed.setFill(heapEntry{share: s})
				plain.push(heapEntry{share: s})
			case 5: // a freeze or check entry, never indexed
				s := share{left: rapid.Int64Range(0, 6).Draw(t, "at left"), users: 1, link: int32(rapid.IntRange(0, links-1).Draw(t, "at link"))}
				kind := rapid.SampledFrom([]entryKind{entryCheck, entryFreeze}).Draw(t, "kind")
				e := entry(s, kind, 7, 3)
				indexed.push(e)
				plain.push(e)
			case 6, 7: // the least comes out of both
				want, ok := popCurrent(&plain, current, done[0])
				got, gok := popCurrent(&indexed, current, done[1])
				if ok != gok || ok && (want.share != got.share || want.kindOn != got.kindOn) {
					t.Fatalf("popped %+v (%v), want %+v (%v)", got, gok, want, ok)
				}
			case 8, 9, 10: // a link's flows all froze: it fills no more
				l := int32(rapid.IntRange(0, links-1).Draw(t, "done link"))
				delete(current, l)
				indexed.dropFill(l)
				if indexed.at[l] != 0 {
					t.Fatalf("link %d dropped, still indexed at %d", l, indexed.at[l]-1)
				}
			default: // a new sweep
				indexed.reset()
				plain.reset()
				clear(current)
			}
			for i, e := range indexed.a {
				if i > 0 && e.less(&indexed.a[(i-1)/4]) {
					t.Fatalf("entry %d (%+v) is less than its parent %+v", i, e, indexed.a[(i-1)/4])
				}
				if e.kind() == entryFill && indexed.at[e.link] != int32(i)+1 {
					t.Fatalf("link %d's entry at %d, indexed at %d", e.link, i, indexed.at[e.link]-1)
				}
			}
			fills := 0
			for l, at := range indexed.at {
				if at > 0 {
					fills++
					if e := indexed.a[at-1]; e.kind() != entryFill || e.link != int32(l) {
						t.Fatalf("link %d indexed at %d, which holds %+v", l, at-1, e)
					}
				}
			}
			if fills != len(slices.DeleteFunc(slices.Clone(indexed.a), func(e heapEntry) bool { return e.kind() != entryFill })) {
				t.Fatal("a fill entry without its index, or two for one link")
			}
		}
	})
}

// popCurrent pops the least entry that is not stale: a fill entry whose
// link's share has changed since, or of a link popped since its share was
// last set (done), is skipped, as the solvers skip them.
func popCurrent(h *shareHeap, current map[int32]share, done map[int32]bool) (heapEntry, bool) {
	for h.len() > 0 {
		e := h.pop()
		if e.kind() == entryFill {
			if s, ok := current[e.link]; !ok || s != e.share || done[e.link] {
				continue
			}
			done[e.link] = true
		}
		return e, true
	}
	return heapEntry{}, false
}
