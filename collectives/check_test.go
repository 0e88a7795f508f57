package collectives

import (
	"errors"
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
	"pgregory.net/rapid"
)

// counts returns element counts that exercise the edge cases at p ranks:
// none, one, fewer than p, not divisible by p, divisible by p.
func counts(p int) []int64 {
	c := []int64{0, 1, int64(p) + 1, 3*int64(p) - 1, 4 * int64(p)}
	if p > 2 {
		c = append(c, int64(p)-1)
	}
	return c
}

// dataRanks are the rank counts of the exhaustive data test: every p from
// 1 to 24, then primes, powers of two and their neighbours up to 64. Every
// p up to 64 took two and a half minutes of CPU, most of it above 24,
// which put the package near go test's 10-minute limit on a loaded 2-core
// machine.
func dataRanks() []int {
	var ps []int
	for p := 1; p <= 24; p++ {
		ps = append(ps, p)
	}
	return append(ps, 25, 27, 29, 31, 32, 33, 37, 41, 47, 48, 53, 63, 64)
}

// Every algorithm, every p of dataRanks, edge-case counts: exact data,
// with every message eager; and on fewer rank counts with every message
// that carries data sent by rendezvous (a request, a reply, then the data),
// and with a limit of 3 elements, where most algorithms mix the two.
func TestEveryAlgorithmMovesTheRightData(t *testing.T) {
	for _, a := range All() {
		t.Run(a.ID(), func(t *testing.T) {
			t.Parallel()
			for _, p := range dataRanks() {
				for _, eager := range []int64{64 << 10, 0, 24} {
					if eager < 64<<10 && p > 24 && p != 31 && p != 32 && p != 47 && p != 64 {
						continue
					}
					for _, n := range counts(p) {
						params := everyCase(p, n)
						if refused(t, a, params) {
							continue
						}
						if _, err := CheckEager(a, params, uint64(p)*1000+uint64(n), sim.RandomLatency(50*sim.Nanosecond), eager); err != nil {
							t.Fatalf("eager limit %d: %v", eager, err)
						}
					}
				}
			}
		})
	}
}

// everyCase is the exhaustive test's parameters for p ranks and count n:
// roots, segments, node and group sizes and intra-node algorithms vary with
// p.
func everyCase(p int, n int64) Params {
	return Params{Ranks: p, Count: n, Root: (7*p + 3) % p, Segment: int64(p%3 + 1), NodeSize: 1 + p%5, Steps: 2 + p%2, GroupSize: largestDivisorBelow(p, 6),
		Intra:   []string{"binomial", "linear", "chain", "adapt", "segmented_binary"}[p%5],
		Library: []string{"", ompiBase, "mpich4", "ompi40"}[(p/2)%4]}
}

