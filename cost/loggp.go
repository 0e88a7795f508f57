package cost

import (
	"fmt"

	"github.com/collsim/collsim/collectives"
)

// Closed forms in LogGP (Alexandrov, Ionescu, Schauser, Scheiman 1995),
// where they differ from Hockney's: a host's CPU spends o on every send
// before the message leaves and o on every receive after it arrives, and
// its NIC spends g per message on top of the bytes' serialization, in each
// direction (collsim's analytic network with host.overhead and host.gap;
// LogGOPSim's rule). A message of c bytes between dependent steps then
// costs alpha + 2o + c beta, and consecutive messages through one NIC
// start g + c beta apart at the least; L is Hockney's alpha and G its beta.
// Where o = g = 0 every form here equals the Hockney one.

type logGPForm func(m Hockney, o, g float64, s size) Prediction

var logGPForms = map[string]logGPForm{
	"allreduce/ring":                   logGPRingAllreduce,
	"allgather/ring":                   logGPRingAllgather,
	"reduce_scatter/ring":              logGPRingReduceScatter,
	"alltoall/pairwise":                logGPPairwise,
	"alltoall/two_procs":               logGPPairwise,
	"allreduce/recursive_doubling":     logGPRecursiveDoubling,
	"barrier/dissemination":            logGPDissemination,
	"bcast/binomial":                   logGPBinomialBcast,
	"allgather/recursive_doubling":     logGPRDAllgather,
	"reduce_scatter/recursive_halving": logGPRHReduceScatter,
	"reduce_scatter/pairwise":          logGPPairwiseReduceScatter,
	"reduce/linear":                    logGPLinearReduce,
	"bcast/linear":                     logGPLinearBcast,
	"allreduce/linear":                 logGPLinearAllreduce,
	"gather/linear":                    logGPLinearGather,
	"scatter/linear":                   logGPLinearScatter,
	"allgather/linear":                 logGPLinearAllgather,
	"alltoall/linear":                  logGPLinearAlltoall,
	"barrier/linear":                   logGPLinearBarrier,
}

// HasLogGP reports whether a has a LogGP form (PredictLogGP).
func HasLogGP(a collectives.Algorithm) bool { _, ok := logGPForms[a.ID()]; return ok }

// PredictLogGP prices one call of a on a machine whose hosts charge
// overhead o and gap g (seconds), with m's alpha, beta and gamma. Without
// host costs it is Predict.
func (m Hockney) PredictLogGP(a collectives.Algorithm, p collectives.Params, o, g float64) (Prediction, error) {
	if o == 0 && g == 0 {
		return m.Predict(a, p)
	}
	f, ok := logGPForms[a.ID()]
	if !ok {
		return Prediction{}, fmt.Errorf("no LogGP form for %s yet (its Hockney form leaves out o and g)", a.ID())
	}
	if pred, err := m.Predict(a, p); err != nil || collectives.SendsNothing(a.Collective, p) { // the same parameters are covered
		return pred, err
	}
	if a.ID() == "scatter/linear" && m.Handshake > 0 {
		// Blocks on both sides of the eager limit: an eager block queued
		// behind a rendezvous one waiting for its reply holds up the next
		// rendezvous request, a second handshake in series that the
		// bounds leave out (with o or g; seen from a root other than 0).
		if hi, lo := sizeOf(p).block(p.Ranks); lo <= m.EagerLimit && hi > m.EagerLimit {
			return Prediction{}, ErrNoClosedForm
		}
	}
	return checked(a, p, m.priced(a.ID(), sizeOf(p), func(m Hockney, s size) Prediction { return f(m, o, g, s) }))
}

// logGPStep is one step of a chain of exchanges: a message of c bytes
// sent as soon as the step before has been received (o to send, alpha,
// c beta, o to receive, then red to reduce it), unless the NIC is still
// spacing the previous message (g + c beta).
func logGPStep(m Hockney, o, g, c, red float64) float64 {
	return max(m.Alpha+2*o+c*m.Beta+red, g+c*m.Beta)
}

// logGPChain is a chain of dependent exchanges of the given sizes (bytes),
// each reduced if reduce says so: the first send leaves after o, each
// later one max(a step, the NIC's spacing after the message before) after
// the one before, and the last is received and reduced a step less o after
// it leaves.
func logGPChain(m Hockney, o, g float64, sizes []float64, reduce bool) float64 {
	if len(sizes) == 0 {
		return 0
	}
	red := func(c float64) float64 {
		if reduce {
			return c * m.Gamma
		}
		return 0
	}
	t := o
	for _, c := range sizes[:len(sizes)-1] {
		t += logGPStep(m, o, g, c, red(c))
	}
	c := sizes[len(sizes)-1]
	return t + logGPStep(m, o, 0, c, red(c)) - o
}

