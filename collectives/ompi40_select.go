package collectives

import (
	"errors"
	"fmt"
)

// Open MPI 4.0's choices, as Open MPI 4.0.7 makes them (open-mpi/ompi tag
// v4.0.7, commit 2cd8864b723a6c0a0d632844f5478562461f87a6; the decision
// functions are the same in every release from 4.0.2 on, and 4.0.0 and
// 4.0.1 choose the same with the default parameters).
//
// Before 4.1 replaced them with tables, coll/tuned's fixed decisions were
// hand-written rules: ompi_coll_tuned_<collective>_intra_dec_fixed in
// ompi/mca/coll/tuned/coll_tuned_decision_fixed.c test the message size
// (and for bcast and reduce lines fitted to measurements) and call the
// coll/base functions directly, passing the segmented ones a segment size
// of their own (4.1 passes 0). What those functions then run, with their
// own fallbacks, is ompiRun's, given that segment size; the alltoall's
// thresholds are coll/tuned's MCA defaults (coll_tuned_component.c:
// alltoall_small_msg 200, alltoall_intermediate_msg 3000; the linear_sync
// branch needs alltoall_min_procs, 0 by default, and never fires). Open MPI
// 4.0 has no coll/han; coll/tuned (priority 30) runs every collective on
// two ranks or more. Collsim's data are sums of a built-in type, a
// commutative operation, so the commutative branches apply.

// ompi40Step is the branch Open MPI 4.0's decision function takes: the
// condition that held, the coll/tuned number of the coll/base function it
// calls and the segment size it passes that function (bytes; 0 for none).
type ompi40Step struct {
	why string
	alg int
	seg int64
}

// ompi40Bytes is the message size by which Open MPI 4.0 decides for c, and
// what it measures: the vector for allreduce, bcast and reduce; for
// allgather the whole gathered vector (scount x size, where 4.1 takes one
// rank's block); for alltoall the bytes per pair; for reduce_scatter the
// sum of the receive counts; for gather and scatter one rank's block.
func ompi40Bytes(c Collective, p Params) (bytes int64, measure string) {
	if c == Allgather {
		return p.SizeBytes(c), "bytes in all"
	}
	return OmpiMessageBytes(c, p)
}

// fitted is a line a x bytes + b of the bcast and reduce rules. The
// product is rounded before the sum (the explicit conversion), so Go does
// not fuse them into one operation and the boundary is the same on every
// architecture.
func fitted(a, b float64, bytes int64) float64 {
	return float64(a*float64(bytes)) + b
}

