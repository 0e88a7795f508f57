package realrun

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/collsim/collsim/sim"
)

// Job is one call a real run times: a schedule, and optionally the rank's
// data to run it with and the check of its result.
type Job struct {
	Name string
	// Bytes is the call's size, for reports; 0 (a barrier's) also tells
	// the single-copy probe the call moves no data.
	Bytes int64
	// Schedule is the program every rank runs; the rank runs its own part.
	Schedule sim.Schedule
	// Data returns this rank's freshly filled buffers before each
	// iteration (outside the timer); nil runs without data.
	Data func() ([][]uint64, error)
	// Verify checks this rank's buffers after each iteration.
	Verify func([][]uint64) error
}

// Bench times each job as the OSU micro-benchmarks do: warmup untimed
// iterations, then iterations timed one by one, with a barrier before
// each so that every rank starts together, and one after it so that no
// rank's checking overlaps another's call; every iteration's data is
// checked after that barrier. With timeline, each result keeps the spans
// of the ops of its last iteration. hook, when set, runs before each
// iteration (fault injection). The results are in the order of jobs.
func Bench(r *Rank, jobs []Job, warmup, iterations int, timeline bool, hook func(call int)) ([]Result, error) {
	return BenchInOrder(r, jobs, warmup, iterations, timeline, false, hook)
}

// BenchInOrder is Bench, and with interleave it times the jobs in rounds
// instead of one after the other: one iteration of every job, in order,
// then the next (warmup rounds first). A machine whose speed changes
// while the jobs run (another tenant, a host's frequency) then slows
// every job alike, where in turn it slows some jobs and not others and
// compares them across the change; each job keeps its buffers from one
// round to the next, so the rounds hold every job's buffers at once.
func BenchInOrder(r *Rank, jobs []Job, warmup, iterations int, timeline, interleave bool, hook func(call int)) ([]Result, error) {
	if iterations < 1 || warmup < 0 {
		return nil, fmt.Errorf("need at least 1 timed iteration and no negative warm-up, not %d and %d", iterations, warmup)
	}
	runs := make([]jobRun, len(jobs))
	for k := range jobs {
		runs[k] = jobRun{
			job: &jobs[k],
			res: Result{Timing: Timing{Name: jobs[k].Name, Bytes: jobs[k].Bytes, Iterations: iterations, Verified: jobs[k].Data != nil}},
			// A gate of its own, which collects at the job's first call:
			// what other jobs' calls allocate says nothing of this one's.
			gate: newGCGate(),
		}
	}
	b := bench{r: r, warmup: warmup, iterations: iterations, timeline: timeline, hook: hook}
	var err error
	if interleave {
		for it := 0; it < warmup+iterations && err == nil; it++ {
			for k := 0; k < len(runs) && err == nil; k++ {
				err = b.iterate(&runs[k], it)
			}
		}
	} else {
		for k := 0; k < len(runs) && err == nil; k++ {
			for it := 0; it < warmup+iterations && err == nil; it++ {
				err = b.iterate(&runs[k], it)
			}
		}
	}
	var out []Result
	for k := range runs {
		if len(runs[k].res.Times) < iterations {
			break // the results of the jobs timed whole, up to the failure
		}
		runs[k].res.Avg = runs[k].sum / time.Duration(iterations)
		out = append(out, runs[k].res)
	}
	if err != nil {
		return out, err
	}
	return out, r.Barrier()
}

// bench is what every iteration of a Bench shares.
type bench struct {
	r                  *Rank
	warmup, iterations int
	timeline           bool
	hook               func(call int)
	call               int // calls made, warm-up ones included
}

// jobRun is one job's state in a Bench: its result so far, its buffers,
// kept from one iteration to the next, and its collector gate.
type jobRun struct {
	job     *Job
	res     Result
	sum     time.Duration
	buffers [][]uint64
	gate    *gcGate
}

