package collectives

import (
	"fmt"

	"github.com/collsim/collsim/sim"
)

// PingPong is the point-to-point benchmark osu_latency runs, as a schedule
// of ranks ranks: rank a sends bytes to rank b, which sends them back,
// rounds times in a row; every other rank idles. Its time divided by
// 2*rounds is the one-way latency of a message of that size, the figure
// alpha-beta calibration fits (cost.FitHockney). The messages carry no
// data.
func PingPong(ranks, a, b int, bytes int64, rounds int) (sim.Schedule, error) {
	switch {
	case a < 0 || b < 0 || a >= ranks || b >= ranks || a == b:
		return sim.Schedule{}, fmt.Errorf("ping-pong between ranks %d and %d of %d: need two different ranks", a, b, ranks)
	case bytes < 0 || rounds < 1:
		return sim.Schedule{}, fmt.Errorf("ping-pong of %d bytes, %d rounds: need a size >= 0 and at least one round", bytes, rounds)
	}
	progs := make([]sim.Program, ranks)
	for i := range rounds {
		ping := sim.Op{Kind: sim.OpSend, Peer: int32(b), Tag: int32(i), Bytes: bytes}
		pong := sim.Op{Kind: sim.OpRecv, Peer: int32(b), Tag: int32(i), Bytes: bytes}
		progs[a] = append(progs[a], dependOnLast(ping, progs[a]), dependOnLast(pong, append(progs[a], ping)))
		in := sim.Op{Kind: sim.OpRecv, Peer: int32(a), Tag: int32(i), Bytes: bytes}
		out := sim.Op{Kind: sim.OpSend, Peer: int32(a), Tag: int32(i), Bytes: bytes}
		progs[b] = append(progs[b], dependOnLast(in, progs[b]), dependOnLast(out, append(progs[b], in)))
	}
	return sim.FromPrograms(fmt.Sprintf("pingpong/%d-%d", a, b), progs, 1), nil
}

// dependOnLast makes op wait for the last op of prog, if any.
func dependOnLast(op sim.Op, prog sim.Program) sim.Op {
	if n := len(prog); n > 0 {
		op.After = []int32{int32(n - 1)}
	}
	return op
}