// ompi40Decide is the branch ompi_coll_tuned_<c>_intra_dec_fixed
// (coll_tuned_decision_fixed.c, v4.0.7) takes for p.
func ompi40Decide(c Collective, p Params) (ompi40Step, error) {
	ranks, n := p.Ranks, p.Count
	bytes, _ := ompi40Bytes(c, p)
	fr := float64(ranks)
	switch c {
	case Allreduce:
		// intermediate_message 10000; segment_size 1 MiB.
		switch {
		case bytes < 10000:
			return ompi40Step{"under 10000 B", 3, 0}, nil
		case n > int64(ranks) && int64(ranks)<<20 >= bytes:
			return ompi40Step{fmt.Sprintf("10000 B or more, count %d > %d ranks, %d ranks x 1 MiB >= %d B", n, ranks, ranks, bytes), 4, 0}, nil
		case n > int64(ranks):
			return ompi40Step{fmt.Sprintf("10000 B or more, count %d > %d ranks, %d ranks x 1 MiB < %d B", n, ranks, ranks, bytes), 5, 1 << 20}, nil
		}
		return ompi40Step{fmt.Sprintf("10000 B or more, count %d <= %d ranks", n, ranks), 2, 0}, nil
	case Bcast:
		// small_message_size 2048, intermediate_message_size 370728, and
		// three lines ranks = a x bytes + b fitted to measurements.
		const (
			ap16, bp16   = 3.2118e-6, 8.7936
			ap64, bp64   = 2.3679e-6, 1.1787
			ap128, bp128 = 1.6134e-6, 2.1102
		)
		switch {
		case bytes < 2048 || n <= 1:
			return ompi40Step{"under 2048 B or at most 1 element", 6, 0}, nil
		case bytes < 370728:
			return ompi40Step{"2048 B to 370727 B", 4, 1024}, nil
		case fr < fitted(ap128, bp128, bytes):
			return ompi40Step{fmt.Sprintf("370728 B or more, %d ranks < 1.6134e-6 x %d + 2.1102 = %.6g", ranks, bytes, fitted(ap128, bp128, bytes)), 3, 128 << 10}, nil
		case ranks < 13:
			return ompi40Step{fmt.Sprintf("370728 B or more, %d ranks >= 1.6134e-6 x %d + 2.1102 = %.6g, fewer than 13 ranks", ranks, bytes, fitted(ap128, bp128, bytes)), 4, 8 << 10}, nil
		case fr < fitted(ap64, bp64, bytes):
			return ompi40Step{fmt.Sprintf("370728 B or more, 13 ranks or more, %d ranks < 2.3679e-6 x %d + 1.1787 = %.6g", ranks, bytes, fitted(ap64, bp64, bytes)), 3, 64 << 10}, nil
		case fr < fitted(ap16, bp16, bytes):
			return ompi40Step{fmt.Sprintf("370728 B or more, 13 ranks or more, %d ranks >= 2.3679e-6 x %d + 1.1787, < 3.2118e-6 x %d + 8.7936 = %.6g", ranks, bytes, bytes, fitted(ap16, bp16, bytes)), 3, 16 << 10}, nil
		}
		return ompi40Step{fmt.Sprintf("370728 B or more, 13 ranks or more, %d ranks >= 3.2118e-6 x %d + 8.7936 = %.6g", ranks, bytes, fitted(ap16, bp16, bytes)), 3, 8 << 10}, nil
	case Reduce:
		// Commutative: four lines ranks = a x bytes + b, a in 1/KiB.
		const (
			a1, b1 = 0.6016 / 1024.0, 1.3496
			a2, b2 = 0.0410 / 1024.0, 9.7128
			a3, b3 = 0.0422 / 1024.0, 1.1614
			a4, b4 = 0.0033 / 1024.0, 1.6761
		)
		switch {
		case ranks < 8 && bytes < 512:
			return ompi40Step{"fewer than 8 ranks, under 512 B", 1, 0}, nil
		case ranks < 8 && bytes < 20480 || bytes < 2048 || n <= 1:
			return ompi40Step{"fewer than 8 ranks and under 20480 B, or under 2048 B, or at most 1 element", 5, 0}, nil
		case fr > fitted(a1, b1, bytes):
			return ompi40Step{fmt.Sprintf("%d ranks > 0.6016/1024 x %d + 1.3496 = %.6g", ranks, bytes, fitted(a1, b1, bytes)), 5, 1024}, nil
		case fr > fitted(a2, b2, bytes):
			return ompi40Step{fmt.Sprintf("%d ranks <= 0.6016/1024 x %d + 1.3496, > 0.0410/1024 x %d + 9.7128 = %.6g", ranks, bytes, bytes, fitted(a2, b2, bytes)), 3, 1024}, nil
		case fr > fitted(a3, b3, bytes):
			return ompi40Step{fmt.Sprintf("%d ranks <= 0.0410/1024 x %d + 9.7128, > 0.0422/1024 x %d + 1.1614 = %.6g", ranks, bytes, bytes, fitted(a3, b3, bytes)), 4, 32 << 10}, nil
		case fr > fitted(a4, b4, bytes):
			return ompi40Step{fmt.Sprintf("%d ranks <= 0.0422/1024 x %d + 1.1614, > 0.0033/1024 x %d + 1.6761 = %.6g", ranks, bytes, bytes, fitted(a4, b4, bytes)), 3, 32 << 10}, nil
		}
		return ompi40Step{fmt.Sprintf("%d ranks <= 0.0033/1024 x %d + 1.6761 = %.6g", ranks, bytes, fitted(a4, b4, bytes)), 3, 64 << 10}, nil
	case Alltoall:
		switch {
		case ranks == 2:
			return ompi40Step{"2 ranks", 5, 0}, nil
		case bytes < 200 && ranks > 12:
			return ompi40Step{"under 200 B per pair (coll_tuned_alltoall_small_msg), more than 12 ranks", 3, 0}, nil
		case bytes < 3000:
			return ompi40Step{"under 3000 B per pair (coll_tuned_alltoall_intermediate_msg)", 1, 0}, nil
		}
		return ompi40Step{"3000 B per pair or more", 2, 0}, nil
	case Allgather:
		switch {
		case ranks == 2:
			return ompi40Step{"2 ranks", 6, 0}, nil
		case bytes < 50000 && isPow2(ranks):
			return ompi40Step{"under 50000 B in all, a power of two of ranks", 3, 0}, nil
		case bytes < 50000:
			return ompi40Step{"under 50000 B in all, ranks not a power of two", 2, 0}, nil
		case ranks%2 != 0:
			return ompi40Step{"50000 B or more in all, an odd number of ranks", 4, 0}, nil
		}
		return ompi40Step{"50000 B or more in all, an even number of ranks", 5, 0}, nil
	case ReduceScatter:
		// small_message_size 12 KiB, large_message_size 256 KiB, and the
		// line ranks = 0.0012 x bytes + 8.
		line := fitted(0.0012, 8.0, bytes)
		switch {
		case bytes <= 12288:
			return ompi40Step{"at most 12288 B in all", 2, 0}, nil
		case bytes <= 262144 && isPow2(ranks):
			return ompi40Step{"at most 262144 B in all, a power of two of ranks", 2, 0}, nil
		case fr >= line:
			return ompi40Step{fmt.Sprintf("%d ranks >= 0.0012 x %d + 8 = %.6g", ranks, bytes, line), 2, 0}, nil
		}
		return ompi40Step{fmt.Sprintf("over 12288 B in all (over 262144 B, or ranks not a power of two), %d ranks < 0.0012 x %d + 8 = %.6g", ranks, bytes, line), 3, 0}, nil
	case Barrier:
		switch {
		case ranks == 2:
			return ompi40Step{"2 ranks", 5, 0}, nil
		case !isPow2(ranks):
			return ompi40Step{"ranks not a power of two", 4, 0}, nil
		}
		return ompi40Step{"a power of two of ranks", 3, 0}, nil
	case Gather:
		switch {
		case bytes > 92160:
			return ompi40Step{"over 92160 B per rank", 3, 32768}, nil
		case bytes > 6000:
			return ompi40Step{"over 6000 B per rank", 3, 1024}, nil
		case ranks > 60 || ranks > 10 && bytes < 1024:
			return ompi40Step{"more than 60 ranks, or more than 10 and under 1024 B per rank", 2, 0}, nil
		}
		return ompi40Step{"at most 6000 B per rank, at most 60 ranks, at most 10 or 1024 B per rank or more", 1, 0}, nil
	case Scatter:
		if ranks > 10 && bytes < 300 {
			return ompi40Step{"more than 10 ranks, under 300 B per rank", 2, 0}, nil
		}
		return ompi40Step{"at most 10 ranks or 300 B per rank or more", 1, 0}, nil
	}
	return ompi40Step{}, &NotTranscribed{Library: "Open MPI 4.0", Collective: c}
}

