package sim

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// The layout divides an id by the ops of a rank with a multiplication:
// exact for every 32-bit id and count, against Go's division.
func TestLayoutDividesExactly(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, n, id uint32) {
		l := opLayout{n: n, magic: math.MaxUint64/uint64(n) + 1}
		if hi, _ := bits.Mul64(l.magic, uint64(id)); uint32(hi) != id/n || hi>>32 != 0 {
			t.Fatalf("%d / %d: %d, want %d", id, n, hi, id/n)
		}
	}
	for _, n := range []uint32{2, 3, 7, 255, 256, 4094, 1<<16 + 1, 1<<31 - 1, 1 << 31, 1<<31 + 1, math.MaxUint32 - 1, math.MaxUint32} {
		for _, id := range []uint32{0, 1, n - 1, n, n + 1, 2*n - 1, math.MaxUint32 - 1, math.MaxUint32} {
			check(t, n, id)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		check(t, rapid.Uint32Range(2, math.MaxUint32).Draw(t, "n"), rapid.Uint32().Draw(t, "id"))
	})
}

// layoutGOAL writes a schedule of ranks ranks with n ops each but for
// rank odd (none when odd < 0), which has oddN: sends, receives and calcs,
// with requires and irequires on earlier ops of the rank.
func layoutGOAL(t *rapid.T, ranks, n, odd, oddN int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "num_ranks %d\n", ranks)
	placed := rapid.Bool().Draw(t, "placed") // ops on CPUs and NICs other than 0
	for r := range ranks {
		fmt.Fprintf(&b, "rank %d {\n", r)
		ops := n
		if r == odd {
			ops = oddN
		}
		for i := range ops {
			cpu, nic := "", "" // CPU 0 and NIC 0
			if placed {
				cpu = fmt.Sprintf(" cpu %d", rapid.IntRange(0, 2).Draw(t, "cpu"))
				nic = fmt.Sprintf(" nic %d", rapid.IntRange(0, 2).Draw(t, "nic"))
			}
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				fmt.Fprintf(&b, "o%d: send %db to %d tag %d%s%s\n", i, rapid.IntRange(0, 1<<20).Draw(t, "size"), rapid.IntRange(0, ranks-1).Draw(t, "to"), i, cpu, nic)
			case 1:
				fmt.Fprintf(&b, "o%d: recv %db from %d tag %d%s%s\n", i, rapid.IntRange(0, 1<<20).Draw(t, "size"), rapid.IntRange(0, ranks-1).Draw(t, "from"), i, cpu, nic)
			default:
				fmt.Fprintf(&b, "o%d: calc %d%s\n", i, rapid.IntRange(0, 5000).Draw(t, "ns"), cpu)
			}
			for range rapid.IntRange(0, min(i, 3)).Draw(t, "deps") {
				kind := rapid.SampledFrom([]string{"requires", "requires", "irequires"}).Draw(t, "dep kind")
				fmt.Fprintf(&b, "o%d %s o%d\n", i, kind, rapid.IntRange(0, i-1).Draw(t, "dep"))
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// drawLayoutGOAL draws a schedule for layoutGOAL: up to most ranks of n
// ops each, but maybe one rank, odd, of oddN (odd is -1 when none
// differs).
func drawLayoutGOAL(t *rapid.T, most int) (text string, ranks, n, odd, oddN int) {
	ranks = rapid.IntRange(1, most).Draw(t, "ranks")
	n = rapid.IntRange(0, 5).Draw(t, "n")
	odd = -1
	if rapid.Bool().Draw(t, "a rank differs") {
		odd = rapid.IntRange(0, ranks-1).Draw(t, "odd rank")
		oddN = rapid.IntRange(0, 6).Draw(t, "its ops")
	}
	return layoutGOAL(t, ranks, n, odd, oddN), ranks, n, odd, oddN
}

// Stored in blocks or by id, a schedule reads the same: every op, its
// dependency counts, users, CPU and NIC, and the ops without dependencies,
// by id (a slot maps back to its id). In blocks, op i of consecutive
// ranks of a block lie in consecutive slots, each block fills the slots of
// its own ids, and the blocks end where they should: after the last whole
// block of a power of two ranks (at most 256), or at the start of the
// block of the first rank whose op count differs from rank 0's.
func TestLayoutStoresBlocksSideBySide(t *testing.T) {
	defer func(before bool) { blockRanks = before }(blockRanks)
	rapid.Check(t, func(t *rapid.T) {
		text, ranks, n, odd, oddN := drawLayoutGOAL(t, 700)
		blockRanks = true
		blocked, err := ParseGOAL(strings.NewReader(text), "b.goal")
		if err != nil {
			t.Fatal(err)
		}
		blockRanks = false
		byID, err := ParseGOAL(strings.NewReader(text), "b.goal")
		if err != nil {
			t.Fatal(err)
		}
		if byID.lay != (opLayout{}) {
			t.Fatalf("blocks while off: %+v", byID.lay)
		}

		// Where the blocks should end, from the rule.
		block := 1
		for block*2 <= min(ranks, 256) {
			block *= 2
		}
		want := ranks / block * block
		first, differs := n, -1 // rank 0's count, and the first rank with another
		switch {
		case odd == 0:
			first = oddN
			if n != oddN && ranks > 1 {
				differs = 1
			}
		case odd > 0 && oddN != n:
			differs = odd
		}
		switch {
		case ranks < 2 || first < 2:
			want = 0 // rank 0's count sets the blocks': fewer than 2 ops, none
		case differs > 0:
			want = min(want, differs/block*block)
		}
		if int(blocked.lay.cutRank) != want {
			t.Fatalf("%d ranks of %d ops (rank %d: %d): blocks end at rank %d, want %d", ranks, n, odd, oddN, blocked.lay.cutRank, want)
		}

		ops := uint32(blocked.Ops())
		var zeros, wantZeros []uint32 // ops without dependencies, as ids
		for i := range blocked.zeros.len() {
			zeros = append(zeros, blocked.lay.id(*blocked.zeros.at(i)))
		}
		for i := range byID.zeros.len() {
			wantZeros = append(wantZeros, *byID.zeros.at(i))
		}
		if !slices.Equal(zeros, wantZeros) {
			t.Fatalf("ops without dependencies: %v in blocks, %v by id", zeros, wantZeros)
		}
		if blocked.ops.len() != ops || byID.ops.len() != ops {
			t.Fatalf("tables of %d and %d ops, want %d", blocked.ops.len(), byID.ops.len(), ops)
		}
		bc, ic := blocked.dependencyCounts(), byID.dependencyCounts()
		seen := make([]bool, ops)
		for r := range ranks {
			base, stride := blocked.lay.rankSlots(r, blocked.first[r])
			for i := range blocked.first[r+1] - blocked.first[r] {
				id := blocked.idOf(r, i)
				s := blocked.lay.slot(id)
				if byID.lay.slot(id) != id || blocked.lay.id(s) != id {
					t.Fatalf("op %d: slot %d, and back to id %d; by id, slot %d", id, s, blocked.lay.id(s), byID.lay.slot(id))
				}
				if base+i*stride != s {
					t.Fatalf("op %d of rank %d: slot %d, but the rank's slots say %d + %d*%d", i, r, s, base, i, stride)
				}
				a, b := blocked.op(s), byID.op(id)
				if a.peer != b.peer || a.tag != b.tag || a.val != b.val {
					t.Fatalf("op %d: %+v in blocks, %+v by id", id, *a, *b)
				}
				var users []uint32 // as ids
				var buf [maxRunUsers]uint32
				blockedUsers, afterA := blocked.usersOf(s, a, &buf), blocked.requirers(a)
				for _, u := range blockedUsers {
					users = append(users, blocked.lay.id(u))
				}
				if byIDUsers, afterB := byID.usersOf(id, b, &buf), byID.requirers(b); !slices.Equal(users, byIDUsers) || afterA != afterB {
					t.Fatalf("op %d's users: %v (%d requiring it) in blocks, %v (%d) by id", id, users, afterA, byIDUsers, afterB)
				}
				if bc[s] != ic[id] {
					t.Fatalf("op %d waits for %d in blocks, %d by id", id, bc[s], ic[id])
				}
				if ac, an := blocked.cpuNIC(s); true {
					if bcpu, bnic := byID.cpuNIC(id); ac != bcpu || an != bnic {
						t.Fatalf("op %d on CPU %d NIC %d in blocks, %d %d by id", id, ac, an, bcpu, bnic)
					}
				}
				if s >= ops || seen[s] {
					t.Fatalf("op %d in slot %d: out of the table or taken", id, s)
				}
				seen[s] = true
				switch {
				case r >= want:
					if s != id {
						t.Fatalf("op %d of rank %d, after the blocks, in slot %d", id, r, s)
					}
				case r%block > 0 && s != blocked.lay.slot(blocked.idOf(r-1, i))+1:
					t.Fatalf("op %d of rank %d not beside op %d of rank %d", i, r, i, r-1)
				case r%block == 0 && (s < blocked.idOf(r, 0) || s >= blocked.idOf(r, 0)+uint32(block*n)):
					t.Fatalf("op %d of rank %d, the first of a block, in slot %d: outside the block's ids", i, r, s)
				}
			}
		}
	})
}

// Each op's users are the ops of its rank that name it, read here from
// the text, not from the parser's tables: those that require it, then
// those that irequire it (an irequires of an op also required adds
// nothing), each once and in program order; and the lists of ops with
// more than one lie side by side in users, in the order the ops are
// stored, from its start to its end. Schedule's dependency lists, made
// from the users, are each op's, in program order. Ranks in blocks or by
// id, the users table moved to reserved room at any length or never.
func TestUsersListWhatWasWritten(t *testing.T) {
	defer func(blocks bool, from int, most uint32) {
		blockRanks, usersRoomFrom, runUsersMost = blocks, from, most
	}(blockRanks, usersRoomFrom, runUsersMost)
	rapid.Check(t, func(t *rapid.T) {
		text, ranks, _, _, _ := drawLayoutGOAL(t, 600)
		blockRanks = rapid.Bool().Draw(t, "blocks")
		usersRoomFrom = rapid.SampledFrom([]int{0, 1, 5, 1 << 20}).Draw(t, "room from")
		runUsersMost = uint32(rapid.IntRange(1, maxRunUsers).Draw(t, "most users in a run"))
		g, err := ParseGOAL(strings.NewReader(text), "u.goal")
		if err != nil {
			t.Fatal(err)
		}
		type edge struct{ r, op, dep int }
		requires, irequires := map[edge]bool{}, map[edge]bool{}
		r := -1
		for _, line := range strings.Split(text, "\n") {
			var a, d int
			if _, err := fmt.Sscanf(line, "rank %d {", &r); err == nil {
				continue
			}
			if _, err := fmt.Sscanf(line, "o%d requires o%d", &a, &d); err == nil {
				requires[edge{r, a, d}] = true
			} else if _, err := fmt.Sscanf(line, "o%d irequires o%d", &a, &d); err == nil {
				irequires[edge{r, a, d}] = true
			}
		}
		for r := range ranks {
			n := int(g.first[r+1] - g.first[r])
			for d := range n {
				var after, start []int32
				for k := range n {
					switch e := (edge{r, k, d}); {
					case requires[e]:
						after = append(after, int32(k))
					case irequires[e]:
						start = append(start, int32(k))
					}
				}
				slot := g.slotOf(r, uint32(d))
				o := g.op(slot)
				var got []int32
				var buf [maxRunUsers]uint32
				users, nAfter := g.usersOf(slot, o, &buf), g.requirers(o)
				for _, u := range users {
					got = append(got, g.index(int32(r), u))
				}
				if want := append(after, start...); !slices.Equal(got, want) || int(nAfter) != len(after) {
					t.Fatalf("rank %d op %d: users %v, %d of them requiring it; want %v, %d", r, d, got, nAfter, want, len(after))
				}
				// A run: no user or one, or users that require it, one
				// after another, few enough (the generator writes no
				// forward dependencies, so the program order is the
				// written one).
				run := len(after)+len(start) <= 1 || len(start) == 0 &&
					len(after) <= int(runUsersMost) && int(after[len(after)-1]-after[0]) == len(after)-1
				if got := o.val&valRun != 0; got != run {
					t.Fatalf("rank %d op %d (users %v, %v irequiring it): a run %v, want %v", r, d, after, start, got, run)
				}
			}
		}
		// Schedule's dependency lists, made from the users: each op's, in
		// program order.
		starts := false
		progs := Materialize(g.Schedule("u"))
		wantCounts := make([]uint16, g.Ops()) // by slot: what each op waits for
		for r, prog := range progs {
			for k, op := range prog {
				var after, start []int32
				for d := range len(prog) {
					switch e := (edge{r, k, d}); {
					case requires[e]:
						after = append(after, int32(d))
					case irequires[e]:
						start = append(start, int32(d))
					}
				}
				starts = starts || len(start) > 0
				wantCounts[g.slotOf(r, uint32(k))] = uint16(len(after) + len(start))
				if !slices.Equal(op.After, after) || !slices.Equal(op.StartAfter, start) {
					t.Fatalf("rank %d op %d: Schedule lists %v and %v; want %v and %v", r, k, op.After, op.StartAfter, after, start)
				}
			}
		}
		if g.HasStartDependencies() != starts {
			t.Fatalf("HasStartDependencies %v, want %v", g.HasStartDependencies(), starts)
		}
		// A run's counts of what each op waits for, made from the users: at
		// once, and by a parallel run's partitions of ranks, whose bounds
		// may cut a block.
		firstDiff := func(got []uint16) int {
			for slot := range got {
				if got[slot] != wantCounts[slot] {
					return slot
				}
			}
			return -1
		}
		if got := g.dependencyCounts(); firstDiff(got) >= 0 {
			slot := firstDiff(got)
			t.Fatalf("slot %d waits for %d ops, want %d", slot, got[slot], wantCounts[slot])
		}
		bounds := []int{0}
		for bounds[len(bounds)-1] < ranks {
			bounds = append(bounds, rapid.IntRange(bounds[len(bounds)-1]+1, ranks).Draw(t, "bound"))
		}
		split := make([]uint16, g.Ops())
		for i := range len(bounds) - 1 {
			g.fillDependencyCounts(split, bounds[i], bounds[i+1])
		}
		if slot := firstDiff(split); slot >= 0 {
			t.Fatalf("counted by ranks %v, slot %d waits for %d ops, want %d", bounds, slot, split[slot], wantCounts[slot])
		}
		// Each list, two words (how many of its users require the op,
		// where it ends) and then the users, after the last.
		at := uint32(0)
		for slot := range uint32(g.Ops()) {
			if o := g.op(slot); o.val&valRun == 0 {
				if o.user != at+2 {
					t.Fatalf("slot %d's users begin at %d, want %d", slot, o.user, at+2)
				}
				at += 2 + uint32(len(g.usersOf(slot, o, &[maxRunUsers]uint32{})))
				if g.users[o.user-1] != at {
					t.Fatalf("slot %d's list ends at %d, want %d", slot, g.users[o.user-1], at)
				}
			}
		}
		if at != uint32(len(g.users)) {
			t.Fatalf("users holds %d, the lists %d", len(g.users), at)
		}
	})
}

// chunked's extend and truncate keep it a slice: checked against one.
func TestChunkedExtendAndTruncate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c chunked[uint32]
		var model []uint32
		for range rapid.IntRange(1, 30).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "step") {
			case 0:
				v := rapid.Uint32().Draw(t, "v")
				c.add(v)
				model = append(model, v)
			case 1:
				n := uint32(len(model)) + rapid.Uint32Range(0, 3*chunkLen).Draw(t, "longer by")
				c.extend(n)
				model = append(model, make([]uint32, int(n)-len(model))...)
			case 2:
				n := rapid.IntRange(0, len(model)).Draw(t, "cut to")
				c.truncate(uint32(n))
				model = model[:n]
			default:
				if len(model) > 0 {
					i := rapid.IntRange(0, len(model)-1).Draw(t, "set at")
					v := rapid.Uint32().Draw(t, "to")
					*c.at(uint32(i)) = v
					model[i] = v
				}
			}
			if c.len() != uint32(len(model)) {
				t.Fatalf("length %d, want %d", c.len(), len(model))
			}
			for i, v := range model {
				if got := *c.at(uint32(i)); got != v {
					t.Fatalf("entry %d: %d, want %d", i, got, v)
				}
			}
		}
	})
}

