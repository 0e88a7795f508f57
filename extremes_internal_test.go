package collsim

import (
	"testing"

	"github.com/collsim/collsim/sim"
)

// TestExtremesNamesTheLargest: a run past the clock's limit names the
// schedule's longest compute step and largest message, wherever they are
// in a rank's program and whichever rank has them (the workload test's
// messages were all one size, which told largest from any other apart).
func TestExtremesNamesTheLargest(t *testing.T) {
	progs := []sim.Program{
		{{Kind: sim.OpSend, Peer: 1, Bytes: 8}, {Kind: sim.OpCalc, Dur: 3 * sim.Microsecond}, {Kind: sim.OpSend, Peer: 2, Bytes: 100}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: 8}, {Kind: sim.OpCalc, Dur: 5 * sim.Microsecond}, {Kind: sim.OpSend, Peer: 2, Bytes: 50}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: 100}, {Kind: sim.OpRecv, Peer: 1, Bytes: 50}, {Kind: sim.OpSend, Peer: 0, Bytes: 4096}, {Kind: sim.OpCalc, Dur: 1 * sim.Microsecond}},
	}
	progs[0] = append(progs[0], sim.Op{Kind: sim.OpRecv, Peer: 2, Bytes: 4096})
	got := extremes(sim.FromPrograms("x", progs, 1))
	if want := "; its longest compute step is 5µs, on rank 1, and its largest message 4KiB, from rank 2"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := extremes(sim.FromPrograms("none", []sim.Program{{}, {}}, 1)); got != "" {
		t.Errorf("no ops: %q", got)
	}
}