// ompi40Tuned is what Open MPI 4.0.7's coll/tuned runs for c and p: the
// branch its decision function takes, then what the coll/base function it
// calls runs (ompiRun, with the branch's segment size). It is also how the
// nonoverlapping allreduce it picks chooses its reduce and bcast.
func ompi40Tuned(c Collective, p Params) (ompi40Step, ompiPick, error) {
	d, err := ompi40Decide(c, p)
	if err != nil {
		return d, ompiPick{}, err
	}
	pick, err := ompiRun(c, d.alg, p, d.seg)
	if err == nil && c == Allreduce && pick.name == "nonoverlapping" {
		// ompi_coll_base_allreduce_intra_nonoverlapping calls the
		// communicator's reduce and bcast: 4.0's own decisions.
		pick.params.Library = "ompi40"
		q := p
		q.Root = 0
		_, red, rerr := ompi40Tuned(Reduce, q)
		_, bc, berr := ompi40Tuned(Bcast, q)
		if rerr != nil || berr != nil {
			return d, pick, fmt.Errorf("its reduce or bcast: %w", errors.Join(rerr, berr))
		}
		pick.notes = append(pick.notes, fmt.Sprintf("its reduce to rank 0 and bcast are the communicator's, by these same rules (coll_base_allreduce.c, ompi_coll_base_allreduce_intra_nonoverlapping): reduce/%s, then bcast/%s", red.name, bc.name))
	}
	return d, pick, err
}

// ompi40Rule writes the output's rule: the branch taken and the function
// it calls, then each fallback that function took.
func ompi40Rule(c Collective, p Params, d ompi40Step, pick ompiPick) string {
	bytes, measure := ompi40Bytes(c, p)
	rule := fmt.Sprintf("Open MPI 4.0 fixed rules for %d ranks and %d %s: %s: algorithm %d, %s", p.Ranks, bytes, measure, d.why, d.alg, ompiAlgs[c][d.alg].name)
	if d.seg > 0 {
		rule += fmt.Sprintf(", with %d-byte segments", d.seg)
		if pick.name != "" && !pick.fell && pick.params.Segment < p.Count {
			rule += fmt.Sprintf(" (%d elements)", pick.params.Segment)
		}
	}
	for _, n := range pick.notes {
		rule += "; " + n
	}
	return rule
}

// ompi40Choice is Open MPI 4.0.7's choice: coll/tuned's fixed decisions.
func ompi40Choice(c Collective, p Params) (choice, error) {
	d, pick, err := ompi40Tuned(c, p)
	if err != nil {
		if d.alg != 0 {
			return choice{}, fmt.Errorf("%s: %w", ompi40Rule(c, p, d, pick), err)
		}
		return choice{}, err
	}
	return choice{name: pick.name, params: pick.params, rule: ompi40Rule(c, p, d, pick)}, nil
}
