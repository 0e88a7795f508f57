package collsim

import (
	"fmt"
	"math"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
)

// TuneModel is what Tune chooses options by: the machine's alpha-beta-gamma
// model and the per-message costs the closed forms leave out, which are
// what a pipeline's segment trades against.
type TuneModel struct {
	Hockney  cost.Hockney
	Overhead float64 // seconds of CPU per send and per receive (LogP o)
	Gap      float64 // seconds between messages at a NIC (LogP g)
}

// TuneModelOf is m's TuneModel, given its alpha-beta-gamma model h.
func TuneModelOf(m *configs.Machine, h cost.Hockney) TuneModel {
	return TuneModel{Hockney: h, Overhead: m.Host.Overhead.Seconds(), Gap: m.Gap.Seconds()}
}

// segmentBudget bounds the messages a pipeline's default segment may make
// of one call: about 3 s of simulation on the analytic network. On a
// machine that charges nothing per message the model's time falls with the
// segment down to one element, and only this bound stops it.
const segmentBudget = 1 << 22

// segmentTolerance is how much slower than the model's best a segment may
// be and still be preferred for being larger: near its optimum the
// pipeline's time is flat, the model prices every hop as the slowest
// route, and larger segments cost fewer events to simulate and less of
// what the model leaves out per message (tiny segments of a reducing
// pipeline run slower than it says).
const segmentTolerance = 0.03

// pipeline is the shape of a pipelined algorithm as its segment's cost
// sees it: hops a segment takes that reduce it and that only move it, and
// messages a rank in the middle sends per segment.
type pipeline struct {
	reduceHops, moveHops int
	sends                int
}

// pipelineOf is a's pipeline on p ranks; ok is false for algorithms
// whose segment Tune does not choose.
func pipelineOf(a collectives.Algorithm, p int) (pipeline, bool) {
	switch {
	case a.Collective == collectives.Bcast && a.Name == "chain":
		return pipeline{moveHops: p - 1, sends: 1}, true
	case a.Collective == collectives.Reduce && a.Name == "chain":
		return pipeline{reduceHops: p - 1, sends: 1}, true
	case a.Collective == collectives.Allreduce && a.Name == "linear_pipeline":
		return pipeline{reduceHops: p - 1, moveHops: p - 1, sends: 2}, true
	}
	return pipeline{}, false
}

// time is the model's time for the pipeline to move n bytes in segments
// of s bytes: the first segment's trip, each hop a latency, its data and
// the CPU's overheads at both ends (and a handshake above the eager
// limit), then one period per further segment. The period is the busier of
// a middle rank's NIC (its sends' data, no closer than the gap) and its
// CPU (an overhead per send and receive, and the reduction). Latency holds
// neither, as on collsim's networks, so unlike the classic form
// (P-2+k)(alpha + s beta) it is paid once per hop, not once per segment.
func (t TuneModel) time(pl pipeline, n, s float64) float64 {
	h := t.Hockney
	k := math.Ceil(n / s)
	hop := h.Alpha + s*h.Beta + 2*t.Overhead
	rendezvous := h.Handshake > 0 && s > h.EagerLimit
	if rendezvous {
		hop += h.Handshake
	}
	first := float64(pl.reduceHops)*(hop+s*h.Gamma) + float64(pl.moveHops)*hop
	sends := float64(pl.sends)
	cpu := sends * t.Overhead // at P = 2 each rank sends or takes in each message
	if pl.reduceHops+pl.moveHops > pl.sends {
		cpu *= 2 // a rank in the middle does both
	}
	if pl.reduceHops > 0 {
		cpu += s * h.Gamma
	}
	period := max(sends*max(s*h.Beta, t.Gap), cpu)
	if rendezvous && pl.reduceHops > 0 {
		// A reducing rank keeps one receive posted: each segment's
		// handshake waits for the one before to be taken in and reduced.
		period = h.Handshake + s*h.Beta + cpu
	}
	return first + (k-1)*period
}

// PipelineSegment chooses the segment, in elements, of a pipelined
// algorithm (bcast and reduce chain, Linear Pipelining's allreduce) for
// count elements of elem bytes on p ranks: the largest whose modelled time
// (TuneModel.time) is within 3% of the best, among segments that keep the
// call within segmentBudget messages. It says why in words.
func PipelineSegment(a collectives.Algorithm, t TuneModel, p int, count, elem int64) (int64, string) {
	pl, ok := pipelineOf(a, p)
	if !ok || p < 2 || count < 1 {
		return max(count, 1), ""
	}
	elem = max(elem, 1)
	n := float64(count) * float64(elem)                 // (as floats: count x elem may pass int64)
	most := max(1, segmentBudget/int64(pl.sends*(p-1))) // segments the budget allows
	floor := count/most + min(1, count%most)
	cost := func(seg int64) float64 { return t.time(pl, n, float64(seg)*float64(elem)) }
	best, bestAll := math.Inf(1), math.Inf(1)
	var cands []int64
	for f := 1.0; ; f *= math.Pow(2, 0.125) { // eight candidates per doubling
		seg := count
		if f < float64(count) {
			seg = int64(f)
		}
		if len(cands) == 0 || seg != cands[len(cands)-1] {
			cands = append(cands, seg)
			bestAll = min(bestAll, cost(seg))
			if seg >= floor {
				best = min(best, cost(seg))
			}
		}
		if seg == count {
			break
		}
	}
	if floor > 1 {
		best = min(best, cost(floor))
		cands = append(cands, floor)
	}
	chosen := floor
	for _, seg := range cands {
		if seg >= floor && seg > chosen && cost(seg) <= best*(1+segmentTolerance) {
			chosen = seg
		}
	}
	k := count/chosen + min(1, count%chosen)
	segments := fmt.Sprintf("%d segments", k)
	if k == 1 {
		segments = "one segment"
	}
	perMessage := fmt.Sprintf("o = %s, g = %s", sim.FromSeconds(t.Overhead), sim.FromSeconds(t.Gap))
	if best > bestAll*(1+segmentTolerance) {
		// The budget, not the model, set it: say so, and what it costs.
		return chosen, fmt.Sprintf("segment %d elements (%s), within 3%% of the model's best time among segments that keep the call within %d messages, a default segment's budget: with %s per message smaller ones would be up to %s faster by the model (--segment sets one)",
			chosen, segments, segmentBudget, perMessage, sim.FromSeconds(best-bestAll))
	}
	return chosen, fmt.Sprintf("segment %d elements (%s), within 3%% of the model's best time with %s per message", chosen, segments, perMessage)
}
