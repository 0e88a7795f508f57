package realrun

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestProbeCountsNoCopiesOfItsOwn: ranks 0 and 1 share memory, rank 2
// reaches both over TCP (another host, as it were), and every rank has a
// core of its own. Rank 1 receives the probe's single copies from rank 0
// but sends nothing in the probe (its next rank is rank 2): it reports no
// probe, and counts none of those copies as the run's.
func TestProbeCountsNoCopiesOfItsOwn(t *testing.T) {
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ms, err := connectLocal(ctx, 7, []Transport{SharedMemory, SharedMemory, TCP})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, m := range ms {
			m.Abort(nil)
		}
	}()
	if !ms[0].sharesWith(1) || ms[1].sharesWith(2) || !ms[0].readsMe[1] {
		t.Skip("ranks 0 and 1 do not share memory, or rank 1 may not read rank 0's")
	}
	probes := probeEvery(t, ms)
	if probes[0] == nil || probes[1] != nil || probes[2] != nil {
		t.Fatalf("probes %+v, %+v, %+v: want rank 0's only (the only rank whose next rank shares its memory)", probes[0], probes[1], probes[2])
	}
	// At each of the two sizes, one untimed and 4 timed exchanges copied
	// once.
	if want := int64(2 * (1 + probeRounds)); ms[1].copies != want || ms[1].SingleCopies() != 0 {
		t.Errorf("rank 1 copied %d messages once in the probe and counts %d as the run's; want %d and 0", ms[1].copies, ms[1].SingleCopies(), want)
	}
}

