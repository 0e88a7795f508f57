package collectives

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/collsim/collsim/sim"
)

// Composing collectives: a program made of compute, point-to-point
// messages and collective calls on groups of ranks (sub-communicators),
// generated as ranks advance. Workloads write one Script per rank; Compose
// turns the scripts into a sim.Schedule. Hierarchical and SUARA build their
// subsets the same way (Call.on).

// Group is a sub-communicator: the world ranks of its members, in the
// order of the group's own numbering (member i is the group's rank i).
type Group []int

// Place is where one of a call's buffers lies in the rank's buffers, for
// data mode: the call's element i of that buffer is element Off+i of the
// rank's buffer Buf.
type Place struct {
	Buf uint8
	Off int64
}

// Call is one collective on a group, with its algorithm resolved. Build it
// with NewCall; it is read-only afterwards and may be shared by every
// member's script.
type Call struct {
	Collective Collective
	Group      Group
	Algorithm  Algorithm // what runs (a library's choice, resolved)
	Params     Params    // as it runs: Ranks is len(Group)
	Rule       string    // the library rule that chose Algorithm, if a selector did
	// Places maps the call's buffers (Buffers()) onto the rank's buffers
	// in data mode; nil places buffer i at the start of the rank's buffer
	// i.
	Places []Place
	// Context is the call's communicator (1..MaxContexts-1): calls on one
	// context are matched in the order each rank makes them, as MPI does
	// on one communicator; calls that may run at the same time must use
	// different contexts. Context 0 is point-to-point messages'.
	Context int
}

// Contexts: the tag space of a composed program is cut into MaxContexts
// equal ranges, one per context; an algorithm's tags must fit in one.
const (
	MaxContexts  = 128
	contextRange = math.MaxInt32/MaxContexts + 1 // 2^24 tags
	// MaxP2PTag bounds the tags of point-to-point items (context 0).
	MaxP2PTag = contextRange - 1
)

// SubHierarchy is how many consecutive members of group g share one of
// the blocks of size consecutive world ranks (a node, a Dragonfly group,
// under block placement): the NodeSize or GroupSize to give a call on g.
// It is 0 when size is 0 or the blocks do not cut g into runs of equal
// length (the last may be shorter, as a machine's last node may be),
// each block's members together (no hierarchy the call could use).
func SubHierarchy(g Group, size int) int {
	if size < 1 || len(g) == 0 {
		return 0
	}
	run := 0
	for run < len(g) && g[run]/size == g[0]/size {
		run++
	}
	seen := map[int]bool{}
	for start := 0; start < len(g); start += run {
		b := g[start] / size
		if seen[b] {
			return 0
		}
		seen[b] = true
		end := min(start+run, len(g))
		for i := start; i < end; i++ {
			if g[i]/size != b {
				return 0
			}
		}
		if end < len(g) && g[end]/size == b {
			return 0
		}
	}
	return run
}

// ContextOf is the context of a composed program's message tag (0 for
// point-to-point items).
func ContextOf(tag int32) int { return int(tag) / contextRange }

// NewCall resolves algorithm (a name of collsim algos, a library's
// selector such as "ompi", or "" for the collective's default) for a call
// of c on group with parameters p (p.Ranks is set to len(group)).
func NewCall(c Collective, algorithm string, group Group, p Params, context int) (*Call, error) {
	if len(group) == 0 {
		return nil, fmt.Errorf("%s: a call needs a group of at least one rank", c)
	}
	seen := make(map[int]bool, len(group))
	for _, r := range group {
		if r < 0 || seen[r] {
			return nil, fmt.Errorf("%s: group %v names rank %d twice or negative", c, short(group), r)
		}
		seen[r] = true
	}
	if context < 1 || context >= MaxContexts {
		return nil, fmt.Errorf("%s: context %d outside 1..%d (0 is point-to-point's)", c, context, MaxContexts-1)
	}
	p.Ranks = len(group)
	call := &Call{Collective: c, Group: group, Params: p, Context: context}
	if algorithm == "" {
		algorithm = DefaultAlgorithm(c)
	}
	if IsSelector(algorithm) {
		sel, err := Select(algorithm, c, p)
		if err != nil {
			return nil, err
		}
		call.Algorithm, call.Params, call.Rule = sel.Algorithm, sel.Params, sel.Rule
		call.Params.Ranks = len(group)
	} else {
		a, err := Lookup(c, algorithm)
		if err != nil {
			return nil, err
		}
		call.Algorithm = a
	}
	if err := call.check(); err != nil {
		return nil, err
	}
	if call.Algorithm.emptyMessages {
		call.Params.Count = int64(len(group)) // the knowledge vector, as Build has it
	}
	return call, nil
}

