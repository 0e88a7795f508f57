package collectives_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

// heapChildren are relative rank v's children in the binary tree of p
// ranks numbered heap-wise, as the transcriptions below build it from the
// C code's tree_next (independently of collsim's treeOf).
func heapChildren(v, p int) []int {
	var children []int
	for _, c := range []int{2*v + 1, 2*v + 2} {
		if c < p {
			children = append(children, c)
		}
	}
	return children
}

// openMPIGenericBcast writes, rank by rank, the program that Open MPI's
// ompi_coll_base_bcast_intra_generic runs on the binary tree of relative
// ranks (children 2v+1, 2v+2), transcribed from its loops rather than from
// collsim's stepper: the root sends each segment to its children and
// waits for those sends; a rank with a parent posts segment 0's receive,
// then for each later segment posts its receive, waits for the one before,
// sends that one to its children and waits for the sends; a leaf posts
// segment j's receive and waits for segment j-1's. The waits become
// dependencies: an op after a wait depends on what was waited for.
func openMPIGenericBcast(p, root int, count, seg int64) []sim.Program {
	nseg := max(int((count+seg-1)/seg), 1)
	bytes := func(k int) int64 { return 8 * (min(count, int64(k+1)*seg) - int64(k)*seg) }
	progs := make([]sim.Program, p)
	for r := range p {
		v := (r - root + p) % p
		abs := func(x int) int32 { return int32((x + root) % p) }
		children := heapChildren(v, p)
		var prog sim.Program
		add := func(op sim.Op) int32 { prog = append(prog, op); return int32(len(prog) - 1) }
		recvs := make([]int32, nseg)
		sends := make([][]int32, nseg)
		sendSeg := func(k int, after []int32) {
			for _, c := range children {
				sends[k] = append(sends[k], add(sim.Op{Kind: sim.OpSend, Peer: abs(c), Tag: int32(k), Bytes: bytes(k), After: slices.Clone(after)}))
			}
		}
		switch {
		case p == 1:
		case v == 0:
			for k := range nseg {
				var after []int32
				if k > 0 {
					after = sends[k-1] // the waitall of the segment before
				}
				sendSeg(k, after)
			}
		default:
			parent := abs((v - 1) / 2)
			recv := func(k int, after []int32) {
				recvs[k] = add(sim.Op{Kind: sim.OpRecv, Peer: parent, Tag: int32(k), Bytes: bytes(k), After: slices.Clone(after)})
			}
			recv(0, nil)
			// waited holds everything waited for so far: a later op
			// depends on all of it.
			var waited []int32
			for k := 1; k <= nseg; k++ {
				if k < nseg {
					recv(k, waited)
				}
				waited = append(waited, recvs[k-1]) // wait for segment k-1
				if len(children) > 0 {
					sendSeg(k-1, waited)
					waited = append(waited, sends[k-1]...) // waitall
				}
			}
		}
		progs[r] = prog
	}
	return progs
}

// bcast/pipelined_binary paces its segments as Open MPI's generic tree
// pipeline does: the same times rank by rank as the transcription above,
// eager and rendezvous segments, with a CPU overhead per message (which
// makes the pacing show), on many rank counts, roots and segment counts,
// on the analytic network and on the flow network, where a parent's two
// sends share its link.
func TestPipelinedBinaryIsOpenMPIGeneric(t *testing.T) {
	sameAsTranscription(t, collectives.Bcast, sim.HostParams{Overhead: 2 * sim.Microsecond, EagerLimit: 64 << 10}, openMPIGenericBcast)
}

// sameAsTranscription runs c's pipelined_binary and the transcription of
// Open MPI's loops (transcribe: ranks, root, count, segment) on 7 rank
// counts and 6 segmentings, eager and rendezvous segments, on the
// analytic and the flow network, with and without OS noise, and compares
// the ranks' finish times.
func sameAsTranscription(t *testing.T, c collectives.Collective, host sim.HostParams, transcribe func(p, root int, count, seg int64) []sim.Program) {
	t.Helper()
	alg, err := collectives.Lookup(c, "pipelined_binary")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2, 3, 5, 8, 13, 31} {
		for _, c := range []struct{ count, seg int64 }{{1, 1}, {8192, 8192}, {8192 * 3, 8192}, {100000, 8192}, {100000, 16384}, {7, 2}} {
			root := p / 3
			s, err := alg.Build(collectives.Params{Ranks: p, Count: c.count, Segment: c.seg, Root: root})
			if err != nil {
				t.Fatal(err)
			}
			// With OS noise too: the receives' posting then decides when
			// segments move (without it, posting a receive a step early
			// changed nothing these runs could see).
			noise, err := sim.PeriodicNoise(7*sim.Microsecond, 3*sim.Microsecond)
			if err != nil {
				t.Fatal(err)
			}
			for name, cfg := range map[string]sim.Config{
				"analytic":        {Network: crossbarNet(t, p), Host: host},
				"flow":            {Network: crossbarFlow(t, p), Host: host},
				"analytic, noisy": {Network: crossbarNet(t, p), Host: host, Noise: noise},
				"flow, noisy":     {Network: crossbarFlow(t, p), Host: host, Noise: noise},
			} {
				got, err := sim.Execute(sim.New(1), s, cfg)
				if err != nil {
					t.Fatal(err)
				}
				want, err := sim.Execute(sim.New(1), sim.FromPrograms("generic", transcribe(p, root, c.count, c.seg), 1), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Finish, want.Finish) {
					t.Errorf("%s, p %d, %d elements in segments of %d: ranks finish at %v, Open MPI's loops at %v", name, p, c.count, c.seg, got.Finish, want.Finish)
				}
			}
		}
	}
}

