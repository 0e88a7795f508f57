package collsim

import (
	"errors"
	"math"
	"slices"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/network"
)

// Hockney derives alpha-beta-gamma parameters for closed forms from a
// machine and a placement: the latency and bottleneck of the slowest route
// between placed hosts, and the host's reduction rate. uniform reports
// whether every route checked has the same latency and bottleneck, in which
// case the closed forms price every message right; otherwise they price
// every message as the slowest one, an estimate. All pairs are checked up
// to 512 ranks; above that, the pairs among 64 ranks spread over the job.
func Hockney(m *configs.Machine, place []int32) (h cost.Hockney, uniform bool) {
	return hockneyOver(m, place, func(i, j int) bool { return true })
}

// hockneyOver is Hockney over the pairs of ranks that keep says to.
func hockneyOver(m *configs.Machine, place []int32, keep func(i, j int) bool) (h cost.Hockney, uniform bool) {
	uniform = true
	first := true
	var a0, b0 float64
	stride := max(1, len(place)/64)
	if len(place) <= 512 {
		stride = 1
	}
	var path []int32
	for i := 0; i < len(place); i += stride {
		for j := 0; j < len(place); j += stride {
			if i == j || !keep(i, j) {
				continue
			}
			var a, b float64
			a, b, path = m.PathParamsInto(int(place[i]), int(place[j]), path)
			if first {
				a0, b0, first = a, b, false
			}
			uniform = uniform && a == a0 && b == b0
			h.Alpha, h.Beta = max(h.Alpha, a), max(h.Beta, b)
		}
	}
	h.Gamma = m.Host.ReducePsPerByte * 1e-12
	// Above the eager limit a message waits for its request to reach the
	// receiver and the reply to come back: two route latencies.
	h.Handshake, h.EagerLimit = cost.HandshakeOf(h.Alpha), float64(m.Host.EagerLimit)
	return h, uniform
}

// Pricing is what the closed forms need of a machine and a placement,
// worked out once: the alpha-beta-gamma model of the slowest route, and
// the two levels of blocks of consecutive ranks (a node's, or a Dragonfly
// group's) for the algorithms priced level by level.
type Pricing struct {
	Machine *configs.Machine
	Flat    cost.Hockney
	// Lower is a model no rank's messages beat, for lower bounds (see
	// lowerModel): the slowest route's is none where routes differ.
	Lower  cost.Hockney
	Levels cost.Levels
	// Uniform reports whether every route is alike (Flat prices every
	// message right); LevelsUniform whether the routes inside blocks are
	// alike, and those between blocks.
	Uniform, LevelsUniform bool
	// Blocks says the placement has blocks to price level by level (else
	// Levels is Flat at both levels).
	Blocks bool
	// Gaps are what the closed forms leave out of the machine as placed.
	Gaps PlacementGaps
}

// PlacementGaps are the costs of a machine that the closed forms leave
// out where some ranks share a host: the one rule that runs, validate's
// notes and the JSON's flags all follow.
type PlacementGaps struct {
	// SharedNICs: ranks on several hosts, some sharing one, take turns at
	// its NIC to the others, where the forms give each rank a port of its
	// own (on the cori machine, 32 ranks a node, the two-level alltoall
	// of 1 MiB on two nodes took 16x its form).
	SharedNICs bool
	// LocalDuplex: ranks sharing a host send and take in on partly or
	// half duplex channels (host.local_duplex); the forms take them as
	// full duplex.
	LocalDuplex bool
	// LocalBands: ranks sharing a host move messages at bandwidths that
	// depend on their size (host.local_by_size); the forms price every
	// size at host.local's.
	LocalBands bool
}

// GapsOf returns what the closed forms leave out of m with its ranks on
// the hosts place gives.
func GapsOf(m *configs.Machine, place []int32) PlacementGaps {
	hosts, shared := placedOn(place)
	duplex := m.LocalDuplexShare > 0 || slices.ContainsFunc(m.LocalBands, func(b network.LocalBand) bool { return b.DuplexShare > 0 })
	return PlacementGaps{
		SharedNICs:  shared && hosts > 1,
		LocalDuplex: shared && duplex,
		LocalBands:  shared && len(m.LocalBands) > 0,
	}
}

// Reasons words each gap, as what the closed form does not know.
func (g PlacementGaps) Reasons() []string {
	var out []string
	if g.SharedNICs {
		out = append(out, "ranks on one host take turns at its NIC, and it gives each rank a port of its own")
	}
	if g.LocalDuplex {
		out = append(out, "ranks on one host send and take in on partly or half duplex channels (host.local_duplex, or a band's duplex in host.local_by_size), and it takes them as full duplex")
	}
	if g.LocalBands {
		out = append(out, "ranks on one host move messages at bandwidths that depend on their size (host.local_by_size), and it prices every size at host.local's")
	}
	return out
}

// Or is the gaps of either.
func (g PlacementGaps) Or(h PlacementGaps) PlacementGaps {
	return PlacementGaps{SharedNICs: g.SharedNICs || h.SharedNICs, LocalDuplex: g.LocalDuplex || h.LocalDuplex, LocalBands: g.LocalBands || h.LocalBands}
}

