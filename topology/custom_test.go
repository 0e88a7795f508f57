package topology

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/path"
	"pgregory.net/rapid"
)

// diamond is four hosts, two on each side of two equal paths:
// h0,h1 - s0 - {s1, s2} - s3 - h2,h3.
func diamond(t *testing.T) *Topology {
	t.Helper()
	var edges []Edge
	for _, e := range [][2]string{{"h0", "s0"}, {"h1", "s0"}, {"h2", "s3"}, {"h3", "s3"}, {"s0", "s1"}, {"s0", "s2"}, {"s1", "s3"}, {"s2", "s3"}} {
		edges = append(edges, Edge{A: e[0], B: e[1], LinkSpec: gig})
	}
	d, err := Custom(4, edges)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCustomDiamond: hand-derived routes, ECMP over both middle switches,
// and the bisection of two equal paths.
func TestCustomDiamond(t *testing.T) {
	d := diamond(t)
	allRoutesValid(t, d, 4)
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	labels := func(p []int32) string {
		var s []string
		for _, l := range p {
			s = append(s, d.Label(d.Links()[l].To))
		}
		return strings.Join(s, " ")
	}
	if got := labels(d.Route(0, 2, nil)); got != "s0 s1 s3 h2" {
		t.Errorf("route h0->h2 goes %s, want s0 s1 s3 h2 (lowest-numbered links)", got)
	}
	if got := labels(d.Route(0, 1, nil)); got != "s0 h1" {
		t.Errorf("route h0->h1 goes %s, want s0 h1", got)
	}
	middles := map[string]int{}
	for h := range uint64(64) {
		middles[strings.Fields(labels(d.RouteHashed(0, 3, h, nil)))[1]]++
	}
	if len(middles) != 2 || middles["s1"] < 16 || middles["s2"] < 16 {
		t.Errorf("64 hashes crossed the middle switches %v: want both, roughly evenly", middles)
	}
	if got, want := d.Bisection(), 2*gig.Bandwidth; math.Abs(got-want) > 1e-6*want {
		t.Errorf("bisection %g, want %g (two paths)", got, want)
	}
	star, err := Custom(6, []Edge{{"h0", "s", gig}, {"h1", "s", gig}, {"h2", "s", gig}, {"h3", "s", gig}, {"h4", "s", gig}, {"h5", "s", gig}})
	if err != nil {
		t.Fatal(err)
	}
	cross, _ := Crossbar(6, gig)
	if star.Bisection() != cross.Bisection() {
		t.Errorf("a star's bisection %g differs from the crossbar's %g", star.Bisection(), cross.Bisection())
	}
}

// TestCustomErrors: each bad graph is refused with what is wrong, and edge
// problems carry the edge's index.
func TestCustomErrors(t *testing.T) {
	e := func(a, b string) Edge { return Edge{A: a, B: b, LinkSpec: gig} }
	for _, c := range []struct {
		name  string
		hosts int
		edges []Edge
		want  string
		edge  int // -1: not an EdgeError
	}{
		{"disconnected", 4, []Edge{e("h0", "s0"), e("h1", "s0"), e("h2", "s1"), e("h3", "s1")}, "custom graph of 4 hosts: not connected: host h0 cannot reach host h2; add edges", -1},
		{"lonely host", 3, []Edge{e("h0", "s0"), e("h1", "s0")}, "host h2 has no edge", -1},
		{"missing host", 2, []Edge{e("h0", "s0"), e("h1", "s0"), e("h7", "s0")}, "host h7 does not exist", 2},
		{"self loop", 2, []Edge{e("h0", "s0"), e("s0", "s0")}, "joins s0 to itself", 1},
		{"bad link", 2, []Edge{e("h0", "s0"), {"h1", "s0", LinkSpec{Bandwidth: 0}}}, "bandwidth must be positive", 1},
		{"too few hosts", 1, []Edge{e("h0", "s0")}, "hosts must be 2..", -1},
		// An island of switches (a new user's trial: accepted silently).
		{"island", 2, []Edge{e("h0", "s0"), e("h1", "s0"), e("s9", "s10"), e("s10", "s11")}, "switch s9 is in a part of the graph that no host is in", 2},
		{"island behind a typo", 2, []Edge{e("h0", "s0"), e("h1", "s0"), e("S0", "t1"), e("t1", "t2")}, "switch S0 is in a part", 2},
	} {
		_, err := Custom(c.hosts, c.edges)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
			continue
		}
		var ee *EdgeError
		if got := errors.As(err, &ee); got != (c.edge >= 0) || (got && ee.Edge != c.edge) {
			t.Errorf("%s: %v: want an EdgeError for edge %d", c.name, err, c.edge)
		}
	}
}