// The composites (hierarchical, SUARA) with every allreduce inside them,
// eager, by rendezvous and with a limit that splits segments between the
// two, and MPI_Sendrecv steps that overlap: exact data.
func TestCompositesWithEveryInnerAlgorithm(t *testing.T) {
	var inner []string
	for _, a := range All() {
		if a.Collective == Allreduce && !IsComposite(a.Name) {
			inner = append(inner, a.Name)
		}
	}
	// A composite inside a composite is refused with a hint, not run.
	for _, outer := range []string{"hierarchical", "suara"} {
		a, _ := Lookup(Allreduce, outer)
		for _, in := range []string{"hierarchical", "suara", "han", "smp"} {
			params := everyCase(8, 100)
			params.Inner = in
			var u *Unsupported
			if _, err := a.Build(params); !errors.As(err, &u) {
				t.Errorf("%s with --inner %s: got %v, want a refusal", outer, in, err)
			}
		}
	}
	for _, name := range []string{"hierarchical", "suara"} {
		a, err := Lookup(Allreduce, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inner {
			t.Run(name+"/"+in, func(t *testing.T) {
				t.Parallel()
				for _, p := range []int{1, 2, 3, 4, 6, 7, 9, 12, 16, 17} {
					for _, eager := range []int64{64 << 10, 0, 16} {
						for _, n := range counts(p) {
							params := everyCase(p, n)
							params.Inner, params.Overlap = in, p%2 == 1
							if refused(t, a, params) {
								continue
							}
							if _, err := CheckEager(a, params, uint64(p)*1000+uint64(n), sim.RandomLatency(50*sim.Nanosecond), eager); err != nil {
								t.Fatalf("inner %s, eager limit %d: %v", in, eager, err)
							}
						}
					}
				}
			})
		}
	}
}

// A phase that follows linear_pipeline inside suara waits for every
// segment's broadcast receive, not just the rank's last op. Found by
// TestAlgorithmsProperty: with 4 ranks, 6 elements of 4 bytes in segments of
// 5 and an eager limit of 16 bytes, the second segment (4 bytes, eager)
// lands before the first (20 bytes, by rendezvous), the send forwarding it
// finishes, and suara's next phase read rank 1's element 0 before the first
// segment had written it.
func TestSuaraWaitsForEverySegmentOfItsChain(t *testing.T) {
	a, err := Lookup(Allreduce, "suara")
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range []int{1, 2, 4} {
		for _, eager := range []int64{16, 20, 0, 64 << 10} {
			p := Params{Ranks: 4, Count: 6, ElemSize: 4, Segment: 5, Inner: "linear_pipeline", GroupSize: group}
			if _, err := CheckEager(a, p, 0, sim.RandomLatency(0), eager); err != nil {
				t.Errorf("group size %d, eager limit %d: %v", group, eager, err)
			}
		}
	}
}

// Property: under random timing, sizes, roots, element sizes and eager
// limits, every algorithm's schedule passes static validation and moves the
// right data; every algorithm gets its own draws, so none is left out of a
// run.
func TestAlgorithmsProperty(t *testing.T) {
	for _, a := range All() {
		t.Run(a.ID(), func(t *testing.T) {
			t.Parallel()
			rapid.Check(t, func(t *rapid.T) { propertyCase(t, a) })
		})
	}
}

func propertyCase(t *rapid.T, a Algorithm) {
	p := Params{
		Ranks:    rapid.IntRange(1, 70).Draw(t, "ranks"),
		Count:    rapid.Int64Range(0, 300).Draw(t, "count"),
		ElemSize: rapid.SampledFrom([]int64{1, 2, 3, 4, 8, 12, 16}).Draw(t, "elemSize"),
	}
	p.Root = rapid.IntRange(0, p.Ranks-1).Draw(t, "root")
	p.Segment = rapid.Int64Range(0, 50).Draw(t, "segment")
	p.NodeSize = rapid.IntRange(0, 9).Draw(t, "nodeSize")
	// Every allreduce the composites take inside (smp took double_binary_tree,
	// segmented_ring, linear and nonoverlapping untested: an audit).
	p.Inner = rapid.SampledFrom([]string{"", "ring", "recursive_doubling", "rabenseifner", "reduce_bcast", "linear_pipeline", "double_binary_tree", "segmented_ring", "linear", "nonoverlapping", "allgather_reduce"}).Draw(t, "inner")
	p.Intra = rapid.SampledFrom([]string{"", "binomial", "linear", "chain", "adapt", "segmented_binary"}).Draw(t, "intra")
	p.Steps = rapid.SampledFrom([]int{0, 2, 3}).Draw(t, "steps")
	p.GroupSize = rapid.SampledFrom(divisors(p.Ranks)).Draw(t, "groupSize")
	p.Overlap = rapid.Bool().Draw(t, "overlap")
	p.Library = rapid.SampledFrom([]string{"", ompiBase, "mpich4", "ompi40"}).Draw(t, "library")
	if rapid.Bool().Draw(t, "grid") {
		p.Groups = rapid.SampledFrom(divisors(p.Ranks)).Draw(t, "groups")
	}
	eager := rapid.SampledFrom([]int64{0, 16, 256, 64 << 10}).Draw(t, "eager")
	seed := rapid.Uint64().Draw(t, "seed")
	if refused(t, a, p) {
		return
	}
	s, err := a.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Validate(sim.Materialize(s)); err != nil {
		t.Fatalf("%s %+v: %v", a.ID(), p, err)
	}
	if _, err := CheckEager(a, p, seed, sim.RandomLatency(sim.Time(rapid.Int64Range(0, 1e6).Draw(t, "jitter"))), eager); err != nil {
		t.Fatal(err)
	}
}

func largestDivisorBelow(n, limit int) int {
	best := 1
	for _, d := range divisors(n) {
		if d <= limit {
			best = d
		}
	}
	return best
}

func divisors(n int) []int {
	var d []int
	for i := 1; i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
		}
	}
	return d
}

