package sim_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

// flight is a message between two interpreters of the in-memory driver.
type flight struct {
	src, dst int32
	tag      int32
	bytes    int64
	data     []uint64
}

// drive runs every rank's Interp of s to completion in memory, with data,
// taking the next thing to happen (a rank issuing its ready ops, or the
// oldest message on some channel arriving) as pick chooses: any order a
// real network could produce, channel FIFO kept.
func drive(s sim.Schedule, data [][][]uint64, pick func(n int) int) error {
	p := s.Ranks
	ins := make([]*sim.Interp, p)
	for r := range ins {
		in, err := sim.NewInterp(s, r)
		if err != nil {
			return err
		}
		ins[r] = in
	}
	type key struct{ src, dst int32 }
	channels := map[key][]flight{}
	var order []key // channels in the order they were first used: deterministic
	msgs := make([][]flight, p)
	// open holds each rank's posted receives of one run of elements that
	// have no message yet: a real run may land a message's elements in
	// such a receive's region as they arrive (or reduce them into it piece
	// by piece), before the receive completes (Rank.landing in
	// sim/realrun), so no op may read or write that region meanwhile, as
	// MPI forbids touching a pending receive's buffer; but two reducing
	// receives into one region may be pending at once, since the
	// reductions (a wrapping sum, a maximum) give the same result in any
	// order, piece by piece.
	type openRecv struct {
		idx    int32
		reg    sim.Region
		reduce bool
	}
	open := make([][]openRecv, p)
	touchesOpen := func(r, idx int32, op *sim.Op) error {
		for _, o := range open[r] {
			if o.reduce && op.Kind == sim.OpRecv && op.Reduce {
				continue
			}
			for _, reg := range []sim.Region{op.Data, op.Src} {
				if reg.Count > 0 && reg.Buf == o.reg.Buf && elementsMeet(o.reg, reg) {
					return fmt.Errorf("rank %d op %d (%v) touches region %+v of receive %d, which is pending", r, idx, op, o.reg, o.idx)
				}
			}
		}
		return nil
	}
	apply := func(r int32, idx int32, m flight) error {
		open[r] = slices.DeleteFunc(open[r], func(o openRecv) bool { return o.idx == idx })
		op := ins[r].Op(idx)
		if op.Bytes != m.bytes {
			return fmt.Errorf("rank %d op %d: %dB matched %dB", r, idx, op.Bytes, m.bytes)
		}
		var reduce func(dst, src []uint64)
		if op.Reduce {
			reduce = s.ReduceOp.Apply
		}
		op.Data.Scatter(data[r][op.Data.Buf], m.data, reduce)
		ins[r].Complete(idx)
		return nil
	}
	issue := func(r int32) error {
		in := ins[r]
		for {
			idx, op, ok := in.Start()
			if !ok {
				return in.Err()
			}
			if err := touchesOpen(r, idx, op); err != nil {
				return err
			}
			switch op.Kind {
			case sim.OpCalc:
				if op.Src.Count > 0 { // a local copy, or reduction
					var reduce func(dst, src []uint64)
					if op.Reduce {
						reduce = s.ReduceOp.Apply
					}
					op.Data.Scatter(data[r][op.Data.Buf], op.Src.Gather(nil, data[r][op.Src.Buf]), reduce)
				}
				in.Complete(idx)
			case sim.OpSend:
				src := op.Data.Gather(nil, data[r][op.Data.Buf])
				k := key{r, op.Peer}
				if _, seen := channels[k]; !seen {
					order = append(order, k)
				}
				channels[k] = append(channels[k], flight{src: r, dst: op.Peer, tag: op.Tag, bytes: op.Bytes, data: src})
				in.Complete(idx) // eager: done once its data is captured
			case sim.OpRecv:
				if id, ok := in.Post(idx); ok {
					m := msgs[r][id]
					if err := apply(r, idx, m); err != nil {
						return err
					}
				} else if op.Data.Runs() == 1 && op.Data.Count > 0 {
					open[r] = append(open[r], openRecv{idx, op.Data, op.Reduce})
				}
			}
		}
	}
	for r := range p {
		if err := issue(int32(r)); err != nil {
			return err
		}
	}
	for {
		var live []key
		for _, k := range order {
			if len(channels[k]) > 0 {
				live = append(live, k)
			}
		}
		if len(live) == 0 {
			break
		}
		k := live[pick(len(live))]
		m := channels[k][0]
		channels[k] = channels[k][1:]
		id := uint32(len(msgs[m.dst]))
		msgs[m.dst] = append(msgs[m.dst], m)
		want, accepted := ins[m.dst].Accepting(m.src, m.tag)
		idx, ok := ins[m.dst].Arrived(m.src, m.tag, id)
		if accepted != ok || (ok && idx != want) {
			return fmt.Errorf("rank %d: Accepting(%d, %d) said receive %d (%v), Arrived matched %d (%v)", m.dst, m.src, m.tag, want, accepted, idx, ok)
		}
		if ok {
			if err := apply(m.dst, idx, m); err != nil {
				return err
			}
		}
		if err := issue(m.dst); err != nil {
			return err
		}
	}
	for r, in := range ins {
		if !in.Done() {
			var b strings.Builder
			for _, p := range in.Pending(func(uint32) string { return "message" }) {
				fmt.Fprintf(&b, "; op %d %s: %s", p.Index, p.Op, p.State)
			}
			return fmt.Errorf("rank %d did not finish%s", r, b.String())
		}
	}
	return nil
}

