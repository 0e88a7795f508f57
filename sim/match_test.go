package sim

import (
	"testing"

	"pgregory.net/rapid"
)

// The queue answers like the obvious slice-and-scan reference, long or
// short, with or without wildcards.
func TestMatchQueueAgainstReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q matchQueue
		var ref []matchItem
		val := uint32(0)
		steps := rapid.IntRange(0, 400).Draw(t, "steps")
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
			if q.live != len(ref) {
				t.Fatalf("live %d, reference %d", q.live, len(ref))
			}
		}
	})
}
