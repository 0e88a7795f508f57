package collectives

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// ompiCollectiveIDs are the collective numbers of Open MPI's coll/tuned
// rules files (its COLLTYPE enumeration: allgather 0, allreduce 2,
// alltoall 3, barrier 6, bcast 7, gather 9, reduce 11, reduce_scatter 12,
// scatter 15).
var ompiCollectiveIDs = map[Collective]int{
	Allgather: 0, Allreduce: 2, Alltoall: 3, Barrier: 6, Bcast: 7, Gather: 9, Reduce: 11, ReduceScatter: 12, Scatter: 15,
}

// OmpiRule is one line of a rules file: from MinBytes up (until the next
// rule's MinBytes), communicators of the enclosing size use Algorithm
// (Open MPI's number) with segments of SegmentBytes (0: Open MPI's own).
type OmpiRule struct {
	MinBytes     int64
	Algorithm    int
	SegmentBytes int64
}

// OmpiRules are the rules of one collective, by communicator size.
type OmpiRules struct {
	Collective Collective
	// BySize maps a communicator size to its rules in increasing MinBytes,
	// the first at 0. Open MPI applies the rules of the largest size not
	// above the communicator's, and to a communicator smaller than every
	// size the first size's (ompi_coll_tuned_get_com_rule_ptr, v4.1.8 and
	// v5.0.10), so WriteOmpiRules leads with a size 0 whose algorithm 0
	// sends those to Open MPI's fixed rules.
	BySize map[int][]OmpiRule
}

// OmpiFixed is a rule of algorithm 0: Open MPI's fixed decision rules
// choose.
var OmpiFixed = []OmpiRule{{MinBytes: 0, Algorithm: 0}}

// WriteOmpiRules writes rules in the format of Open MPI's
// coll_tuned_dynamic_rules_filename (the classic format: collectives,
// communicator sizes, then "bytes algorithm fan-in/out segment" lines,
// with # comments), for use with --mca coll_tuned_use_dynamic_rules 1.
func WriteOmpiRules(w io.Writer, header string, all []OmpiRules) error {
	var b strings.Builder
	for _, line := range strings.Split(header, "\n") {
		fmt.Fprintf(&b, "# %s\n", line)
	}
	fmt.Fprintf(&b, "%d # collectives\n", len(all))
	for _, r := range all {
		id, ok := ompiCollectiveIDs[r.Collective]
		if !ok {
			return fmt.Errorf("Open MPI's rules files have no number for %s", r.Collective)
		}
		sizes := make([]int, 0, len(r.BySize)+1)
		for s := range r.BySize {
			sizes = append(sizes, s)
		}
		slices.Sort(sizes)
		if len(sizes) > 0 && sizes[0] > 0 {
			// Communicators smaller than the smallest tuned took its rules,
			// never simulated for them (an audit against Open MPI's lookup).
			sizes = slices.Insert(sizes, 0, 0)
		}
		fmt.Fprintf(&b, "%d # collective ID: %s\n%d # communicator sizes\n", id, r.Collective, len(sizes))
		for _, s := range sizes {
			rules, ok := r.BySize[s]
			if !ok && s == 0 {
				rules = OmpiFixed
			}
			if len(rules) == 0 || rules[0].MinBytes != 0 {
				return fmt.Errorf("%s, %d ranks: the first rule must start at 0 bytes", r.Collective, s)
			}
			fmt.Fprintf(&b, "%d # communicator size\n%d # message sizes\n", s, len(rules))
			for i, rule := range rules {
				if i > 0 && rule.MinBytes <= rules[i-1].MinBytes {
					return fmt.Errorf("%s, %d ranks: rule %d starts at %d bytes, not after %d", r.Collective, s, i, rule.MinBytes, rules[i-1].MinBytes)
				}
				fmt.Fprintf(&b, "%d %d 0 %d\n", rule.MinBytes, rule.Algorithm, rule.SegmentBytes)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// OmpiSegmentBytes is the segment size, in bytes, to write in a rules
// file for algorithm a as collsim ran it with p: for Open MPI's segmented
// algorithms (the pipeline, the segmented ring, the binary reduce), which
// given a segment size of 0 run unsegmented (COLL_BASE_COMPUTED_SEGCOUNT,
// coll_base_functions.h), the segment collsim used; 0 for the others.
func OmpiSegmentBytes(a Algorithm, p Params) int64 {
	switch a.ID() {
	case "bcast/chain", "reduce/chain":
		return newChain(a.Collective, p, 0).seg * p.elemSize()
	case "reduce/segmented_binary":
		return newSegmentedTree(Reduce, true, p, 0).seg * p.elemSize()
	case "allreduce/segmented_ring":
		return newSegmentedRing(p, 0).seg * p.elemSize()
	}
	return 0
}