// TestCustomShortestProperty: on random connected graphs of switches with
// hosts hanging off them, every route, hashed or not, is a chain from
// source to destination as short as gonum's Dijkstra finds (an independent
// shortest-path search), and the bisection never exceeds what the hosts
// can inject.
func TestCustomShortestProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		switches := rapid.IntRange(1, 12).Draw(rt, "switches")
		hosts := rapid.IntRange(2, 16).Draw(rt, "hosts")
		var edges []Edge
		sw := func(i int) string { return fmt.Sprintf("s%d", i) }
		for i := 1; i < switches; i++ { // a random spanning tree keeps it connected
			edges = append(edges, Edge{sw(rapid.IntRange(0, i-1).Draw(rt, "parent")), sw(i), gig})
		}
		for range rapid.IntRange(0, 20).Draw(rt, "extra") {
			a, b := rapid.IntRange(0, switches-1).Draw(rt, "a"), rapid.IntRange(0, switches-1).Draw(rt, "b")
			if a != b {
				edges = append(edges, Edge{sw(a), sw(b), gig})
			}
		}
		for h := range hosts {
			edges = append(edges, Edge{fmt.Sprintf("h%d", h), sw(rapid.IntRange(0, switches-1).Draw(rt, "at")), gig})
		}
		topo, err := Custom(hosts, edges)
		if err != nil {
			rt.Fatal(err)
		}
		g := topo.Graph()
		for s := range hosts {
			shortest := path.DijkstraFrom(g.Node(int64(s)), g)
			for d := range hosts {
				want := shortest.WeightTo(int64(d))
				for _, p := range [][]int32{topo.Route(s, d, nil), topo.RouteHashed(s, d, rapid.Uint64().Draw(rt, "hash"), nil)} {
					at := int32(s)
					for _, l := range p {
						if topo.Links()[l].From != at {
							rt.Fatalf("route %d->%d broken: %v", s, d, p)
						}
						at = topo.Links()[l].To
					}
					if at != int32(d) || float64(len(p)) != want {
						rt.Fatalf("route %d->%d ends at %d after %d links; Dijkstra says %g", s, d, at, len(p), want)
					}
				}
			}
		}
		if b := topo.Bisection(); b <= 0 || b > float64(hosts/2)*gig.Bandwidth*(1+1e-9) {
			rt.Fatalf("bisection %g outside (0, %g]", b, float64(hosts/2)*gig.Bandwidth)
		}
	})
}

// A graph joined only through hosts, which never forward, says so; a
// name like a host's with a leading zero is refused, not made a switch.
func TestCustomGraphHostErrors(t *testing.T) {
	l := LinkSpec{Bandwidth: 1e9, Latency: 1e-6}
	chain := []Edge{{"h0", "h1", l}, {"h1", "h2", l}, {"h2", "h3", l}}
	if _, err := Custom(4, chain); err == nil || !strings.Contains(err.Error(), "hosts do not forward traffic; join them through a switch") {
		t.Errorf("a chain of hosts: %v", err)
	}
	apart := []Edge{{"h0", "s0", l}, {"h1", "s0", l}, {"h2", "s1", l}, {"h3", "s1", l}}
	if _, err := Custom(4, apart); err == nil || strings.Contains(err.Error(), "forward") || !strings.Contains(err.Error(), "add edges joining its parts") {
		t.Errorf("two parts: %v", err)
	}
	// h-1 was host -1, a crash (index out of range); h+1, h-0 switches;
	// h9999999999999999999 was refused for leading zeros it does not have.
	for _, name := range []string{"h01", "h-1", "h-2", "h+1", "h-0", "h9999999999999999999", "h-99999999999999999999", "h--1", "h+-1"} {
		if _, err := Custom(2, []Edge{{"h0", "s0", l}, {name, "s0", l}, {"h1", "s0", l}}); err == nil || !strings.Contains(err.Error(), name+" looks like a host, but hosts are named h0..h1, with no sign or leading zeros") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Names that only begin with h stay switches.
	if _, err := Custom(2, []Edge{{"h0", "hub", l}, {"h1", "hub", l}, {"h-", "hub", l}}); err != nil {
		t.Errorf("hub and h-: %v", err)
	}
}
