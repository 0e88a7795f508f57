package collectives

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/collsim/collsim/sim"
)

// checkPair refuses a benchmark (what) between ranks a and b of ranks
// that are not two of them, of a negative size or of no rounds.
func checkPair(what string, ranks, a, b int, bytes int64, rounds int) error {
	switch {
	case a < 0 || b < 0 || a >= ranks || b >= ranks || a == b:
		return fmt.Errorf("%s between ranks %d and %d of %d: need two different ranks", what, a, b, ranks)
	case bytes < 0 || rounds < 1:
		return fmt.Errorf("%s of %d bytes, %d rounds: need a size >= 0 and at least one round", what, bytes, rounds)
	}
	return nil
}

// PingPong is the point-to-point benchmark osu_latency runs, as a schedule
// of ranks ranks: rank a sends bytes to rank b, which sends them back,
// rounds times in a row; every other rank idles. Its time divided by
// 2*rounds is the one-way latency of a message of that size, the figure
// alpha-beta calibration fits (cost.FitHockney). In data mode the
// messages carry the message's whole 8-byte words (PingPongData).
func PingPong(ranks, a, b int, bytes int64, rounds int) (sim.Schedule, error) {
	if err := checkPair("ping-pong", ranks, a, b, bytes, rounds); err != nil {
		return sim.Schedule{}, err
	}
	progs := make([]sim.Program, ranks)
	// In data mode (PingPongData) a's buffer 0 travels to b's buffer 0 and
	// back into a's buffer 1, every round.
	words := bytes / 8
	for i := range rounds {
		ping := sim.Op{Kind: sim.OpSend, Peer: int32(b), Tag: int32(i), Bytes: bytes, Data: sim.Region{Buf: 0, Count: words}}
		pong := sim.Op{Kind: sim.OpRecv, Peer: int32(b), Tag: int32(i), Bytes: bytes, Data: sim.Region{Buf: 1, Count: words}}
		progs[a] = append(progs[a], dependOnLast(ping, progs[a]), dependOnLast(pong, append(progs[a], ping)))
		in := sim.Op{Kind: sim.OpRecv, Peer: int32(a), Tag: int32(i), Bytes: bytes, Data: sim.Region{Buf: 0, Count: words}}
		out := sim.Op{Kind: sim.OpSend, Peer: int32(a), Tag: int32(i), Bytes: bytes, Data: sim.Region{Buf: 0, Count: words}}
		progs[b] = append(progs[b], dependOnLast(in, progs[b]), dependOnLast(out, append(progs[b], in)))
	}
	return sim.FromPrograms(fmt.Sprintf("pingpong/%d-%d", a, b), progs, 1), nil
}

// PingPongData is rank's buffers for a data-mode ping-pong of PingPong(
// ranks, a, b, bytes, ...): a holds seeded words in buffer 0 and receives
// the echo into buffer 1, b receives into its buffer 0; verify checks, after
// the run, that what came back (at a) or arrived (at b) is what a sent.
func PingPongData(a, b int, bytes int64, seed uint64, rank int) (bufs [][]uint64, verify func([][]uint64) error) {
	words := bytes / 8
	in := input{seed: seed}
	want := make([]uint64, words)
	for i := range want {
		want[i] = in.at(a, int64(i))
	}
	check := func(got []uint64, what string) error {
		for i := range want {
			if got[i] != want[i] {
				return fmt.Errorf("ping-pong of %d bytes: word %d %s is %#x, rank %d sent %#x", bytes, i, what, got[i], a, want[i])
			}
		}
		return nil
	}
	switch rank {
	case a:
		return [][]uint64{slices.Clone(want), make([]uint64, words)}, func(b [][]uint64) error { return check(b[1], "echoed back to rank "+strconv.Itoa(a)) }
	case b:
		return [][]uint64{make([]uint64, words)}, func(bufs [][]uint64) error { return check(bufs[0], "at rank "+strconv.Itoa(b)) }
	}
	return nil, func([][]uint64) error { return nil }
}

// Exchange is the bidirectional counterpart of PingPong, as a schedule of
// ranks ranks: ranks a and b each send bytes to the other and receive
// bytes from it at once, rounds times in a row, each round once the last
// one's send and receive are done; every other rank idles. With reduce
// each receive adds what arrives into its buffer (wrapping sums, as the
// collectives' reducing receives do). Its time divided by rounds, against
// a ping-pong's one-way time, says whether a rank sends and takes in at
// once (full duplex: the same time) or one after the other (twice it);
// the reducing exchange's extra time is the reduction as the transport
// does it. In data mode (ExchangeData) each sends its buffer 0 and
// receives into its buffer 1.
func Exchange(ranks, a, b int, bytes int64, rounds int, reduce bool) (sim.Schedule, error) {
	if err := checkPair("exchange", ranks, a, b, bytes, rounds); err != nil {
		return sim.Schedule{}, err
	}
	progs := make([]sim.Program, ranks)
	words := bytes / 8
	for _, pair := range [][2]int{{a, b}, {b, a}} {
		me, peer := pair[0], pair[1]
		var prog sim.Program
		for i := range rounds {
			var after []int32
			if i > 0 {
				after = []int32{int32(2*i - 2), int32(2*i - 1)}
			}
			prog = append(prog,
				sim.Op{Kind: sim.OpSend, Peer: int32(peer), Tag: int32(i), Bytes: bytes, Data: sim.Region{Buf: 0, Count: words}, After: after},
				sim.Op{Kind: sim.OpRecv, Peer: int32(peer), Tag: int32(i), Bytes: bytes, Reduce: reduce, Data: sim.Region{Buf: 1, Count: words}, After: after})
		}
		progs[me] = prog
	}
	name := "exchange"
	if reduce {
		name = "exchange-reduce"
	}
	s := sim.FromPrograms(fmt.Sprintf("%s/%d-%d", name, a, b), progs, 2)
	s.ReduceOp = sim.ReduceSum
	return s, nil
}

