package topology

import (
	"fmt"
	"strings"
)

// Intra-node fabrics: how the devices of a node reach each other and the
// node's host bridge, where its NICs attach.
const (
	// FabricSwitch joins every device to one switch (NVSwitch-like): any
	// two devices are two links apart, each device's link is its own.
	FabricSwitch = "switch"
	// FabricMesh joins every pair of devices directly (NVLink all-to-all):
	// one link between any two; each device also has an uplink to the host
	// bridge for traffic leaving the node.
	FabricMesh = "mesh"
	// FabricTree hangs the devices under PCIe switches, device d under
	// switch d*switches/devices (as evenly as the counts allow: 4 under 3
	// switches are 2, 1 and 1), and the
	// PCIe switches under the host bridge (a PCIe or shared-memory tree):
	// devices under one PCIe switch are two links apart, others four, and
	// the PCIe switches' uplinks are shared.
	FabricTree = "tree"
)

// Fabrics lists the intra-node fabrics.
var Fabrics = []string{FabricSwitch, FabricMesh, FabricTree}

// NodeSpec describes what is inside each node of a multi-node machine.
type NodeSpec struct {
	Devices int      // GPUs or cores per node: the hosts ranks run on
	Fabric  LinkSpec // a device's link into the fabric (switch port, NVLink, PCIe lane)
	NIC     LinkSpec // the host bridge to each NIC, the network's host port
	// Kind is the fabric (FabricSwitch when empty).
	Kind string
	// Uplink is the link from a device (mesh) or a PCIe switch (tree) to
	// the host bridge; the zero value means Fabric's.
	Uplink LinkSpec
	// Switches is the number of PCIe switches of a tree (at least 1, at
	// most Devices; 0 means 1).
	Switches int
	// Rails is the number of NICs per node (0 means 1). Device d uses rail
	// d*Rails/Devices, and a message leaves and enters the network on its
	// source device's rail.
	Rails int
}