// check refuses parameters the algorithm cannot run with, as Build does.
func (c *Call) check() error {
	a := c.Algorithm
	if err := c.Params.check(a.Collective); err != nil {
		return fmt.Errorf("%s on %d ranks: %w", a.ID(), len(c.Group), err)
	}
	if a.needs != nil {
		if err := a.needs(c.Params); err != nil {
			return fmt.Errorf("%s on %d ranks: %w", a.ID(), len(c.Group), err)
		}
	}
	return nil
}

// Buffers returns the element counts of the call's buffers: the
// collective's, then the algorithm's scratch. Place them with Places.
func (c *Call) Buffers() []int64 { return c.Algorithm.buffers(c.Params) }

func (c *Call) elemSize() int64 {
	if c.Algorithm.emptyMessages {
		return 0
	}
	return c.Params.elemSize()
}

// on returns the program of member pos as a phase of an enclosing
// program: its peers are the group's world ranks, its tags start at
// tagBase, its ops wait for floor and its regions start at offset.
func (c *Call) on(pos, tagBase int, floor []int32, offset int64) *sub {
	if SendsNothing(c.Algorithm.Collective, c.Params) {
		return newSub(nothing{}, c.Group, tagBase, floor, offset)
	}
	return newSub(c.Algorithm.newRank(c.Params, pos), c.Group, tagBase, floor, offset)
}

func short(g Group) string {
	if len(g) <= 8 {
		return fmt.Sprint([]int(g))
	}
	return fmt.Sprintf("%v...(%d ranks)", []int(g[:8]), len(g))
}

// ItemKind says what an Item does.
type ItemKind uint8

// The kinds of item.
const (
	Compute  ItemKind = iota + 1 // Dur of work on the lane's processor
	Send                         // Bytes to Peer with Tag
	Recv                         // Bytes from Peer with Tag
	CallItem                     // the rank's part of Call, as member Pos
	Copy                         // a local copy of Src to Data (data mode; a pack or unpack), taking Dur
)

// Item is one step of a rank's composed program.
//
// Items run on lanes: each lane is a stream of the rank (a CPU thread, a
// GPU stream) with its own processor, running its items one after another,
// each once the one before it has completed (a blocking MPI call, a CUDA
// stream), unless that one was Async. Lanes run side by side. An item also
// waits for the items it names in After, on any lane.
type Item struct {
	Kind ItemKind
	Lane uint16
	// Async: the lane's next item does not wait for this one (MPI_Isend,
	// MPI_Irecv); only items that name it in After do. Collective calls
	// cannot be Async: put a call that overlaps others on its own lane.
	Async bool
	// After lists earlier items of the rank's script (by their index,
	// counting from 0 in the order the Script produced them).
	After []int32
	Dur   sim.Time // Compute
	Bytes int64    // Send, Recv; Compute: bytes of reduction work at the host's rate
	Peer  int      // Send, Recv: the world rank
	Tag   int      // Send, Recv: 0..MaxP2PTag
	Data  sim.Region
	Src   sim.Region // Copy
	Call  *Call      // CallItem
	Pos   int        // CallItem: the rank's position in Call.Group
}