// ExchangeData is rank's buffers for a data-mode exchange of Exchange(
// ranks, a, b, bytes, rounds, reduce): a and b hold seeded words in buffer
// 0 and receive into buffer 1, zeroed; verify checks, after the run, that
// buffer 1 holds what the other sent, times rounds where it was added in
// every round.
func ExchangeData(a, b int, bytes int64, rounds int, reduce bool, seed uint64, rank int) (bufs [][]uint64, verify func([][]uint64) error) {
	if rank != a && rank != b {
		return nil, func([][]uint64) error { return nil }
	}
	peer := a + b - rank
	words := bytes / 8
	in := input{seed: seed}
	mine := make([]uint64, words)
	for i := range mine {
		mine[i] = in.at(rank, int64(i))
	}
	times := uint64(1)
	if reduce {
		times = uint64(rounds)
	}
	return [][]uint64{mine, make([]uint64, words)}, func(b [][]uint64) error {
		for i, got := range b[1] {
			if want := times * in.at(peer, int64(i)); got != want {
				return fmt.Errorf("exchange of %d bytes: word %d at rank %d is %#x, want %#x (rank %d's word, times %d)", bytes, i, rank, got, want, peer, times)
			}
		}
		return nil
	}
}

// dependOnLast makes op wait for the last op of prog, if any.
func dependOnLast(op sim.Op, prog sim.Program) sim.Op {
	if n := len(prog); n > 0 {
		op.After = []int32{int32(n - 1)}
	}
	return op
}

// PRTT is one measurement of Hoefler, Lichei and Rehm's parametrised round
// trip PRTT(n, d, s) between ranks a (the client) and b (the server), as
// Netgauge's LogGP benchmark runs it: the client sends n messages of bytes
// each, waiting d (a calc op: busy, as Netgauge's wait is) between
// consecutive sends, from the moment the previous send was handed over; the server receives all n, then sends one message of
// the same size back; the client's receipt of it ends the measurement.
// cost.FitLogGP fits LogGP to PRTT(1,0,s), PRTT(n,0,s) and PRTT(n,d,s).
// The messages carry no data.
func PRTT(ranks, a, b, n int, d sim.Time, bytes int64) (sim.Schedule, error) {
	switch {
	case a < 0 || b < 0 || a >= ranks || b >= ranks || a == b:
		return sim.Schedule{}, fmt.Errorf("PRTT between ranks %d and %d of %d: need two different ranks", a, b, ranks)
	case n < 1 || d < 0 || bytes < 0:
		return sim.Schedule{}, fmt.Errorf("PRTT(%d, %v, %d): need n >= 1, d >= 0 and a size >= 0", n, d, bytes)
	}
	progs := make([]sim.Program, ranks)
	client, server := progs[a], progs[b]
	var received []int32
	for i := range n {
		// Each op waits for the one before it to have started, not ended:
		// the wait, and a burst's next send, begin when the previous send
		// has been handed over (its CPU overhead done), as Netgauge's
		// begin when MPI_Send returns, not when the message has left.
		next := sim.Op{Kind: sim.OpSend, Peer: int32(b), Bytes: bytes}
		if i > 0 && d > 0 {
			client = append(client, sim.Op{Kind: sim.OpCalc, Dur: d, StartAfter: []int32{int32(len(client) - 1)}})
			next.After = []int32{int32(len(client) - 1)}
		} else if i > 0 {
			next.StartAfter = []int32{int32(len(client) - 1)}
		}
		client = append(client, next)
		received = append(received, int32(len(server)))
		server = append(server, sim.Op{Kind: sim.OpRecv, Peer: int32(a), Bytes: bytes})
	}
	client = append(client, sim.Op{Kind: sim.OpRecv, Peer: int32(b), Bytes: bytes})
	server = append(server, sim.Op{Kind: sim.OpSend, Peer: int32(a), Bytes: bytes, After: received})
	progs[a], progs[b] = client, server
	return sim.FromPrograms(fmt.Sprintf("prtt/%d-%d/n=%d/d=%v", a, b, n, d), progs, 1<<30), nil
}
