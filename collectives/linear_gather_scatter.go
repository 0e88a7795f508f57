package collectives

import "github.com/collsim/collsim/sim"

// linearSyncGather is Open MPI's linear_sync gather
// (ompi_coll_base_gather_intra_linear_sync, coll_base_gather.c): the root
// takes the ranks one at a time, in rank order. For each it posts the
// receive of the block's first segment, sends the rank an empty message
// (its go-ahead), posts the receive of the rest of the block, and waits for
// the first segment before it moves on. A rank waits for the go-ahead, then
// sends its first segment, then, once that send is complete, the rest. The
// first segment is seg elements (Params.Segment; 0, or seg not below the
// block: the whole block, and the rest an empty message, as Open MPI sends
// it then). Only one rank's data is ever on its way to the root at first:
// no incast.
type linearSyncGather struct {
	r, p, root int
	n, seg     int64
	done       bool
}

// parts splits rank i's block into its first segment and the rest.
func (s *linearSyncGather) parts(i int) (first, rest sim.Region) {
	whole := block(0, s.n, s.p, i)
	k := whole.Count
	if s.seg > 0 && s.seg < k {
		k = s.seg
	}
	first, rest = whole, whole
	first.Count = k
	rest.Off, rest.Count = whole.Off+k, whole.Count-k
	return first, rest
}

func (s *linearSyncGather) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	if s.r != s.root {
		first, rest := s.parts(s.r)
		goAhead := b.recv(s.root, 0, sim.Region{Off: first.Off})
		sent := b.send(s.root, 0, first, goAhead)
		b.send(s.root, 0, rest, sent)
		return true
	}
	prev := int32(-1)
	for i := range s.p {
		if i == s.root {
			continue
		}
		first, rest := s.parts(i)
		got := b.recv(i, 0, first, prev)
		goAhead := b.send(i, 0, sim.Region{Off: first.Off}, prev)
		b.recv(i, 0, rest, goAhead)
		prev = got
	}
	return true
}

// rankOrderLinear is Open MPI's linear gather and scatter, which take the
// other ranks in rank order 0, 1, ..., p-1 (collsim's linear ones start
// from the root's neighbour and post everything at once):
//   - basic_linear (ompi_coll_base_gather_intra_basic_linear,
//     ompi_coll_base_scatter_intra_basic_linear): the root receives
//     (sends) one block after another, each call blocking, so that above
//     the eager limit each block's handshake waits for the call before it;
//   - linear_nb (ompi_coll_base_scatter_intra_linear_nb, with its default
//     of no limit on requests; nonblocking): the root posts a non-blocking
//     send of every rank's block at once and waits for them all; they
//     leave together through its port.
//
// The other ranks send (receive) their block.
type rankOrderLinear struct {
	c           Collective
	r, p, root  int
	n           int64
	nonblocking bool
	done        bool
}

func (s *rankOrderLinear) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	mine := block(0, s.n, s.p, s.r)
	if s.r != s.root {
		if s.c == Gather {
			b.send(s.root, 0, mine)
		} else {
			b.recv(s.root, 0, mine)
		}
		return true
	}
	prev := int32(-1)
	for i := range s.p {
		switch theirs := block(0, s.n, s.p, i); {
		case i == s.root:
		case s.c == Gather:
			prev = b.recv(i, 0, theirs, prev)
		case s.nonblocking:
			b.sendConcurrent(i, 0, theirs)
		default:
			prev = b.send(i, 0, theirs, prev)
		}
	}
	return true
}
