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
