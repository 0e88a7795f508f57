package collsim

import (
	"math"

	"github.com/collsim/collsim/workloads/redist"
)

// RedistResult is one redistribution of a matrix.
type RedistResult struct {
	Elapsed float64 `json:"elapsed_s"`
	// Bound is the one-port lower bound: the most time any rank needs to
	// send, or to receive, its bytes one message after another at the
	// full bandwidth of each message's path (the machine's bottleneck
	// link on its route), plus the smallest latency of a message. It
	// leaves out packing and local copies, so a schedule that packs
	// stays above it by at least its packing.
	Bound float64 `json:"bound_s"`
	Ratio float64 `json:"ratio"` // Elapsed / Bound (0 when nothing moves)
	// Moved is the bytes that change rank, Local those copied within a
	// rank; Messages counts messages, MaxRank is the most bytes one rank
	// sends or receives.
	Moved    int64   `json:"moved_bytes"`
	Local    int64   `json:"local_bytes"`
	MaxRank  int64   `json:"max_rank_bytes"`
	Messages int     `json:"message_count"`
	Result   *Result `json:"-"`
}

// RunRedistribution simulates job on the experiment's machine and
// compares it with the one-port bound.
func (e *Experiment) RunRedistribution(job redist.Job) (*RedistResult, error) {
	comp, err := job.Composition()
	if err != nil {
		return nil, &OptionError{Err: err}
	}
	flows, err := job.Exchange()
	if err != nil {
		return nil, &OptionError{Err: err}
	}
	res, err := e.RunComposition(comp)
	if err != nil {
		return nil, err
	}
	out := &RedistResult{Elapsed: res.Time, Result: res}
	m, place, err := e.placed(comp.Ranks)
	if err != nil {
		return nil, err
	}
	sendT, recvT := make([]float64, comp.Ranks), make([]float64, comp.Ranks)
	sent, recvd := make([]int64, comp.Ranks), make([]int64, comp.Ranks)
	alpha := math.Inf(1)
	for _, f := range flows {
		if f.From == f.To {
			out.Local += f.Bytes
			continue
		}
		a, b := m.PathParams(int(place[f.From]), int(place[f.To]))
		alpha = min(alpha, a)
		t := float64(f.Bytes) * b
		sendT[f.From] += t
		recvT[f.To] += t
		sent[f.From] += f.Bytes
		recvd[f.To] += f.Bytes
		out.Moved += f.Bytes
		out.Messages += f.Messages
	}
	if out.Moved > 0 {
		for r := range sendT {
			out.Bound = max(out.Bound, sendT[r], recvT[r])
			out.MaxRank = max(out.MaxRank, sent[r], recvd[r])
		}
		out.Bound += alpha
		out.Ratio = out.Elapsed / out.Bound
	}
	return out, nil
}