// logGPSteps is k steps of blocks of the largest size hi: the first
// step whole, each later one after the previous by a step or by the NIC's
// spacing, whichever is longer (a rank's sends leave g + c beta apart, and
// the first send waits for nothing): step + (k-1) max(step, g + c beta).
// Exact when every block has that size; with blocks of lo too, between
// that of lo and that of hi. reduce says whether each step reduces its
// block.
func logGPSteps(m Hockney, o, g float64, k int, hi, lo float64, reduce bool) Prediction {
	steps := func(c float64) float64 {
		if k == 0 {
			return 0
		}
		red := 0.0
		if reduce {
			red = c * m.Gamma
		}
		step := logGPStep(m, o, 0, c, red)
		return step + float64(k-1)*logGPStep(m, o, g, c, red)
	}
	return between(steps(lo), steps(hi))
}

// logGPRingAllreduce: p-1 reduce-scatter steps then p-1 allgather steps
// of the largest block c, one chain: the NIC's spacing holds between the
// last reducing step and the first allgather step too (ringAllreduce's
// argument, step by step; Patarasuk and Yuan 2009 with LogGP's costs).
func logGPRingAllreduce(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	hi, lo := s.block(s.p)
	k := float64(s.p - 1)
	// Send i+1 leaves max(a step, the NIC's spacing) after send i; the
	// last message then takes its own step, less the o before it left.
	chain := func(c float64) float64 {
		rs, ag := logGPStep(m, o, g, c, c*m.Gamma), logGPStep(m, o, g, c, 0)
		return k*rs + (k-1)*ag + logGPStep(m, o, 0, c, 0)
	}
	return between(chain(lo), chain(hi))
}

// logGPRingAllgather: p-1 steps of the largest block.
func logGPRingAllgather(m Hockney, o, g float64, s size) Prediction {
	hi, lo := s.block(s.p)
	return logGPSteps(m, o, g, s.p-1, hi, lo, false)
}

// logGPRingReduceScatter: p-1 reducing steps of the largest block.
func logGPRingReduceScatter(m Hockney, o, g float64, s size) Prediction {
	hi, lo := s.block(s.p)
	return logGPSteps(m, o, g, s.p-1, hi, lo, true)
}

// logGPPairwise: a rank's copy of its own block (a local copy: free),
// then p-1 exchanges of n bytes, each after the last.
func logGPPairwise(m Hockney, o, g float64, s size) Prediction {
	return logGPSteps(m, o, g, s.p-1, s.n, s.n, false)
}

// logGPRecursiveDoubling: log2 p exchanges of the whole vector, each
// reduced, for p a power of two; no LogGP form otherwise (the fold's
// bounds are Hockney's only).
func logGPRecursiveDoubling(m Hockney, o, g float64, s size) Prediction {
	if !isPow2(s.p) {
		return noForm()
	}
	return logGPSteps(m, o, g, log2Floor(s.p), s.n, s.n, true)
}

// logGPDissemination: ceil(log2 p) rounds of empty messages.
func logGPDissemination(m Hockney, o, g float64, s size) Prediction {
	return logGPSteps(m, o, g, log2Ceil(s.p), 0, 0, false)
}

// logGPBinomialBcast: for p = 2^d, a rank sends to its children largest
// subtree first; the i-th send leaves (i-1) s after the first, s = max(o, g
// + n beta) (the CPU's o per send, or the NIC's spacing), and each hop
// costs h = alpha + 2o + n beta. The child sent i-th heads a binomial tree
// of depth d-i, so the latest arrival is f(d) = max over i of h + (i-1) s +
// f(d-i), f(0) = 0: d h when s <= h, as Hockney's d (alpha + n beta).
// Exact for powers of two; no LogGP form otherwise.
func logGPBinomialBcast(m Hockney, o, g float64, s size) Prediction {
	if !isPow2(s.p) {
		return noForm()
	}
	h, gap := m.Alpha+2*o+s.n*m.Beta, max(o, g+s.n*m.Beta)
	d := log2Floor(s.p)
	f := make([]float64, d+1)
	for depth := 1; depth <= d; depth++ {
		for i := 1; i <= depth; i++ {
			f[depth] = max(f[depth], h+float64(i-1)*gap+f[depth-i])
		}
	}
	return exact(f[d])
}

// logGPRDAllgather: log2 p exchanges of c, 2c, 4c, ... bytes (p a power
// of two), each after the last; exact for equal blocks, between the
// smallest and largest block's chains otherwise.
func logGPRDAllgather(m Hockney, o, g float64, s size) Prediction {
	if !isPow2(s.p) {
		return noForm()
	}
	chain := func(c float64) float64 {
		var sizes []float64
		for k := 1; k < s.p; k *= 2 {
			sizes = append(sizes, float64(k)*c)
		}
		return logGPChain(m, o, g, sizes, false)
	}
	hi, lo := s.block(s.p)
	return between(chain(lo), chain(hi))
}

