package sim

import "fmt"

// LogGOPS are the parameters of the LogGOPS model (Hoefler, Schneider,
// Lumsdaine, "LogGOPSim", HPDC'10): L latency, o CPU overhead per message,
// g gap between messages at a NIC, G gap per byte, O CPU overhead per byte,
// S the eager/rendezvous threshold.
type LogGOPS struct {
	L Time
	O Time // o: CPU overhead per message
	G Time // g: gap per message at a NIC
	// GPerByte is G, the gap per byte, in picoseconds.
	GPerByte float64
	// OPerByte is O, the CPU overhead per byte, in picoseconds.
	OPerByte float64
	S        int64 // messages larger than S use rendezvous
}

// DefaultLogGOPS are LogGOPSim's defaults: L=2500ns, o=1500ns, g=1000ns,
// G=6ns/B, O=0, S=65535B.
var DefaultLogGOPS = LogGOPS{L: 2500 * Nanosecond, O: 1500 * Nanosecond, G: 1000 * Nanosecond, GPerByte: 6000, S: 65535}

func (p *LogGOPS) check() error {
	if p.L < 0 || p.O < 0 || p.G < 0 || !(p.GPerByte >= 0) || !(p.OPerByte >= 0) || p.S < 0 {
		return fmt.Errorf("LogGOPS parameters must not be negative: %+v", *p)
	}
	return nil
}

// perByte is (s-1)*rate for s >= 1 and 0 for s = 0: an empty message
// costs no per-byte time (LogGOPSim computes s-1 unsigned and charges -G).
func perByte(s int64, psPerByte float64) Time {
	if s <= 1 || psPerByte == 0 {
		return 0
	}
	return FromPicoseconds(float64(s-1) * psPerByte)
}

// sizeCost prices a message's per-byte terms, (size-1)O and (size-1)G,
// remembering the last size: schedules send a few sizes over and over,
// and the float rounding is most of the price.
type sizeCost struct {
	p    *LogGOPS
	size int64
	o, g Time
}

func newSizeCost(p *LogGOPS) sizeCost { return sizeCost{p: p, size: -1} }

func (c *sizeCost) of(size int64) (o, g Time) {
	if size != c.size {
		c.price(size)
	}
	return c.o, c.g
}

func (c *sizeCost) price(size int64) {
	c.size, c.o, c.g = size, perByte(size, c.p.OPerByte), perByte(size, c.p.GPerByte)
}

// LogGOPS semantics, per host: CPU busy-until (one per CPU), NIC send and
// receive gap-until (one each per NIC).
//
// A send ready at t issues at s = max(t, CPU free, NIC send free): the CPU
// is busy until s+o+(size-1)O, the NIC until s+g+(size-1)G, and the message
// reaches the receiver at s+o+L. An eager send completes when its CPU part
// ends; a rendezvous send when the receiver matches it.
//
// Arriving messages are taken in, in arrival order per NIC, once the NIC's
// receive gap and the receiving CPU are free: the CPU is then busy for
// o + max((size-1)O, (size-1)G), the NIC for g + (size-1)G. A message is
// taken in by the CPU and NIC of the posted receive it matches, or by CPU 0
// and NIC 0 if none is posted yet; it matches at that moment. Posting a
// receive costs nothing; if it finds its message already taken in, it
// completes when that intake ends.

// logGOPSSend issues send idx of rank r in LogGOPS mode.
func (x *executor) logGOPSSend(r, idx int32, s *slot, id uint32) {
	t, cpuEnd := x.h.send(r, s.cpu, s.nic, s.bytes, x.eng.Now())
	p := x.h.lg
	x.started(r, idx, t)
	x.messages++
	x.bytes += uint64(s.bytes)
	m := &x.msgs[id]
	m.localDone, m.localAt = true, cpuEnd
	if s.bytes <= p.S {
		x.completeSend(id, cpuEnd)
	}
	x.eng.At(t+p.O+p.L, x.id, pack(evArrive, 0, int32(id)))
}

// logGOPSArrive queues message id at its receiving NIC.
func (x *executor) logGOPSArrive(id uint32) {
	m := &x.msgs[id]
	nic := uint16(0)
	if x.h.nics > 1 {
		if pos, ok := x.ranks[m.dst].posted.findFor(m.src, m.tag); ok {
			nic = x.slot(m.dst, int32(x.ranks[m.dst].posted.items[pos].val)).nic
		}
	}
	q := x.h.nic(m.dst, nic)
	x.rxQueue[q] = append(x.rxQueue[q], id)
	if len(x.rxQueue[q]) == 1 {
		x.logGOPSIntake(m.dst, nic)
	}
}

// logGOPSIntake takes in the oldest message waiting at NIC nic of rank r,
// now if the NIC and CPU are free, else at the time they will be.
func (x *executor) logGOPSIntake(r int32, nic uint16) {
	q := x.h.nic(r, nic)
	if len(x.rxQueue[q]) == 0 {
		return
	}
	id := x.rxQueue[q][0]
	m := &x.msgs[id]
	now := x.eng.Now()
	pos, matched, looked := x.h.intakeLookup(&x.ranks[r].posted, m.src, m.tag)
	cpu := uint16(0)
	if matched {
		cpu = x.slot(r, int32(x.ranks[r].posted.items[pos].val)).cpu
	}
	if start := x.h.intakeFree(r, cpu, nic); start > now {
		x.eng.At(start, x.id, pack(evIntake, r, int32(nic)))
		return
	}
	x.rxQueue[q] = x.rxQueue[q][1:]
	if len(x.rxQueue[q]) == 0 {
		x.rxQueue[q] = nil
	}
	m.intakeEnd = x.h.intake(r, cpu, nic, m.bytes, now)
	if !looked {
		pos, matched = x.ranks[r].posted.findFor(m.src, m.tag)
	}
	if matched {
		idx := int32(x.ranks[r].posted.remove(pos))
		x.match(r, idx, id)
	} else {
		x.ranks[r].unexp.push(m.src, m.tag, id)
	}
	if len(x.rxQueue[q]) > 0 {
		x.logGOPSIntake(r, nic)
	}
}