// Script produces one rank's items in program order, a few at a time. A
// Script that can fail also has an Err method: when Next appends nothing,
// a non-nil Err stops the run with that error.
type Script interface {
	// Next appends the rank's next items to items and returns the result;
	// nothing appended ends the script. The Script may reuse After's
	// backing arrays after its next call.
	Next(items []Item) []Item
}

// Composition is a program composed of items, one Script per rank.
type Composition struct {
	Name  string
	Ranks int
	Lanes int // lanes per rank (0 means 1); each has its own CPU
	// Script returns a fresh script of rank r.
	Script func(r int) Script
	// Buffers gives rank r's data buffers for data mode (nil: no data).
	Buffers func(r int) []int64
	// Window bounds how many read ops may wait for dependencies at once
	// per rank (sim.Schedule.Lookahead); 0 means DefaultWindow.
	Window int
}

// DefaultWindow is a composition's default read-ahead: for every
// registered algorithm but the two-level composites (han, smp), timing
// does not depend on the read-ahead (TestLookaheadInsensitive), so a
// composition may read far ahead on one lane while another waits.
const DefaultWindow = 4096

// Schedule returns the composition's schedule. Scripts are read as ranks
// advance: ops in memory grow with the window, not the program.
func (c Composition) Schedule() sim.Schedule {
	lanes := max(c.Lanes, 1)
	return sim.Schedule{
		Name:      c.Name,
		Ranks:     c.Ranks,
		Rank:      func(r int) sim.Source { return newComposer(r, lanes, c.Script(r)) },
		Buffers:   c.Buffers,
		Lookahead: cmp.Or(c.Window, DefaultWindow),
		CPUs:      lanes,
	}
}

// composer is one rank's composed program as a sim.Source: it reads the
// script's items into per-lane queues and emits them lane by lane in
// turn, one step at a time, so that a lane waiting on the network never
// stops another from being read.
type composer struct {
	rank   int
	b      builder
	script Script
	ended  bool // the script has no more items
	pulls  int  // calls of pull so far
	buf    []Item
	lanes  []lane
	rr     int
	// done[i] is where item i's completing ops lie in pool (n < 0: not
	// yet emitted).
	done []doneSpan
	pool []int32
	// ctxLane is the lane each context was first used on (-1: none);
	// ctxSeq is unused: calls on one context run in lane order.
	ctxLane [MaxContexts]int16
	err     error
}

type doneSpan struct{ off, n int32 }

// maxQueued bounds the items a lane's advance reads ahead of need.
const maxQueued = 1024

// queued is how many items wait in the lanes' queues.
func (c *composer) queued() int {
	n := 0
	for i := range c.lanes {
		n += len(c.lanes[i].queue) - c.lanes[i].head
	}
	return n
}

// noOps stands for "done with nothing to wait for": -1 is no dependency.
var noOps = []int32{-1}

type lane struct {
	queue    []queued
	head     int
	active   *sub // the call in progress
	call     *Call
	elemSize int64
	item     int32
	last     []int32 // what the lane's next item waits for
}

type queued struct {
	it  Item
	idx int32
}

func newComposer(r, lanes int, s Script) *composer {
	c := &composer{rank: r, script: s, lanes: make([]lane, lanes)}
	for i := range c.ctxLane {
		c.ctxLane[i] = -1
	}
	return c
}

// Next emits the next step of the first lane, in turn, that can make one.
func (c *composer) Next(ops []sim.Op) []sim.Op {
	c.b.ops, c.b.deps = ops, c.b.deps[:0]
	if c.err != nil {
		return c.b.ops
	}
	for {
		pulls, records := c.pulls, len(c.pool)
		for i := range c.lanes {
			l := (c.rr + i) % len(c.lanes)
			if c.advance(l) {
				c.rr = (l + 1) % len(c.lanes)
				return c.b.ops
			}
			if c.err != nil {
				return c.fail()
			}
		}
		if pulls != c.pulls || records != len(c.pool) {
			// A lane tried earlier in the round may have items now, or
			// the items it waits for may be done (a call that ended
			// without a last op).
			continue
		}
		if c.ended {
			for l := range c.lanes {
				if c.lanes[l].head < len(c.lanes[l].queue) || c.lanes[l].active != nil {
					c.err = fmt.Errorf("rank %d: lane %d's next item waits for an item that never comes (a cycle between lanes)", c.rank, l)
					return c.fail()
				}
			}
			return c.b.ops // the program ends
		}
		c.pull()
	}
}

