package sim

import (
	"testing"

	"github.com/collsim/collsim/sim/hugepage"

	"pgregory.net/rapid"
)

// The queue answers like the obvious slice-and-scan reference, long or
// short, with or without wildcards.
func TestMatchQueueAgainstReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q matchQueue
		if rapid.Bool().Draw(t, "arena") { // entries and index outside Go's heap
			q.arena = hugepage.NewArena()
			defer q.arena.Free()
		}
		var ref []matchItem
		val := uint32(0)
		// Long enough to index, compact and rebuild many times over.
		steps := rapid.IntRange(0, 3000).Draw(t, "steps")
		src := rapid.Int32Range(-1, 3)
		tag := rapid.Int32Range(-1, 3)
		for range steps {
			s, g := src.Draw(t, "src"), tag.Draw(t, "tag")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1: // push (bias towards long queues)
				q.push(s, g, val)
				ref = append(ref, matchItem{src: s, tag: g, val: val})
				val++
			case 2: // a message (exact) looks for a posted entry
				if s < 0 || g < 0 {
					continue
				}
				got, ok := q.takeFor(s, g)
				want, wok := -1, false
				for i := range ref {
					if ref[i].accepts(s, g) {
						want, wok = i, true
						break
					}
				}
				if ok != wok || ok && got != ref[want].val {
					t.Fatalf("takeFor(%d,%d) = %d,%v; want %v", s, g, got, ok, wok)
				}
				if wok {
					ref = append(ref[:want], ref[want+1:]...)
				}
			case 3: // a receive pattern looks for an unexpected entry
				got, ok := q.takeMatching(s, g)
				probe := matchItem{src: s, tag: g}
				want, wok := -1, false
				for i := range ref {
					if probe.accepts(ref[i].src, ref[i].tag) {
						want, wok = i, true
						break
					}
				}
				if ok != wok || ok && got != ref[want].val {
					t.Fatalf("takeMatching(%d,%d) = %d,%v; want %v", s, g, got, ok, wok)
				}
				if wok {
					ref = append(ref[:want], ref[want+1:]...)
				}
			}
			if int(q.live) != len(ref) {
				t.Fatalf("live %d, reference %d", q.live, len(ref))
			}
		}
	})
}

// Compaction moves entries. Here the removal that triggers it is at a low
// position (50) that the compacted live entries overwrite: take must still
// return its own entry, read before the move.
func TestMatchQueueCompaction(t *testing.T) {
	var q matchQueue
	for i := range 300 {
		q.push(int32(i), 0, uint32(i))
	}
	take := func(i int) {
		t.Helper()
		if got, ok := q.takeFor(int32(i), 0); !ok || got != uint32(i) {
			t.Fatalf("take %d returned %d, %v", i, got, ok)
		}
	}
	for i := 101; i <= 282; i++ { // 182 dead behind live entries: not yet compacted
		take(i)
	}
	take(50) // this one compacts
	for _, i := range []int{0, 51, 299} {
		take(i)
	}
}

// Removing an indexed entry that is not the oldest of its key (no MPI
// question does, but remove allows it) keeps the key's other entries in
// order.
func TestMatchQueueRemoveFromMiddle(t *testing.T) {
	var q matchQueue
	for i := range 2 * indexAt {
		q.push(1, 7, uint32(i))
	}
	if !q.indexed() {
		t.Fatal("no index")
	}
	for _, pos := range []int32{5, 2*indexAt - 1, 6} { // a middle one, the newest, the next
		if got := q.remove(pos); got != uint32(pos) {
			t.Fatalf("remove(%d) = %d", pos, got)
		}
	}
	for i := range 2*indexAt - 1 {
		if i == 5 || i == 6 {
			continue
		}
		if got, ok := q.takeFor(1, 7); !ok || got != uint32(i) {
			t.Fatalf("take %d: got %d, %v", i, got, ok)
		}
	}
	if _, ok := q.takeFor(1, 7); ok || q.live != 0 {
		t.Fatalf("entries left: %d", q.live)
	}
}