// elementsMeet reports whether region b has an element in run a (one run
// of elements of the same buffer).
func elementsMeet(a, b sim.Region) bool {
	for i := range b.Runs() {
		if off, n := b.Run(i); n > 0 && off < a.Off+a.Count && a.Off < off+n {
			return true
		}
	}
	return false
}

// TestInterpEveryAlgorithmAnyOrder drives every algorithm's schedule
// through sim.Interp with messages arriving in random orders (per-channel
// FIFO, as TCP keeps it) and checks every rank's data: the interpreter a
// real run uses must give the right result whatever the network does.
func TestInterpEveryAlgorithmAnyOrder(t *testing.T) {
	algos := collectives.All()
	verified := 0
	rapid.Check(t, func(t *rapid.T) {
		a := algos[rapid.IntRange(0, len(algos)-1).Draw(t, "algorithm")]
		p := rapid.SampledFrom([]int{1, 2, 3, 4, 5, 7, 8, 12, 16}).Draw(t, "ranks")
		params := collectives.Params{Ranks: p, Count: rapid.Int64Range(0, 40).Draw(t, "count"),
			Root: rapid.IntRange(0, p-1).Draw(t, "root"), NodeSize: 2, GroupSize: 2}
		s, err := a.Build(params)
		if err != nil {
			t.Skip(err)
		}
		d, err := a.Data(params, 7)
		if err != nil {
			t.Fatal(err)
		}
		pick := func(n int) int { return rapid.IntRange(0, n-1).Draw(t, "next") }
		if err := drive(s, d.Buffers, pick); err != nil {
			t.Fatalf("%s: %v", a.ID(), err)
		}
		if err := d.Verify(); err != nil {
			t.Fatalf("%s: %v", a.ID(), err)
		}
		verified++
	})
	if verified < 50 {
		t.Errorf("only %d schedules were checked; the rest could not be built", verified)
	}
}

// TestInterpDependencies checks After, StartAfter, program order and
// wildcard matching on a hand-made program.
func TestInterpDependencies(t *testing.T) {
	progs := []sim.Program{
		{ // rank 0
			{Kind: sim.OpRecv, Peer: sim.AnySource, Tag: sim.AnyTag, Bytes: 8}, // 0
			{Kind: sim.OpCalc, Dur: 5, StartAfter: []int32{0}},                 // 1: ready once 0 started
			{Kind: sim.OpSend, Peer: 1, Tag: 3, Bytes: 8, After: []int32{0}},   // 2: after 0 completes
			{Kind: sim.OpSend, Peer: 1, Tag: 4, Bytes: 8},                      // 3: independent
		},
		{},
	}
	in, err := sim.NewInterp(sim.FromPrograms("t", progs, 100), 0)
	if err != nil {
		t.Fatal(err)
	}
	var started []int32
	start := func() {
		for {
			idx, _, ok := in.Start()
			if !ok {
				return
			}
			started = append(started, idx)
		}
	}
	start()
	if fmt.Sprint(started) != "[0 3 1]" {
		t.Fatalf("started %v, want [0 3 1]: 0 and 3 are ready at once, 1 once 0 has started", started)
	}
	if idx, ok := in.Accepting(1, 9); ok {
		t.Fatalf("Accepting: receive %d would match before any receive is posted", idx)
	}
	if _, ok := in.Post(0); ok {
		t.Fatal("a receive matched with nothing arrived")
	}
	if idx, ok := in.Accepting(1, 9); !ok || idx != 0 {
		t.Fatalf("Accepting: the wildcard receive 0 would not match: %d %v", idx, ok)
	}
	if idx, ok := in.Accepting(1, 9); !ok || idx != 0 {
		t.Fatalf("Accepting matched the receive: a second look gives %d %v", idx, ok)
	}
	if idx, ok := in.Arrived(1, 9, 0); !ok || idx != 0 {
		t.Fatalf("the wildcard receive did not match: %d %v", idx, ok)
	}
	in.Complete(3)
	in.Complete(1)
	if in.Done() {
		t.Fatal("done with op 0 and 2 outstanding")
	}
	in.Complete(0)
	start()
	if fmt.Sprint(started) != "[0 3 1 2]" {
		t.Fatalf("started %v, want op 2 after op 0 completed", started)
	}
	in.Complete(2)
	if !in.Done() {
		t.Fatal("not done after every op completed")
	}
}