// iterate runs iteration it of j (warm-up while it < warmup).
func (b *bench) iterate(j *jobRun, it int) error {
	r := b.r
	var data [][]uint64
	if j.job.Data != nil {
		var err error
		if data, err = j.job.Data(); err != nil {
			return fmt.Errorf("rank %d: %s: %w", r.mesh.rank, j.job.Name, err)
		}
		j.buffers = reuse(j.buffers, data)
		data = j.buffers
	}
	if b.hook != nil {
		b.hook(b.call)
	}
	b.call++
	j.gate.before()
	if err := r.Barrier(); err != nil {
		return err
	}
	var spans spanRecorder
	if b.timeline && it == b.warmup+b.iterations-1 {
		r.Trace = spans.record
	}
	start := time.Now()
	err := r.Execute(j.job.Schedule, data)
	d := time.Since(start)
	j.gate.after()
	r.Trace = nil
	if err != nil {
		return fmt.Errorf("%s: %w", j.job.Name, err)
	}
	// Every rank out of the call before any checks its result and makes
	// the next call's data, as the OSU benchmarks put a barrier after each
	// timed call and validate after it: where ranks share cores, a rank
	// that finished early would take a core from one still in its call
	// (in a 1 MiB chain bcast on 4 ranks and 2 cores, the last sender
	// waited 0.5-0.8 ms for a core to see the last receiver's
	// acknowledgement).
	if err := r.Barrier(); err != nil {
		return err
	}
	j.res.Timeline = spans.done
	if j.job.Verify != nil && data != nil {
		if err := j.job.Verify(data); err != nil {
			return fmt.Errorf("%s: %w", j.job.Name, &WrongResultError{Err: err})
		}
	}
	if it < b.warmup {
		return nil
	}
	j.sum += d
	j.res.Times = append(j.res.Times, d)
	if it == b.warmup || d < j.res.Min {
		j.res.Min = d
	}
	j.res.Max = max(j.res.Max, d)
	return nil
}

// reuse copies fresh into kept and returns kept, when kept has fresh's
// shape, or else returns fresh, to be kept: as the OSU benchmarks (and Open
// MPI's test program) run every iteration in the same buffers, so that the
// timed calls do not pay for the first touch of new memory (a 16 MiB
// ping-pong spent most of its time in page faults on fresh buffers).
func reuse(kept, fresh [][]uint64) [][]uint64 {
	if len(kept) != len(fresh) {
		return fresh
	}
	for i := range fresh {
		if len(kept[i]) != len(fresh[i]) {
			return fresh
		}
	}
	for i := range fresh {
		sim.CopyWords(kept[i], fresh[i]) // leaves them in the cache, as a fill loop does
	}
	return kept
}

// RankOptions say how one rank joins and runs a real run.
type RankOptions struct {
	Rank, Size int
	// Rendezvous is the store's address (host:port).
	Rendezvous string
	// Bind is the IP address peers reach this rank at; "" picks the
	// address this host uses to reach the rendezvous.
	Bind string
	// Job identifies the run: ranks with different values refuse to work
	// together (see JobHash).
	Job uint64
	// Secret is the job's shared key: every connection proves it knows
	// it (see auth.go).
	Secret Secret
	// Transport says whether ranks on one host use shared memory.
	Transport Transport
	// SingleCopyAbove, when more than 0, is the message size in bytes
	// above which a rank sends data as single copies (see
	// Mesh.SetSingleCopyAbove); 0 those too large for a ring;
	// SingleCopyAuto those too large for a ring if a probe before the jobs
	// finds that faster (probeSingleCopy).
	SingleCopyAbove    int64
	Jobs               []Job
	Warmup, Iterations int
	// Timeout bounds each wait for progress, and registration and
	// connection together (at least MinSetup for those).
	Timeout time.Duration
	// Timeline keeps the op spans of each job's last iteration in the
	// report.
	Timeline bool
	// Interleave times the jobs in rounds (BenchInOrder).
	Interleave bool
	// Hook, when set, runs before each iteration with the mesh (fault
	// injection in tests).
	Hook func(call int, m *Mesh)
}