// refused reports whether a declines p; a refusal must be an Unsupported
// error that names an alternative, never a broken schedule.
func refused(t interface{ Fatalf(string, ...any) }, a Algorithm, p Params) bool {
	_, err := a.Build(p)
	var u *Unsupported
	switch {
	case err == nil:
		return false
	case errors.As(err, &u) && strings.Contains(err.Error(), "use "):
		if a.Name == "hierarchical" && p.NodeSize > 0 || a.Name == "suara" && p.Steps != 1 && (p.Groups == 0 || p.Ranks%p.Groups == 0 && p.Steps <= 2) {
			t.Fatalf("%s refused parameters it must run with: %+v: %v", a.ID(), p, err)
		}
		return true
	}
	t.Fatalf("%s %+v: %v", a.ID(), p, err)
	return true
}

// The checker itself must catch a wrong program: turn one reduction of the
// ring allreduce into a plain receive and the result must be rejected.
type dropFirstReduce struct{ inner sim.Source }

func (d dropFirstReduce) Next(ops []sim.Op) []sim.Op {
	n := len(ops)
	ops = d.inner.Next(ops)
	for i := n; i < len(ops); i++ {
		if ops[i].Kind == sim.OpRecv && ops[i].Tag == 0 {
			ops[i].Reduce = false
		}
	}
	return ops
}

func TestCheckCatchesAWrongProgram(t *testing.T) {
	a, err := Lookup(Allreduce, "ring")
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Ranks: 5, Count: 17}
	s, err := a.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(s, Allreduce, p, 1, sim.FixedLatency(sim.Nanosecond)); err != nil {
		t.Fatalf("the intact schedule failed: %v", err)
	}
	rank := s.Rank
	s.Rank = func(r int) sim.Source { return dropFirstReduce{rank(r)} }
	if _, err := verify(s, Allreduce, p, 1, sim.FixedLatency(sim.Nanosecond)); err == nil {
		t.Fatal("a ring allreduce that overwrites instead of reducing passed the data check")
	}
}

// Tags are int32, as MPI's: a composite with one tag block per phase of
// each segment refuses a segment count that would wrap them, and names a
// segment that fits. By hand: 2^31-1 tags hold floor((2^31-1)/4096) =
// 524287 blocks of 4096, one kept spare: 524286 phases, 174762 segments of
// 3 phases. 2^31 elements in 174762 segments need ceil(2^31/174762) =
// 12289 elements per segment.
func TestTagsFit(t *testing.T) {
	if err := tagsFit(174762, 3, 1<<31); err != nil {
		t.Errorf("174762 segments of 3 phases: %v", err)
	}
	err := tagsFit(174763, 3, 1<<31)
	want := "174763 segments of 3 phases each need more tags than MPI's int32 holds; use --segment 12289 elements or more (at most 174762 segments)"
	var u *Unsupported
	if !errors.As(err, &u) || err.Error() != want {
		t.Errorf("174763 segments: %v, want %q", err, want)
	}
	// The algorithms refuse through Build, before any rank is built: a
	// 16 GiB hierarchical allreduce in 64 KiB segments (262144 of them).
	a, _ := Lookup(Allreduce, "hierarchical")
	if _, err := a.Build(Params{Ranks: 16, NodeSize: 4, Count: 1 << 31}); !errors.As(err, &u) || !strings.Contains(err.Error(), "262144 segments of 3 phases") {
		t.Errorf("hierarchical, 2^31 elements: %v", err)
	}
	if _, err := a.Build(Params{Ranks: 16, NodeSize: 4, Count: 1 << 31, Segment: 12289}); err != nil {
		t.Errorf("hierarchical, 2^31 elements in segments of 12289: %v", err)
	}
}

