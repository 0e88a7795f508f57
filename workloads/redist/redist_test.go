package redist_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/redist"
)

// layoutOffsets places every element of an m x n matrix by walking the
// elements themselves, in storage order (tile columns, then the tiles of
// a tile column, then the tile's columns, then its rows), counting per
// owner: it shares nothing with the package's tile-by-tile offsets.
func layoutOffsets(l *redist.Layout, m, n int) (owner []int, off []int64) {
	owner, off = make([]int, m*n), make([]int64, m*n)
	cols := (n + l.NB - 1) / l.NB
	count := map[int]int64{}
	for tj := 0; tj*l.NB < n; tj++ {
		for ti := 0; ti*l.MB < m; ti++ {
			o := (ti%max(l.P, 1))*l.Q + tj%max(l.Q, 1)
			if l.Owners != nil {
				o = int(l.Owners[ti*cols+tj])
			}
			for k := tj * l.NB; k < min(n, (tj+1)*l.NB); k++ {
				for i := ti * l.MB; i < min(m, (ti+1)*l.MB); i++ {
					owner[i+k*m], off[i+k*m] = o, count[o]
					count[o]++
				}
			}
		}
	}
	return owner, off
}

// run redistributes real elements (each its global index + 1) and checks
// that every element ends at its owner in the target layout, in its place.
func run(t interface {
	Fatalf(string, ...any)
}, j *redist.Job, seed uint64) {
	comp, err := j.Composition()
	if err != nil {
		t.Fatalf("%v", err)
	}
	bufs := make([][][]uint64, comp.Ranks)
	for r := range bufs {
		for _, n := range comp.Buffers(r) {
			bufs[r] = append(bufs[r], make([]uint64, n))
		}
	}
	owner, off := layoutOffsets(&j.From, j.M, j.N)
	for e := range owner {
		bufs[owner[e]][0][off[e]] = uint64(e + 1)
	}
	if _, err := sim.Execute(sim.New(seed), comp.Schedule(), sim.Config{Network: sim.RandomLatency(3 * sim.Microsecond), Data: bufs}); err != nil {
		t.Fatalf("%v", err)
	}
	owner, off = layoutOffsets(&j.To, j.M, j.N)
	for e := range owner {
		if got := bufs[owner[e]][1][off[e]]; got != uint64(e+1) {
			t.Fatalf("element (%d, %d) should be at rank %d offset %d of the target layout: found element %d", e%j.M, e/j.M, owner[e], off[e], int(got)-1)
		}
	}
}

func TestEveryElementArrives(t *testing.T) {
	cases := []struct {
		m, n     int
		from, to redist.Layout
	}{
		{1, 1, redist.Layout{MB: 1, NB: 1, P: 1, Q: 1}, redist.Layout{MB: 1, NB: 1, P: 1, Q: 1}},
		{4, 4, redist.Layout{MB: 4, NB: 4, P: 1, Q: 1}, redist.Layout{MB: 2, NB: 2, P: 2, Q: 2}},
		{13, 17, redist.Layout{MB: 3, NB: 5, P: 2, Q: 3}, redist.Layout{MB: 4, NB: 2, P: 3, Q: 2}},
		{20, 9, redist.Layout{MB: 7, NB: 2, P: 5, Q: 1}, redist.Layout{MB: 3, NB: 3, P: 1, Q: 7}},  // primes, a non-square grid
		{16, 16, redist.Layout{MB: 4, NB: 4, P: 2, Q: 2}, redist.Layout{MB: 4, NB: 4, P: 2, Q: 2}}, // nothing moves
		{11, 6, redist.Layout{MB: 2, NB: 3, P: 1, Q: 2}, redist.Layout{MB: 5, NB: 1, P: 3, Q: 1}},  // 2 ranks to 3
	}
	for ci, c := range cases {
		for _, sched := range redist.Schedules {
			for _, msgs := range redist.MessageModes {
				if sched == "scalapack" && msgs == "tile" {
					continue
				}
				j := &redist.Job{M: c.m, N: c.n, Elem: 8, From: c.from, To: c.to, Schedule: sched, Messages: msgs, CopyRate: 1e9, Data: true}
				t.Run(fmt.Sprintf("%d/%s/%s", ci, sched, msgs), func(t *testing.T) { run(t, j, uint64(ci+1)) })
			}
		}
	}
}

// TestRandomLayouts: random matrices, block-cyclic or irregular layouts,
// schedules and message modes, each element checked.
func TestRandomLayouts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, n := rapid.IntRange(1, 23).Draw(t, "m"), rapid.IntRange(1, 23).Draw(t, "n")
		ranks := rapid.IntRange(1, 7).Draw(t, "ranks")
		layout := func(name string) redist.Layout {
			l := redist.Layout{MB: rapid.IntRange(1, 9).Draw(t, name+"mb"), NB: rapid.IntRange(1, 9).Draw(t, name+"nb")}
			if rapid.Bool().Draw(t, name+"irregular") {
				rows, cols := (m+l.MB-1)/l.MB, (n+l.NB-1)/l.NB
				l.Owners = rapid.SliceOfN(rapid.Int32Range(0, int32(ranks-1)), rows*cols, rows*cols).Draw(t, name+"owners")
				l.Name = "random"
				return l
			}
			l.P = rapid.IntRange(1, ranks).Draw(t, name+"p")
			l.Q = rapid.IntRange(1, ranks/l.P).Draw(t, name+"q")
			return l
		}
		j := &redist.Job{M: m, N: n, Elem: rapid.Int64Range(1, 16).Draw(t, "elem"), From: layout("from"), To: layout("to"), Ranks: ranks,
			Schedule: rapid.SampledFrom(redist.Schedules).Draw(t, "schedule"), CopyRate: 1e9, Data: true}
		j.Messages = "pair"
		if j.Schedule != "scalapack" {
			j.Messages = rapid.SampledFrom(redist.MessageModes).Draw(t, "messages")
		}
		run(t, j, rapid.Uint64().Draw(t, "seed"))
	})
}

