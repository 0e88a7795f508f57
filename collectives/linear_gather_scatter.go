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

// linearNbScatter is Open MPI's linear_nb scatter
// (ompi_coll_base_scatter_intra_linear_nb, coll_base_scatter.c, with its
// default of no limit on requests): the root posts a non-blocking send of
// every rank's block at once, in rank order 0, 1, ..., p-1, and waits for
// them all; they leave together through its port.
type linearNbScatter struct {
	r, p, root int
	n          int64
	done       bool
}

func (s *linearNbScatter) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	if s.r != s.root {
		b.recv(s.root, 0, block(0, s.n, s.p, s.r))
		return true
	}
	for i := range s.p {
		if i != s.root {
			b.sendConcurrent(i, 0, block(0, s.n, s.p, i))
		}
	}
	return true
}

// basicLinearGather is Open MPI's basic_linear gather
// (ompi_coll_base_gather_intra_basic_linear): every other rank sends its
// block to the root, which receives them in rank order, one blocking
// receive after another. Eager blocks arrive whenever they are sent; above
// the eager limit each block's handshake waits for the receive before it,
// so the blocks come one after another, each a reply's latency apart.
type basicLinearGather struct {
	r, p, root int
	n          int64
	done       bool
}

func (s *basicLinearGather) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	if s.r != s.root {
		b.send(s.root, 0, block(0, s.n, s.p, s.r))
		return true
	}
	prev := int32(-1)
	for i := range s.p {
		if i != s.root {
			prev = b.recv(i, 0, block(0, s.n, s.p, i), prev)
		}
	}
	return true
}

// basicLinearScatter is Open MPI's basic_linear scatter
// (ompi_coll_base_scatter_intra_basic_linear): the root sends each other
// rank its block in rank order 0, 1, ..., p-1, one blocking send after
// another, so that a send above the eager limit starts its handshake only
// once the send before it is complete.
type basicLinearScatter struct {
	r, p, root int
	n          int64
	done       bool
}

func (s *basicLinearScatter) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	if s.r != s.root {
		b.recv(s.root, 0, block(0, s.n, s.p, s.r))
		return true
	}
	prev := int32(-1)
	for i := range s.p {
		if i != s.root {
			prev = b.send(i, 0, block(0, s.n, s.p, i), prev)
		}
	}
	return true
}
