package collectives

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// innerCall is the allreduce named by p.Inner on the subset members for
// n elements: the call that hierarchical and SUARA make inside each
// subset. "" picks recursive_doubling up to 64 KiB and ring above (the MPI
// libraries' rule of thumb; the cost model can choose better, see cmd).
func innerCall(p Params, members Group, n int64) (*Call, error) {
	a, err := Lookup(Allreduce, InnerAlgorithm(p, n))
	if err != nil {
		return nil, err
	}
	if a.newRank == nil || IsComposite(a.Name) {
		return nil, &Unsupported{Reason: fmt.Sprintf("--inner %s cannot run inside a subset: it is itself built from subsets; use recursive_doubling, ring, rabenseifner or another flat allreduce", a.Name)}
	}
	return &Call{Collective: Allreduce, Group: members, Algorithm: a,
		Params: Params{Ranks: len(members), Count: n, ElemSize: p.ElemSize, Segment: p.Segment}}, nil
}

// innerScratch is the scratch that the allreduces a composite runs in
// subsets of the given sizes, on n elements each, need: buffer by buffer,
// the most any of them does (they run one after another, and the
// composite has no scratch of its own).
func innerScratch(p Params, subsets []int, n int64) []int64 {
	var most []int64
	for _, q := range subsets {
		a, err := Lookup(Allreduce, InnerAlgorithm(p, n))
		if err != nil || a.scratch == nil {
			continue
		}
		for i, c := range a.scratch(Params{Ranks: q, Count: n, ElemSize: p.ElemSize, Segment: p.Segment}) {
			if i == len(most) {
				most = append(most, 0)
			}
			most[i] = max(most[i], c)
		}
	}
	return most
}

// InnerAlgorithm names the allreduce that hierarchical and SUARA run in
// each subset for n elements: p.Inner, or recursive_doubling up to 64 KiB
// and ring above.
func InnerAlgorithm(p Params, n int64) string {
	if p.Inner != "" {
		return p.Inner
	}
	if n*p.elemSize() <= 64<<10 {
		return "recursive_doubling"
	}
	return "ring"
}

// SuaraGrid returns the grid SUARA runs on for p: the sizes of the subsets
// of each step.
func SuaraGrid(p Params) []int { return suaraGrid(p.Ranks, max(p.Steps, 2), p.Groups) }

// SuaraLayout says what SUARA runs for p: its grid and the allreduce in
// each subset ("grid 2x3, recursive_doubling in each subset"), which
// explain and run show (neither said it where the user set --steps or
// --groups: a new user's trial).
func SuaraLayout(p Params) string {
	dims := SuaraGrid(p)
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	return fmt.Sprintf("grid %s, %s in each subset", strings.Join(parts, "x"), InnerAlgorithm(p, p.Count))
}

// hierarchical is HAN's allreduce (Luo et al., "HAN: a hierarchical
// autotuned collective communication framework", CLUSTER 2020): for each
// segment of the vector, a binomial reduce inside the node to its first
// rank, an allreduce among those leaders (p.Inner), and a binomial bcast
// inside the node. Segments are independent, so segment k+1 reduces inside
// nodes while segment k crosses the network: the four stages overlap.
// Ranks r..r+NodeSize-1 share a node (block placement).
type hierarchical struct {
	segs []*phases
	k    int
}

func newHierarchical(p Params, r int) (stepper, error) {
	h, err := buildHierarchical(p, r, false)
	if err != nil {
		return nil, err // not a nil *hierarchical in a non-nil interface
	}
	return h, nil
}