// TestExchangeByHand: a 4x4 matrix whole on rank 0 (one 4x4 tile) dealt
// as 2x2 tiles over a 2x2 grid: rank 0 keeps the top-left tile and sends
// each other rank its 2x2 tile (4 elements of 8 bytes), one message each
// in either mode.
func TestExchangeByHand(t *testing.T) {
	for _, msgs := range redist.MessageModes {
		j := &redist.Job{M: 4, N: 4, Elem: 8, From: redist.Layout{MB: 4, NB: 4, P: 1, Q: 1}, To: redist.Layout{MB: 2, NB: 2, P: 2, Q: 2},
			Schedule: "caterpillar", Messages: msgs, CopyRate: 1}
		got, err := j.Exchange()
		if err != nil {
			t.Fatal(err)
		}
		want := []redist.Flow{{0, 0, 32, 0}, {0, 1, 32, 1}, {0, 2, 32, 1}, {0, 3, 32, 1}}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", msgs, got, want)
		}
	}
	// 6x1 in 1x1 tiles round-robin over 2 ranks (rows 0,2,4 on rank 0),
	// to 3x1 tiles on 2 ranks (rows 0-2 on rank 0): rank 0 sends row 4,
	// rank 1 sends rows 1 — one message per pair, or one per tile.
	j := &redist.Job{M: 6, N: 1, Elem: 1, From: redist.Layout{MB: 1, NB: 1, P: 2, Q: 1}, To: redist.Layout{MB: 3, NB: 1, P: 2, Q: 1},
		Schedule: "naive", Messages: "tile", CopyRate: 1}
	got, err := j.Exchange()
	if err != nil {
		t.Fatal(err)
	}
	want := []redist.Flow{{0, 0, 2, 0}, {0, 1, 1, 1}, {1, 0, 1, 1}, {1, 1, 2, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestRefusals(t *testing.T) {
	ok := redist.Job{M: 8, N: 8, Elem: 8, From: redist.Layout{MB: 2, NB: 2, P: 2, Q: 2}, To: redist.Layout{MB: 4, NB: 4, P: 1, Q: 4},
		Schedule: "scalapack", Messages: "pair", CopyRate: 1e9}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*redist.Job)
		want string
	}{
		{func(j *redist.Job) { j.M = 0 }, "at least 1"},
		{func(j *redist.Job) { j.Elem = 0 }, "elements of 0 bytes"},
		{func(j *redist.Job) { j.From.MB = 0 }, "source layout: tiles of 0x2"},
		{func(j *redist.Job) { j.To.Q = 0 }, "target layout: grid of 1x0"},
		{func(j *redist.Job) { j.Ranks = 3 }, "needs 4 ranks, the job has 3"},
		{func(j *redist.Job) { j.Messages = "tile" }, "scalapack schedule sends one packed message per pair"},
		{func(j *redist.Job) { j.Schedule = "fast" }, `schedule "fast"`},
		{func(j *redist.Job) { j.CopyRate = 0 }, "copy rate"},
		{func(j *redist.Job) { j.To = redist.Layout{MB: 4, NB: 4, Owners: []int32{0, 1, 2}, Name: "m.txt"} }, "gives 3 owners, but a 8x8 matrix in 4x4 tiles has 2 x 2 = 4 tiles"},
		{func(j *redist.Job) { j.To = redist.Layout{MB: 4, NB: 4, Owners: []int32{0, 1, 2, 9}, Name: "m.txt"} }, "gives tile (1, 1) to rank 9, but the job has ranks 0..3"},
		{func(j *redist.Job) { j.M, j.N, j.From.MB, j.From.NB, j.To.MB, j.To.NB = 1<<20, 1<<20, 1, 1, 3, 3 }, "use larger tiles"},
		{func(j *redist.Job) { j.M, j.N, j.Elem = 1<<30, 1<<30, 8 }, "more than a PiB"},
		{func(j *redist.Job) { j.M, j.N, j.Elem = 5e9, 1, 1 }, "matrix 5000000000x1: each dimension at most 2147483647"},
		{func(j *redist.Job) {
			j.From = redist.Layout{MB: 8, NB: 8, Owners: []int32{2_000_000_000}, Name: "m.txt"}
			j.To = j.From
		}, "the layouts name 2000000001 ranks"},
	} {
		j := ok
		c.edit(&j)
		err := j.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", j, err, c.want)
		}
	}
}

func TestParseMap(t *testing.T) {
	owners, rows, cols, err := redist.ParseMap("m.txt", []byte("# owners\n0 1, 2\n\n3 3 0 # last row\n"))
	if err != nil || rows != 2 || cols != 3 || !slices.Equal(owners, []int32{0, 1, 2, 3, 3, 0}) {
		t.Fatalf("%v %d %d %v", owners, rows, cols, err)
	}
	for _, c := range []struct{ text, want string }{
		{"0 1\n2\n", "m.txt:2: 1 tiles in this row, 2 in the rows before"},
		{"0 x\n", `m.txt:1: owner "x"`},
		{"0 -1\n", `m.txt:1: owner "-1"`},
		{"# nothing\n", "m.txt: no tiles"},
	} {
		if _, _, _, err := redist.ParseMap("m.txt", []byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