// fail ends the ops; the executor then asks Err why.
func (c *composer) fail() []sim.Op { return c.b.ops[:0] }

// Err implements sim.FailingSource: what stopped the program early.
func (c *composer) Err() error { return c.err }

// pull reads the script's next items into their lanes.
func (c *composer) pull() {
	c.pulls++
	c.buf = c.script.Next(c.buf[:0])
	if fs, ok := c.script.(interface{ Err() error }); ok && len(c.buf) == 0 {
		if err := fs.Err(); err != nil {
			c.err = fmt.Errorf("rank %d: %w", c.rank, err)
			return
		}
	}
	if len(c.buf) == 0 {
		c.ended = true
		return
	}
	for _, it := range c.buf {
		idx := int32(len(c.done))
		c.done = append(c.done, doneSpan{n: -1})
		if int(it.Lane) >= len(c.lanes) {
			c.err = fmt.Errorf("rank %d item %d: lane %d, but the composition has %d", c.rank, idx, it.Lane, len(c.lanes))
			return
		}
		it.After = slices.Clone(it.After)
		l := &c.lanes[it.Lane]
		l.queue = append(l.queue, queued{it, idx})
	}
}

// advance emits lane l's next step; false if it has none now (empty, or
// its next item waits for an item not yet emitted).
func (c *composer) advance(l int) bool {
	ln := &c.lanes[l]
	for {
		if ln.active != nil {
			saveElem, saveOverlap := c.b.elemSize, c.b.overlap
			call := ln.call
			c.b.elemSize, c.b.overlap, c.b.places, c.b.cpu = ln.elemSize, call.Params.Overlap, call.Places, uint16(l)
			c.b.tagCeil = int64(call.Context+1) * contextRange
			before := c.b.next
			more := ln.active.step(&c.b)
			c.b.elemSize, c.b.overlap, c.b.places, c.b.tagCeil, c.b.cpu = saveElem, saveOverlap, nil, 0, 0
			if c.b.tagErr {
				c.err = fmt.Errorf("rank %d: %s uses tags past its context's range of %d", c.rank, call.Algorithm.ID(), contextRange)
				return false
			}
			if c.b.next > before {
				if !more {
					c.finish(ln)
				}
				return true
			}
			if more {
				continue
			}
			c.finish(ln)
		}
		if ln.head == len(ln.queue) {
			ln.queue, ln.head = ln.queue[:0], 0
			// Read on only while few items wait: a lane that has nothing
			// for a long stretch of the script must not pull all of it
			// into the other lanes' queues (Next pulls when no lane can
			// move).
			if c.ended || c.err != nil || c.queued() >= maxQueued {
				return false
			}
			c.pull()
			if c.err != nil || ln.head == len(ln.queue) {
				return false
			}
		}
		q := &ln.queue[ln.head]
		floor, ok := c.deps(ln, q)
		if !ok {
			return false
		}
		ln.head++
		if q.it.Kind == CallItem {
			if err := c.start(ln, l, q, floor); err != nil {
				c.err = err
				return false
			}
			continue
		}
		op, err := c.op(&q.it)
		if err != nil {
			c.err = err
			return false
		}
		c.b.cpu = uint16(l)
		idx := c.b.emit(op, floor)
		c.b.cpu = 0
		c.record(q.idx, []int32{idx})
		if !q.it.Async {
			ln.last = append(ln.last[:0], idx)
		}
		return true
	}
}

