package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func run(t *testing.T, progs []Program, cfg Config) (*Result, error) {
	t.Helper()
	if cfg.Network == nil {
		cfg.Network = FixedLatency(10 * Nanosecond)
	}
	return Execute(New(1), FromPrograms("test", progs, 0), cfg)
}

func send(peer, tag int32, bytes int64, after ...int32) Op {
	return Op{Kind: OpSend, Peer: peer, Tag: tag, Bytes: bytes, After: after}
}

func recv(peer, tag int32, bytes int64, after ...int32) Op {
	return Op{Kind: OpRecv, Peer: peer, Tag: tag, Bytes: bytes, After: after}
}

func TestPingPongTiming(t *testing.T) {
	// Rank 0 sends, then waits for the reply; each message takes 10ns and
	// each send or receive costs 1ns of CPU: 1 (o) + 10 + 1 (o) at rank 1,
	// which then replies: + 1 + 10 + 1 = 24ns.
	progs := []Program{
		{send(1, 0, 8), recv(1, 1, 8, 0)},
		{recv(0, 0, 8), send(0, 1, 8, 0)},
	}
	res, err := run(t, progs, Config{Host: HostParams{Overhead: Nanosecond, EagerLimit: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Finish[0] != 24*Nanosecond || res.Finish[1] != 13*Nanosecond {
		t.Fatalf("finish = %v, want [24ns 13ns]", res.Finish)
	}
	if res.Ops != 4 || res.Messages != 2 || res.Bytes != 16 {
		t.Fatalf("ops %d messages %d bytes %d, want 4 2 16", res.Ops, res.Messages, res.Bytes)
	}
}

// TestFreeHosts: the ping-pong of TestPingPongTiming with a reducing
// reply of 1,000 bytes at 1 ps/B (1ns); FreeHosts frees the o of the
// messages it picks, at both ends, and the reduction: by hand, with
// nothing free 1 + 10 + 1 then 1 + 10 + 1 + 1 = 25ns; the reply (tag 1)
// free: 12 + 10 = 22ns; both: 20ns.
func TestFreeHosts(t *testing.T) {
	reply := recv(1, 1, 1000, 0)
	reply.Reduce = true
	progs := []Program{
		{send(1, 0, 8), reply},
		{recv(0, 0, 8), send(0, 1, 1000, 0)},
	}
	for _, c := range []struct {
		free func(int32) bool
		want Time
	}{
		{nil, 25 * Nanosecond},
		{func(tag int32) bool { return tag == 1 }, 22 * Nanosecond},
		{func(int32) bool { return true }, 20 * Nanosecond},
	} {
		res, err := run(t, progs, Config{Host: HostParams{Overhead: Nanosecond, ReducePsPerByte: 1, EagerLimit: 1 << 20}, FreeHosts: c.free})
		if err != nil {
			t.Fatal(err)
		}
		if res.Finish[0] != c.want {
			t.Errorf("finish %v, want %v", res.Finish[0], c.want)
		}
	}
}

func TestRendezvousSendWaitsForMatch(t *testing.T) {
	// Rank 1 posts its receive only after a 100ns calc; every transfer
	// takes 10ns. Eager: the data leaves at once (the send is done at 0)
	// and arrives at 10, and the receive takes it when posted, at 100.
	// Rendezvous: the request arrives at 10 and waits; the receive, posted
	// at 100, answers; the reply reaches the sender at 110, when the data
	// leaves (the send is done), and the data arrives at 120.
	progs := []Program{
		{send(1, 0, 64)},
		{{Kind: OpCalc, Dur: 100 * Nanosecond}, recv(0, 0, 64, 0)},
	}
	for _, tc := range []struct {
		eager            int64
		sender, receiver Time
	}{{64, 0, 100 * Nanosecond}, {63, 110 * Nanosecond, 120 * Nanosecond}} {
		res, err := run(t, progs, Config{Host: HostParams{EagerLimit: tc.eager}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Finish[0] != tc.sender || res.Finish[1] != tc.receiver {
			t.Errorf("eager limit %d: finished at %v, want [%v %v]", tc.eager, res.Finish, tc.sender, tc.receiver)
		}
		if want := uint64(b2i(tc.eager < 64)); res.Rendezvous != want {
			t.Errorf("eager limit %d: %d messages by rendezvous, want %d", tc.eager, res.Rendezvous, want)
		}
	}
}

// TestRendezvousCount counts the messages above the eager limit, among
// the messages to other ranks: a send to oneself is a local copy, never a
// message (Messages counts the other four).
func TestRendezvousCount(t *testing.T) {
	progs := []Program{
		{send(1, 0, 100), send(1, 1, 10), send(0, 2, 100), recv(0, 2, 100), recv(1, 3, 50)},
		{recv(0, 0, 100), recv(0, 1, 10), send(0, 3, 50)},
	}
	for _, tc := range []struct {
		eager int64
		want  uint64
	}{{1000, 0}, {100, 0}, {99, 1}, {49, 2}, {9, 3}} {
		res, err := run(t, progs, Config{Host: HostParams{EagerLimit: tc.eager}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rendezvous != tc.want || res.Messages != 4 {
			t.Errorf("eager limit %d: %d of %d messages by rendezvous, want %d of 4", tc.eager, res.Rendezvous, res.Messages, tc.want)
		}
	}
}

func TestMatchingIsFIFOPerSourceAndTag(t *testing.T) {
	// Two messages with the same tag land in order; a third with another
	// tag is matched by tag, whatever the posting order.
	progs := []Program{
		{
			{Kind: OpSend, Peer: 1, Tag: 5, Bytes: 8, Data: Region{Off: 0, Count: 1}},
			{Kind: OpSend, Peer: 1, Tag: 5, Bytes: 8, Data: Region{Off: 1, Count: 1}},
			{Kind: OpSend, Peer: 1, Tag: 6, Bytes: 8, Data: Region{Off: 2, Count: 1}},
		},
		{
			{Kind: OpRecv, Peer: 0, Tag: 6, Bytes: 8, Data: Region{Off: 0, Count: 1}},
			{Kind: OpRecv, Peer: 0, Tag: 5, Bytes: 8, Data: Region{Off: 1, Count: 1}},
			{Kind: OpRecv, Peer: 0, Tag: 5, Bytes: 8, Data: Region{Off: 2, Count: 1}},
		},
	}
	data := [][][]uint64{{{10, 11, 12}}, {{0, 0, 0}}}
	if _, err := run(t, progs, Config{Data: data, Network: RandomLatency(50)}); err != nil {
		t.Fatal(err)
	}
	if got := data[1][0]; got[0] != 12 || got[1] != 10 || got[2] != 11 {
		t.Fatalf("rank 1 got %v, want [12 10 11]", got)
	}
}

func TestDeadlockNamesRanksAndOps(t *testing.T) {
	// Both ranks receive before they send: a classic deadlock.
	progs := []Program{
		{recv(1, 0, 8), send(1, 0, 8, 0)},
		{recv(0, 0, 8), send(0, 0, 8, 0)},
		{},
	}
	_, err := run(t, progs, Config{})
	var de *DeadlockError
	if !errors.As(err, &de) {
		t.Fatalf("got %v, want a DeadlockError", err)
	}
	if len(de.Blocked) != 2 || de.Blocked[0] != 0 || de.Blocked[1] != 1 {
		t.Fatalf("blocked ranks %v, want [0 1]", de.Blocked)
	}
	msg := err.Error()
	for _, want := range []string{"2 of 3 ranks", "rank 0 op 0 recv 8B from 1 tag 0: posted; no matching send arrived", "rank 1 op 1 send 8B to 0 tag 0: waits for 1 earlier ops"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

func TestRendezvousDeadlock(t *testing.T) {
	// Both ranks send a large message before receiving: with rendezvous
	// neither send completes, so the receives that follow them never post.
	progs := []Program{
		{send(1, 0, 1000), recv(1, 0, 1000, 0)},
		{send(0, 0, 1000), recv(0, 0, 1000, 0)},
	}
	if _, err := run(t, progs, Config{Host: HostParams{EagerLimit: 100}}); err == nil || !strings.Contains(err.Error(), "rendezvous request sent; no matching receive was posted") {
		t.Fatalf("got %v, want a rendezvous deadlock", err)
	}
	if _, err := run(t, progs, Config{Host: HostParams{EagerLimit: 1000}}); err != nil {
		t.Fatalf("eager exchange failed: %v", err)
	}
}

func TestUnmatchedMessageIsAnError(t *testing.T) {
	progs := []Program{{send(1, 3, 8)}, {}}
	_, err := run(t, progs, Config{Host: HostParams{EagerLimit: 8}})
	if err == nil || !strings.Contains(err.Error(), "message of 8B from rank 0 tag 3") {
		t.Fatalf("got %v, want an unmatched-message error", err)
	}
}

// A receive is the room for a message, as in MPI: a larger message is an
// error (MPI_ERR_TRUNCATE); a smaller one is received, and costs what its
// own size costs (under LogGOPS, where G prices every byte): an 8-byte
// message into room for 4096 takes as long as into room for 8, and less
// than a 4096-byte message.
func TestReceiveSizeIsRoom(t *testing.T) {
	progs := []Program{{send(1, 0, 16)}, {recv(0, 0, 8)}}
	_, err := run(t, progs, Config{Host: HostParams{EagerLimit: 8}})
	if err == nil || !strings.Contains(err.Error(), "matched a message of 16 bytes from rank 0 op 0: larger than the receive (MPI_ERR_TRUNCATE)") {
		t.Fatalf("got %v, want a truncation error", err)
	}
	lg := DefaultLogGOPS
	makespan := func(bytes, room int64) Time {
		res, err := Execute(New(1), FromPrograms("room", []Program{{send(1, 0, bytes)}, {recv(0, 0, room)}}, 0), Config{LogGOPS: &lg})
		if err != nil {
			t.Fatalf("%d bytes into room for %d: %v", bytes, room, err)
		}
		return res.Makespan
	}
	if a, b, c := makespan(8, 8), makespan(8, 4096), makespan(4096, 4096); a != b || !(a < c) {
		t.Errorf("8 B into 8: %v, into 4096: %v, 4096 B: %v; want the first two equal and below the third", a, b, c)
	}
}

func TestBadOpsAreErrors(t *testing.T) {
	for name, prog := range map[string]Program{
		"peer out of range": {send(5, 0, 8)},
		"forward dep":       {send(1, 0, 8, 0)},
		"negative size":     {send(1, 0, -1)},
	} {
		if _, err := run(t, []Program{prog, {}}, Config{}); err == nil {
			t.Errorf("%s: no error", name)
		}
		if err := Validate([]Program{prog, {}}); err == nil {
			t.Errorf("%s: Validate found nothing", name)
		}
	}
}

func TestValidateFindsUnpairedTraffic(t *testing.T) {
	err := Validate([]Program{{send(1, 0, 8), send(1, 0, 8)}, {recv(0, 0, 8)}})
	if err == nil || !strings.Contains(err.Error(), "rank 0 -> 1 tag 0") {
		t.Fatalf("got %v", err)
	}
}

// A long chain of zero-cost ops completes without recursion, in one instant.
func TestLongZeroCostChain(t *testing.T) {
	const n = 200000
	prog := make(Program, n)
	prog[0] = Op{Kind: OpCalc}
	for i := 1; i < n; i++ {
		prog[i] = Op{Kind: OpCalc, After: []int32{int32(i - 1)}}
	}
	res, err := run(t, []Program{prog}, Config{})
	if err != nil || res.Ops != n || res.Makespan != 0 {
		t.Fatalf("ops %d makespan %v err %v", res.Ops, res.Makespan, err)
	}
}

func TestCalcOccupiesTheCPU(t *testing.T) {
	// Two independent calcs on one rank run one after the other.
	prog := Program{{Kind: OpCalc, Dur: 5}, {Kind: OpCalc, Bytes: 10}}
	res, err := Execute(New(1), FromPrograms("calc", []Program{prog}, 8), Config{
		Host: HostParams{ReducePsPerByte: 2}, Network: FixedLatency(0)})
	if err != nil || res.Makespan != 25 {
		t.Fatalf("makespan %v err %v, want 25ps", res.Makespan, err)
	}
}

// Ops freed by the same completion start in program order, and a send
// captures its data at start: so an exchange of running sums with a
// reducing receive ordered after the send never double counts.
func TestSendCapturesDataAtStartAndReadyOpsStartInOrder(t *testing.T) {
	mk := func(peer int32) Program {
		return Program{
			{Kind: OpCalc, Dur: 5},
			{Kind: OpSend, Peer: peer, Bytes: 8, Data: Region{Count: 1}, After: []int32{0}},
			{Kind: OpRecv, Peer: peer, Bytes: 8, Reduce: true, Data: Region{Count: 1}, After: []int32{0}},
		}
	}
	for _, look := range []int{1, 100} {
		data := [][][]uint64{{{3}}, {{4}}}
		_, err := Execute(New(1), FromPrograms("x", []Program{mk(1), mk(0)}, look), Config{
			Data: data, Host: HostParams{Overhead: 7, EagerLimit: 8}, Network: FixedLatency(0)})
		if err != nil {
			t.Fatal(err)
		}
		if data[0][0][0] != 7 || data[1][0][0] != 7 {
			t.Fatalf("lookahead %d: got %d and %d, want 7 and 7", look, data[0][0][0], data[1][0][0])
		}
	}
}

// earlyNetwork reports every injection at once, 100ps ahead, and delivers
// 150ps after the injection: it exercises completion ahead of time.
type earlyNetwork struct {
	eng  *Engine
	sink Sink
	id   HandlerID
}

func (n *earlyNetwork) Inject(tr Transfer) {
	n.sink.Injected(tr.ID, n.eng.Now()+100)
	n.eng.After(150, n.id, uint64(tr.ID))
}

func (n *earlyNetwork) Handle(arg uint64) { n.sink.Delivered(uint32(arg)) }

func early(eng *Engine, sink Sink, ranks int) (Network, error) {
	n := &earlyNetwork{eng: eng, sink: sink}
	n.id = eng.Register(n)
	return n, nil
}

// A send reported complete ahead of time still completes at its time: an
// op read later that depends on it waits until then, and a rank whose last
// op is such a send finishes then.
func TestSendsCompletedAheadOfTime(t *testing.T) {
	progs := []Program{
		// The calc is read after the send has issued and been reported
		// done ahead of time (at 100): it must still wait until 100.
		{send(1, 0, 8), {Kind: OpCalc, Dur: 7, After: []int32{0}}},
		{recv(0, 0, 8)},
		{send(3, 0, 8)},
		{recv(2, 0, 8)},
	}
	res, err := Execute(New(1), FromPrograms("early", progs, 0), Config{Network: early, Host: HostParams{EagerLimit: 8}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Time{107, 150, 100, 150}
	for r, w := range want {
		if res.Finish[r] != w {
			t.Errorf("rank %d finished at %v, want %v", r, res.Finish[r], w)
		}
	}
	if res.Ops != 5 {
		t.Errorf("ops %d, want 5 (2+1+1+1)", res.Ops)
	}
}

// The trace sees every op start and complete once, at the right times.
func TestTrace(t *testing.T) {
	progs := []Program{
		{send(1, 0, 8), recv(1, 1, 8, 0)},
		{recv(0, 0, 8), send(0, 1, 8, 0)},
	}
	var events []TraceEvent
	_, err := Execute(New(1), FromPrograms("t", progs, 0), Config{Network: FixedLatency(10), Host: HostParams{EagerLimit: 8},
		Trace: func(e TraceEvent) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	starts, ends := 0, 0
	for _, e := range events {
		if e.Completed {
			ends++
		} else {
			starts++
		}
	}
	if starts != 4 || ends != 4 {
		t.Fatalf("%d starts, %d completions, want 4 and 4: %+v", starts, ends, events)
	}
	last := events[len(events)-1]
	if !last.Completed || last.Rank != 0 || last.Index != 1 || last.At != 20 {
		t.Fatalf("last event %+v, want rank 0 op 1 completing at 20ps", last)
	}
}

// lookaheadPrograms is a schedule whose rank 0 waits in its second op,
// for a receive that completes at 1000ps, and sends, unrelated, in its
// third: read in MPI's program order (Lookahead 1), the third op has not
// run while the second waits.
func lookaheadPrograms() []Program {
	return []Program{
		{recv(1, 0, 8), send(1, 1, 8, 0), send(1, 2, 8)},
		{{Kind: OpCalc, Dur: 1000}, send(0, 0, 8, 0), recv(0, 1, 8), recv(0, 2, 8)},
	}
}

// lookaheadPrograms2 is lookaheadPrograms where rank 0 reads two ops that
// wait for nothing, then two that wait for its receive, then its fifth
// op, which waits for nothing. A reader that hands out the ops of its
// Lookahead and one more (room+1) reads the first three at once, then
// the fourth and fifth with the room one waiting op leaves: with
// Lookahead 2, the fifth then starts before the receive completes.
func lookaheadPrograms2() []Program {
	return []Program{
		{recv(1, 0, 8), send(1, 1, 8), send(1, 2, 8, 0), send(1, 3, 8, 0), send(1, 4, 8)},
		{{Kind: OpCalc, Dur: 1000}, send(0, 0, 8, 0), recv(0, 1, 8), recv(0, 2, 8), recv(0, 3, 8), recv(0, 4, 8)},
	}
}

// A program replayed with Lookahead L holds at most L read ops that wait
// for dependencies: programs are read in chunks, and a chunk must end
// where the bound is reached (it ran on to 64 ops).
func TestLookaheadBoundsReadingPrograms(t *testing.T) {
	for _, c := range []struct {
		progs []Program
		look  int
		op    int32 // rank 0's last op, which waits for nothing
		early bool  // whether it starts before the receive completes
	}{
		{lookaheadPrograms(), 0, 2, false}, {lookaheadPrograms(), 1, 2, false}, {lookaheadPrograms(), 2, 2, true}, {lookaheadPrograms(), 100, 2, true},
		{lookaheadPrograms2(), 1, 4, false}, {lookaheadPrograms2(), 2, 4, false}, {lookaheadPrograms2(), 3, 4, true},
	} {
		var start Time = -1
		_, err := Execute(New(1), FromPrograms("look", c.progs, c.look), Config{
			Network: FixedLatency(10),
			Trace: func(e TraceEvent) {
				if e.Rank == 0 && e.Index == c.op && !e.Completed {
					start = e.At
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		// The receive completes at 1000 (the calc) + 10 (the latency).
		if early := start < 1010; start < 0 || early != c.early {
			t.Errorf("%d ops, lookahead %d: rank 0's op %d started at %v, want before 1010ps: %v", len(c.progs[0]), c.look, c.op, start, c.early)
		}
	}
}

// The real runs' interpreter holds the same bound.
func TestInterpLookaheadBoundsReadingPrograms(t *testing.T) {
	for _, c := range []struct {
		progs []Program
		look  int
		ready []int32 // what rank 0 may start before its receive completes
	}{
		{lookaheadPrograms(), 1, []int32{0}}, {lookaheadPrograms(), 2, []int32{0, 2}}, {lookaheadPrograms(), 100, []int32{0, 2}},
		{lookaheadPrograms2(), 1, []int32{0, 1}}, {lookaheadPrograms2(), 2, []int32{0, 1}}, {lookaheadPrograms2(), 3, []int32{0, 1, 4}},
	} {
		in, err := NewInterp(FromPrograms("look", c.progs, c.look), 0)
		if err != nil {
			t.Fatal(err)
		}
		var ready []int32
		for {
			idx, _, ok := in.Start()
			if !ok {
				break
			}
			ready = append(ready, idx)
		}
		if !slices.Equal(ready, c.ready) {
			t.Errorf("%d ops, lookahead %d: rank 0 started %v before its receive completed, want %v", len(c.progs[0]), c.look, ready, c.ready)
		}
	}
}