// buildHierarchical returns rank r's program; with checkOnly it builds only
// the segments that can differ (the first and the last, whose size may
// pick another inner algorithm), so that checking whether the program can
// be built costs the same for any vector length.
func buildHierarchical(p Params, r int, checkOnly bool) (*hierarchical, error) {
	ns := p.NodeSize
	node := r / ns
	first := node * ns
	size := min(ns, p.Ranks-first)
	members := make(Group, size)
	for i := range members {
		members[i] = first + i
	}
	nodes := (p.Ranks + ns - 1) / ns
	leaders := make(Group, nodes)
	for i := range leaders {
		leaders[i] = i * ns
	}
	seg := p.Segment
	if seg == 0 {
		seg = max(1, (64<<10)/p.elemSize())
	}
	intra := p.Intra
	if intra == "" {
		intra = "binomial"
	}
	redAlg, err1 := Lookup(Reduce, intra)
	bcAlg, err2 := Lookup(Bcast, intra)
	switch {
	case err1 != nil || err2 != nil || intra == "rabenseifner":
		return nil, &Unsupported{Reason: fmt.Sprintf("--intra %q is not a reduce and bcast pair; use binomial, linear, chain, adapt or segmented_binary", intra)}
	case redAlg.scratch != nil || bcAlg.scratch != nil:
		// (Its reduce's receives went to buffers no rank had.)
		return nil, &Unsupported{Reason: fmt.Sprintf("--intra %s: its reduce needs receive buffers of its own, which the nodes' stages do not have; use binomial, linear, chain, adapt or segmented_binary", intra)}
	}
	h := &hierarchical{}
	nseg := segments(p.Count, seg)
	if err := tagsFit(nseg, 3, p.Count); err != nil {
		return nil, err
	}
	for k := range nseg {
		if checkOnly && k > 0 && k < nseg-1 {
			continue
		}
		part := segmentOf(0, p.Count, seg, k)
		tags := k * 3 * tagSpan
		local := Params{Ranks: size, Count: part.Count, ElemSize: p.ElemSize, Segment: p.Segment}
		red := &Call{Collective: Reduce, Group: members, Algorithm: redAlg, Params: local}
		ph := &phases{list: []*sub{red.on(r%ns, tags, nil, part.Off)}}
		if r%ns == 0 {
			inner, err := innerCall(p, leaders, part.Count)
			if err != nil {
				return nil, err
			}
			leadersSub := inner.on(node, tags+tagSpan, nil, part.Off)
			if sc := innerScratch(p, []int{nodes}, seg); len(sc) > 0 {
				// Segments' allreduces overlap: each its own scratch.
				leadersSub.scratchOff = int64(k) * slices.Max(sc)
			}
			ph.list = append(ph.list, leadersSub)
		}
		bc := &Call{Collective: Bcast, Group: members, Algorithm: bcAlg, Params: local}
		ph.list = append(ph.list, bc.on(r%ns, tags+2*tagSpan, nil, part.Off))
		h.segs = append(h.segs, ph)
	}
	return h, nil
}

// tagSpan separates the tags of phases: no algorithm uses more.
const tagSpan = 1 << 12

// tagsFit refuses a segmented composite whose nseg segments of perSeg
// phases each would need tags past MPI's int32 (which would wrap negative),
// naming the segment size that fits.
func tagsFit(nseg, perSeg int, count int64) error {
	slots := int64(math.MaxInt32/tagSpan) - 1 // phases that tags can separate
	if int64(nseg)*int64(perSeg) <= slots {
		return nil
	}
	most := slots / int64(perSeg) // segments
	return &Unsupported{Reason: fmt.Sprintf("%d segments of %d phases each need more tags than MPI's int32 holds; use --segment %d elements or more (at most %d segments)",
		nseg, perSeg, (count+most-1)/most, most)}
}

func (h *hierarchical) step(b *builder) bool {
	for h.k < len(h.segs) {
		if h.segs[h.k].step(b) {
			return true
		}
		h.k++
	}
	return false
}

// suaraGrid factors p into l dimensions as evenly as possible (largest
// first), or uses groups as the first dimension when given (SUARA2's G x Q
// grid).
func suaraGrid(p, l, groups int) []int {
	if groups > 0 {
		return []int{groups, p / groups}
	}
	dims := []int{}
	rest := p
	for i := l; i > 1; i-- {
		target := int(math.Round(math.Pow(float64(rest), 1/float64(i))))
		d := 1
		for c := max(target, 1); c >= 1; c-- { // the largest divisor <= target
			if rest%c == 0 {
				d = c
				break
			}
		}
		for c := target + 1; d == 1 && c <= rest; c++ { // or the smallest above it
			if rest%c == 0 {
				d = c
			}
		}
		dims = append(dims, d)
		rest /= d
	}
	return append(dims, rest)
}

// suara is SUARA (Nuriyev, Rico-Gallego, Lastovetsky, "Model-based
// selection of optimal MPI broadcast algorithms for multi-core clusters"
// line of work; SUARA as in the seed paper): L serial steps on a
// d1 x ... x dL grid of the ranks; in step i every rank joins the ranks
// that differ from it only in coordinate i and they allreduce the whole
// vector (p.Inner). After step i a rank holds the sum over the first i
// dimensions; after L steps, over all. SUARA2 is L = 2 on a G x Q grid.
type suara struct{ ph *phases }

func newSuara(p Params, r int) (stepper, error) {
	dims := suaraGrid(p.Ranks, max(p.Steps, 2), p.Groups)
	s := &phases{}
	stride := 1
	for i := len(dims) - 1; i >= 0; i-- {
		d := dims[i]
		coord := r / stride % d
		members := make(Group, d)
		for c := range members {
			members[c] = r + (c-coord)*stride
		}
		inner, err := innerCall(p, members, p.Count)
		if err != nil {
			return nil, err
		}
		s.list = append(s.list, inner.on(coord, (len(dims)-1-i)*tagSpan, nil, 0))
		stride *= d
	}
	return &suara{ph: s}, nil
}

func (s *suara) step(b *builder) bool { return s.ph.step(b) }