// Blocks are whole: as many ranks as the largest power of two up to 256,
// the ranks and 2^20 ops, each block of ranks with the same number of ops
// (at least 2), and the ids of every block within 32 bits.
func TestLayoutBlocksAreWhole(t *testing.T) {
	defer func(before bool) { blockRanks = before }(blockRanks)
	blockRanks = true
	for _, c := range []struct {
		ranks          int
		n              uint32
		blocked, block uint32 // ranks in blocks, and in each
	}{
		{1024, 1024, 1024, 256},
		{1023, 1026, 768, 256}, // the last 255 ranks fill no block of 256
		{255, 4, 128, 128},
		{3, 1 << 20, 0, 0},     // two ranks would be more than 2^20 ops
		{300, 1 << 19, 300, 2}, // blocks of two ranks of 2^19
		{257, 5000, 256, 128},  // 209 ranks of 5,000 ops fit in 2^20
		{1, 100, 0, 0},
		{100, 1, 0, 0},
		{1 << 24, 1 << 8, (1<<32 - 2) / (1 << 16) * (1 << 8), 256}, // up to the 32-bit ids
	} {
		l := planLayout(c.ranks, c.n)
		block := uint32(0)
		if l.cutRank > 0 {
			block = 1 << l.shift
		}
		if l.cutRank != c.blocked || uint64(l.cutID) != uint64(c.blocked)*uint64(c.n) || block != c.block {
			t.Errorf("%d ranks of %d ops: %d ranks in blocks of %d, to id %d; want %d in blocks of %d", c.ranks, c.n, l.cutRank, block, l.cutID, c.blocked, c.block)
		}
	}
}