// probeEvery runs the probe on every rank of ms, each rank with a core of
// its own and a job of 1 MiB with data, and returns what each measured.
func probeEvery(t *testing.T, ms []*Mesh) []*Probe {
	t.Helper()
	for _, m := range ms {
		m.yield = false // a core each
	}
	jobs := []Job{{Name: "with data", Bytes: 1 << 20, Data: func() ([][]uint64, error) { return nil, nil }}}
	probes := make([]*Probe, len(ms))
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for r, m := range ms {
		wg.Go(func() { probes[r], errs[r] = probeSingleCopy(NewRank(m), jobs) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return probes
}

// TestProbeChooses: the probe's choice from its medians, each branch by
// hand: single copies from 64 KiB when they won at 128 KiB (whatever 2 MiB
// gave), else from a ring's size when they won at 2 MiB, else none; a tie
// keeps the rings, and a next rank that may not read this one's memory
// gets none.
func TestProbeChooses(t *testing.T) {
	const ringAbove = 1<<20 - 64
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	for _, c := range []struct {
		name                               string
		rings, single, midRings, midSingle time.Duration
		readsNext                          bool
		above                              int64
	}{
		{"single faster at both", us(200), us(150), us(10), us(8), true, SingleCopyMidAbove},
		{"single faster at 128 KiB only", us(150), us(200), us(10), us(8), true, SingleCopyMidAbove},
		{"single faster at 2 MiB only", us(200), us(150), us(8), us(10), true, ringAbove},
		{"rings faster at both", us(150), us(200), us(8), us(10), true, SingleCopyOff},
		{"ties", us(150), us(150), us(8), us(8), true, SingleCopyOff},
		{"tie at 128 KiB, single faster at 2 MiB", us(200), us(150), us(8), us(8), true, ringAbove},
		{"next rank may not read", us(200), us(150), us(10), us(8), false, SingleCopyOff},
	} {
		p := Probe{Rings: c.rings, Single: c.single, MidRings: c.midRings, MidSingle: c.midSingle}
		p.choose(c.readsNext, ringAbove)
		if p.Above != c.above || p.Chose != (c.above != SingleCopyOff) {
			t.Errorf("%s: chose above %d (%t), want %d", c.name, p.Above, p.Chose, c.above)
		}
	}
}

// TestProbeAppliesItsChoice: what a probe chose is what the rank then
// does, whatever the machine measured: with the probe's medians set by
// hand, rank 0 sends 128 KiB and 2 MiB messages to rank 1 as single copies
// exactly where the choice says, and rank 1, whose next rank is rank 0,
// chooses and applies its own.
func TestProbeAppliesItsChoice(t *testing.T) {
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	defer func() { probeMeasuredForTest = nil }()
	for _, c := range []struct {
		name          string
		measured      Probe
		mid, large    bool // 128 KiB and 2 MiB messages copied once
		wantAboveMid  bool // the choice is SingleCopyMidAbove
		wantAboveRing bool // the choice is a ring's size
	}{
		{"single copies won at 128 KiB", Probe{Rings: us(200), Single: us(300), MidRings: us(10), MidSingle: us(5)}, true, true, true, false},
		{"single copies won at 2 MiB only", Probe{Rings: us(300), Single: us(200), MidRings: us(5), MidSingle: us(10)}, false, true, false, true},
		{"the rings won", Probe{Rings: us(200), Single: us(300), MidRings: us(5), MidSingle: us(10)}, false, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			probeMeasuredForTest = func(_ int, p *Probe) {
				p.Rings, p.Single, p.MidRings, p.MidSingle = c.measured.Rings, c.measured.Single, c.measured.MidRings, c.measured.MidSingle
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ms, err := connectLocal(ctx, 8, []Transport{SharedMemory, SharedMemory})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, m := range ms {
					m.Abort(nil)
				}
			}()
			if !ms[0].sharesWith(1) || !ms[0].readsMe[1] || !ms[1].readsMe[0] {
				t.Skip("ranks 0 and 1 do not share memory, or may not read each other's")
			}
			probes := probeEvery(t, ms)
			for r, p := range probes {
				if p == nil {
					t.Fatalf("rank %d did not probe", r)
				}
			}
			for r, m := range ms {
				peer := 1 - r
				p := probes[r]
				if got := p.Above == SingleCopyMidAbove; got != c.wantAboveMid {
					t.Errorf("rank %d chose above %d: want 64 KiB %t", r, p.Above, c.wantAboveMid)
				}
				if got := p.Above == m.ringAbove(); got != c.wantAboveRing {
					t.Errorf("rank %d chose above %d: want a ring's size (%d) %t", r, p.Above, m.ringAbove(), c.wantAboveRing)
				}
				if got := m.sendsAsGet(peer, midProbeBytes/8); got != c.mid {
					t.Errorf("rank %d sends 128 KiB as a single copy: %t, want %t", r, got, c.mid)
				}
				if got := m.sendsAsGet(peer, probeBytes/8); got != c.large {
					t.Errorf("rank %d sends 2 MiB as a single copy: %t, want %t", r, got, c.large)
				}
				if got := m.sendsAsGet(peer, 32<<10/8); got {
					t.Errorf("rank %d sends 32 KiB as a single copy", r)
				}
			}
		})
	}
}

// TestProbeFailsWhenAPeerGivesUp: rank 1 gives up in the middle of the
// probe, once rank 0 has turned single copies on for its call 1; rank 0
// gets an error with rank 1's reason, whether it reads the reason before
// or after a write to rank 1 fails (TestWriteFailureReportsThePeersReason),
// and single copies off, rather than a choice made from half a probe or
// the way of its last call.
func TestProbeFailsWhenAPeerGivesUp(t *testing.T) {
	ctx, ms := sharedMeshes(t)
	const reason = "rank 1 ran out of patience"
	rank0AtCall1 := make(chan int64, 1) // rank 0's single-copy size for call 1
	probeCallForTest = func(m *Mesh, call int) {
		switch {
		case call != 1:
		case m.rank == 0:
			rank0AtCall1 <- m.singleCopyAbove
		case m.rank == 1:
			select {
			case <-ctx.Done():
			case above := <-rank0AtCall1:
				rank0AtCall1 <- above
			}
			m.Abort(errors.New(reason))
		}
	}
	defer func() { probeCallForTest = nil }()
	for _, m := range ms {
		m.yield = false // as on a machine with a core for each rank
	}
	jobs := []Job{{Name: "with data", Bytes: 1 << 20, Data: func() ([][]uint64, error) { return nil, nil }}}
	probes, errs := make([]*Probe, 2), make([]error, 2)
	var wg sync.WaitGroup
	for rank, m := range ms {
		wg.Go(func() {
			r := NewRank(m)
			r.Timeout = 10 * time.Second
			if rank == 1 {
				// Once it has given up, it waits for nothing: its next
				// barrier fails when this runs out.
				r.Timeout = 2 * time.Second
			}
			probes[rank], errs[rank] = probeSingleCopy(r, jobs)
		})
	}
	wg.Wait()
	select {
	case above := <-rank0AtCall1:
		if above == SingleCopyOff {
			t.Fatal("rank 0 had single copies off in the probe's call 1: the test does not test their reset")
		}
	default:
		t.Fatalf("rank 0 never reached the probe's call 1: %v", errs[0])
	}
	var lost *PeerLostError
	if !errors.As(errs[0], &lost) || lost.Peer != 1 || lost.Rank != 0 || lost.GaveUp != reason {
		t.Fatalf("probe error %v; want rank 0's loss of rank 1, with rank 1's reason", errs[0])
	}
	if probes[0] != nil || ms[0].singleCopyAbove != SingleCopyOff {
		t.Errorf("after a failed probe: probe %+v, single copies above %d; want none and off", probes[0], ms[0].singleCopyAbove)
	}
}

// sharedMeshes connects two ranks in this process through shared memory
// and aborts them when the test ends; it skips where they cannot share
// memory. ctx bounds the test.
func sharedMeshes(t *testing.T) (ctx context.Context, ms []*Mesh) {
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	ms, err := connectLocal(ctx, 8, []Transport{SharedMemory, SharedMemory})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, m := range ms {
			m.Abort(nil)
		}
	})
	if !ms[0].sharesWith(1) {
		t.Skip("the two ranks do not share memory")
	}
	return ctx, ms
}

// TestProbeJSON: a probe that chose single copies gives the size above
// which it copies once; one that chose none leaves the size out rather
// than writing SingleCopyOff (9223372036854775807). Either reads back as
// it was (ranks report to rank 0 in JSON).
func TestProbeJSON(t *testing.T) {
	for _, c := range []struct {
		p    Probe
		want string
	}{
		{Probe{Rings: 1, Single: 2, MidRings: 3, MidSingle: 4, Above: SingleCopyOff},
			`{"rings_ns":1,"single_ns":2,"mid_rings_ns":3,"mid_single_ns":4,"single_copies":false}`},
		{Probe{Rings: 5, Single: 4, MidRings: 3, MidSingle: 2, Above: 65536, Chose: true},
			`{"rings_ns":5,"single_ns":4,"mid_rings_ns":3,"mid_single_ns":2,"single_copies":true,"single_copies_above":65536}`},
	} {
		got, err := json.Marshal(&c.p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%+v as JSON:\n got %s\nwant %s", c.p, got, c.want)
		}
		var back Probe
		if err := json.Unmarshal(got, &back); err != nil || back != c.p {
			t.Errorf("%s read back as %+v (%v), want %+v", got, back, err, c.p)
		}
	}
}
