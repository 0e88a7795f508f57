package network

import (
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// localChannels are the shared-memory channels between ranks on one host
// (a machine's host.local), the same in every network model: each rank
// sends through its own, one message at a time, at the channel's
// bandwidth, as an MPI library's shared-memory transport copies a
// message with the sending rank's core, and ranks on a host send at once,
// each on its core. (Serialized per host instead, the 32 ranks of a node
// of the cori machine took 15.7 times the alpha-beta closed form's time
// for a ring allreduce.) The host's memory bandwidth, which copies on
// many cores at once share, is not modelled.
type localChannels struct {
	lat       sim.Time
	psPerByte float64    // 0: no bandwidth given, data costs nothing
	free      []sim.Time // per rank: its channel is busy until then
}

func newLocalChannels(spec topology.LinkSpec, ranks int) localChannels {
	c := localChannels{lat: sim.FromSeconds(spec.Latency), free: make([]sim.Time, ranks)}
	if spec.Bandwidth > 0 {
		c.psPerByte = 1e12 / spec.Bandwidth
	}
	return c
}

// send queues tr, injected at now between ranks on one host, on its
// sender's channel: it returns when its data has left (its copy ends; now
// for a control message) and when it arrives, the channel's latency
// later. A request waits for the data queued before it, as data does; a
// reply goes at once.
func (c *localChannels) send(now sim.Time, tr sim.Transfer) (left, arrives sim.Time) {
	switch tr.Control {
	case sim.ControlReply:
		return now, now.Plus(c.lat)
	case sim.ControlRequest:
		return now, max(now, c.free[tr.Src]).Plus(c.lat)
	}
	start := max(now, c.free[tr.Src])
	left = start.Plus(serialize(tr.Bytes, c.psPerByte))
	c.free[tr.Src] = left
	return left, left.Plus(c.lat)
}
