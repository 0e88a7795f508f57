package sim

import (
	"errors"
	"fmt"
	"slices"
)

// OpKind says what an Op does.
type OpKind uint8

// The kinds of op.
const (
	OpSend OpKind = iota + 1 // send Bytes to Peer with Tag
	OpRecv                   // receive Bytes from Peer with Tag
	OpCalc                   // local computation
)

// String returns "send", "recv" or "calc".
func (k OpKind) String() string {
	switch k {
	case OpSend:
		return "send"
	case OpRecv:
		return "recv"
	case OpCalc:
		return "calc"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Region is a range of elements in one of a rank's data buffers. It only
// matters in data mode, where messages carry real elements.
type Region struct {
	Buf   uint8 // which of the rank's buffers
	Off   int64 // first element
	Count int64 // number of elements
	// Block and Stride, when Block is above 0 and below Count, make the
	// region a vector, as an MPI vector datatype does: Count elements
	// taken Block at a time, the blocks starting Stride elements apart
	// (backwards when negative), the last block short when Block does not
	// divide Count. A message's elements travel in that order. Block 0 (or
	// at least Count): Count elements in a row from Off.
	Block, Stride int64
}

// Op is one operation of a rank's program.
//
// Semantics the interpreter guarantees: an op starts once every op in its
// After list has completed; ops that become ready at the same moment start
// in program order; a Send captures its data when it starts (as a buffered
// send does), so a later receive into the same region cannot change what it
// sends; a Recv applies its data when it is matched.
type Op struct {
	Kind OpKind
	// Concurrent, on a Send, lets it leave alongside the rank's other
	// sends, sharing its NIC with them, as the non-blocking sends of an
	// algorithm that posts them all at once do (a linear alltoall). A send
	// without it leaves its rank's send queue only once the sends ahead of
	// it have left (see protocol.go).
	Concurrent bool
	// Reduce, on a Recv, combines the incoming elements into Data with the
	// schedule's ReduceOp instead of overwriting them, and charges the
	// reduction (Bytes at the host's reduce rate) on the receiving CPU; on
	// a Calc with Src, it combines Src into Data the same way (a local
	// reduction, such as MPI's ompi_op_reduce), charged as the Calc is.
	Reduce bool
	Peer   int32  // Send, Recv: the other rank; a Recv may use AnySource
	Tag    int32  // Send, Recv: matched FIFO per (source, tag), as MPI does; a Recv may use AnyTag
	CPU    uint16 // which of the rank's CPUs runs it (Schedule.CPUs)
	NIC    uint16 // which of the rank's NICs a Send or Recv uses (LogGOPS mode)
	// Bytes is the message size of a Send or Recv, and for a Calc the bytes
	// of local reduction work, charged at the host's reduce rate.
	Bytes int64
	// Dur is a Calc's fixed duration, added to the Bytes-based cost; in a
	// TraceEvent of a reducing Recv's completion, the time its reduction
	// took, the last of the op's time.
	Dur  Time
	Data Region // Send: elements sent; Recv: where they land; Calc with Src: where Src is copied
	// Src, on a Calc, is a local copy in data mode (a pack or an unpack):
	// when the op starts, Src's elements are copied to Data in their
	// regions' orders (same count). Its cost is the op's Dur and Bytes.
	// The simulated executor and runs over sockets both perform it.
	Src Region
	// After lists program indices of earlier ops of this rank that must
	// complete before this op starts (GOAL's requires). A Source may reuse
	// the backing array after its next call to Next.
	After []int32
	// StartAfter lists earlier ops that must have started before this op
	// starts (GOAL's irequires). Same rules as After.
	StartAfter []int32
	// NotBefore, from a ReactiveSource, is when the latest of the op's
	// dependencies that completed ahead of time (CompletedAt) completes:
	// it starts no earlier.
	NotBefore Time
}

// String describes op for error messages and traces.
func (op *Op) String() string {
	switch op.Kind {
	case OpSend:
		return fmt.Sprintf("send %dB to %d tag %d", op.Bytes, op.Peer, op.Tag)
	case OpRecv:
		verb := "recv"
		if op.Reduce {
			verb = "recv+reduce"
		}
		from, tag := fmt.Sprint(op.Peer), fmt.Sprint(op.Tag)
		if op.Peer == AnySource {
			from = "any"
		}
		if op.Tag == AnyTag {
			tag = "any"
		}
		return fmt.Sprintf("%s %dB from %s tag %s", verb, op.Bytes, from, tag)
	case OpCalc:
		return fmt.Sprintf("calc %v + %dB", op.Dur, op.Bytes)
	}
	return op.Kind.String()
}

// Source produces one rank's ops in program order, a few at a time, so
// that a program never has to exist in memory all at once.
type Source interface {
	// Next appends the rank's next ops to ops and returns the result. A
	// result with nothing appended ends the program.
	Next(ops []Op) []Op
}

// FailingSource is a Source that can stop early on an error of its own
// (a composed program whose script is wrong): when Next appends nothing,
// the executor asks Err, and a non-nil error ends the run with it.
type FailingSource interface {
	Source
	Err() error
}

// A MatchingSource is a Source told which message each of its receives
// took: the sender and tag (what a wildcard receive leaves open) of the
// receive it handed out idx-th, when the data is delivered, before the
// receive completes. A program that acts on what arrives (a master
// handing the next task to whichever worker answered first) is a
// ReactiveSource that is also a MatchingSource. Only the simulated
// executor of Schedules reports matches.
type MatchingSource interface {
	Source
	Received(idx, src, tag int32)
}

// ReactiveSource is a Source that hands out ops only once they are ready,
// learning of progress from the executor: its ops carry no After or
// StartAfter lists, so the executor keeps no dependency state for them. A
// materialized program whose dependencies were resolved in advance (a GOAL
// schedule) is best run this way: every ready op issues at once, wherever
// it stands in the program, at no cost for ops that are not ready.
type ReactiveSource interface {
	Source
	// Started and Completed report the op that Next handed out idx-th
	// (counting from 0), at the moment it starts and completes. Either may
	// make further ops ready.
	Started(idx int32)
	Completed(idx int32)
	// Ended reports whether Next has handed out every op.
	Ended() bool
	// Waiting returns how many ops are not yet ready, for deadlock reports.
	Waiting() int
	// NeedsStarts reports whether any op waits for another to start.
	NeedsStarts() bool
	// Needed reports whether any op waits for op idx to complete; if not,
	// the executor may complete it ahead of time without telling.
	Needed(idx int32) bool
	// CompletedAt reports, ahead of time, that op idx will complete at at
	// (later than now): the ops waiting for it are then held until at
	// (handed out with NotBefore) rather than released when it completes.
	// It declines (false: report Completed at at instead) when some op
	// waits for op idx alone, which the executor then starts by an event
	// at at, as it would without the report.
	CompletedAt(idx int32, at Time) bool
}

// ReduceOp is the element-wise combination applied by reducing receives.
type ReduceOp uint8

// Reduction operators. Sums wrap, so that every contribution counted twice
// or missed changes the result (with overwhelming probability for random
// inputs).
const (
	ReduceSum ReduceOp = iota // wrapping uint64 addition
	ReduceMax                 // maximum
)

// Apply combines src into dst element by element.
func (r ReduceOp) Apply(dst, src []uint64) {
	switch r {
	case ReduceSum:
		for i, v := range src {
			dst[i] += v
		}
	case ReduceMax:
		for i, v := range src {
			dst[i] = max(dst[i], v)
		}
	}
}

// Schedule is a collective (or any parallel program) as per-rank programs.
type Schedule struct {
	Name  string
	Ranks int
	// Rank returns a fresh Source for rank r's program.
	Rank func(r int) Source
	// Lookahead bounds how many read ops that still wait for dependencies
	// the interpreter holds before it stops reading a rank's program. The
	// default (0, meaning 1) is MPI program order: code after an unmet wait
	// has not run yet. Schedules read whole from files use a large value so
	// that every ready op issues as soon as it is ready (GOAL semantics).
	// The bound is exact for materialized programs (FromPrograms); a
	// Source that hands out several ops at once (a collective's step) is
	// read a whole hand-out at a time.
	Lookahead int
	// Buffers returns the element count of each of rank r's data buffers,
	// for data mode. Nil means the schedule moves no data.
	Buffers  func(r int) []int64
	ReduceOp ReduceOp
	// CPUs and NICs per rank (0 means 1): ops name one with Op.CPU, Op.NIC.
	CPUs, NICs int
}

// Program is one rank's ops held in memory: a materialized Source.
type Program []Op

// Materialize reads every rank's whole program; for small schedules only
// (validation, export, explanation). After slices are copied.
func Materialize(s Schedule) []Program {
	progs := make([]Program, s.Ranks)
	for r := range s.Ranks {
		src := s.Rank(r)
		var buf []Op
		for {
			buf = src.Next(buf[:0])
			if len(buf) == 0 {
				break
			}
			for _, op := range buf {
				op.After = slices.Clone(op.After)
				op.StartAfter = slices.Clone(op.StartAfter)
				progs[r] = append(progs[r], op)
			}
		}
	}
	return progs
}

// FromPrograms makes a Schedule that replays materialized programs.
func FromPrograms(name string, progs []Program, lookahead int) Schedule {
	return Schedule{
		Name:      name,
		Ranks:     len(progs),
		Lookahead: lookahead,
		Rank:      func(r int) Source { return &programSource{ops: progs[r]} },
	}
}

type programSource struct {
	ops  []Op
	next int
}

// Next hands out the program in chunks, so that replaying a large program
// costs no more memory than streaming it.
func (p *programSource) Next(ops []Op) []Op {
	return append(ops, p.view(programChunk)...)
}

// programChunk is the most ops a program hands out at once.
const programChunk = 64

// view is Next without the copy, of at most n ops: the program's own next
// ops, for readers that only read them (nextOps).
func (p *programSource) view(n int) []Op {
	end := min(p.next+min(n, programChunk), len(p.ops))
	v := p.ops[p.next:end:end]
	p.next = end
	return v
}

// nextOps returns src's next ops for an executor to read (not change),
// and the scratch slice to pass next time: a program's own ops where src
// is one (a real run's interpreter read each of a ping-pong's chunks of
// 64 ops in 0.12 us with the copy, 0.02-0.03 us without), else what
// src.Next appended to scratch. room is how many more ops may wait for
// dependencies before the reader reaches the schedule's Lookahead: a
// program hands out no more than that, since any op read may wait, so the
// bound holds exactly (with Lookahead 1, an op after one that waits is
// not read, nor run, until that one's dependencies are met, as MPI's
// program order has it).
func nextOps(src Source, scratch []Op, room int32) (ops, next []Op) {
	if p, ok := src.(*programSource); ok {
		return p.view(int(room)), scratch
	}
	ops = src.Next(scratch[:0])
	return ops, ops[:0]
}

// Validate checks a materialized schedule statically: peers and
// dependencies in range, and for every ordered pair of ranks and tag, the
// sends and receives agree in number and in sizes (where no receive uses a
// wildcard, which only running can pair). Every problem found is reported.
func Validate(progs []Program) error {
	type key struct{ src, dst, tag int32 }
	sends := map[key][]int64{}
	recvs := map[key][]int64{}
	var errs []error
	wild := false
	p := int32(len(progs))
	for r, prog := range progs {
		for i, op := range prog {
			if err := checkOp(int32(r), int32(i), &op, p); err != nil {
				errs = append(errs, err)
				continue
			}
			switch op.Kind {
			case OpSend:
				k := key{int32(r), op.Peer, op.Tag}
				sends[k] = append(sends[k], op.Bytes)
			case OpRecv:
				if op.Peer == AnySource || op.Tag == AnyTag {
					wild = true
				}
				k := key{op.Peer, int32(r), op.Tag}
				recvs[k] = append(recvs[k], op.Bytes)
			}
		}
	}
	if wild {
		return errors.Join(errs...)
	}
	keys := make([]key, 0, len(sends)+len(recvs))
	for k := range sends {
		keys = append(keys, k)
	}
	for k := range recvs {
		if _, ok := sends[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.src != b.src {
			return int(a.src - b.src)
		}
		if a.dst != b.dst {
			return int(a.dst - b.dst)
		}
		return int(a.tag - b.tag)
	})
	for _, k := range keys {
		s, r := sends[k], recvs[k]
		if !slices.Equal(s, r) {
			errs = append(errs, fmt.Errorf("rank %d -> %d tag %d: sends of %v bytes but receives of %v bytes", k.src, k.dst, k.tag, s, r))
		}
	}
	return errors.Join(errs...)
}

// checkOp reports an op that no interpreter could run. It formats nothing
// unless something is wrong: it runs once per op in the hot loop.
func checkOp(rank, index int32, op *Op, ranks int32) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("rank %d op %d (%v): %s", rank, index, op, fmt.Sprintf(format, args...))
	}
	switch op.Kind {
	case OpSend, OpRecv:
		wild := op.Kind == OpRecv
		if (op.Peer < 0 || op.Peer >= ranks) && !(wild && op.Peer == AnySource) {
			return bad("peer %d outside 0..%d", op.Peer, ranks-1)
		}
		if op.Tag < 0 && !(wild && op.Tag == AnyTag) {
			return bad("negative tag")
		}
		if op.Bytes < 0 {
			return bad("negative size")
		}
	case OpCalc:
		if op.Bytes < 0 || op.Dur < 0 {
			return bad("negative cost")
		}
		if op.Src.Count != 0 && op.Src.Count != op.Data.Count {
			return bad("a copy of %d elements into %d", op.Src.Count, op.Data.Count)
		}
		if why := op.Src.invalid(); why != "" {
			return bad("copy source: %s", why)
		}
	default:
		return bad("unknown op kind")
	}
	if why := op.Data.invalid(); why != "" {
		return bad("data region: %s", why)
	}
	for _, d := range op.After {
		if d < 0 || d >= index {
			return bad("depends on op %d, which is not an earlier op", d)
		}
	}
	for _, d := range op.StartAfter {
		if d < 0 || d >= index {
			return bad("start-depends on op %d, which is not an earlier op", d)
		}
	}
	return nil
}
