package sim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
	"pgregory.net/rapid"
)

// hostsSchedule writes a GOAL schedule of ranks ranks in which rank 0
// sends to rank 1 from each CPU and NIC index of cpus and nics in turn,
// each send after a calc of 100 ns on its CPU, and rank 1 receives them
// on CPU recvCPU; the other ranks are empty.
func hostsSchedule(ranks int, cpus, nics []int, recvCPU int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "num_ranks %d\nrank 0 {\n", ranks)
	for i := range cpus {
		fmt.Fprintf(&b, "c%d: calc 100 cpu %d\ns%d: send 8b to 1 tag %d cpu %d nic %d\ns%d requires c%d\n", i, cpus[i], i, i, cpus[i], nics[i], i, i)
	}
	b.WriteString("}\nrank 1 {\n")
	for i := range cpus {
		fmt.Fprintf(&b, "r%d: recv 8b from 0 tag %d cpu %d\n", i, i, recvCPU)
	}
	b.WriteString("}\n")
	for r := 2; r < ranks; r++ {
		fmt.Fprintf(&b, "rank %d {\n}\n", r)
	}
	return b.String()
}

// A schedule's CPU and NIC indices are numbered densely for its run, so
// its clocks follow the indices it uses, not their values: one op on "cpu
// 65535 nic 65535" among 4,096 ranks makes two CPUs and two NICs (it had
// made 65,536 of each, 16 GB of clocks), and renaming a rank's CPUs and
// NICs one for one changes no finishing time (rapid: indices from a
// small set, renamed by a random injection into 0..65535).
func TestGOALCPUAndNICIndicesAreNumberedDensely(t *testing.T) {
	g, err := sim.ParseGOAL(strings.NewReader(hostsSchedule(4096, []int{65535}, []int{65535}, 0)), "sparse.goal")
	if err != nil {
		t.Fatal(err)
	}
	if g.CPUs != 2 || g.NICs != 2 {
		t.Fatalf("one op on cpu 65535 and nic 65535: %d CPUs and %d NICs, want 2 and 2", g.CPUs, g.NICs)
	}
	// CPUs and NICs are numbered apart: cpu 5 and nic 6 make two of each.
	if g, err := sim.ParseGOAL(strings.NewReader(hostsSchedule(2, []int{5}, []int{6}, 0)), "apart.goal"); err != nil || g.CPUs != 2 || g.NICs != 2 {
		t.Fatalf("cpu 5, nic 6: %v CPUs and NICs (%v), want 2 and 2", g, err)
	}
	lg := sim.DefaultLogGOPS
	// Calcs of 100 ns without dependencies: on distinct CPUs at once, on
	// one CPU one after another (by hand).
	for src, want := range map[string]sim.Time{
		"a: calc 100 cpu 7\nb: calc 100\nc: calc 100 cpu 65535\n":   100 * sim.Nanosecond,
		"a: calc 100 cpu 7\nb: calc 100 cpu 7\nc: calc 100 cpu 3\n": 200 * sim.Nanosecond,
		"a: calc 100 cpu 9\nb: calc 100 cpu 9\nc: calc 100 cpu 9\n": 300 * sim.Nanosecond,
	} {
		g, err := sim.ParseGOAL(strings.NewReader("num_ranks 1\nrank 0 {\n"+src+"}\n"), "c.goal")
		if err != nil {
			t.Fatal(err)
		}
		res, err := g.RunLogGOPS(lg, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Finish[0] != want {
			t.Errorf("%q: finishes at %v, want %v", src, res.Finish[0], want)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(rt, "sends")
		cpus := rapid.SliceOfN(rapid.IntRange(0, 3), n, n).Draw(rt, "cpus")
		nics := rapid.SliceOfN(rapid.IntRange(0, 3), n, n).Draw(rt, "nics")
		recvCPU := rapid.IntRange(0, 3).Draw(rt, "recv cpu")
		rename := func(label string) func(int) int {
			to := rapid.SliceOfNDistinct(rapid.IntRange(0, 65535), 4, 4, rapid.ID[int]).Draw(rt, label)
			return func(i int) int { return to[i] }
		}
		cpuTo, nicTo := rename("cpu names"), rename("nic names")
		renamed := func(idx []int, to func(int) int) []int {
			out := make([]int, len(idx))
			for i, v := range idx {
				out[i] = to(v)
			}
			return out
		}
		var finish [2][]sim.Time
		for k, src := range []string{
			hostsSchedule(3, cpus, nics, recvCPU),
			hostsSchedule(3, renamed(cpus, cpuTo), renamed(nics, nicTo), cpuTo(recvCPU)),
		} {
			g, err := sim.ParseGOAL(strings.NewReader(src), "h.goal")
			if err != nil {
				rt.Fatal(err)
			}
			res, err := g.RunLogGOPS(lg, nil, 1)
			if err != nil {
				rt.Fatal(err)
			}
			plain, err := sim.Execute(sim.New(1), g.Schedule("h"), sim.Config{LogGOPS: &lg})
			if err != nil {
				rt.Fatal(err)
			}
			if fmt.Sprint(plain.Finish) != fmt.Sprint(res.Finish) {
				rt.Fatalf("RunLogGOPS finishes at %v, Execute at %v", res.Finish, plain.Finish)
			}
			finish[k] = res.Finish
		}
		if fmt.Sprint(finish[0]) != fmt.Sprint(finish[1]) {
			rt.Fatalf("renamed CPUs and NICs finish at %v, against %v", finish[1], finish[0])
		}
	})
}

// A schedule whose clocks (ranks times distinct CPU or NIC indices) would
// pass the bound is refused at the option that passes it, by file, line
// and column, with what to change.
func TestGOALTooManyHostClocks(t *testing.T) {
	defer sim.SetMaxHostSlots(8)()
	for _, c := range []struct {
		src, want string
	}{
		{hostsSchedule(4, []int{1, 2}, []int{0, 0}, 0), "m.goal:6:14: cpu 2 makes 3 distinct cpu indices in a schedule of 4 ranks: a run keeps a clock for each cpu of each rank, 12 in all, more than the 8 it allows"},
		{hostsSchedule(4, []int{0, 0}, []int{7, 9}, 0), "m.goal:7:30: nic 9 makes 3 distinct nic indices"},
	} {
		_, err := sim.ParseGOAL(strings.NewReader(c.src), "m.goal")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if _, err := sim.ParseGOAL(strings.NewReader(hostsSchedule(4, []int{1, 1}, []int{0, 0}, 0)), "m.goal"); err != nil {
		t.Errorf("two CPUs on 4 ranks, 8 clocks: %v", err)
	}
}
