package topology

import (
	"strings"
	"testing"
)

// A dragonfly of nodes keeps the dragonfly's groups, whole nodes each: p
// = 2 hosts a router and a = 4 routers a group make 8 nodes a group, 32
// devices of 4 each, 9 groups. A detour from device 0 (node 0, group 0)
// to device 40 (node 10, group 1) through group 5 leaves device 0 for
// its bridge, crosses nic0, reaches a router of group 5 ("r5.i") and
// comes down nic10 to device 40, a whole chain of links; the same pair's
// minimal route visits no router of group 5. (UGAL and Valiant were
// refused at run time on such a machine, as if it had no groups: an
// audit.) With two rails a node's NICs lie in two groups, and the
// machine has none, saying why.
func TestMultiNodeDragonflyGroups(t *testing.T) {
	ten := LinkSpec{Bandwidth: 10e9, Latency: 1e-7}
	net, err := Dragonfly(DragonflySpec{P: 2, A: 4, H: 2, G: 9, Host: ten, Local: ten, Global: ten})
	if err != nil {
		t.Fatal(err)
	}
	m, err := MultiNode(net, NodeSpec{Devices: 4, Fabric: ten, NIC: ten})
	if err != nil {
		t.Fatal(err)
	}
	if m.Groups() != 9 || m.GroupOf(31) != 0 || m.GroupOf(32) != 1 || m.GroupOf(287) != 8 {
		t.Errorf("groups %d, devices 31, 32, 287 in %d, %d, %d; want 9, 0, 1, 8", m.Groups(), m.GroupOf(31), m.GroupOf(32), m.GroupOf(287))
	}
	through := func(path []int32, group string) bool {
		for _, id := range path {
			if strings.HasPrefix(m.Label(m.Links()[id].To), "r"+group+".") {
				return true
			}
		}
		return false
	}
	via := m.RouteVia(0, 40, 5, nil)
	if !validPath(m, 0, 40, via) || !through(via, "5") {
		t.Errorf("device 0 to 40 via group 5: %v is not a chain through a router of group 5", via)
	}
	if first, last := m.Label(m.Links()[via[1]].To), m.Label(m.Links()[via[len(via)-2]].From); first != "nic0" || last != "nic10" {
		t.Errorf("device 0 to 40 via group 5 leaves by %s and enters by %s, want nic0 and nic10", first, last)
	}
	if minimal := m.Route(0, 40, nil); through(minimal, "5") {
		t.Errorf("the minimal route %v visits group 5", minimal)
	}
	if inNode := m.RouteVia(0, 3, 5, nil); !validPath(m, 0, 3, inNode) || len(inNode) != 2 {
		t.Errorf("device 0 to 3 (one node) via group 5: %v, want the switch's 2 links", inNode)
	}
	railed, err := MultiNode(net, NodeSpec{Devices: 4, Fabric: ten, NIC: ten, Rails: 2})
	if err != nil {
		t.Fatal(err)
	}
	if railed.Groups() != 0 || !strings.Contains(railed.GroupsLost(), "2 rails each, whose NICs lie in different groups") {
		t.Errorf("two rails: %d groups, %q", railed.Groups(), railed.GroupsLost())
	}
}

// The consecutive arrangement leaves a port unconnected where its
// partner's port is taken: xc40's shape, a = 96 routers of h = 2 global
// ports in g = 16 groups, gives each group 192 ports over 15 others, 13
// toward its first 12 others and 12 toward the last 3; groups i < j share
// 13 cables where j <= 12 (C(13,2) = 78 pairs) and 12 otherwise (42
// pairs): 78 x 13 + 42 x 12 = 1,518 cables of the 1,536 the ports could
// make (README).
func TestDragonflyConsecutiveCables(t *testing.T) {
	one := LinkSpec{Bandwidth: 1e9}
	d, err := Dragonfly(DragonflySpec{P: 1, A: 96, H: 2, G: 16, Host: one, Local: one, Global: one})
	if err != nil {
		t.Fatal(err)
	}
	global := 0
	for _, l := range d.Links() {
		from, to := d.Label(l.From), d.Label(l.To)
		if strings.HasPrefix(from, "r") && strings.HasPrefix(to, "r") && strings.Split(from, ".")[0] != strings.Split(to, ".")[0] {
			global++
		}
	}
	if global != 2*1518 {
		t.Errorf("%d directed global links, want 2 x 1518", global)
	}
}

// Minimal routing is Kim et al.'s, one global hop at most, not the fewest
// links: on dragonfly-72's shape (p 2, a 4, h 2, g 9) host 69's minimal
// route to host 61 takes 5 links where a path through two global links
// takes 4 (README; an audit).
func TestDragonflyMinimalIsOneGlobalHop(t *testing.T) {
	ten := LinkSpec{Bandwidth: 10e9, Latency: 1e-7}
	d, err := Dragonfly(DragonflySpec{P: 2, A: 4, H: 2, G: 9, Host: ten, Local: ten, Global: ten})
	if err != nil {
		t.Fatal(err)
	}
	inStart, inLinks := d.inAdjacency()
	fewest := d.hopsTo(61, nil, inStart, inLinks)[69]
	if route := d.Route(69, 61, nil); len(route) != 5 || fewest != 4 {
		t.Errorf("host 69 to 61: minimal route of %d links, fewest %d; want 5 and 4", len(route), fewest)
	}
}
