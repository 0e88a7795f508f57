package sim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"pgregory.net/rapid"
)

// parseBlocked parses text with ranks stored in blocks when blocked, else
// by id.
func parseBlocked(t interface{ Fatalf(string, ...any) }, text string, blocked bool) *sim.GOAL {
	defer sim.SetBlockRanks(blocked)()
	g, err := sim.ParseGOAL(strings.NewReader(text), "l.goal")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return g
}

// Collectives' schedules run the same, bit for bit, with their ranks
// stored in blocks and by id: through RunLogGOPS, through Execute and in
// partitions. The cases cover whole blocks (256 ranks), ranks after the
// last whole block (300), a schedule whose ranks differ in op counts
// (binomial bcast) and one of a prime number of ranks.
func TestBlockedRanksRunAsByID(t *testing.T) {
	for _, c := range []struct {
		collective collectives.Collective
		algo       string
		ranks      int
		count      int64
		blocked    int // ranks in blocks
	}{
		{collectives.Alltoall, "pairwise", 256, 64, 256},
		{collectives.Alltoall, "pairwise", 300, 3, 256},
		{collectives.Alltoall, "linear", 67, 67, 64},
		{collectives.Allreduce, "ring", 37, 1 << 12, 32},
		{collectives.Allreduce, "recursive_doubling", 64, 1000, 64},
		{collectives.Bcast, "binomial", 37, 1 << 16, 0},
	} {
		t.Run(fmt.Sprintf("%s/%s/P=%d", c.collective, c.algo, c.ranks), func(t *testing.T) {
			text := goalText(t, c.collective, c.algo, collectives.Params{Ranks: c.ranks, Count: c.count})
			blocked, byID := parseBlocked(t, text, true), parseBlocked(t, text, false)
			if got := blocked.BlockedRanks(); got != c.blocked {
				t.Fatalf("%d ranks in blocks, want %d", got, c.blocked)
			}
			if byID.BlockedRanks() != 0 {
				t.Fatal("ranks in blocks while off")
			}
			p := sim.DefaultLogGOPS
			want := sameRun(t, byID, p, func() *sim.Noise { return nil }, 7)
			got := sameRun(t, blocked, p, func() *sim.Noise { return nil }, 7)
			if !sameResult(want, got) {
				t.Fatalf("in blocks %+v\nby id %+v", *got, *want)
			}
			for parts := 2; parts <= 3; parts++ {
				a, aok := blocked.RunParallel(p, 7, parts)
				b, bok := byID.RunParallel(p, 7, parts)
				if aok != bok || aok && !sameResult(a, b) {
					t.Fatalf("%d partitions: in blocks %v %+v; by id %v %+v", parts, aok, a, bok, b)
				}
			}
		})
	}
}

// Random schedules whose ranks have as many ops each (some with one rank
// that differs) run the same with their ranks in blocks and by id,
// deadlocks and errors included, whose reports name the same ops.
func TestBlockedRandomSchedulesRunAsByID(t *testing.T) {
	blockedRuns := 0
	defer sim.SetMaxBlockOps(1 << 20)()
	rapid.Check(t, func(t *rapid.T) {
		text := evenGOAL(t, randomGOAL(t))
		// Blocks of up to 256 ranks, or of a few: groups of ranks staged
		// as the parser stores them cover a whole block or part of one.
		sim.SetMaxBlockOps(rapid.SampledFrom([]uint32{1 << 20, 8, 24, 64}).Draw(t, "most ops a block"))
		blocked, byID := parseBlocked(t, text, true), parseBlocked(t, text, false)
		if blocked.BlockedRanks() > 0 {
			blockedRuns++
		}
		p := sim.LogGOPS{L: 700 * sim.Nanosecond, O: 300 * sim.Nanosecond, G: 5 * sim.Nanosecond, GPerByte: 333, S: 65535}
		want := sameRun(t, byID, p, func() *sim.Noise { return nil }, 3)
		got := sameRun(t, blocked, p, func() *sim.Noise { return nil }, 3)
		if (want == nil) != (got == nil) || want != nil && !sameResult(want, got) {
			t.Fatalf("in blocks %+v\nby id %+v\n%s", got, want, text)
		}
		// Errors and deadlock reports name the same ops (rank, index).
		_, werr := byID.RunLogGOPS(p, nil, 3)
		_, gerr := blocked.RunLogGOPS(p, nil, 3)
		_, wxerr := sim.Execute(sim.New(3), byID.Run("x"), sim.Config{LogGOPS: &p})
		_, gxerr := sim.Execute(sim.New(3), blocked.Run("x"), sim.Config{LogGOPS: &p})
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || fmt.Sprint(wxerr) != fmt.Sprint(gxerr) {
			t.Fatalf("errors in blocks:\n%v\n%v\nby id:\n%v\n%v\n%s", gerr, gxerr, werr, wxerr, text)
		}
	})
	if blockedRuns < 20 {
		t.Fatalf("only %d schedules had ranks in blocks", blockedRuns)
	}
}

// evenGOAL pads every rank block of a randomGOAL schedule with empty calcs
// to as many ops as its longest (but one rank, one time in three), so that
// its ranks can be stored in blocks.
func evenGOAL(t *rapid.T, text string) string {
	blocks := strings.SplitAfter(text, "}\n")
	count := func(b string) int { return strings.Count(b, ": ") }
	most := 0
	for _, b := range blocks {
		most = max(most, count(b))
	}
	skip := -1
	if rapid.IntRange(0, 2).Draw(t, "uneven") == 0 {
		skip = rapid.IntRange(0, len(blocks)-1).Draw(t, "uneven rank")
	}
	for i, b := range blocks {
		if !strings.HasSuffix(b, "}\n") || i == skip {
			continue
		}
		var pad strings.Builder
		for k := count(b); k < most; k++ {
			fmt.Fprintf(&pad, "p%d: calc 0\n", k)
		}
		blocks[i] = strings.TrimSuffix(b, "}\n") + pad.String() + "}\n"
	}
	return strings.Join(blocks, "")
}