// The room made ahead for a block's dependencies follows the text too: a
// first rank with a dependency written 200,000 times, then ranks without
// any, made room for 256 times as many (205 MB).
func TestUnitRoomFollowsTheInput(t *testing.T) {
	defer func(before bool) { blockRanks = before }(blockRanks)
	var b strings.Builder
	b.WriteString("num_ranks 256\nrank 0 {\nl0: calc 1\nl1: calc 1\n")
	for range 200000 {
		b.WriteString("l1 requires l0\n")
	}
	b.WriteString("}\n")
	for r := 1; r < 256; r++ {
		fmt.Fprintf(&b, "rank %d {\nl0: calc 1\nl1: calc 1\n}\n", r)
	}
	text := b.String()
	allocated := func(blocks bool) uint64 {
		blockRanks = blocks
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := ParseGOAL(strings.NewReader(text), "d.goal"); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	byID, blocked := allocated(false), allocated(true)
	t.Logf("%d KB of text: allocated %d KB by id, %d KB in blocks", len(text)>>10, byID>>10, blocked>>10)
	if blocked > byID+1<<20 {
		t.Errorf("parsing in blocks allocated %d KB, by id %d KB", blocked>>10, byID>>10)
	}
}

// A schedule whose rank 0 has many ops and whose other ranks have few
// makes no more room than a block of 2^20 ops ahead of what it reads, and
// keeps none of it: parsing it in blocks allocates at most twice that more
// than parsing it by id (the room, then the ranks it held stored again),
// and the table keeps no more than twice its ops.
func TestLayoutMemoryFollowsTheInput(t *testing.T) {
	defer func(before bool) { blockRanks = before }(blockRanks)
	var b strings.Builder
	b.WriteString("num_ranks 256\nrank 0 {\n")
	for i := range 200000 {
		fmt.Fprintf(&b, "l%d: calc 1\n", i)
	}
	b.WriteString("}\n")
	for r := 1; r < 256; r++ {
		fmt.Fprintf(&b, "rank %d {\nl0: calc 1\n}\n", r)
	}
	text := b.String()
	// allocated parses text and returns the bytes allocated, and the heap
	// in use once the parse is over with the schedule alive.
	allocated := func(blocks bool) (total, kept uint64, g *GOAL) {
		blockRanks = blocks
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		g, err := ParseGOAL(strings.NewReader(text), "m.goal")
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		total = after.TotalAlloc - before.TotalAlloc
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(g)
		return total, after.HeapAlloc, g
	}
	byID, byIDKept, _ := allocated(false)
	blocked, blockedKept, g := allocated(true)
	t.Logf("allocated %d MB by id, %d in blocks; kept %d and %d MB", byID>>20, blocked>>20, byIDKept>>20, blockedKept>>20)
	if blockedKept > byIDKept+4<<20 {
		t.Errorf("in blocks the heap keeps %d MB, by id %d MB", blockedKept>>20, byIDKept>>20)
	}
	// The room made ahead, then the ranks moved back and stored again.
	if ahead := uint64(maxBlockOps) * uint64(unsafe.Sizeof(goalOp{})); blocked > byID+2*ahead {
		t.Errorf("parsing in blocks allocated %d MB, by id %d MB: more than %d MB more", blocked>>20, byID>>20, 2*ahead>>20)
	}
	kept := cap(g.ops.spare)
	for _, c := range g.ops.chunks {
		kept += cap(c)
	}
	if kept > 2*g.Ops() {
		t.Errorf("the table keeps room for %d ops, holding %d", kept, g.Ops())
	}
}

// Ranks' sources may be asked for from several goroutines at once (a
// sweep's workers sharing a schedule): the dependency lists they read are
// made once, and every rank reads its own (run it with -race too).
func TestScheduleFromGoroutines(t *testing.T) {
	var b strings.Builder
	ranks := 300
	fmt.Fprintf(&b, "num_ranks %d\n", ranks)
	for r := range ranks {
		fmt.Fprintf(&b, "rank %d {\n", r)
		for i := range 6 {
			fmt.Fprintf(&b, "o%d: calc %d\n", i, r+i)
			for d := range i {
				if (r+i+d)%3 == 0 {
					fmt.Fprintf(&b, "o%d requires o%d\n", i, d)
				}
			}
		}
		b.WriteString("}\n")
	}
	parse := func() *GOAL {
		g, err := ParseGOAL(strings.NewReader(b.String()), "g.goal")
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	want := Materialize(parse().Schedule("g"))
	s := parse().Schedule("g")
	got := make([]Program, ranks)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for r := w; r < ranks; r += 8 {
				src := s.Rank(r)
				for ops := src.Next(nil); len(ops) > 0; ops = src.Next(nil) {
					got[r] = append(got[r], ops...)
				}
			}
		})
	}
	wg.Wait()
	for r := range ranks {
		if len(got[r]) != len(want[r]) {
			t.Fatalf("rank %d: %d ops, want %d", r, len(got[r]), len(want[r]))
		}
		for i := range want[r] {
			if !slices.Equal(got[r][i].After, want[r][i].After) {
				t.Fatalf("rank %d op %d: After %v, want %v", r, i, got[r][i].After, want[r][i].After)
			}
		}
	}
}

// A run's first user is fewer ops after it than a rank may have, which
// must fit in the user word's bits below the run's count.
func TestRunOffsetFits(t *testing.T) {
	if maxRankOps > runNextMask {
		t.Errorf("a rank may have %d ops, but a run's offset has %d bits", maxRankOps, runShift)
	}
}
