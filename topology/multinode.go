package topology

import "fmt"

// NodeSpec describes what is inside each node of a multi-node machine.
type NodeSpec struct {
	Devices int      // GPUs or cores per node: the hosts ranks run on
	Fabric  LinkSpec // device to the node's intra-node switch (NVSwitch-like)
	NIC     LinkSpec // the node's switch to its NIC, the network's host port
}

// MultiNode puts nodes of devices at the hosts of network: each host of
// network becomes a NIC, joined to an intra-node switch to which the
// node's devices attach. Device d of node i is host i*Devices+d. Traffic
// between devices of one node stays on the node's fabric; other traffic
// goes device, node switch, NIC, network route, NIC, node switch, device.
// Bisection: the lesser of the network's and the NICs' (half the nodes').
func MultiNode(network *Topology, node NodeSpec) (*Topology, error) {
	if node.Devices < 1 {
		return nil, fmt.Errorf("multi-node: devices per node must be at least 1, not %d", node.Devices)
	}
	if err := node.Fabric.check("multi-node fabric"); err != nil {
		return nil, err
	}
	if err := node.NIC.check("multi-node NIC"); err != nil {
		return nil, err
	}
	nodes := network.Hosts()
	if float64(nodes)*float64(node.Devices) > maxHosts {
		return nil, fmt.Errorf("multi-node: %d nodes of %d devices is more than collsim builds (%d)", nodes, node.Devices, maxHosts)
	}
	devices := nodes * node.Devices
	b := newBuilder(fmt.Sprintf("%d x %d devices on %s", nodes, node.Devices, network.Name()), devices)
	inner := int32(devices) // network vertex v becomes inner+v
	for v := range network.vertices {
		label := network.vertexOf[v]
		if v < network.hosts {
			label = fmt.Sprintf("nic%d", v)
		}
		b.vertex(label)
	}
	for _, l := range network.links {
		b.link(inner+l.From, inner+l.To, l.LinkSpec)
	}
	switchOf := func(n int) int32 { return inner + int32(network.vertices+n) }
	for n := range nodes {
		b.vertex(fmt.Sprintf("node%d", n))
	}
	devBase := int32(len(b.t.links))
	for d := range devices {
		b.pair(int32(d), switchOf(d/node.Devices), node.Fabric) // devBase+2d up, +1 down
	}
	nicBase := int32(len(b.t.links))
	for n := range nodes {
		b.pair(switchOf(n), inner+int32(n), node.NIC) // nicBase+2n out, +1 in
	}
	route := func(src, dst int32, path []int32) []int32 {
		sn, dn := int(src)/node.Devices, int(dst)/node.Devices
		path = append(path, devBase+2*src)
		if sn != dn {
			path = append(path, nicBase+2*int32(sn))
			// The network's links were added first, so their IDs are unchanged.
			path = network.Route(sn, dn, path)
			path = append(path, nicBase+2*int32(dn)+1)
		}
		return append(path, devBase+2*dst+1)
	}
	bisection := min(network.Bisection(), float64(nodes/2)*node.NIC.Bandwidth)
	if nodes == 1 {
		bisection = float64(devices/2) * node.Fabric.Bandwidth
	}
	return b.done(route, bisection), nil
}
