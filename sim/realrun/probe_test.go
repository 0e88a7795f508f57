package realrun_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

// TestProbeSingleCopy: under SingleCopyAuto each rank times 2 MiB and
// 128 KiB exchanges with its neighbours both ways (the probe checks every
// exchange's data) and sends messages as single copies above 64 KiB
// exactly when copying once was faster for it at 128 KiB, else above a
// ring's size when it was faster at 2 MiB, else none; the probe's own
// copies are not counted. A later 2 MiB shift then copies once into
// exactly the ranks whose previous rank chose either, and a 128 KiB shift
// into those whose previous rank chose 64 KiB. Over rings only (the ranks
// may not read each other's memory) no rank chooses single copies; ranks
// that share memory with neither neighbour (TCP), or that outnumber the
// cores, or have no data, exchange nothing and report no probe.
func TestProbeSingleCopy(t *testing.T) {
	const big, mid = 2 << 20 / 8, 128 << 10 / 8 // elements
	shift := func(size int, words int64) realrun.Job {
		progs := make([]sim.Program, size)
		for r := range progs {
			progs[r] = sim.Program{
				{Kind: sim.OpRecv, Peer: int32((r + size - 1) % size), Bytes: 8 * words, Data: sim.Region{Buf: 1, Count: words}},
				{Kind: sim.OpSend, Peer: int32((r + 1) % size), Bytes: 8 * words, Data: sim.Region{Count: words}},
			}
		}
		return realrun.Job{Name: "shift", Bytes: 8 * words, Schedule: sim.FromPrograms("shift", progs, 1), Data: func() ([][]uint64, error) {
			return [][]uint64{make([]uint64, words), make([]uint64, words)}, nil
		}}
	}
	for _, tc := range []struct {
		via  realrun.Transport
		size int
	}{{realrun.SharedMemory, 2}, {realrun.SharedMemory, 3}, {realrun.SharedMemoryRings, 2}, {realrun.TCP, 2}} {
		t.Run(fmt.Sprintf("%v/np=%d", tc.via, tc.size), func(t *testing.T) {
			probes := make([]*realrun.Probe, tc.size)
			copies := make([][2]int64, tc.size) // after the 2 MiB shift, after the 128 KiB one
			yields := make([]bool, tc.size)
			errs := runLocal(t, tc.size, tc.via, func(r *realrun.Rank, rank int) error {
				if p, err := r.ProbeSingleCopy([]realrun.Job{{Name: "no data", Bytes: 8 * big}}); p != nil || err != nil {
					return fmt.Errorf("rank %d probed without data: %+v, %v", rank, p, err)
				}
				barrier := realrun.Job{Name: "barrier", Data: func() ([][]uint64, error) { return nil, nil }}
				if p, err := r.ProbeSingleCopy([]realrun.Job{barrier}); p != nil || err != nil {
					return fmt.Errorf("rank %d probed before a call of no bytes: %+v, %v", rank, p, err)
				}
				p, err := r.ProbeSingleCopy([]realrun.Job{shift(tc.size, big)})
				if err != nil {
					return err
				}
				probes[rank] = p
				m := r.Mesh()
				yields[rank] = m.Yields()
				if n := m.SingleCopies(); n != 0 {
					return fmt.Errorf("rank %d: %d single copies counted after the probe, want its own not counted", rank, n)
				}
				if chose, peers := p != nil && p.Chose, m.SingleCopyPeers(); chose != (peers > 0) {
					return fmt.Errorf("rank %d: chose single copies %t, but sends them to %d peers", rank, chose, peers)
				}
				for i, words := range []int64{big, mid} {
					if _, err := realrun.Bench(r, []realrun.Job{shift(tc.size, words)}, 0, 1, false, nil); err != nil {
						return err
					}
					copies[rank][i] = m.SingleCopies()
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			for rank, p := range probes {
				if probed := tc.via != realrun.TCP && !yields[rank]; (p != nil) != probed {
					t.Fatalf("rank %d (%d ranks on %d cores): probe %+v, want one: %t", rank, tc.size, runtime.NumCPU(), p, probed)
				}
				if p == nil {
					if copies[rank] != [2]int64{} {
						t.Errorf("rank %d probed nothing, yet copied messages once: %v", rank, copies[rank])
					}
					continue
				}
				if p.Rings <= 0 || p.Single <= 0 || p.MidRings <= 0 || p.MidSingle <= 0 {
					t.Errorf("rank %d: probe times %+v, want all above 0", rank, p)
				}
				chosen := "none"
				switch {
				case p.Above == realrun.SingleCopyMidAbove:
					chosen = "mid"
				case p.Above > 64<<10 && p.Above <= 1<<20:
					chosen = "ring"
				case p.Above != realrun.SingleCopyOff:
					t.Errorf("rank %d: single copies above %d bytes: neither 64 KiB nor a ring's size", rank, p.Above)
				}
				want := "none"
				switch {
				case tc.via == realrun.SharedMemoryRings:
				case p.MidSingle < p.MidRings:
					want = "mid"
				case p.Single < p.Rings:
					want = "ring"
				}
				if chosen != want || p.Chose != (want != "none") {
					t.Errorf("rank %d: 2 MiB %v through the rings, %v copied once; 128 KiB %v, %v: chose %s (%t), want %s", rank, p.Rings, p.Single, p.MidRings, p.MidSingle, chosen, p.Chose, want)
				}
				prev := probes[(rank+tc.size-1)%tc.size]
				var wantCopies [2]int64
				if prev != nil && prev.Chose {
					wantCopies = [2]int64{1, 1}
				}
				if prev != nil && prev.Above == realrun.SingleCopyMidAbove {
					wantCopies[1] = 2
				}
				if copies[rank] != wantCopies {
					t.Errorf("rank %d copied %v messages once after the 2 MiB and the 128 KiB shifts, want %v (its previous rank's probe: %+v)", rank, copies[rank], wantCopies, prev)
				}
			}
		})
	}
}
