package realrun

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/collsim/collsim/sim"
)

// Choosing single copies by measuring them. Whether a large message is
// faster through the rings or copied once depends on the machine, and on
// a virtual machine it changed from one day to the next: the rings copy
// each cache line twice and hand it from one core's cache to the other's
// twice (the writer takes the line the reader last held, the reader takes
// it back), a single copy once. Where the cores share a cache cheaply the
// rings won (16 MiB bcasts on 2 ranks: 1.47-1.69 ms through the rings,
// 4.22-4.78 ms copied once); on another host of the same kind, where
// vader's 8-byte one-way latency was 0.36 us instead of 0.13, the rings
// lost by 3x (16 MiB allreduce: 14.7 ms against 4.8 ms, Open MPI 5.4 ms).
// Open MPI copies once whatever the machine; collsim, to be as fast as the
// machine allows, measures both ways before the run when asked to choose
// (SingleCopyAuto, the default of collsim real).

// The same holds below a ring's size, where a message the ring holds
// leaves at once: in the fast spell 32-128 KiB bcasts on 2 ranks took
// 3-5x as long copied once from 16 KiB up as through the rings, in the
// slow one 1 MiB alltoalls 121 us copied once from 64 KiB up against 257
// us (256 KiB bcasts 43 us against 107 us). So the probe times a message
// below the ring's size too.

// SingleCopyAuto, given as RankOptions.SingleCopyAbove, makes every rank
// time both ways of moving messages before its jobs (probeSingleCopy) and
// send those above SingleCopyMidAbove as single copies if that was faster at
// midProbeBytes, or else those too large for a ring if that was faster
// at probeBytes.
const SingleCopyAuto = -1

// SingleCopyMidAbove is the size above which a rank copies messages once
// when its probe found single copies faster below a ring's size: a
// Probe's Above is this, a ring's size less a frame header, or
// SingleCopyOff.
const SingleCopyMidAbove = 64 << 10

const (
	// probeBytes is each rank's large message in the probe: more than a
	// ring holds (1 MiB at most), so that it is a single copy when those
	// are on.
	probeBytes = 2 << 20
	// midProbeBytes is the probe's message below a ring's size, copied
	// once above SingleCopyMidAbove.
	midProbeBytes = 128 << 10
	// probeRounds is how many timed exchanges the probe makes each way at
	// each size, alternated, after one untimed exchange each way.
	probeRounds = 4
)

// Probe is what a rank measured of the two ways before its jobs: the
// median of its exchanges through the rings and copied once, of
// probeBytes and of midProbeBytes.
type Probe struct {
	Rings     time.Duration `json:"rings_ns"`
	Single    time.Duration `json:"single_ns"`
	MidRings  time.Duration `json:"mid_rings_ns"`
	MidSingle time.Duration `json:"mid_single_ns"`
	// Above is the size in bytes above which the rank sends messages as
	// single copies for the rest of the run (SingleCopyOff: none); Chose
	// says it sends some so. In JSON it is left out when there are none.
	Above int64 `json:"single_copies_above"`
	Chose bool  `json:"single_copies"`
}