// MultiNode puts nodes of devices at the hosts of network. With R rails,
// network host k*nodes+n is NIC k of node n (rail-major: the NICs of one
// rail are consecutive network hosts, so on a fat-tree each rail has its
// own leaves, as rail-optimized clusters are built), so network must have
// a multiple of R hosts. Device d of node n is host n*Devices+d. Traffic
// between devices of one node stays on the node's fabric; other traffic
// goes from its device to the host bridge, out of the NIC of its source
// device's rail, along the network's route to the same rail's NIC of the
// destination node, and down to the destination device.
//
// Bisection: with an even number of nodes, the least of the network's, half
// the nodes' NICs and half the nodes' links to their bridges; with an odd
// number (one too) the halves split a node, and the graph's cut between
// the first and second half of the devices is computed (a count missed a
// mesh's path through the bridge and a tree's unequal switches).
func MultiNode(network *Topology, node NodeSpec) (*Topology, error) {
	if node.Devices < 1 {
		return nil, fmt.Errorf("multi-node: devices per node must be at least 1, not %d", node.Devices)
	}
	if node.Kind == "" {
		node.Kind = FabricSwitch
	}
	if node.Uplink == (LinkSpec{}) {
		node.Uplink = node.Fabric
	}
	rails, switches := max(node.Rails, 1), max(node.Switches, 1)
	for _, c := range []struct {
		what string
		spec LinkSpec
	}{{"multi-node fabric", node.Fabric}, {"multi-node NIC", node.NIC}, {"multi-node uplink", node.Uplink}} {
		if err := c.spec.check(c.what); err != nil {
			return nil, err
		}
	}
	switch {
	case node.Kind != FabricSwitch && node.Kind != FabricMesh && node.Kind != FabricTree:
		return nil, fmt.Errorf("multi-node: unknown fabric %q; valid: %s", node.Kind, strings.Join(Fabrics, ", "))
	case node.Rails < 0 || rails > node.Devices:
		return nil, fmt.Errorf("multi-node: %d rails for %d devices per node: want 1..%d NICs, each serving at least one device", node.Rails, node.Devices, node.Devices)
	case node.Switches < 0 || switches > node.Devices:
		return nil, fmt.Errorf("multi-node: %d PCIe switches for %d devices per node: want 1..%d", node.Switches, node.Devices, node.Devices)
	case node.Switches > 1 && node.Kind != FabricTree:
		return nil, fmt.Errorf("multi-node: PCIe switches belong to a tree fabric, not a %s", node.Kind)
	case node.Kind == FabricMesh && node.Devices > 256:
		return nil, fmt.Errorf("multi-node: a mesh of %d devices would need %d links per node; use a switch fabric", node.Devices, node.Devices*(node.Devices-1))
	case network.Hosts()%rails != 0:
		return nil, fmt.Errorf("multi-node: %d rails need a network whose hosts (%d) are a multiple of %d: one NIC per rail per node", rails, network.Hosts(), rails)
	}
	nodes := network.Hosts() / rails
	if float64(nodes)*float64(node.Devices) > maxHosts {
		return nil, fmt.Errorf("multi-node: %d nodes of %d devices is more than collsim builds (%d)", nodes, node.Devices, maxHosts)
	}
	perNode := 2*float64(node.Devices) + 2*float64(switches+rails+1) // device, switch, NIC and bridge links, both ways
	if node.Kind == FabricMesh {
		perNode += float64(node.Devices) * float64(node.Devices-1)
	}
	if links := float64(nodes) * perNode; links+float64(len(network.links)) > maxLinks {
		// (A mesh's D(D-1) links a node, counted before they are built:
		// 16,384 nodes of 256 ran out of memory: an audit.)
		return nil, fmt.Errorf("multi-node: %d nodes of %d devices (%s) need about %g links, more than collsim builds (%d)", nodes, node.Devices, node.Kind, links, maxLinks)
	}
	D := node.Devices
	devices := nodes * D
	name := fmt.Sprintf("%d x %d devices (%s", nodes, D, node.Kind)
	if rails > 1 {
		name += fmt.Sprintf(", %d rails", rails)
	}
	b := newBuilder(name+") on "+network.Name(), devices)
	inner := int32(devices) // network vertex v becomes inner+v
	for v := range network.vertices {
		label := network.vertexOf[v]
		if v < network.hosts {
			label = fmt.Sprintf("nic%d", v%nodes)
			if rails > 1 {
				label = fmt.Sprintf("nic%d.%d", v%nodes, v/nodes)
			}
		}
		b.vertex(label)
	}
	for _, l := range network.links {
		b.link(inner+l.From, inner+l.To, l.LinkSpec)
	}
	// The network's links were added first, so their IDs are unchanged.
	bridge := make([]int32, nodes)
	for n := range nodes {
		bridge[n] = b.vertex(fmt.Sprintf("node%d", n))
	}
	// A device's own link: to the switch, to the bridge (mesh) or to its
	// PCIe switch (tree). devBase+2d goes up, devBase+2d+1 down.
	pcieOf := func(d int) int { return d % D * switches / D }
	var pcie []int32
	if node.Kind == FabricTree {
		for n := range nodes {
			for s := range switches {
				pcie = append(pcie, b.vertex(fmt.Sprintf("node%d.pcie%d", n, s)))
			}
		}
	}
	devBase := int32(len(b.t.links))
	for d := range devices {
		switch node.Kind {
		case FabricSwitch:
			b.pair(int32(d), bridge[d/D], node.Fabric)
		case FabricMesh:
			b.pair(int32(d), bridge[d/D], node.Uplink)
		case FabricTree:
			b.pair(int32(d), pcie[d/D*switches+pcieOf(d)], node.Fabric)
		}
	}
	upBase := int32(len(b.t.links)) // tree: PCIe switch s of node n at upBase+2(n*switches+s)
	if node.Kind == FabricTree {
		for i, p := range pcie {
			b.pair(p, bridge[i/switches], node.Uplink)
		}
	}
	meshBase := int32(len(b.t.links)) // mesh: per node D(D-1) links, pair by pair
	if node.Kind == FabricMesh {
		for n := range nodes {
			for i := range D {
				for j := i + 1; j < D; j++ {
					b.pair(int32(n*D+i), int32(n*D+j), node.Fabric)
				}
			}
		}
	}
	meshLink := func(src, dst int32) int32 {
		n, i, j := int(src)/D, int(src)%D, int(dst)%D
		dir := int32(0)
		if i > j {
			i, j, dir = j, i, 1
		}
		idx := i*D - i*(i+1)/2 + j - i - 1
		return meshBase + int32(n*D*(D-1)+2*idx) + dir
	}
	nicBase := int32(len(b.t.links)) // NIC k of node n: nicBase+2(k*nodes+n) out, +1 in
	for k := range rails {
		for n := range nodes {
			b.pair(bridge[n], inner+int32(k*nodes+n), node.NIC)
		}
	}
	up := func(src int32, path []int32) []int32 { // device to bridge
		path = append(path, devBase+2*src)
		if node.Kind == FabricTree {
			path = append(path, upBase+2*int32(int(src)/D*switches+pcieOf(int(src))))
		}
		return path
	}
	down := func(dst int32, path []int32) []int32 { // bridge to device
		if node.Kind == FabricTree {
			path = append(path, upBase+2*int32(int(dst)/D*switches+pcieOf(int(dst)))+1)
		}
		return append(path, devBase+2*dst+1)
	}
	// via routes from device src to device dst: inside a node on its
	// fabric, between nodes through the network, by ECMP's hash h when
	// byHash (the network's equal shortest paths: a node's own paths are
	// one a pair).
	via := func(src, dst int32, h uint64, byHash bool, path []int32) []int32 {
		sn, dn := int(src)/D, int(dst)/D
		switch {
		case sn == dn && node.Kind == FabricMesh:
			return append(path, meshLink(src, dst))
		case sn == dn && node.Kind == FabricTree && pcieOf(int(src)) == pcieOf(int(dst)):
			return append(path, devBase+2*src, devBase+2*dst+1)
		case sn == dn:
			return down(dst, up(src, path))
		}
		rail := int(src) % D * rails / D
		path = append(up(src, path), nicBase+2*int32(rail*nodes+sn))
		if byHash {
			path = network.RouteHashed(rail*nodes+sn, rail*nodes+dn, h, path)
		} else {
			path = network.Route(rail*nodes+sn, rail*nodes+dn, path)
		}
		return down(dst, append(path, nicBase+2*int32(rail*nodes+dn)+1))
	}
	t := b.done(func(src, dst int32, path []int32) []int32 { return via(src, dst, 0, false, path) },
		nodeBisection(network, node, nodes, rails, switches))
	if network.Hashes() {
		t.hashed = func(src, dst int32, h uint64, path []int32) []int32 { return via(src, dst, h, true, path) }
	}
	switch {
	case network.groups > 0 && rails == 1:
		// A dragonfly's groups hold whole nodes: a node's devices are in
		// its NIC's group, and a detour through group g leaves and enters
		// the network as any other route between nodes does (without them,
		// UGAL and Valiant were accepted and then refused at run time as
		// if the network had no groups: an audit).
		t.groups, t.hostsPerGroup = network.groups, D*network.hostsPerGroup
		t.via = func(src, dst int32, g int, path []int32) []int32 {
			sn, dn := src/int32(D), dst/int32(D)
			if sn == dn {
				return via(src, dst, 0, false, path)
			}
			path = network.via(sn, dn, g, append(up(src, path), nicBase+2*sn))
			return down(dst, append(path, nicBase+2*dn+1))
		}
	case network.groups > 0:
		t.noGroups = fmt.Sprintf("its nodes have %d rails each, whose NICs lie in different groups of the %s, so a node is in no one group", rails, network.Name())
	}
	return t, nil
}

