package realrun_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

// TestProbeSingleCopy: under SingleCopyAuto each rank times 2 MiB
// exchanges with its neighbours both ways (the probe checks every
// exchange's data) and sends messages too large for a ring as single
// copies exactly when copying once was faster for it; the probe's own
// copies are not counted. A later 2 MiB shift then copies once into
// exactly the ranks whose previous rank chose so. Over rings only (the
// ranks may not read each other's memory) no rank chooses single copies;
// ranks that share memory with neither neighbour (TCP), or that outnumber
// the cores, or have no data, exchange nothing and report no probe.
func TestProbeSingleCopy(t *testing.T) {
	const words = 2 << 20 / 8
	shift := func(size int) realrun.Job {
		progs := make([]sim.Program, size)
		for r := range progs {
			progs[r] = sim.Program{
				{Kind: sim.OpRecv, Peer: int32((r + size - 1) % size), Bytes: 8 * words, Data: sim.Region{Buf: 1, Count: words}},
				{Kind: sim.OpSend, Peer: int32((r + 1) % size), Bytes: 8 * words, Data: sim.Region{Count: words}},
			}
		}
		return realrun.Job{Name: "shift", Schedule: sim.FromPrograms("shift", progs, 1), Data: func() ([][]uint64, error) {
			return [][]uint64{make([]uint64, words), make([]uint64, words)}, nil
		}}
	}
	for _, tc := range []struct {
		via  realrun.Transport
		size int
	}{{realrun.SharedMemory, 2}, {realrun.SharedMemory, 3}, {realrun.SharedMemoryRings, 2}, {realrun.TCP, 2}} {
		t.Run(fmt.Sprintf("%v/np=%d", tc.via, tc.size), func(t *testing.T) {
			probes := make([]*realrun.Probe, tc.size)
			copies := make([]int64, tc.size)
			yields := make([]bool, tc.size)
			errs := runLocal(t, tc.size, tc.via, func(r *realrun.Rank, rank int) error {
				if p, err := r.ProbeSingleCopy([]realrun.Job{{Name: "no data"}}); p != nil || err != nil {
					return fmt.Errorf("rank %d probed without data: %+v, %v", rank, p, err)
				}
				p, err := r.ProbeSingleCopy([]realrun.Job{shift(tc.size)})
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
				if _, err := realrun.Bench(r, []realrun.Job{shift(tc.size)}, 0, 1, false, nil); err != nil {
					return err
				}
				copies[rank] = m.SingleCopies()
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
					if copies[rank] != 0 {
						t.Errorf("rank %d probed nothing, yet copied %d messages once", rank, copies[rank])
					}
					continue
				}
				want := p.Single < p.Rings && tc.via != realrun.SharedMemoryRings
				if p.Rings <= 0 || p.Single <= 0 || p.Chose != want {
					t.Errorf("rank %d: rings %v, copied once %v: chose single copies %t, want %t", rank, p.Rings, p.Single, p.Chose, want)
				}
				prev := probes[(rank+tc.size-1)%tc.size]
				if wantCopies := map[bool]int64{true: 1}[prev != nil && prev.Chose]; copies[rank] != wantCopies {
					t.Errorf("rank %d copied %d messages once in the shift, want %d (its previous rank chose single copies: %+v)", rank, copies[rank], wantCopies, prev)
				}
			}
		})
	}
}
