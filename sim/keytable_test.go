package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/collsim/collsim/sim/hugepage"
)

// The key table against a Go map under random sets, gets and deletes, with
// keys drawn from a small range so that probe runs collide, wrap around the
// table's end and are shifted back by deletes. Each set points its range's
// first entry at a new item with the key, as a queue's do.
func TestKeyTableAgainstMap(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var kt keyTable
		var a *hugepage.Arena // odd seeds: slots outside Go's heap
		if seed%2 == 1 {
			a = hugepage.NewArena()
			defer a.Free()
		}
		kt.reset(int(rng.IntN(40)), a)
		ref := map[uint64]keyRange{}
		var items []matchItem
		keys := 1 + rng.IntN(200)
		for step := range 5000 {
			k := uint64(rng.IntN(keys)) << (32 * rng.IntN(2)) // sources and tags alike
			switch rng.IntN(3) {
			case 0:
				items = append(items, matchItem{src: int32(k >> 32), tag: int32(uint32(k))})
				r := keyRange{int32(len(items) - 1), int32(step)}
				kt.set(k, r, items, a)
				ref[k] = r
			case 1:
				kt.del(k, items)
				delete(ref, k)
			}
			want, present := ref[k]
			if got, ok := kt.get(k, items); ok != present || ok && got != want {
				t.Fatalf("seed %d step %d: key %#x: got %v %v, want %v %v", seed, step, k, got, ok, want, present)
			}
			if kt.n != len(ref) {
				t.Fatalf("seed %d step %d: %d keys, want %d", seed, step, kt.n, len(ref))
			}
		}
		for k, r := range ref {
			if got, ok := kt.get(k, items); !ok || got != r {
				t.Fatalf("seed %d: key %#x lost: %v %v, want %v", seed, k, got, ok, r)
			}
		}
		if 2*kt.n > len(kt.slots) {
			t.Fatalf("seed %d: %d keys in %d slots: more than half full", seed, kt.n, len(kt.slots))
		}
	}
}