// MarshalJSON writes p with single_copies_above only when the rank copies
// some messages once: SingleCopyOff, the largest int64, read as a size
// by whoever takes the JSON, would be a threshold of 8 EiB.
func (p Probe) MarshalJSON() ([]byte, error) {
	type fields Probe // without this method
	out := struct {
		fields
		Above *int64 `json:"single_copies_above,omitempty"` // shadows fields.Above
	}{fields: fields(p)}
	if p.Above != SingleCopyOff {
		out.Above = &p.Above
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes: no single_copies_above is
// SingleCopyOff (ranks report their probes to rank 0 in JSON).
func (p *Probe) UnmarshalJSON(b []byte) error {
	type fields Probe // without this method
	var in struct {
		fields
		Above *int64 `json:"single_copies_above"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*p = Probe(in.fields)
	p.Above = SingleCopyOff
	if in.Above != nil {
		p.Above = *in.Above
	}
	return nil
}

// probeSingleCopy is the probe every rank of a run under SingleCopyAuto
// makes, all or none (it has barriers): each rank sends probeBytes, then
// midProbeBytes, to the next rank and receives as many from the one
// before, over the pairs that share memory only (both sides of a pair
// know it), alternately through the rings and copied once, and keeps the
// faster way for its own sends: single copies above SingleCopyMidAbove if they
// won at midProbeBytes, else above a ring's size if they won at
// probeBytes, else none. The ranks decide apart, each by its own
// exchanges, which is safe (a receiver takes both ways) and right where
// pairs differ. A rank that sends nothing in the probe (its next rank is
// on another host) or whose next rank may not read its memory keeps the
// rings. On a machine with more ranks than cores, where single copies are
// off (SetSingleCopyAbove), its ranks exchange nothing: both sides of a
// pair that shares memory are on that machine and know it alike. It
// returns what the rank measured, or nil if it sent nothing (or no job has
// data: sends without data never copy once, and barriers send nothing).
func probeSingleCopy(r *Rank, jobs []Job) (*Probe, error) {
	m := r.mesh
	m.SetSingleCopyAbove(SingleCopyOff)
	if m.size < 2 || !slices.ContainsFunc(jobs, func(j Job) bool { return j.Data != nil && j.Bytes > 0 }) {
		return nil, nil
	}
	next, prev := (m.rank+1)%m.size, (m.rank+m.size-1)%m.size
	exchanges := func(peer int) bool { return m.sharesWith(peer) && !m.yield }
	word := func(rank int, i int64) uint64 { return uint64(rank)<<32 | uint64(i) }
	exchange := func(bytes int64) Job {
		words := bytes / 8
		var prog sim.Program
		if exchanges(prev) {
			prog = append(prog, sim.Op{Kind: sim.OpRecv, Peer: int32(prev), Bytes: bytes, Data: sim.Region{Buf: 1, Count: words}})
		}
		if exchanges(next) {
			prog = append(prog, sim.Op{Kind: sim.OpSend, Peer: int32(next), Bytes: bytes, Data: sim.Region{Buf: 0, Count: words}})
		}
		// Only this rank's program is run here; the others' are their own.
		progs := make([]sim.Program, m.size)
		progs[m.rank] = prog
		send := make([]uint64, words)
		for i := range send {
			send[i] = word(m.rank, int64(i))
		}
		return Job{
			Name:     fmt.Sprintf("single-copy probe of %d bytes", bytes),
			Bytes:    bytes,
			Schedule: sim.FromPrograms("single-copy-probe", progs, 1),
			Data:     func() ([][]uint64, error) { return [][]uint64{send, make([]uint64, words)}, nil },
			Verify: func(bufs [][]uint64) error {
				if !exchanges(prev) {
					return nil
				}
				for i, w := range bufs[1] {
					if want := word(prev, int64(i)); w != want {
						return fmt.Errorf("word %d from rank %d is %#x, not %#x", i, prev, w, want)
					}
				}
				return nil
			},
		}
	}
	// Each job makes 2+2*probeRounds calls, an even number: call i copies
	// once when i is odd, above a ring's size in the first job and above
	// SingleCopyMidAbove in the second.
	const calls = 2 + 2*probeRounds
	single := func(call int) bool { return call%2 == 1 }
	above := [2]int64{0, SingleCopyMidAbove}
	r.probing = true
	res, err := Bench(r, []Job{exchange(probeBytes), exchange(midProbeBytes)}, 2, 2*probeRounds, false, func(call int) {
		m.SetSingleCopyAbove(SingleCopyOff)
		if single(call) {
			m.SetSingleCopyAbove(above[call/calls])
		}
		if probeCallForTest != nil {
			probeCallForTest(m, call)
		}
	})
	r.probing, r.probeCalls = false, r.epoch
	m.SetSingleCopyAbove(SingleCopyOff)
	m.probeCopies = m.copies
	if err != nil || !exchanges(next) {
		return nil, err
	}
	medians := func(times []time.Duration) (rings, copied time.Duration) {
		var rs, cs []time.Duration
		for i, d := range times {
			if single(2 + i) {
				cs = append(cs, d)
			} else {
				rs = append(rs, d)
			}
		}
		return median(rs), median(cs)
	}
	p := &Probe{}
	p.Rings, p.Single = medians(res[0].Times)
	p.MidRings, p.MidSingle = medians(res[1].Times)
	if probeMeasuredForTest != nil {
		probeMeasuredForTest(m.rank, p)
	}
	p.choose(m.readsMe[next], m.ringAbove())
	m.SetSingleCopyAbove(p.Above)
	return p, nil
}

// probeMeasuredForTest, when set (by tests), may change what a rank's
// probe measured before it chooses: a probe's choice is otherwise the
// machine's.
var probeMeasuredForTest func(rank int, p *Probe)

// probeCallForTest, when set (by tests), is called before each of the
// probe's calls, once the call's way of copying is set.
var probeCallForTest func(m *Mesh, call int)

// choose sets p's choice from its medians: single copies above
// SingleCopyMidAbove if they were faster at midProbeBytes, else above
// ringAbove (the largest message a ring takes) if they were faster at
// probeBytes, else none; none too when the next rank may not read this
// one's memory (readsNext false). A tie keeps the rings.
func (p *Probe) choose(readsNext bool, ringAbove int64) {
	p.Above = SingleCopyOff
	switch {
	case !readsNext:
	case p.MidSingle < p.MidRings:
		p.Above = SingleCopyMidAbove
	case p.Single < p.Rings:
		p.Above = ringAbove
	}
	p.Chose = p.Above != SingleCopyOff
}

// median is the middle of ds (the mean of the middle two), sorting ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	n := len(ds)
	return (ds[(n-1)/2] + ds[n/2]) / 2
}