// nodeBisection is MultiNode's bisection (see there).
func nodeBisection(network *Topology, node NodeSpec, nodes, rails, switches int) float64 {
	D := node.Devices
	var bridgeLinks float64 // one node's capacity to its bridge
	switch node.Kind {
	case FabricSwitch:
		bridgeLinks = float64(D) * node.Fabric.Bandwidth
	case FabricMesh:
		bridgeLinks = float64(D) * node.Uplink.Bandwidth
	case FabricTree:
		// Each PCIe switch passes what its devices' links and its uplink
		// both carry (4 devices under 3 switches are 2, 1 and 1: the
		// count over all of them read 40 GB/s where 35 pass: an audit).
		held := make([]int, switches)
		for d := range D {
			held[d*switches/D]++
		}
		for _, n := range held {
			bridgeLinks += min(float64(n)*node.Fabric.Bandwidth, node.Uplink.Bandwidth)
		}
	}
	if nodes%2 == 1 || rails > 1 {
		// The halves split a node, through its fabric and its bridge
		// (a mesh's devices also meet at the bridge; a tree's switches
		// hold unequal shares), or the network's own bisection splits its
		// hosts, one NIC a rail, by rail rather than by node (4 nodes of 2
		// rails on a ring of 8 read 20 GB/s where halving the nodes cuts
		// 40: an audit): the graph's cut, not a count.
		return cutFromGraph
	}
	half := float64(nodes / 2)
	return min(network.Bisection(), half*float64(rails)*node.NIC.Bandwidth, half*bridgeLinks)
}