// RunRank is one rank's whole life in a real run: register at the
// rendezvous, connect to every peer, time the jobs, hand in the report,
// and close. Any failure, here or reported by another rank through the
// rendezvous, ends it with an error that names the rank and the cause.
func RunRank(ctx context.Context, o RankOptions) error {
	if o.Size < 1 || o.Rank < 0 || o.Rank >= o.Size {
		return fmt.Errorf("rank %d of %d: the rank must be in 0..size-1; check the launcher's environment", o.Rank, o.Size)
	}
	defer RemoveOwnFiles() // a setup cut short leaves no channel files behind
	bind := o.Bind
	if bind == "" {
		var err error
		if bind, err = routeTo(o.Rendezvous); err != nil {
			return fmt.Errorf("rank %d: %w", o.Rank, err)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		return fmt.Errorf("rank %d: cannot listen for peers on %s: %w", o.Rank, bind, err)
	}
	defer ln.Close()
	host, _ := os.Hostname()
	// An abort from the rendezvous ends the setup too: a rank waiting for
	// a peer that died must not wait out the setup's timeout.
	aborting, abortSetup := context.WithCancelCause(ctx)
	defer abortSetup(nil)
	setup, cancel := context.WithTimeout(aborting, SetupTimeout(o.Timeout))
	defer cancel()
	var running atomic.Pointer[Rank]
	aborted := make(chan error, 1)
	sc, addrs, err := Join(setup, o.Rendezvous, o.Rank, o.Size, o.Job, o.Secret, ln.Addr().String(), host, func(err error) {
		aborted <- err
		abortSetup(err)
		if r := running.Load(); r != nil {
			r.Fail(err)
		}
	})
	if err != nil {
		return err
	}
	mesh, err := Connect(setup, o.Rank, o.Size, o.Job, o.Secret, ln, addrs, o.Transport)
	if err != nil {
		sc.Finish(nil, err, o.Timeout)
		return err
	}
	if o.SingleCopyAbove > 0 {
		mesh.SetSingleCopyAbove(o.SingleCopyAbove)
	}
	rank := NewRank(mesh)
	rank.Timeout = o.Timeout
	running.Store(rank)
	stop := context.AfterFunc(ctx, func() { rank.Fail(fmt.Errorf("rank %d: %w", o.Rank, context.Cause(ctx))) }) // Ctrl-C, a launcher's SIGTERM
	defer stop()
	select {
	case err := <-aborted: // the abort came before the rank could hear it
		mesh.Abort(err)
		return err
	default:
	}
	var hook func(int)
	if o.Hook != nil {
		hook = func(call int) { o.Hook(call, mesh) }
	}
	var probe *Probe
	if o.SingleCopyAbove == SingleCopyAuto && o.Transport.shares() {
		probe, err = probeSingleCopy(rank, o.Jobs)
	}
	var results []Result
	if err == nil {
		results, err = BenchInOrder(rank, o.Jobs, o.Warmup, o.Iterations, o.Timeline, o.Interleave, hook)
	}
	if err != nil {
		// Tell the rendezvous first: peers that see this rank's
		// connections close would otherwise report that instead of the
		// cause.
		err = sc.Finish(nil, err, o.Timeout)
		mesh.Abort(err)
		return err
	}
	if err := mesh.Close(time.Now().Add(o.Timeout)); err != nil {
		return sc.Finish(nil, err, o.Timeout)
	}
	return sc.Finish(&Report{Rank: o.Rank, Host: host, SharedPeers: mesh.SharedPeers(), SingleCopyPeers: mesh.SingleCopyPeers(), SingleCopies: mesh.SingleCopies(), Oversubscribed: mesh.Oversubscribed(), SingleCopyProbe: probe, CPUs: CPUList(), Results: results}, nil, o.Timeout)
}

// routeTo returns the local IP address this host uses to reach addr.
func routeTo(addr string) (string, error) {
	c, err := net.Dial("udp", addr) // sends nothing: only picks the route
	if err != nil {
		return "", fmt.Errorf("no route to the rendezvous %s: %w", addr, err)
	}
	defer c.Close()
	ip, _, err := net.SplitHostPort(c.LocalAddr().String())
	if err != nil {
		return "", err
	}
	return ip, nil
}

// JobHash identifies a run by everything that must agree between ranks
// (the build, the schedule, the sizes, the options): ranks started with
// different ones refuse to work together instead of exchanging messages
// that do not match.
func JobHash(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// Span is one op of a real run, from start to completion, in nanoseconds
// of the rank's wall clock (comparable between ranks on one machine; on a
// cluster, only as far as its clocks agree).
type Span struct {
	Index int32  `json:"op"`
	Op    string `json:"what"`
	Start int64  `json:"start_ns"`
	End   int64  `json:"end_ns"`
	// The op's kind, peer, tag and bytes, for drawing it (Op says them in
	// words).
	Kind  sim.OpKind `json:"kind"`
	Peer  int32      `json:"peer"`
	Tag   int32      `json:"tag"`
	Bytes int64      `json:"bytes"`
}

// spanRecorder pairs an execution's start and completion events.
type spanRecorder struct {
	open map[int32]int // op index -> position in done
	done []Span
}

func (s *spanRecorder) record(e OpEvent) {
	if s.open == nil {
		s.open = map[int32]int{}
	}
	if !e.Completed {
		s.open[e.Index] = len(s.done)
		s.done = append(s.done, Span{Index: e.Index, Op: e.Op.String(), Start: e.At.UnixNano(), End: e.At.UnixNano(),
			Kind: e.Op.Kind, Peer: e.Op.Peer, Tag: e.Op.Tag, Bytes: e.Op.Bytes})
		return
	}
	if i, ok := s.open[e.Index]; ok {
		s.done[i].End = e.At.UnixNano()
		delete(s.open, e.Index)
	}
}