// TestInterpAllocatesLittlePerOp runs long chains of ops, each after the
// one before, as a real run's ping-pong issues them: past its start, the
// interpreter must not allocate for an op (each op's list of waiters once
// did, and its sliding window reallocated every op or two). A run's
// allocations at its start (the interpreter, the lists of the first ops
// read, the window's growth to the most ops it holds) are the same for a
// chain of 4,096 ops and one of 8,192, so the difference must be zero;
// the bound allows 4.
func TestInterpAllocatesLittlePerOp(t *testing.T) {
	allocs := func(ops int) float64 {
		prog := make(sim.Program, ops)
		for i := range prog {
			prog[i] = sim.Op{Kind: sim.OpCalc, Dur: 1}
			if i > 0 {
				prog[i].After = []int32{int32(i - 1)}
			}
		}
		s := sim.FromPrograms("chain", []sim.Program{prog}, 1)
		return testing.AllocsPerRun(5, func() {
			in, err := sim.NewInterp(s, 0)
			if err != nil {
				t.Fatal(err)
			}
			for !in.Done() {
				idx, _, ok := in.Start()
				if !ok {
					t.Fatal("no op ready before the chain's end")
				}
				in.Complete(idx)
			}
		})
	}
	short, long := allocs(4096), allocs(8192)
	if long-short > 4 {
		t.Fatalf("%v allocations for 4,096 chained ops and %v for 8,192: %v for the second 4,096, want at most 4", short, long, long-short)
	}
}

// TestDriveFlagsAPendingReceivesRegion checks drive's own check: rank 1
// posts a receive into elements 0-3 and, independently, sends elements 2-5,
// which a real run that lands messages as they arrive could send half
// overwritten.
func TestDriveFlagsAPendingReceivesRegion(t *testing.T) {
	progs := []sim.Program{
		{{Kind: sim.OpRecv, Peer: 1, Tag: 1, Bytes: 32, Data: sim.Region{Off: 4, Count: 4}},
			{Kind: sim.OpSend, Peer: 1, Tag: 0, Bytes: 32, Data: sim.Region{Count: 4}, After: []int32{0}}},
		{{Kind: sim.OpRecv, Peer: 0, Tag: 0, Bytes: 32, Data: sim.Region{Count: 4}},
			{Kind: sim.OpSend, Peer: 0, Tag: 1, Bytes: 32, Data: sim.Region{Off: 2, Count: 4}}},
	}
	data := [][][]uint64{{make([]uint64, 8)}, {make([]uint64, 8)}}
	err := drive(sim.FromPrograms("race", progs, 2), data, func(int) int { return 0 })
	if err == nil || !strings.Contains(err.Error(), "rank 1 op 1") || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("drive ran a send from a pending receive's region: %v", err)
	}
}

// TestInterpEveryAlgorithmEverySize drives every algorithm at every rank
// count and size of a fixed grid, messages arriving in a seeded random
// order, so that drive's checks (the data, and no op touching a pending
// receive's region) cover each one, not only the ones rapid draws.
func TestInterpEveryAlgorithmEverySize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(n int) int { return rng.IntN(n) }
	built := 0
	for _, a := range collectives.All() {
		for _, p := range []int{1, 2, 3, 5, 8, 13, 16} {
			for _, count := range []int64{0, 1, 7, 40} {
				params := collectives.Params{Ranks: p, Count: count, Root: p / 2, NodeSize: 2, GroupSize: 2}
				s, err := a.Build(params)
				if err != nil {
					continue // unsupported here; the collective library tests say why
				}
				d, err := a.Data(params, uint64(count)+uint64(p))
				if err != nil {
					t.Fatal(err)
				}
				built++
				if err := drive(s, d.Buffers, pick); err != nil {
					t.Errorf("%s P=%d count %d: %v", a.ID(), p, count, err)
				} else if err := d.Verify(); err != nil {
					t.Errorf("%s P=%d count %d: %v", a.ID(), p, count, err)
				}
			}
		}
	}
	if want := len(collectives.All()) * 7 * 4 / 2; built < want {
		t.Errorf("only %d of the grid's schedules could be built, want at least %d", built, want)
	}
}