// TestOriginsTrackContributions: with NewOrigins' inputs (rank r's input
// elements the bit 1<<r) every algorithm ends with each element holding
// exactly the set of ranks the collective's definition gives it, for
// rank counts up to explain's 16: what collsim explain colours is right,
// and no algorithm counts a contribution twice (a carry into another bit
// would fail the check).
func TestOriginsTrackContributions(t *testing.T) {
	runs := 0
	defer func() {
		if runs < 500 {
			t.Errorf("only %d runs", runs)
		}
	}()
	for _, a := range All() {
		for _, p := range []int{1, 2, 3, 5, 8, 13, 16} {
			for _, n := range []int64{1, int64(p) + 1, 4 * int64(p)} {
				params := everyCase(p, n)
				if refused(t, a, params) {
					continue
				}
				s, err := a.Build(params)
				if err != nil {
					t.Fatal(err)
				}
				d, err := a.Origins(params)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := sim.Execute(sim.New(uint64(p)), s, sim.Config{Network: sim.RandomLatency(50 * sim.Nanosecond), Data: d.Buffers}); err != nil {
					t.Fatalf("%s p=%d n=%d: %v", a.ID(), p, n, err)
				}
				if err := d.Verify(); err != nil {
					t.Fatalf("%s p=%d n=%d: %v", a.ID(), p, n, err)
				}
				runs++
			}
		}
	}
}

// Data mode counts an algorithm's scratch against MaxDataElements, not the
// collective's buffers alone: an allgather_reduce allreduce of 2,999
// elements on 1,000 ranks holds every rank's vector on each, 2,999,000
// elements a rank, 3.0e9 in all, where its buffers are 3.0e6 (with the
// scratch left out, the default data mode took it and grew past 22 GB: an
// audit). Its ring, which has no scratch, passes.
func TestCheckDataCountsScratch(t *testing.T) {
	p := Params{Ranks: 1000, Count: 2999, ElemSize: 4}
	if err := CheckData(Allreduce, p); err != nil {
		t.Fatalf("the collective's own buffers: %v", err)
	}
	gr, err := Lookup(Allreduce, "allgather_reduce")
	if err != nil {
		t.Fatal(err)
	}
	if err := gr.CheckData(p); err == nil {
		t.Errorf("allgather_reduce's scratch was not counted")
	}
	if _, err := gr.Data(p, 1); err == nil {
		t.Errorf("allgather_reduce's data was made")
	}
	ring, _ := Lookup(Allreduce, "ring")
	if err := ring.CheckData(p); err != nil {
		t.Errorf("ring: %v", err)
	}
}

// HAN's bcast and reduce from a root that is not its node's first rank
// run where all the ranks are on one node, whatever the node size: 5
// ranks in a node of 8 were refused as nodes of unequal size (an audit).
func TestHanRootOnOneNode(t *testing.T) {
	for _, c := range []Collective{Bcast, Reduce} {
		a, err := Lookup(c, "han")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{3, 5, 7} {
			p := Params{Ranks: n, NodeSize: 8, Root: n - 1, Count: 5}
			if _, err := CheckEager(a, p, 1, sim.RandomLatency(1000), 0); err != nil {
				t.Errorf("%s on %d ranks, root %d: %v", a.ID(), n, n-1, err)
			}
		}
	}
}