// logGPRHReduceScatter: log2 p exchanges of p/2 c, p/4 c, ..., c bytes
// (p a power of two), each reduced, each after the last.
func logGPRHReduceScatter(m Hockney, o, g float64, s size) Prediction {
	if !isPow2(s.p) {
		return noForm()
	}
	chain := func(c float64) float64 {
		var sizes []float64
		for k := s.p / 2; k >= 1; k /= 2 {
			sizes = append(sizes, float64(k)*c)
		}
		return logGPChain(m, o, g, sizes, true)
	}
	hi, lo := s.block(s.p)
	return between(chain(lo), chain(hi))
}

// logGPPairwiseReduceScatter: p-1 reducing exchanges of a block.
func logGPPairwiseReduceScatter(m Hockney, o, g float64, s size) Prediction {
	hi, lo := s.block(s.p)
	return logGPSteps(m, o, g, s.p-1, hi, lo, true)
}

// logGPLinearReduceTime: every other rank's send leaves after its o and
// reaches the root's port alpha + n beta later; the port takes them in
// g + n beta apart, and the root's CPU takes each in (o) and reduces it
// (n gamma) in turn: the first done at o + alpha + n beta + w, each
// further one max(w, g + n beta) later, w = o + n gamma. Hockney's
// linearReduce at o = g = 0.
func logGPLinearReduceTime(m Hockney, o, g float64, s size) float64 {
	nb := s.n * m.Beta
	w := o + s.n*m.Gamma
	return o + m.Alpha + nb + w + float64(s.p-2)*max(w, g+nb)
}

// logGPLinearBcastTime: the root's CPU issues the p-1 sends o apart, its
// port sends them g + n beta apart, and the last is taken in (o) alpha +
// n beta after it leaves. Hockney's linearBcast at o = g = 0.
func logGPLinearBcastTime(m Hockney, o, g float64, s size) float64 {
	nb := s.n * m.Beta
	return o + float64(s.p-2)*max(o, g+nb) + m.Alpha + nb + o
}

func logGPLinearReduce(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(logGPLinearReduceTime(m, o, g, s))
}

func logGPLinearBcast(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(logGPLinearBcastTime(m, o, g, s))
}

// logGPLinearAllreduce: the linear reduce to rank 0, then its linear bcast.
func logGPLinearAllreduce(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(logGPLinearReduceTime(m, o, g, s) + logGPLinearBcastTime(m, o, g, s))
}

// logGPLinearGather: logGPLinearReduceTime's arrivals without reductions,
// each of a block (between the smallest and the largest block's times
// when blocks differ).
func logGPLinearGather(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	hi, lo := s.block(s.p)
	m.Gamma = 0 // nothing is reduced
	f := func(c float64) float64 { return logGPLinearReduceTime(m, o, g, size{p: s.p, n: c}) }
	return between(f(lo), f(hi))
}

// logGPLinearScatter: logGPLinearBcastTime's sends, each of a block.
func logGPLinearScatter(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	hi, lo := s.block(s.p)
	f := func(c float64) float64 { return logGPLinearBcastTime(m, o, g, size{p: s.p, n: c}) }
	return between(f(lo), f(hi))
}

// logGPLinearAllgather: a linear gather to rank 0, then its linear bcast
// of the whole vector.
func logGPLinearAllgather(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	gather := logGPLinearGather(m, o, g, s)
	bcast := logGPLinearBcastTime(m, o, g, s)
	return Prediction{Time: gather.Time + bcast, Lower: gather.Lower + bcast, Exact: gather.Exact}
}

// logGPLinearAlltoall: every rank copies its own block (a local copy:
// free), its CPU issues its p-1 sends to the others o apart, then takes
// in their p-1 messages (o each). Its i-th send leaves at o + (i-1) q, q =
// max(o, g + n beta), and arrives alpha + n beta later; rank r takes in
// the i-th send of rank r-i, so each rank's messages arrive in that order,
// and its CPU takes them in once it has issued every send, or as they come.
func logGPLinearAlltoall(m Hockney, o, g float64, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	p := float64(s.p)
	nb := s.n * m.Beta
	q := max(o, g+nb)
	arrive := func(i float64) float64 { return o + (i-1)*q + m.Alpha + nb }
	// The last arrival plus its o, or the CPU's 2(p-1) o; the first
	// arrival plus p-2 receives is never later than the last plus one
	// (q >= o).
	return exact(max(2*(p-1)*o, arrive(p-1)+o))
}

// logGPLinearBarrier: the linear allreduce's messages, empty.
func logGPLinearBarrier(m Hockney, o, g float64, s size) Prediction {
	s.n = 0
	return logGPLinearAllreduce(m, o, g, s)
}