// deps is what item q waits for: the lane's previous item and the items
// it names; ok is false while one of those is not yet emitted.
func (c *composer) deps(ln *lane, q *queued) (floor []int32, ok bool) {
	for _, a := range q.it.After {
		if a < 0 || a >= q.idx {
			c.err = fmt.Errorf("rank %d item %d: After names item %d, which is not an earlier item", c.rank, q.idx, a)
			return nil, false
		}
		if c.done[a].n < 0 {
			return nil, false
		}
	}
	floor = append([]int32(nil), ln.last...)
	for _, a := range q.it.After {
		d := c.done[a]
		for _, op := range c.pool[d.off : d.off+d.n] {
			if op >= 0 {
				floor = append(floor, op)
			}
		}
	}
	return floor, true
}

// start begins the rank's part of a collective call on lane l.
func (c *composer) start(ln *lane, l int, q *queued, floor []int32) error {
	call := q.it.Call
	if call == nil || q.it.Pos < 0 || q.it.Pos >= len(call.Group) || call.Group[q.it.Pos] != c.rank {
		return fmt.Errorf("rank %d item %d: not member %d of its call's group", c.rank, q.idx, q.it.Pos)
	}
	if q.it.Async {
		return fmt.Errorf("rank %d item %d: a collective call cannot be Async; give it its own lane", c.rank, q.idx)
	}
	if call.Places != nil && len(call.Places) < len(call.Buffers()) {
		return fmt.Errorf("rank %d item %d: %s has %d buffers but %d places", c.rank, q.idx, call.Algorithm.ID(), len(call.Buffers()), len(call.Places))
	}
	ctx := call.Context
	switch {
	case ctx < 1 || ctx >= MaxContexts:
		return fmt.Errorf("rank %d item %d: context %d outside 1..%d", c.rank, q.idx, ctx, MaxContexts-1)
	case c.ctxLane[ctx] < 0:
		c.ctxLane[ctx] = int16(l)
	case int(c.ctxLane[ctx]) != l:
		return fmt.Errorf("rank %d item %d: context %d is used on lanes %d and %d; calls that may run at once need their own contexts", c.rank, q.idx, ctx, c.ctxLane[ctx], l)
	}
	ln.active = call.on(q.it.Pos, ctx*contextRange, floor, 0)
	ln.call, ln.elemSize = call, call.elemSize()
	ln.item = q.idx
	return nil
}

// finish records the completing ops of lane ln's call.
func (c *composer) finish(ln *lane) {
	d := ln.active.done()
	c.record(ln.item, d)
	ln.last = append(ln.last[:0], d...)
	ln.active = nil
}

func (c *composer) record(item int32, ops []int32) {
	if len(ops) == 0 {
		ops = noOps // the pool still grows, so that Next sees progress
	}
	c.done[item] = doneSpan{off: int32(len(c.pool)), n: int32(len(ops))}
	c.pool = append(c.pool, ops...)
}

// op is the single op of a compute, send or receive item.
func (c *composer) op(it *Item) (sim.Op, error) {
	op := sim.Op{Data: it.Data}
	switch it.Kind {
	case Compute:
		op.Kind, op.Dur, op.Bytes = sim.OpCalc, it.Dur, it.Bytes
	case Copy:
		op.Kind, op.Dur, op.Src = sim.OpCalc, it.Dur, it.Src
	case Send, Recv:
		op.Kind, op.Bytes, op.Peer, op.Tag = sim.OpSend, it.Bytes, int32(it.Peer), int32(it.Tag)
		if it.Kind == Recv {
			op.Kind = sim.OpRecv
		}
		if it.Tag < 0 || it.Tag > MaxP2PTag {
			return op, fmt.Errorf("rank %d: point-to-point tag %d outside 0..%d", c.rank, it.Tag, MaxP2PTag)
		}
		if it.Peer < 0 || it.Peer > math.MaxInt32 {
			return op, fmt.Errorf("rank %d: peer %d", c.rank, it.Peer)
		}
	default:
		return op, fmt.Errorf("rank %d: unknown item kind %d", c.rank, it.Kind)
	}
	return op, nil
}