// openMPIGenericReduce writes the programs of Open MPI's
// ompi_coll_base_reduce_generic on the binary tree (children 2v+1, 2v+2),
// commutative, no limit on outstanding requests, transcribed from its
// loops: a rank with children runs, for each segment up to one past the
// last and each child, "post the receive of this (segment, child) unless
// past the last segment; wait for the receive posted before; if the child
// is not the first, reduce that receive into this segment; else, past the
// first segment, reduce it into the segment before and send that segment
// to the parent (blocking), and stop after the last"; a leaf sends its
// segments with blocking sends. (Child 0's segment goes straight into the
// accumulator there and the rank's own data is reduced in instead: the
// same reductions, one a child.) Every op waits for all that was waited
// for before it.
func openMPIGenericReduce(p, root int, count, seg int64, elem int64) []sim.Program {
	nseg := max(int((count+seg-1)/seg), 1)
	elems := func(k int) int64 { return min(count, int64(k+1)*seg) - int64(k)*seg }
	progs := make([]sim.Program, p)
	for r := range p {
		v := (r - root + p) % p
		abs := func(x int) int32 { return int32((x + root) % p) }
		children := heapChildren(v, p)
		var prog sim.Program
		add := func(op sim.Op, after []int32) int32 {
			op.After = slices.Clone(after)
			prog = append(prog, op)
			return int32(len(prog) - 1)
		}
		var waited []int32
		switch {
		case p == 1:
		case len(children) == 0:
			for k := range nseg {
				waited = append(waited, add(sim.Op{Kind: sim.OpSend, Peer: abs((v - 1) / 2), Tag: int32(k), Bytes: elem * elems(k)}, waited))
			}
		default:
			prev := int32(-1)
		segments:
			for k := 0; k <= nseg; k++ {
				for i, c := range children {
					var posted int32 = -1
					if k < nseg {
						posted = add(sim.Op{Kind: sim.OpRecv, Peer: abs(c), Tag: int32(k), Bytes: elem * elems(k)}, waited)
					}
					if prev >= 0 {
						waited = append(waited, prev)
					}
					reduce := func(k int) {
						waited = append(waited, add(sim.Op{Kind: sim.OpCalc, Reduce: true, Bytes: elem * elems(k)}, waited))
					}
					switch {
					case i > 0:
						reduce(k)
					case k > 0:
						reduce(k - 1)
						if v != 0 {
							waited = append(waited, add(sim.Op{Kind: sim.OpSend, Peer: abs((v - 1) / 2), Tag: int32(k - 1), Bytes: elem * elems(k-1)}, waited))
						}
						if k == nseg {
							break segments
						}
					}
					prev = posted
				}
			}
		}
		progs[r] = prog
	}
	return progs
}

// reduce/pipelined_binary runs Open MPI's generic reduce as transcribed
// above: the same finish times rank by rank, eager and rendezvous
// segments, with a CPU overhead per message and a reduction cost, on the
// analytic and the flow network.
func TestPipelinedReduceIsOpenMPIGeneric(t *testing.T) {
	transcribe := func(p, root int, count, seg int64) []sim.Program { return openMPIGenericReduce(p, root, count, seg, 8) }
	sameAsTranscription(t, collectives.Reduce, sim.HostParams{Overhead: 2 * sim.Microsecond, EagerLimit: 64 << 10, ReducePsPerByte: 100}, transcribe)
}

// The two-level algorithms cannot give an inner reduce buffers of its
// own: with --intra pipelined_binary they refuse, naming what to use
// (hierarchical's reduce sent its receives to a buffer no rank had).
func TestTwoLevelRefusesPipelinedBinary(t *testing.T) {
	for _, name := range []string{"hierarchical", "smp"} {
		a, err := collectives.Lookup(collectives.Allreduce, name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Build(collectives.Params{Ranks: 8, Count: 1 << 17, NodeSize: 4, Intra: "pipelined_binary"})
		if err == nil || !strings.Contains(err.Error(), "use binomial") {
			t.Errorf("%s with --intra pipelined_binary: %v, want a refusal naming what to use", name, err)
		}
	}
}