// NewPricing works out the pricing of m for ranks placed by place, in
// blocks of block consecutive ranks (1: no levels).
func NewPricing(m *configs.Machine, place []int32, block int) Pricing {
	pr := Pricing{Machine: m, Gaps: GapsOf(m, place)}
	pr.Flat, pr.Uniform = Hockney(m, place)
	pr.Lower = lowerModel(m, place, pr.Flat, pr.Uniform)
	pr.Levels.Global, pr.LevelsUniform = pr.Flat, pr.Uniform
	pr.Levels.Local = pr.Flat
	if block > 1 && block < len(place) {
		pr.Blocks = true
		var localSame, globalSame bool
		pr.Levels.Local, localSame = hockneyOver(m, place, func(i, j int) bool { return i/block == j/block })
		pr.Levels.Global, globalSame = hockneyOver(m, place, func(i, j int) bool { return i/block != j/block })
		pr.LevelsUniform = localSame && globalSame
	}
	return pr
}

// LeavesOutHostCosts reports whether the machine charges a per-message
// overhead or gap that a form of this kind (ClosedForm's) does not price:
// every kind but LogGP.
func (pr Pricing) LeavesOutHostCosts(kind string) bool {
	return (pr.Machine.Host.Overhead > 0 || pr.Machine.Gap > 0) && kind != "LogGP"
}

// ExactHere reports whether ClosedForm's prediction is, on this machine as
// placed, what the analytic network simulates: the form is exact, the
// routes it assumes alike are, and the machine charges nothing it leaves
// out (host costs outside a LogGP form, PlacementGaps).
func (pr Pricing) ExactHere(pred cost.Prediction, kind string, alike bool) bool {
	return pred.Exact && alike && !pr.LeavesOutHostCosts(kind) && pr.Gaps == PlacementGaps{}
}

// ClosedForm prices a for p. kind names the model: "LogGP" when the hosts
// charge an overhead or a gap and a has a LogGP form; "levels" for the
// algorithms priced level by level (cost.Levels); else "Hockney", the
// alpha-beta-gamma form of the slowest route, which leaves o and g out.
// alike reports whether the routes the form assumes alike are (else the
// form is an estimate).
func (pr Pricing) ClosedForm(a collectives.Algorithm, p collectives.Params) (pred cost.Prediction, kind string, alike bool, err error) {
	m := pr.Machine
	o, g := m.Host.Overhead.Seconds(), m.Gap.Seconds()
	if (o > 0 || g > 0) && cost.HasLogGP(a) {
		pred, err = pr.Flat.PredictLogGP(a, p, o, g)
		if !errors.Is(err, cost.ErrNoClosedForm) {
			return pred, "LogGP", pr.Uniform, err
		}
		// No LogGP form for this call (recursive doubling on 7 ranks):
		// the form below, which leaves o and g out and says so, rather
		// than none (model printed "-" where the Hockney bound exists).
	}
	switch {
	case cost.HasLevels(a) && pr.Blocks:
		pred, err = pr.Levels.Predict(a, p)
		return pred, "levels", pr.LevelsUniform, err
	}
	pred, err = pr.Flat.Predict(a, p)
	return pred, "Hockney", pr.Uniform, err
}

// lowerModel is a model of m, as place puts the ranks on it, that no
// rank's messages beat, for lower bounds (cost.Hockney.LowerBound): alpha
// the least latency any message between placed ranks has, and beta the
// most a rank can move at once, through every link out of its host and,
// where ranks share it, its host's local channel too. The slowest route's
// model, which the forms price with, is no lower bound where routes
// differ: on gpu-cluster it put every byte through a node's 50 GB/s NIC,
// where a device's own link carries 450, and runs beat its "bound" (an
// audit). Where every route is alike (uniform) and ranks do not share
// hosts, its alpha is flat's, the slowest route's.
func lowerModel(m *configs.Machine, place []int32, flat cost.Hockney, uniform bool) cost.Hockney {
	t := m.Topology
	ranksOn := map[int32]int{}
	for _, h := range place {
		ranksOn[h]++
	}
	out := make([]float64, t.Hosts())
	for _, l := range t.Links() {
		if int(l.From) < t.Hosts() {
			out[l.From] += l.Bandwidth
		}
	}
	local := m.Local.Bandwidth
	for _, b := range m.LocalBands {
		local = max(local, b.Bandwidth)
	}
	most, shared := 0.0, false
	for h, n := range ranksOn {
		c := out[h]
		if n > 1 {
			c, shared = c+local, true
		}
		most = max(most, c)
	}
	h := flat
	if !uniform || shared {
		// The least latency a message between placed ranks can have: a
		// route of two links or more leaves its host by one and enters
		// another by one; a link between two hosts is a route alone; and
		// ranks sharing a host have their local channel.
		leave, enter, direct := math.Inf(1), math.Inf(1), math.Inf(1)
		for _, l := range t.Links() {
			from, to := ranksOn[l.From] > 0, ranksOn[l.To] > 0
			switch {
			case from && to:
				direct = min(direct, l.Latency)
			case from:
				leave = min(leave, l.Latency)
			case to:
				enter = min(enter, l.Latency)
			}
		}
		least := min(direct, leave+enter)
		if shared {
			least = min(least, m.Local.Latency)
		}
		if !math.IsInf(least, 1) {
			h.Alpha = least
		}
	}
	if most > 0 {
		h.Beta = 1 / most
	}
	h.Handshake = cost.HandshakeOf(h.Alpha)
	return h
}
