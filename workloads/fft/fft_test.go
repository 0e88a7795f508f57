package fft_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/fft"
)

// id names grid point (x, y, z): the element every rank's buffers must
// carry to the right place.
func id(nx, ny, x, y, z int) uint64 { return uint64((z*ny+y)*nx+x) + 1 }

// owner returns, by the definitions in the package doc (not the
// package's code), the rank that holds point (x, y, z) in a stage and the
// point's offset in that rank's storage: X-pencils store x fastest, then
// z, then y; Y-pencils y, z, x; Z-pencils z, y, x.
func owner(j *fft.Job, stage, x, y, z int) (rank int, off int64) {
	bx, by, bz := j.Nx/j.Pr, j.Ny/j.Pr, j.Nz/j.Pc
	var r, c int
	var idx [3]int // offsets within the box, in storage order, innermost first
	var ext [3]int
	switch stage {
	case 0:
		r, c = y/by, z/bz
		idx, ext = [3]int{x, z % bz, y % by}, [3]int{j.Nx, bz, by}
	case 1:
		bx := j.Nx / j.Pr
		r, c = x/bx, z/bz
		idx, ext = [3]int{y, z % bz, x % bx}, [3]int{j.Ny, bz, bx}
	default:
		byc := j.Ny / j.Pc
		r, c = x/bx, y/byc
		idx, ext = [3]int{z, y % byc, x % bx}, [3]int{j.Nz, byc, bx}
	}
	rank = r*j.Pc + c
	if j.Aligned {
		rank = c*j.Pr + r
	}
	return rank, int64(idx[0]) + int64(ext[0])*(int64(idx[1])+int64(ext[1])*int64(idx[2]))
}

// TestTransposesMoveEveryElement runs the FFT's transposes with real data
// and checks that every point ends where the decomposition says, forward
// and after a round trip, for slabs and pencils, several alltoall
// algorithms, both rank orders, under random message delays.
func TestTransposesMoveEveryElement(t *testing.T) {
	grids := []struct{ nx, ny, nz, pr, pc int }{
		{1, 1, 1, 1, 1}, {4, 4, 4, 2, 2}, {8, 4, 6, 2, 2}, {6, 6, 5, 3, 1}, {12, 6, 4, 3, 2}, {10, 10, 7, 5, 1}, {4, 6, 9, 2, 3},
	}
	algs := []string{"pairwise", "linear", "bruck", "ompi", "mpich"}
	for gi, g := range grids {
		for _, round := range []bool{false, true} {
			for _, aligned := range []bool{false, true} {
				alg := algs[(gi+btoi(round)+2*btoi(aligned))%len(algs)]
				j := &fft.Job{Nx: g.nx, Ny: g.ny, Nz: g.nz, Pr: g.pr, Pc: g.pc, RoundTrip: round, Aligned: aligned,
					FLOPs: 1e9, Pack: "device", PackRate: 1e9, Alltoall: alg, Data: true}
				t.Run(fmt.Sprintf("%dx%dx%d/%dx%d/%s/round=%v/aligned=%v", g.nx, g.ny, g.nz, g.pr, g.pc, alg, round, aligned), func(t *testing.T) {
					check(t, j)
				})
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func check(t *testing.T, j *fft.Job) {
	comp, err := j.Composition()
	if err != nil {
		t.Fatal(err)
	}
	p := j.Ranks()
	bufs := make([][][]uint64, p)
	for r := range bufs {
		for _, n := range comp.Buffers(r) {
			bufs[r] = append(bufs[r], make([]uint64, n))
		}
	}
	for z := range j.Nz {
		for y := range j.Ny {
			for x := range j.Nx {
				r, off := owner(j, 0, x, y, z)
				bufs[r][0][off] = id(j.Nx, j.Ny, x, y, z)
			}
		}
	}
	s := comp.Schedule()
	if _, err := sim.Execute(sim.New(3), s, sim.Config{Network: sim.RandomLatency(5 * sim.Microsecond), Data: bufs}); err != nil {
		t.Fatal(err)
	}
	final := 2
	if j.Pc == 1 {
		final = 1
	}
	if j.RoundTrip {
		final = 0
	}
	for z := range j.Nz {
		for y := range j.Ny {
			for x := range j.Nx {
				r, off := owner(j, final, x, y, z)
				if got, want := bufs[r][0][off], id(j.Nx, j.Ny, x, y, z); got != want {
					t.Fatalf("point (%d,%d,%d) should be at rank %d offset %d in stage %d: found %d, want %d", x, y, z, r, off, final, got, want)
				}
			}
		}
	}
}

// TestComputeCost: with free communication (zero-delay network), the run
// is the 1D FFTs at the FLOP rate plus packing and unpacking, counted by
// hand for a 16^3 pencil on 2 x 2 ranks.
func TestComputeCost(t *testing.T) {
	j := &fft.Job{Nx: 16, Ny: 16, Nz: 16, Pr: 2, Pc: 2, FLOPs: 1e9, Pack: "device", PackRate: 1e9, Alltoall: "pairwise"}
	comp, err := j.Composition()
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.FixedLatency(0)})
	if err != nil {
		t.Fatal(err)
	}
	// Three passes of 16^3/16 = 256 lines of 16 points per rank... per rank
	// 16^3/4 = 1024 points: 64 lines of 16, 5*16*4 = 320 FLOPs a line.
	fftTime := 3 * 64 * 320 / 1e9
	// Two transposes, each packing and unpacking 1024 points of 8 bytes at 1 GB/s.
	packTime := 2 * 2 * 1024 * 8 / 1e9
	want := sim.FromSeconds(fftTime + packTime)
	if d := math.Abs(float64(res.Makespan - want)); d > 4 { // picosecond rounding of six costs
		t.Errorf("%v, want %v", res.Makespan, want)
	}
}

func TestRefusals(t *testing.T) {
	for _, j := range []fft.Job{
		{Nx: 10, Ny: 8, Nz: 8, Pr: 4, Pc: 1, FLOPs: 1, Pack: "device", PackRate: 1},
		{Nx: 8, Ny: 8, Nz: 9, Pr: 2, Pc: 2, FLOPs: 1, Pack: "device", PackRate: 1},
		{Nx: 8, Ny: 8, Nz: 8, Pr: 2, Pc: 2, FLOPs: 1, Pack: "host"},
		{Nx: 8, Ny: 8, Nz: 8, Pr: 2, Pc: 2, Pack: "device", PackRate: 1},
	} {
		if err := j.Check(); err == nil {
			t.Errorf("%+v accepted", j)
		}
	}
}

// Hierarchical alltoalls on the transposes' sub-communicators: each
// communicator sees the machine's nodes and groups through its members
// (collectives.SubHierarchy), and the data still lands right.
func TestTransposesWithHierarchicalAlltoalls(t *testing.T) {
	for _, alg := range []string{"two_level", "group_aligned"} {
		for _, aligned := range []bool{false, true} {
			j := &fft.Job{Nx: 8, Ny: 8, Nz: 8, Pr: 4, Pc: 4, FLOPs: 1e9, Pack: "device", PackRate: 1e9, Alltoall: alg,
				Aligned: aligned, NodeSize: 2, GroupSize: 2, Data: true, RoundTrip: aligned}
			t.Run(fmt.Sprintf("%s/aligned=%v", alg, aligned), func(t *testing.T) { check(t, j) })
		}
	}
}
