package configs

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/lines"
	"github.com/collsim/collsim/topology"
)

// The YAML schema. Quantities with units are strings, parsed once during
// validation so that each problem can name its line.
type fileYAML struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Network     networkYAML `yaml:"network"`
	Node        *nodeYAML   `yaml:"node"`
	Host        hostYAML    `yaml:"host"`
	Placement   string      `yaml:"placement"`
	Noise       *noiseYAML  `yaml:"noise"`
	Faults      *faultsYAML `yaml:"faults"`
}

// faultsYAML is links known to be slow or down.
type faultsYAML struct {
	Degraded yaml.Node  `yaml:"degraded"` // a mapping "FROM->TO: FACTOR"
	Failed   []lineText `yaml:"failed"`   // "FROM->TO", both directions
}

type linkYAML struct {
	Bandwidth string `yaml:"bandwidth"`
	Latency   string `yaml:"latency"`
}

type networkYAML struct {
	Crossbar  *crossbarYAML  `yaml:"crossbar"`
	FatTree   *fatTreeYAML   `yaml:"fat_tree"`
	Dragonfly *dragonflyYAML `yaml:"dragonfly"`
	Torus     *torusYAML     `yaml:"torus"`
	Graph     *graphYAML     `yaml:"graph"`
	Routing   string         `yaml:"routing"`
}

// graphYAML is a custom network: an edge list.
type graphYAML struct {
	Hosts int        `yaml:"hosts"`
	Link  *linkYAML  `yaml:"link"`
	Edges []lineText `yaml:"edges"` // "A B [bandwidth [latency]]"
}

// lineText is a one-line list item with the line it came from, for
// errors about one item of a list.
type lineText struct {
	text string
	line int
}

// UnmarshalYAML keeps the item's text and line.
func (e *lineText) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a one-line item such as \"h0 s0\", not a %s", n.Line, map[yaml.Kind]string{yaml.MappingNode: "mapping", yaml.SequenceNode: "list"}[n.Kind])
	}
	e.text, e.line = n.Value, n.Line
	return nil
}

// ratio is a number, or a fraction A/B of two (a fat-tree's taper:
// 32/24 keeps 24 of a 32-ary leaf's uplinks).
type ratio float64

// UnmarshalYAML reads a number or a fraction such as 32/24 or 4:3.
func (r *ratio) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		x, ok := parseRatio(n.Value)
		if !ok {
			// Read as "VALUE is ..." (CheckOverride); the config's own
			// check (shapes) names the line.
			return errors.New("not a number or a fraction such as 32/24 or 4:3")
		}
		*r = ratio(x)
		return nil
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		return err
	}
	*r = ratio(f)
	return nil
}

// parseRatio reads a fraction A/B of two finite numbers, B not 0, or a
// ratio A:B as topo prints a taper (2:1, 32:24; refused as "not a number":
// an audit).
func parseRatio(s string) (float64, bool) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		if a, b, ok = strings.Cut(s, ":"); !ok {
			return 0, false
		}
	}
	x, errA := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, errB := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if errA != nil || errB != nil || y == 0 || math.IsInf(x/y, 0) || math.IsNaN(x/y) {
		return 0, false
	}
	return x / y, true
}

// quotedNumber reports whether s, a quoted YAML value, would be a number
// without its quotes.
func quotedNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

type crossbarYAML struct {
	Hosts int      `yaml:"hosts"`
	Link  linkYAML `yaml:"link"`
}

type fatTreeYAML struct {
	K         int      `yaml:"k"`
	Levels    int      `yaml:"levels"`
	Taper     ratio    `yaml:"taper"`
	TaperMode string   `yaml:"taper_mode"` // links (default) or bandwidth
	Link      linkYAML `yaml:"link"`
}

type dragonflyYAML struct {
	P          int      `yaml:"p"`
	A          int      `yaml:"a"`
	H          int      `yaml:"h"`
	G          int      `yaml:"g"`
	HostLink   linkYAML `yaml:"host_link"`
	LocalLink  linkYAML `yaml:"local_link"`
	GlobalLink linkYAML `yaml:"global_link"`
}

type torusYAML struct {
	Dims []int    `yaml:"dims"`
	Link linkYAML `yaml:"link"`
}

type nodeYAML struct {
	Devices      int       `yaml:"devices"`
	Fabric       linkYAML  `yaml:"fabric"`
	NIC          linkYAML  `yaml:"nic"`
	FabricKind   string    `yaml:"fabric_kind"`
	Uplink       *linkYAML `yaml:"uplink"`
	PCIeSwitches int       `yaml:"pcie_switches"`
	Rails        int       `yaml:"rails"`
	Ranks        int       `yaml:"ranks"`
}

type hostYAML struct {
	RanksPerHost    int       `yaml:"ranks_per_host"`
	Overhead        string    `yaml:"overhead"`
	Gap             string    `yaml:"gap"`
	ReduceBandwidth string    `yaml:"reduce_bandwidth"`
	EagerLimit      string    `yaml:"eager_limit"`
	Local           *linkYAML `yaml:"local"`
	LocalDuplex     string    `yaml:"local_duplex"`
	// LocalBySize prices the channel by message size (network.LocalBand).
	LocalBySize []localBandYAML `yaml:"local_by_size"`
}

// localBandYAML is an item of host.local_by_size.
type localBandYAML struct {
	From      string `yaml:"from"`
	Bandwidth string `yaml:"bandwidth"`
	Duplex    string `yaml:"duplex"`
}

// schemaTypes maps the schema's type names, as yaml.v3 reports them, to the
// types, so that an unknown key can be answered with the valid ones.
var schemaTypes = map[string]reflect.Type{}

func init() {
	for _, v := range []any{fileYAML{}, linkYAML{}, networkYAML{}, crossbarYAML{}, fatTreeYAML{}, dragonflyYAML{}, torusYAML{}, graphYAML{}, nodeYAML{}, hostYAML{}, localBandYAML{}, faultsYAML{}, noiseYAML{}, jitterYAML{}, detoursYAML{}, stragglersYAML{}} {
		t := reflect.TypeOf(v)
		schemaTypes["configs."+t.Name()] = t
	}
}

func validKeys(t reflect.Type) string {
	var keys []string
	for i := range t.NumField() {
		keys = append(keys, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
	}
	return strings.Join(keys, ", ")
}

// Machine is a validated machine config.
type Machine struct {
	Name        string
	Description string
	Source      string // the file, or "builtin:NAME"
	// Inputs are the config's values that cost time, for naming the likely
	// cause of a run that passes the clock's limit.
	Inputs       []Input
	Topology     *topology.Topology
	RanksPerHost int
	Host         sim.HostParams
	Gap          sim.Time
	Local        topology.LinkSpec // between ranks on one host
	// LocalDuplexShare is how much of a message's time on a rank's
	// shared-memory channel the channel's other direction spends too
	// (host.local_duplex): 0 full duplex, 1 half.
	LocalDuplexShare float64
	// LocalBands price the channel by message size
	// (host.local_by_size): messages of a band's From bytes or more (up
	// to the next band's) move at its bandwidth and duplex share instead.
	LocalBands []network.LocalBand
	Placement  string
	// DevicesPerNode is the node's device count on a multi-node machine,
	// else 1.
	DevicesPerNode int
	// RanksPerNode is how many ranks a node holds: devices times ranks per
	// host unless the config's node.ranks uses fewer.
	RanksPerNode int
	// Jitter is the flow network's per-message latency noise (none by
	// default; the config's noise.jitter or collsim run --jitter sets it).
	Jitter network.Jitter
	// Noise is the OS noise and slow ranks of the config's noise section
	// (nil: none): every simulation of the machine runs with it unless
	// told otherwise (collsim run's noise flags replace it).
	Noise *NoiseSpec
	// Routing is how the flow network routes messages: minimal (the
	// topology's own routes), valiant or ugal (Dragonfly detours).
	Routing string
	// GroupHosts is the hosts per Dragonfly group (0 on other networks).
	GroupHosts int
	// Hosts, if not nil, places rank r on host Hosts[r] whatever the
	// policy: a placement a study computes for itself.
	Hosts []int32
}

// GroupSize is how many consecutive ranks share a Dragonfly group under
// block placement, or 0 when the machine has no groups.
func (m *Machine) GroupSize() int { return m.GroupHosts * m.RanksPerHost }

// NodeSize is how many consecutive ranks share a node under block
// placement (RanksPerNode). 1 means the machine has no hierarchy for
// hierarchical algorithms to use.
func (m *Machine) NodeSize() int { return m.RanksPerNode }

// nodes is the number of nodes (hosts on a machine without nodes).
func (m *Machine) nodes() int { return m.Topology.Hosts() / m.DevicesPerNode }

// Slots is how many ranks the machine can hold.
func (m *Machine) Slots() int { return m.nodes() * m.RanksPerNode }

// Place puts ranks on hosts with the machine's placement policy, or with
// policy if it is not empty.
func (m *Machine) Place(ranks int, policy string, seed uint64) ([]int32, error) {
	if m.Hosts != nil {
		if ranks > len(m.Hosts) {
			return nil, fmt.Errorf("%d ranks but the fixed placement on %s places %d", ranks, m.Name, len(m.Hosts))
		}
		return m.Hosts[:ranks], nil
	}
	if policy == "" {
		policy = m.Placement
	}
	if ranks > m.Slots() {
		if m.DevicesPerNode > 1 {
			return nil, fmt.Errorf("%d ranks do not fit on %s: it has %d nodes x %d ranks per node = %d slots; run %d ranks or fewer, or use a larger machine",
				ranks, m.Name, m.nodes(), m.RanksPerNode, m.Slots(), m.Slots())
		}
		return nil, fmt.Errorf("%d ranks do not fit on %s: it has %d hosts x %d ranks per host = %d slots; run %d ranks or fewer, or use a larger machine",
			ranks, m.Name, m.Topology.Hosts(), m.RanksPerHost, m.Slots(), m.Slots())
	}
	// The policy chooses each rank's node (on a machine without nodes, its
	// host); a node's ranks then take its devices' slots in rank order.
	node, err := topology.Place(policy, ranks, m.nodes(), m.RanksPerNode, seed)
	if err != nil || m.DevicesPerNode == 1 {
		return node, err
	}
	filled := make([]int32, m.nodes())
	for r, n := range node {
		node[r] = n*int32(m.DevicesPerNode) + filled[n]/int32(m.RanksPerHost)
		filled[n]++
	}
	return node, nil
}

// PlacedNodes says how the placement policy (the machine's if empty) and
// seed put ranks ranks on the machine's nodes (its hosts, on a machine
// without nodes): the most ranks on one node, the fewest on a node that
// holds any, and whether the nodes hold blocks of perNode consecutive
// ranks (the last block may be short), as the node groups of hierarchical
// algorithms (collectives.Params.NodeSize) take them.
func (m *Machine) PlacedNodes(ranks int, policy string, seed uint64) (perNode, least int, blocked bool, err error) {
	var node []int32
	if m.Hosts != nil {
		if ranks > len(m.Hosts) {
			return 0, 0, false, fmt.Errorf("%d ranks but the fixed placement on %s places %d", ranks, m.Name, len(m.Hosts))
		}
		node = make([]int32, ranks)
		for r, h := range m.Hosts[:ranks] {
			node[r] = h / int32(m.DevicesPerNode)
		}
	} else if node, err = topology.Place(cmp.Or(policy, m.Placement), ranks, m.nodes(), m.RanksPerNode, seed); err != nil {
		return 0, 0, false, err
	}
	count := map[int32]int{}
	for _, n := range node {
		count[n]++
		perNode = max(perNode, count[n])
	}
	least = perNode
	for _, c := range count {
		least = min(least, c)
	}
	blocked = len(count) == (ranks+perNode-1)/perNode
	for r, n := range node {
		blocked = blocked && n == node[r-r%perNode]
	}
	return perNode, least, blocked, nil
}

// Analytic returns the analytic network model of the machine for ranks
// placed by place.
func (m *Machine) Analytic(place []int32) (sim.NetworkFactory, error) {
	return m.AnalyticBytes(place, nil)
}

// AnalyticBytes is Analytic, counting into linkBytes (one entry per link
// of the topology, or nil) the bytes each link carries.
func (m *Machine) AnalyticBytes(place []int32, linkBytes []float64) (sim.NetworkFactory, error) {
	return network.Analytic(network.AnalyticConfig{Topology: m.Topology, Placement: place, Gap: m.Gap, Local: m.Local, LocalDuplexShare: m.LocalDuplexShare, LocalBands: m.LocalBands, LinkBytes: linkBytes})
}

// Flow returns the flow network model (max-min fair sharing) of the
// machine for ranks placed by place.
func (m *Machine) Flow(place []int32) (sim.NetworkFactory, error) {
	return m.FlowLoad(place, nil)
}

// FlowLoad is Flow, filling load (if not nil) with what each link carried.
// A bandwidth the flow model cannot hold is traced to the input that set
// it.
func (m *Machine) FlowLoad(place []int32, load *network.LinkLoad) (sim.NetworkFactory, error) {
	f, err := network.Flow(network.FlowConfig{Topology: m.Topology, Placement: place, Local: m.Local, LocalDuplexShare: m.LocalDuplexShare, LocalBands: m.LocalBands, Links: load, Routing: m.Routing, Jitter: m.Jitter, Gap: m.Gap})
	var re *network.BandwidthRangeError
	if errors.As(err, &re) {
		if in, ok := m.bandwidthInput(re.Bandwidth); ok {
			err = fmt.Errorf("%w; it comes from %s %s (%s)", err, in.Key, in.Value, in.Where)
		}
	}
	return f, err
}

// bandwidthInput is the input that sets a link to bandwidth: of the inputs
// whose cost grows with a message's size (bandwidths, degraded links), the
// one whose rate is nearest bandwidth, in ratio.
func (m *Machine) bandwidthInput(bandwidth float64) (Input, bool) {
	var best Input
	bestOff, found := math.Inf(1), false
	for _, in := range m.Inputs {
		perByte := in.Cost(1) - in.Cost(0)
		if !(perByte > 0) {
			continue
		}
		if off := math.Abs(math.Log(bandwidth) + math.Log(perByte)); off < bestOff {
			best, bestOff, found = in, off, true
		}
	}
	return best, found
}

// PathParams returns the latency (seconds) and the bottleneck seconds per
// byte of the route between two hosts: the alpha and beta a closed form
// should use for messages between them.
func (m *Machine) PathParams(src, dst int) (alpha, beta float64) {
	alpha, beta, _ = m.PathParamsInto(src, dst, nil)
	return alpha, beta
}

// PathParamsInto is PathParams routing into path's storage, which it
// returns for the next call: pricing every pair of a placement allocates
// one route, not one per pair.
func (m *Machine) PathParamsInto(src, dst int, path []int32) (alpha, beta float64, route []int32) {
	if src == dst {
		return m.Local.Latency, 1 / m.Local.Bandwidth, path
	}
	route = m.Topology.Route(src, dst, path[:0])
	for _, id := range route {
		l := m.Topology.Links()[id]
		alpha += l.Latency
		beta = max(beta, 1/l.Bandwidth)
	}
	return alpha, beta, route
}

//go:embed builtin/*.yaml
var builtinFS embed.FS

// DefaultMachine is the built-in machine used when none is named.
const DefaultMachine = "small"

// Builtins lists the built-in machines' names.
func Builtins() []string {
	entries, _ := builtinFS.ReadDir("builtin")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names
}

// Builtin returns the built-in machine of that name.
func Builtin(name string) (*Machine, error) {
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in machine %q; built-in machines: %s", name, strings.Join(Builtins(), ", "))
	}
	return Parse("builtin:"+name, data)
}

// Resolve returns the built-in machine called arg, or else the machine in
// the file arg.
func Resolve(arg string) (*Machine, error) {
	if arg == "" {
		arg = DefaultMachine
	}
	if slices.Contains(Builtins(), arg) {
		return Builtin(arg)
	}
	if _, err := os.Stat(arg); err != nil {
		msg := fmt.Sprintf("machine %q is neither a built-in machine (%s) nor a readable file", arg, strings.Join(Builtins(), ", "))
		if near := lines.Near(arg, Builtins()); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, " or ") + "?"
		}
		return nil, errors.New(msg)
	}
	return Load(arg)
}

// Load reads and validates a machine config file.
func Load(file string) (*Machine, error) {
	data, err := ReadFile(file, MaxConfigBytes, "a machine config")
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// parserProblems are the problems yaml.v3's parser (not its scanner)
// reports. For these it gives the line counted from 0 (the start of the
// collection being parsed, else the problem's), and none at all for the
// first line (syntaxError puts them right).
var parserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive",
	"found duplicate %YAML directive", "found incompatible YAML document",
	"found undefined tag handle",
}

// A key may hold spaces (a flow mapping's "bandwi 500 10GB/s", missing its
// colon, left Go's words and type name in the message: an audit).
var unknownField = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)

// Parse validates a machine config. source names it in errors. Every
// problem is reported, each as "source:line: what is wrong; how to fix it".
func Parse(source string, data []byte) (*Machine, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: %d bytes is too large for a machine config (at most %d)", source, len(data), MaxConfigBytes)
	}
	if err := encoding(source, data); err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(source, data, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty config; see README.md for the machine config format", source)
	}
	v := &validator{source: source, root: root.Content[0]}
	if v.shapes(v.root, reflect.TypeFor[fileYAML](), nil); len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	var f fileYAML
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && err != io.EOF {
		return nil, yamlError(source, data, err)
	}
	if err := secondDocument(source, dec); err != nil {
		return nil, err
	}
	m := v.machine(&f)
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	if m.Name == "" {
		m.Name = strings.TrimSuffix(path.Base(strings.TrimPrefix(source, "builtin:")), ".yaml")
	}
	m.Source, m.Inputs = source, v.inputs
	return m, nil
}

// ParseYAML reads data (from source) as one YAML document of UTF-8 text,
// as machine configs are read: a byte that is not text, a YAML error or a
// second document is refused as "source:line: what is wrong".
func ParseYAML(source string, data []byte) (*yaml.Node, error) {
	if err := encoding(source, data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return nil, yamlError(source, data, err)
	}
	if err := secondDocument(source, dec); err != nil {
		return nil, err
	}
	return &root, nil
}

// secondDocument refuses a config with more than one YAML document: the
// decoder reads the first, and the rest would be ignored unseen.
func secondDocument(source string, dec *yaml.Decoder) error {
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
		return nil
	case err != nil:
		return yamlError(source, nil, err)
	}
	return fmt.Errorf("%s:%d: a second YAML document; the file is one document (remove the --- and what follows, or merge it into the first)", source, max(next.Line, 1))
}

// encoding refuses text that YAML cannot hold, naming the line: bytes that
// are not UTF-8 and control characters (yaml.v3 says so without a line).
func encoding(source string, data []byte) error {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return fmt.Errorf("%s:%d: byte 0x%02x is not UTF-8 text; save the config as UTF-8", source, line, data[i])
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f:
			return fmt.Errorf("%s:%d: control character 0x%02x; a config is plain text", source, line, r)
		case r == '\n':
			line++
		}
		i += size
	}
	return nil
}

// yamlError rewrites yaml.v3's errors as source:line messages. data, when
// given, lets it find the line that is wrong and say what is wrong there.
func yamlError(source string, data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		line, msg := yamlProblem(err.Error())
		return syntaxError(source, data, line, msg)
	}
	var errs []error
	for _, l := range te.Errors {
		line, msg := yamlProblem(l)
		if u := unknownField.FindStringSubmatch(msg); u != nil {
			msg = fmt.Sprintf("unknown key %q", u[1])
			if t, ok := schemaTypes[u[2]]; ok {
				msg += "; valid keys here: " + validKeys(t)
			}
		} else if c := cannotUnmarshal.FindStringSubmatch(msg); c != nil && c[1] != "" {
			// Go's words ("cannot unmarshal !!str `two` into int") in
			// the user's (a new user's trial, in a strategy file).
			msg = fmt.Sprintf("%s is %s", strings.Trim(c[1], " `"), yamlReason(errors.New(msg)))
		}
		if line == 0 {
			errs = append(errs, fmt.Errorf("%s: %s", source, msg))
		} else {
			errs = append(errs, fmt.Errorf("%s:%d: %s", source, line, msg))
		}
	}
	return errors.Join(errs...)
}

// yamlProblem splits one of yaml.v3's error lines into its line (0 when
// it gives none) and its problem.
func yamlProblem(l string) (line int, msg string) {
	msg = strings.TrimPrefix(l, "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	return line, msg
}

// syntaxError names where a YAML syntax error is. yaml.v3's line is where
// its scanner or parser stood: its parser counts from 0 and names the
// collection it was in, its scanner the line before a tab. So an unclosed
// bracket or quote is named where it opens, and any other problem at the
// first lines of data that fail alike; else yaml.v3's line, put right.
func syntaxError(source string, data []byte, line int, msg string) error {
	if open := unclosedOpener(msg); open != 0 {
		if at := unclosedFlow(data, open); at > 0 {
			return fmt.Errorf("%s:%d: the %c opened here is never closed (%s)", source, at, open, msg)
		}
	}
	if msg == "found unexpected end of stream" {
		if _, q := scanOpen(data); q.c != 0 {
			return fmt.Errorf("%s:%d: the %c opened here is never closed: the file ends inside the quoted text", source, q.line, q.c)
		}
	}
	if at := failingPrefix(data, msg); at > 0 {
		line = at
	} else if slices.Contains(parserProblems, msg) {
		line++ // counted from 0; none given for the first line
		if last := bytes.Count(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) + 1; len(data) > 0 && line > last {
			line = last // the parser ran into the end of the file
		}
	}
	if line == 0 {
		return fmt.Errorf("%s: %s", source, msg)
	}
	if strings.Contains(msg, "cannot start any token") && strings.Contains(lineOf(data, line), "\t") || strings.HasPrefix(msg, "found a tab character") {
		msg = "a tab; YAML indents with spaces only"
	}
	if open := openBefore(data, line); open.c != 0 {
		msg += fmt.Sprintf(" (inside the %c opened on line %d)", open.c, open.line)
	}
	return fmt.Errorf("%s:%d: %s", source, line, msg)
}

// failingPrefix is the fewest lines of data (from its start) that yaml.v3
// fails to read with the problem msg, found by bisection; 0 when data
// itself does not fail so, or the bisection's answer does not check out
// (a shorter prefix fails so too, as where an error's cause is the end
// of the text).
func failingPrefix(data []byte, msg string) int {
	var ends []int // the offset after each line
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	fails := func(k int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(data[:ends[k-1]], &n)
		if err == nil {
			return false
		}
		_, got := yamlProblem(err.Error())
		return got == msg
	}
	if len(ends) == 0 || !fails(len(ends)) {
		return 0
	}
	lo, hi := 1, len(ends) // fails(hi)
	for lo < hi {
		if mid := (lo + hi) / 2; fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > 1 && fails(lo-1) {
		return 0
	}
	return lo
}

// openBefore is the innermost bracket still open where line n (from 1)
// of data begins, or none (c 0).
func openBefore(data []byte, n int) opened {
	at := 0
	for line := 1; line < n && at < len(data); line++ {
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			return opened{}
		}
		at += i + 1
	}
	if stack, q := scanOpen(data[:at]); len(stack) > 0 && q.c == 0 {
		return stack[len(stack)-1]
	}
	return opened{}
}

// unclosedOpener is the bracket a parser problem says was left open: '['
// or '{', or 0.
func unclosedOpener(msg string) byte {
	switch msg {
	case "did not find expected ',' or ']'":
		return '['
	case "did not find expected ',' or '}'":
		return '{'
	}
	return 0
}

// unclosedFlow is the line (from 1) of the last bracket open of data
// (outside quotes and comments) that is still open at the end, or 0.
func unclosedFlow(data []byte, open byte) int {
	stack, _ := scanOpen(data)
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].c == open {
			return stack[i].line
		}
	}
	return 0
}

// opened is a bracket or quote of a config and its line (from 1).
type opened struct {
	c    byte
	line int
}

// scanOpen reads data as YAML does, as far as brackets, quotes, comments
// and block scalars go: the brackets still open at its end, and the quote
// still open (c 0 when none). A bracket or quote opens only where a
// scalar may begin (see scalarStart); block scalars' lines are text.
func scanOpen(data []byte) (stack []opened, quote opened) {
	line, start := 1, 0 // start: the offset of the line's first byte
	block := -1         // the indentation of the line that began a block scalar, while in one
	for i := 0; i < len(data); i++ {
		if i == start && quote.c == 0 && block >= 0 {
			end := bytes.IndexByte(data[i:], '\n')
			if end < 0 {
				end = len(data) - i
			}
			text := data[i : i+end]
			if indent := len(text) - len(bytes.TrimLeft(text, " ")); len(bytes.TrimSpace(text)) == 0 || indent > block {
				i += end // a line of the block's text: on to its newline
				line, start = line+1, i+1
				continue
			}
			block = -1
		}
		c := data[i]
		switch {
		case c == '\n':
			if quote.c == 0 && len(stack) == 0 && blockIndicator.Match(data[start:i]) {
				block = len(data[start:i]) - len(bytes.TrimLeft(data[start:i], " "))
			}
			line, start = line+1, i+1
		case quote.c == '"' && c == '\\':
			i++ // an escape: the next character is not the closing quote
		case quote.c != 0:
			if c == quote.c {
				if quote.c == '\'' && i+1 < len(data) && data[i+1] == '\'' {
					i++ // '' is a quote inside single quotes
				} else {
					quote.c = 0
				}
			}
		case c == '#' && (i == start || data[i-1] == ' ' || data[i-1] == '\t'):
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case (c == '"' || c == '\'') && scalarStart(data[start:i]):
			quote = opened{c, line}
		case (c == '[' || c == '{') && scalarStart(data[start:i]):
			stack = append(stack, opened{c, line})
		case len(stack) > 0 && (c == ']' && stack[len(stack)-1].c == '[' || c == '}' && stack[len(stack)-1].c == '{'):
			stack = stack[:len(stack)-1] // (a closer of the other kind leaves its opener open)
		}
	}
	return stack, quote
}

// blockIndicator matches a line that ends in a block scalar's indicator
// (| or >, with its chomping and indentation), after a key or a dash.
var blockIndicator = regexp.MustCompile(`(?:^|[\s])(?:[^\s#]*:|-|\?)\s+[|>][-+1-9]*\s*(?:#.*)?$|^\s*[|>][-+1-9]*\s*$`)

// scalarStart reports whether a scalar may begin after before, the line
// up to a character: at the line's first, or after an indicator that
// ends a key or starts an entry (": ", "- ", "? ") or a flow one ([, {, ,),
// whitespace between. Elsewhere ("it is 'fine") a quote or bracket is
// part of a plain scalar.
func scalarStart(before []byte) bool {
	t := bytes.TrimRight(before, " \t")
	if len(t) == 0 {
		return true
	}
	switch last := t[len(t)-1]; last {
	case '[', '{', ',':
		return true
	case ':', '-', '?':
		return len(t) < len(before) // followed by whitespace
	}
	return false
}

// lineOf is line n (from 1) of data, or "".
func lineOf(data []byte, n int) string {
	ls := strings.Split(string(data), "\n")
	if n > len(ls) {
		return ""
	}
	return ls[n-1]
}

// validator turns the decoded schema into a Machine, collecting problems
// with the line of the key they concern.
type validator struct {
	source     string
	root       *yaml.Node
	errs       []error
	groupHosts int
	inputs     []Input
}

// line returns the line of the value at path, or of its deepest ancestor
// present in the file.
func (v *validator) line(keys ...string) int {
	line, _ := v.find(keys...)
	return line
}

// present reports whether the file sets the key at path (so that a value
// written as 0 is not taken for a key left out, whose default applies).
func (v *validator) present(keys ...string) bool {
	_, found := v.find(keys...)
	return found
}

// find walks keys down the file's mappings: the line of the deepest key
// found (the root's if none), and whether all were.
func (v *validator) find(keys ...string) (line int, found bool) {
	_, line, found = v.yamlAt(keys...)
	return line, found
}

// yamlAt is find that also returns the value of the deepest key found (the
// root if none).
func (v *validator) yamlAt(keys ...string) (n *yaml.Node, line int, found bool) {
	return nodeAt(v.root, keys)
}

// nodeAt walks keys down from root: a mapping's key by name, a list's item
// by its index in decimal (host.local_by_size.1.bandwidth). It returns the
// value of the deepest key found (root if none) and that key's line (an
// item's own), and whether all were found.
func nodeAt(root *yaml.Node, keys []string) (n *yaml.Node, line int, found bool) {
	n, line = root, root.Line
	for _, k := range keys {
		switch n.Kind {
		case yaml.MappingNode:
			next := -1
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = i
					break
				}
			}
			if next < 0 {
				return n, line, false
			}
			n, line = n.Content[next+1], n.Content[next].Line
		case yaml.SequenceNode:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n.Content) || strconv.Itoa(i) != k {
				return n, line, false
			}
			n = n.Content[i]
			line = n.Line
		default:
			return n, line, false
		}
	}
	return n, line, true
}

// itemLine is the line of item i of the list at keys, or of its key in
// the item's mapping when key is given and the item has it.
func (v *validator) itemLine(keys []string, i int, key string) int {
	return v.line(with(keys, strconv.Itoa(i), key)...)
}

// localBands reads host.local_by_size: bands of message sizes, each from
// a size up, priced at a bandwidth of their own and a duplex share (the
// host's, share, where a band gives none), in increasing order of size.
func (v *validator) localBands(items []localBandYAML, share float64, keys []string) []network.LocalBand {
	var bands []network.LocalBand
	for i, it := range items {
		at := func(key string) (int, []string) {
			return v.itemLine(keys, i, key), with(keys, fmt.Sprintf("%d", i), key)
		}
		band := network.LocalBand{DuplexShare: share}
		switch b, err := ParseSize(it.From); {
		case it.From == "":
			line, k := at("from")
			v.failAt(line, k, "missing: give the smallest message size the band prices, such as 512KiB (smaller messages take host.local's bandwidth, or an earlier band's)")
		case err != nil:
			line, k := at("from")
			v.failAt(line, k, "%v", err)
		case b <= 0:
			line, k := at("from")
			v.failAt(line, k, "%s: a band starts at 1 byte or more (messages below the first band take host.local's bandwidth)", it.From)
		case len(bands) > 0 && b <= bands[len(bands)-1].From:
			line, k := at("from")
			v.failAt(line, k, "%s is not above the band before it (%s): list the bands in increasing order of size", it.From, FormatBytes(bands[len(bands)-1].From))
		default:
			band.From = b
		}
		if it.Bandwidth == "" {
			line, k := at("bandwidth")
			v.failAt(line, k, "missing; give the bandwidth of messages from %s up, such as 12GB/s", cmp.Or(it.From, "the band's size"))
		} else if bw, err := ParseBandwidth(it.Bandwidth); err != nil {
			line, k := at("bandwidth")
			v.failAt(line, k, "%v", err)
		} else {
			band.Bandwidth = bw
			from := band.From
			_, k := at("bandwidth")
			v.input(k, it.Bandwidth, func(n float64) float64 {
				if n < float64(from) {
					return 0 // below the band
				}
				return n / bw
			})
		}
		if it.Duplex != "" {
			line, k := at("duplex")
			band.DuplexShare = v.duplexAt(it.Duplex, line, k)
		}
		if band.From > 0 {
			bands = append(bands, band)
		}
	}
	return bands
}

// shapes checks the file's values against t, the schema, before yaml.v3
// decodes them: a value of the wrong kind gets a message in the file's
// words ("network.crossbar.hosts: "many" is not a whole number") instead of
// yaml.v3's, which names Go types, and a fraction where an integer belongs
// is refused (yaml.v3 would truncate hosts: 2.5 to 2 without a word).
// Aliases are not followed: a value made of aliases of aliases (a billion
// laughs) is checked once, not expanded.
func (v *validator) shapes(n *yaml.Node, t reflect.Type, keys []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		// A value given by an alias is checked as if written here (4.5
		// through an alias was cut to 4 hosts: an audit), at the alias's
		// line; an alias of a mapping or list was checked where it is
		// anchored (following those would walk an alias bomb's expansion).
		if n.Alias != nil && n.Alias.Kind == yaml.ScalarNode {
			target := *n.Alias
			target.Line = n.Line
			v.shapes(&target, t, keys)
		}
		return
	}
	kind := map[yaml.Kind]string{yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list", yaml.ScalarNode: "a value"}[n.Kind]
	where := strings.Join(keys, ".")
	if where == "" {
		where = "the config"
	}
	bad := func(format string, args ...any) {
		v.errs = append(v.errs, fmt.Errorf("%s:%d: %s: %s", v.source, n.Line, where, fmt.Sprintf(format, args...)))
	}
	switch {
	case t == reflect.TypeFor[yaml.Node](), t == reflect.TypeFor[lineText]():
		// checked where they are read
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			bad("want a mapping of keys (%s), not %s", validKeys(t), kind)
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			for j := range t.NumField() {
				if name, _, _ := strings.Cut(t.Field(j).Tag.Get("yaml"), ","); name == key {
					v.shapes(n.Content[i+1], t.Field(j).Type, with(keys, key))
				}
			}
		}
	case t.Kind() == reflect.Slice && n.Kind != yaml.SequenceNode:
		bad("want a list, not %s", kind)
	case t.Kind() == reflect.Slice && isInteger(t.Elem()):
		var fractions []string // one problem per key, however many items
		line := 0
		for _, item := range n.Content {
			if item.Kind == yaml.AliasNode && item.Alias != nil && item.Alias.Kind == yaml.ScalarNode {
				target := *item.Alias
				target.Line = item.Line
				item = &target
			}
			if item.Kind == yaml.ScalarNode && (item.Tag == "!!int" || item.Tag == "!!float") {
				if why := numberSpelling(item.Value); why != "" {
					v.errs = append(v.errs, fmt.Errorf("%s:%d: %s: %s", v.source, item.Line, where, why))
					return
				}
			}
			switch {
			case item.Kind == yaml.ScalarNode && item.Tag == "!!float":
				fractions, line = append(fractions, item.Value), cmp.Or(line, item.Line)
			case item.Kind != yaml.AliasNode && (item.Kind != yaml.ScalarNode || item.Tag != "!!int"):
				v.errs = append(v.errs, fmt.Errorf("%s:%d: %s: want a list of whole numbers, not %s", v.source, item.Line, where, lines.Quote(item.Value)))
				return
			}
		}
		switch len(fractions) {
		case 0:
		case 1:
			v.failAt(line, keys, "%s is not a whole number", fractions[0])
		default:
			v.failAt(line, keys, "%s are not whole numbers", strings.Join(fractions, ", "))
		}
	case t.Kind() == reflect.Slice:
		for _, item := range n.Content {
			v.shapes(item, t.Elem(), keys)
		}
	case n.Kind != yaml.ScalarNode:
		bad("want a single value, not %s", kind)
	case (isInteger(t) || t.Kind() == reflect.Float64) && n.Tag == "!!str" && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && quotedNumber(n.Value):
		// "8" said it was not a whole number (a new user's trial).
		bad("%s is quoted, so it is text; write the number without quotes", lines.Quote(n.Value))
	case (isInteger(t) || t.Kind() == reflect.Float64 || t == reflect.TypeFor[ratio]()) && (n.Tag == "!!int" || n.Tag == "!!float") && numberSpelling(n.Value) != "":
		// (08 and 0009, not octal, are floats to yaml.v3: "a whole number
		// written as a float" hid the leading zero; a new user's trial.)
		bad("%s", numberSpelling(n.Value))
	case isInteger(t) && n.Tag == "!!float" && len(strings.TrimLeft(n.Value, "+-")) > 18 && strings.Trim(strings.TrimLeft(n.Value, "+-"), "0123456789") == "":
		// yaml.v3 tags digits past int64 a float: a whole number, too large.
		bad("%s is too large", lines.Quote(n.Value))
	case isInteger(t) && n.Tag == "!!float" && wholeFloat(n.Value) != "":
		// 1e3 is a whole number, written as a float (it said "is not a
		// whole number": an audit).
		bad("%s is a whole number written as a float; write it in digits: %s", lines.Quote(n.Value), wholeFloat(n.Value))
	case isInteger(t) && n.Tag != "!!int":
		bad("%s is not a whole number", lines.Quote(n.Value))
	case isInteger(t) && overflowsInt(n.Value, t):
		bad("%s is too large", lines.Quote(n.Value))
	case t == reflect.TypeFor[ratio]() && n.Tag == "!!str":
		if _, ok := parseRatio(n.Value); !ok {
			bad("%s is not a number or a fraction such as 32/24 or 4:3", lines.Quote(n.Value))
		}
	case t.Kind() == reflect.Float64 && n.Tag != "!!int" && n.Tag != "!!float":
		bad("%s is not a number", lines.Quote(n.Value))
	case t.Kind() == reflect.Bool && n.Tag != "!!bool":
		bad("%s is not true or false", lines.Quote(n.Value))
	}
}

// wholeFloat is a YAML float that is a whole number (1e3, 4.0) in digits,
// or "" (a fraction, or past 2^53, where a float holds no exact digits).
func wholeFloat(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return ""
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// numberSpelling says what is wrong with a YAML integer written other than
// in plain decimal digits, which YAML reads in another base: 010 is octal
// 8, and 0x10, 0o10 and 0b10 are 16, 8 and 2 (010 hosts built 8: an
// audit). "" where it is plain.
func numberSpelling(s string) string {
	// yaml.v3 drops underscores before it reads a number (0_10 is octal
	// 8: the test audit).
	digits := strings.ReplaceAll(strings.TrimLeft(s, "+-"), "_", "")
	switch {
	case len(digits) < 2 || digits[0] != '0':
		return ""
	case digits[1] >= '0' && digits[1] <= '9' && strings.ContainsAny(digits, "89."):
		return fmt.Sprintf("%s has a leading zero; write it without the leading zeros", lines.Quote(s))
	case digits[1] >= '0' && digits[1] <= '9':
		return fmt.Sprintf("%s has a leading zero, which YAML reads as octal; write it without the leading zeros", lines.Quote(s))
	case strings.ContainsRune("xXoObB", rune(digits[1])):
		return fmt.Sprintf("%s is written in another base; write the number in decimal", lines.Quote(s))
	}
	return ""
}

// overflowsInt reports whether the YAML integer s does not fit t.
func overflowsInt(s string, t reflect.Type) bool {
	var x yaml.Node
	if err := yaml.Unmarshal([]byte(s), &x); err != nil {
		return true
	}
	v := reflect.New(t)
	return x.Content[0].Decode(v.Interface()) != nil
}

func isInteger(t reflect.Type) bool {
	return t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64
}

func (v *validator) fail(keys []string, format string, args ...any) {
	v.failAt(v.line(keys...), keys, format, args...)
}

// failAt is fail at a given line, for values inside a key (list items).
func (v *validator) failAt(line int, keys []string, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s:%d: %s: %s", v.source, line, strings.Join(keys, "."), fmt.Sprintf(format, args...)))
}

func with(keys []string, more ...string) []string {
	return append(slices.Clone(keys), more...)
}

func (v *validator) link(l linkYAML, keys []string) topology.LinkSpec {
	var spec topology.LinkSpec
	if l.Bandwidth == "" {
		v.fail(with(keys, "bandwidth"), "missing; give a bandwidth such as 100Gbit/s or 12.5GB/s")
	} else if bw, err := ParseBandwidth(l.Bandwidth); err != nil {
		v.fail(with(keys, "bandwidth"), "%v", err)
	} else {
		spec.Bandwidth = bw
		v.input(with(keys, "bandwidth"), l.Bandwidth, func(n float64) float64 { return n / bw })
	}
	if l.Latency == "" {
		v.fail(with(keys, "latency"), "missing; give a latency such as 500ns or 1.2us (0 for none)")
	} else if d, err := ParseDuration(l.Latency); err != nil {
		v.fail(with(keys, "latency"), "%v", err)
	} else {
		spec.Latency = d.Seconds()
		v.input(with(keys, "latency"), l.Latency, Fixed(d))
	}
	return spec
}

// Input is a value of the config that costs time, and where it is
// written: a run that passes the clock's limit names the one that costs
// most as its likely cause.
type Input struct {
	Key, Value, Where string // "network.crossbar.link.bandwidth", "1e-30B/s", "my.yaml:5"
	// Cost is what it costs one message of n bytes, in seconds.
	Cost func(n float64) float64
	// Reduces says the cost is a reduction's (of the message's bytes),
	// which a plain message (a GOAL send) does not pay.
	Reduces bool
}

// Fixed is the cost of an input that costs every message d, whatever its
// size (a latency, an overhead).
func Fixed(d sim.Time) func(n float64) float64 { return func(float64) float64 { return d.Seconds() } }

// input records an Input of the config at keys.
func (v *validator) input(keys []string, value string, cost func(float64) float64) {
	v.inputs = append(v.inputs, Input{Key: strings.Join(keys, "."), Value: value, Where: fmt.Sprintf("%s:%d", v.source, v.line(keys...)), Cost: cost})
}

// duplex reads host.local_duplex: full (share 0, the default), half
// (share 1), or the share itself, a decimal from 0 to 1 (0.25, .5, 1.0;
// no sign, exponent, hex or underscores, which would read a typo as some
// other share): how much of a message's time on a rank's channel the
// channel's other direction spends too, so that an exchange of b bytes
// between two ranks of a host takes (1+share) b/bandwidth, or latency +
// b/bandwidth where that is more (what validate --real measures).
func (v *validator) duplex(s string, keys []string) float64 {
	return v.duplexAt(s, v.line(keys...), keys)
}

// duplexAt is duplex for a value at line (a list item's).
func (v *validator) duplexAt(s string, line int, keys []string) float64 {
	switch s {
	case "", "full":
		return 0
	case "half":
		return 1
	}
	share, err := strconv.ParseFloat(s, 64)
	if !plainDecimal(s) || err != nil || share > 1 {
		v.failAt(line, keys, "%q is not a duplex; use full (a rank's channel sends and takes in at once, the default), half (one or the other: a transport whose rank copies in what it sends and out what it receives) or a share between 0 and 1 such as 0.3 (how much of a message's time the other direction spends too: an exchange then takes 1.3 times a message's time on the channel)", s)
		return 0
	}
	return share
}

// plainDecimal reports whether s is digits with at most one '.' among
// them: 0, 1.0, .5.
func plainDecimal(s string) bool {
	digits, dots := 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

func (v *validator) duration(s string, keys []string) sim.Time {
	if s == "" {
		return 0
	}
	d, err := ParseDuration(s)
	if err != nil {
		v.fail(keys, "%v", err)
	}
	return d
}

func (v *validator) machine(f *fileYAML) *Machine {
	m := &Machine{Name: f.Name, Description: f.Description, Placement: f.Placement, RanksPerHost: f.Host.RanksPerHost, DevicesPerNode: 1}
	m.Topology = v.network(&f.Network)
	m.GroupHosts = v.groupHosts
	m.Routing = f.Network.Routing
	if m.Routing == "" {
		m.Routing = network.RouteMinimal
	}
	hk := []string{"host"}
	if m.RanksPerHost == 0 && !v.present(with(hk, "ranks_per_host")...) {
		m.RanksPerHost = 1
	}
	if m.RanksPerHost < 1 {
		v.fail(with(hk, "ranks_per_host"), "must be at least 1, not %d", m.RanksPerHost)
	}
	if f.Node != nil && m.Topology != nil {
		v.node(m, f.Node)
	}
	if m.Topology != nil {
		// The machine's topology, nodes included (checked before the nodes
		// were added, a dragonfly of nodes passed here and failed at run
		// time: an audit).
		if err := network.CheckRouting(m.Routing, m.Topology); err != nil {
			v.fail([]string{"network", "routing"}, "%v", err)
		}
	}
	m.RanksPerNode = m.DevicesPerNode * m.RanksPerHost
	if f.Node != nil && (f.Node.Ranks != 0 || v.present("node", "ranks")) {
		if f.Node.Ranks < 1 || f.Node.Ranks > m.RanksPerNode {
			v.fail([]string{"node", "ranks"}, "must be 1..%d (a node of %d devices x %d ranks per host), not %d",
				m.RanksPerNode, m.DevicesPerNode, m.RanksPerHost, f.Node.Ranks)
		} else {
			m.RanksPerNode = f.Node.Ranks
		}
	}
	m.Host.Overhead = v.duration(f.Host.Overhead, with(hk, "overhead"))
	m.Gap = v.duration(f.Host.Gap, with(hk, "gap"))
	for _, d := range []struct {
		key, value string
		t          sim.Time
	}{{"overhead", f.Host.Overhead, m.Host.Overhead}, {"gap", f.Host.Gap, m.Gap}} {
		if d.t > 0 {
			v.input(with(hk, d.key), d.value, Fixed(d.t))
		}
	}
	if f.Host.ReduceBandwidth != "" {
		bw, err := ParseBandwidth(f.Host.ReduceBandwidth)
		if err != nil {
			v.fail(with(hk, "reduce_bandwidth"), "%v", err)
		} else {
			m.Host.ReducePsPerByte = 1e12 / bw
			v.input(with(hk, "reduce_bandwidth"), f.Host.ReduceBandwidth, func(n float64) float64 { return n / bw })
			v.inputs[len(v.inputs)-1].Reduces = true
		}
	}
	m.Host.EagerLimit = 64 << 10
	switch f.Host.EagerLimit {
	case "":
	case "none":
		// Every message eager: no rendezvous handshake (NCCL, and
		// collsim's own real runs over TCP, have none).
		m.Host.EagerLimit = math.MaxInt64
	default:
		b, err := ParseSize(f.Host.EagerLimit)
		if err != nil {
			v.fail(with(hk, "eager_limit"), "%v; or none, for no rendezvous", err)
		}
		m.Host.EagerLimit = b
	}
	switch {
	case f.Host.Local != nil:
		m.Local = v.link(*f.Host.Local, with(hk, "local"))
	case m.RanksPerHost > 1:
		v.fail(with(hk, "local"), "missing: with %d ranks per host, give the shared-memory channel between them, e.g. local: {bandwidth: 20GB/s, latency: 300ns}", m.RanksPerHost)
	default:
		m.Local = topology.LinkSpec{Bandwidth: 1e12} // unused: one rank per host
	}
	m.LocalDuplexShare = v.duplex(f.Host.LocalDuplex, with(hk, "local_duplex"))
	m.LocalBands = v.localBands(f.Host.LocalBySize, m.LocalDuplexShare, with(hk, "local_by_size"))
	if f.Noise != nil {
		v.noise(m, f.Noise)
	}
	if f.Faults != nil && m.Topology != nil && len(v.errs) == 0 {
		v.faults(m, f.Faults)
	}
	if m.Placement == "" {
		m.Placement = topology.PlaceBlock
	} else if !slices.Contains(topology.Placements, m.Placement) {
		v.fail([]string{"placement"}, "unknown placement %q; valid: %s", m.Placement, strings.Join(topology.Placements, ", "))
	}
	return m
}

func (v *validator) network(n *networkYAML) *topology.Topology {
	keys := []string{"network"}
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{{"crossbar", n.Crossbar != nil}, {"fat_tree", n.FatTree != nil}, {"dragonfly", n.Dragonfly != nil}, {"torus", n.Torus != nil}, {"graph", n.Graph != nil}} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	if len(kinds) != 1 {
		if len(kinds) == 0 {
			v.fail(keys, "give one of crossbar, fat_tree, dragonfly, torus, graph (found none)")
		} else {
			v.fail(keys, "give exactly one of crossbar, fat_tree, dragonfly, torus, graph (found %d: %s)", len(kinds), strings.Join(kinds, ", "))
		}
		return nil
	}
	keys = with(keys, kinds[0])
	before := len(v.errs)
	var t *topology.Topology
	var err error
	switch {
	case n.Crossbar != nil:
		link := v.link(n.Crossbar.Link, with(keys, "link"))
		if len(v.errs) == before {
			t, err = topology.Crossbar(n.Crossbar.Hosts, link)
		}
	case n.FatTree != nil:
		link := v.link(n.FatTree.Link, with(keys, "link"))
		taper := float64(n.FatTree.Taper)
		if taper == 0 && !v.present(with(keys, "taper")...) {
			taper = 1 // absent: no taper; a written 0 is refused as 0.5 is
		}
		if mode := n.FatTree.TaperMode; mode != "" && !slices.Contains(topology.TaperModes, mode) {
			v.fail(with(keys, "taper_mode"), "unknown taper mode %q; valid: %s (removed uplinks, the default, or uplinks at 1/taper of the bandwidth)", mode, strings.Join(topology.TaperModes, ", "))
		}
		if len(v.errs) == before {
			t, err = topology.FatTreeTapered(n.FatTree.K, n.FatTree.Levels, link, taper, n.FatTree.TaperMode)
			if err != nil && strings.Contains(err.Error(), "taper") {
				v.fail(with(keys, "taper"), "%v", err)
				err = nil
			}
		}
	case n.Dragonfly != nil:
		d := n.Dragonfly
		spec := topology.DragonflySpec{P: d.P, A: d.A, H: d.H, G: d.G,
			Host: v.link(d.HostLink, with(keys, "host_link")), Local: v.link(d.LocalLink, with(keys, "local_link")), Global: v.link(d.GlobalLink, with(keys, "global_link"))}
		if len(v.errs) == before {
			t, err = topology.Dragonfly(spec)
			v.groupHosts = d.P * d.A
		}
	case n.Torus != nil:
		link := v.link(n.Torus.Link, with(keys, "link"))
		if len(v.errs) == before {
			t, err = topology.Torus(n.Torus.Dims, link)
		}
	case n.Graph != nil:
		t = v.graph(n.Graph, keys)
	}
	if err != nil {
		v.fail(keys, "%v", err)
	}
	return t
}

// node puts nodes of devices at the network's hosts.
func (v *validator) node(m *Machine, n *nodeYAML) {
	keys := []string{"node"}
	for _, k := range []string{"pcie_switches", "rails"} {
		if v.present("node", k) && map[string]int{"pcie_switches": n.PCIeSwitches, "rails": n.Rails}[k] < 1 {
			v.fail(with(keys, k), "must be at least 1 (leave it out for the default)")
		}
	}
	spec := topology.NodeSpec{Devices: n.Devices, Fabric: v.link(n.Fabric, with(keys, "fabric")), NIC: v.link(n.NIC, with(keys, "nic")),
		Kind: n.FabricKind, Switches: n.PCIeSwitches, Rails: n.Rails}
	if n.Uplink != nil {
		spec.Uplink = v.link(*n.Uplink, with(keys, "uplink"))
		if n.FabricKind == "" || n.FabricKind == topology.FabricSwitch {
			// Read and dropped, it left a PCIe path to the NIC unpriced.
			v.fail(with(keys, "uplink"), "a switch fabric's devices reach the host bridge through the switch, at the fabric's bandwidth: uplink is for fabric_kind mesh (device to bridge) or tree (PCIe switch to bridge); an NVSwitch with one PCIe path to the host is a tree of one switch (as builtin gpu-node-nvswitch)")
		}
	}
	if n.FabricKind != "" && !slices.Contains(topology.Fabrics, n.FabricKind) {
		v.fail(with(keys, "fabric_kind"), "unknown fabric %q; valid: %s", n.FabricKind, strings.Join(topology.Fabrics, ", "))
	}
	if n.Devices < 1 {
		v.fail(with(keys, "devices"), "must be at least 1 (GPUs or cores per node), not %d", n.Devices)
	}
	if len(v.errs) > 0 {
		return
	}
	t, err := topology.MultiNode(m.Topology, spec)
	if err != nil {
		at := keys
		switch {
		case strings.Contains(err.Error(), "rails"):
			at = with(keys, "rails")
		case strings.Contains(err.Error(), "PCIe"):
			at = with(keys, "pcie_switches")
		}
		v.fail(at, "%v", err)
		return
	}
	m.Topology, m.DevicesPerNode = t, n.Devices
	// A group holds whole nodes, and a node's devices are its hosts (the
	// network's hosts per group were kept: GroupSize was a node's share
	// of the devices too small; an audit); without one group a node, none.
	m.GroupHosts = 0
	if t.Groups() > 0 {
		m.GroupHosts = t.Hosts() / t.Groups()
	}
}

// graph builds a custom network from its edge lines, each problem
// reported at its own line.
func (v *validator) graph(g *graphYAML, keys []string) *topology.Topology {
	before := len(v.errs)
	var link topology.LinkSpec
	if g.Link != nil {
		link = v.link(*g.Link, with(keys, "link"))
	}
	edges := make([]topology.Edge, len(g.Edges))
	for i, e := range g.Edges {
		at := func(format string, args ...any) {
			v.failAt(e.line, with(keys, "edges"), "edge %q: %s", e.text, fmt.Sprintf(format, args...))
		}
		f := strings.Fields(e.text)
		if len(f) < 2 || len(f) > 4 {
			at("want two vertex names and optionally a bandwidth and a latency, as in \"h0 s0\" or \"s0 s1 400Gbit/s 1us\"")
			continue
		}
		edges[i] = topology.Edge{A: f[0], B: f[1], LinkSpec: link}
		if len(f) < 4 && g.Link == nil {
			at("no bandwidth and latency: give them on the line or as %s.link", strings.Join(keys, "."))
		}
		// An edge's own bandwidth and latency are inputs too, at the
		// edge's line: an error about a link names its edge.
		where := fmt.Sprintf("%s:%d", v.source, e.line)
		key := strings.Join(with(keys, "edges"), ".")
		if len(f) > 2 {
			bw, err := ParseBandwidth(f[2])
			if err != nil {
				at("bandwidth: %v", err)
			} else {
				v.inputs = append(v.inputs, Input{Key: key, Value: e.text, Where: where, Cost: func(n float64) float64 { return n / bw }})
			}
			edges[i].Bandwidth = bw
		}
		if len(f) > 3 {
			d, err := ParseDuration(f[3])
			if err != nil {
				at("latency: %v", err)
			} else {
				v.inputs = append(v.inputs, Input{Key: key, Value: e.text, Where: where, Cost: Fixed(d)})
			}
			edges[i].Latency = d.Seconds()
		}
	}
	if g.Hosts < 2 {
		v.fail(with(keys, "hosts"), "must be at least 2, not %d: the hosts h0, h1, ... the edges join", g.Hosts)
	} else if len(g.Edges) == 0 {
		v.fail(with(keys, "edges"), "missing; list the edges, one \"A B [bandwidth [latency]]\" per item, hosts named h0..h%d", g.Hosts-1)
	}
	if len(v.errs) > before {
		return nil
	}
	t, err := topology.Custom(g.Hosts, edges)
	var ee *topology.EdgeError
	switch {
	case errors.As(err, &ee):
		e := g.Edges[ee.Edge]
		v.failAt(e.line, with(keys, "edges"), "edge %q: %v", e.text, ee.Err)
	case err != nil:
		v.fail(keys, "%v", err)
	}
	return t
}

// faults applies the config's degraded and failed links.
func (v *validator) faults(m *Machine, f *faultsYAML) {
	keys := []string{"faults", "degraded"}
	d := f.Degraded
	if d.Kind != 0 && d.Kind != yaml.MappingNode {
		v.failAt(d.Line, keys, "want a mapping of links to the fraction of bandwidth they keep, e.g. \"s0.0->s1.0: 0.5\"")
		return
	}
	at := map[int]int{} // the line that degraded each link
	for i := 0; i+1 < len(d.Content); i += 2 {
		spec := d.Content[i].Value + ":" + d.Content[i+1].Value
		c, link, cost, err := m.degrade(spec)
		if err == nil && at[link] > 0 {
			err = fmt.Errorf("the link is degraded already at line %d: give each link once", at[link])
		}
		if err != nil {
			v.failAt(d.Content[i].Line, keys, "%s: %v", d.Content[i].Value, err)
			continue
		}
		at[link] = d.Content[i].Line
		*m = *c
		v.inputs = append(v.inputs, Input{Key: "faults.degraded." + d.Content[i].Value, Value: d.Content[i+1].Value,
			Where: fmt.Sprintf("%s:%d", v.source, d.Content[i].Line), Cost: cost})
	}
	if len(f.Failed) == 0 {
		return
	}
	var specs []string
	for _, l := range f.Failed {
		specs = append(specs, l.text)
	}
	c, err := m.Fail(specs)
	var le *linkError
	switch {
	case errors.As(err, &le):
		v.failAt(f.Failed[le.index].line, []string{"faults", "failed"}, "%v", err)
	case err != nil:
		v.fail([]string{"faults", "failed"}, "%v", err)
	default:
		*m = *c
	}
}

// linkError is a link spec that names no link; index is its place in the
// list given.
type linkError struct {
	index int
	err   error
}

func (e *linkError) Error() string { return e.err.Error() }

// Degrade returns a copy of m whose links specs ("FROM->TO:FACTOR", vertex
// names as collsim topo --dot prints them) run at FACTOR of their own
// bandwidth, as --degrade asks: a factor the config gave a link is
// replaced, and a link given twice is an error. The copy's Inputs name
// the flag as a cost. An error begins with the spec it is about, quoted.
func (m *Machine) Degrade(specs []string) (*Machine, error) {
	given := map[int]string{}
	for _, spec := range specs {
		c, link, cost, err := m.degrade(spec)
		if err == nil && given[link] != "" {
			err = fmt.Errorf("the link is degraded already by %q: give each link once", given[link])
		}
		if err != nil {
			return nil, fmt.Errorf("%q: %w", spec, err)
		}
		given[link] = spec
		// The config's factor for the link, if any, is replaced: so is
		// its input (an audit).
		kept := slices.DeleteFunc(slices.Clone(m.Inputs), func(in Input) bool {
			from, to, ok := strings.Cut(strings.TrimPrefix(in.Key, "faults.degraded."), "->")
			if !ok || !strings.HasPrefix(in.Key, "faults.degraded.") {
				return false
			}
			id, err := m.linkNamed(strings.TrimSpace(from), strings.TrimSpace(to))
			return err == nil && id == link
		})
		c.Inputs = append(kept, Input{Key: "--degrade", Value: spec, Where: "the command line", Cost: cost})
		m = c
	}
	return m, nil
}

// degrade is Degrade for one spec, with the link's ID and what the
// degraded link costs a message.
func (m *Machine) degrade(spec string) (*Machine, int, func(n float64) float64, error) {
	link, f, ok1 := strings.Cut(spec, ":")
	from, to, ok2 := strings.Cut(link, "->")
	factor, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
	if !ok1 || !ok2 || err != nil {
		return nil, 0, nil, fmt.Errorf("want FROM->TO:FACTOR, e.g. s0.0->s1.0:0.5%s", shellHint(spec))
	}
	id, err := m.linkNamed(strings.TrimSpace(from), strings.TrimSpace(to))
	if err != nil {
		return nil, 0, nil, err
	}
	c := *m
	if c.Topology, err = m.Topology.Degraded(id, factor); err != nil {
		return nil, 0, nil, err
	}
	bw := c.Topology.Links()[id].Bandwidth
	return &c, id, func(n float64) float64 { return n / bw }, nil
}

// Fail returns a copy of m in which the links of specs ("FROM->TO", both
// directions) have failed and are routed around (see
// topology.WithoutLinks); it needs minimal or ECMP routing.
// shellHint explains a link spec that ends in "-": a shell took the > of
// an unquoted FROM->TO for a redirection (and wrote a file named TO).
func shellHint(spec string) string {
	if strings.HasSuffix(strings.TrimSpace(spec), "-") {
		return " (quote it, as 's0.0->s1.0': an unquoted > is a shell's redirection)"
	}
	return ""
}

func (m *Machine) Fail(specs []string) (*Machine, error) {
	if m.Routing != network.RouteMinimal && m.Routing != network.RouteECMP {
		return nil, fmt.Errorf("failed links are routed around by minimal and ECMP routes; %s routing does not know them", m.Routing)
	}
	var ids []int
	for i, spec := range specs {
		from, to, ok := strings.Cut(spec, "->")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
		id, err := m.linkNamed(from, to)
		if !ok {
			err = fmt.Errorf("want FROM->TO, e.g. s0.0->s1.0%s", shellHint(spec))
		}
		if err != nil {
			return nil, &linkError{index: i, err: fmt.Errorf("%q: %w", spec, err)}
		}
		ids = append(ids, id)
		if back, found := m.Topology.LinkNamed(to, from); found {
			ids = append(ids, back)
		}
	}
	t, err := m.Topology.WithoutLinks(ids)
	if err != nil {
		return nil, err
	}
	c := *m
	c.Topology = t
	return &c, nil
}

// linkNamed finds the link from vertex from to vertex to.
func (m *Machine) linkNamed(from, to string) (int, error) {
	id, found := m.Topology.LinkNamed(from, to)
	if !found {
		return 0, fmt.Errorf("%s has no link from %s to %s (collsim run --network flow --links 10, or collsim topo --dot, names them)", m.Topology.Name(), from, to)
	}
	return id, nil
}

// Describe returns one line per fact about the machine, for `collsim topo`.
func (m *Machine) Describe() [][2]string {
	f := m.Facts()
	facts := [][2]string{
		{"machine", f.Machine},
		{"source", f.Source},
		{"topology", f.Topology},
		{"hosts", strconv.Itoa(f.Hosts)},
		{"switches", strconv.Itoa(f.Switches)},
		{"links", strconv.Itoa(f.Links) + " directed"},
	}
	if f.FailedLinks > 0 {
		facts = append(facts, [2]string{"failed links", strconv.Itoa(f.FailedLinks) + " directed, routed around"})
	}
	if f.DegradedLinks > 0 {
		facts = append(facts, [2]string{"degraded links", strconv.Itoa(f.DegradedLinks) + " directed, below their bandwidth"})
	}
	return append(facts, [][2]string{
		{"link bandwidth", FormatBandwidth(f.LinkBandwidthMin) + " .. " + FormatBandwidth(f.LinkBandwidthMax)},
		{"link latency", sim.FromSeconds(f.LinkLatencyMin).String() + " .. " + sim.FromSeconds(f.LinkLatencyMax).String()},
		{"ranks per host", strconv.Itoa(f.RanksPerHost)},
		{"diameter", strconv.Itoa(f.Diameter) + " links"},
		{"bisection", FormatBandwidth(f.Bisection) + " each way"},
		{"host costs", m.hostCosts()},
	}...)
}

// hostCosts says what a rank's host charges beside the network: the
// defaults a config left out (free reductions, the 64 KiB eager limit)
// change every time, and nothing else shows them.
func (m *Machine) hostCosts() string {
	reduce := "reductions free (host.reduce_bandwidth not set)"
	if m.Host.ReducePsPerByte > 0 {
		reduce = "reductions at " + FormatBandwidth(1e12/m.Host.ReducePsPerByte)
	}
	eager := "every message eager"
	if m.Host.EagerLimit < math.MaxInt64 {
		eager = "eager up to " + FormatBytes(m.Host.EagerLimit) + ", rendezvous above"
	}
	return fmt.Sprintf("o %v per send and receive, g %v per message, %s, %s", m.Host.Overhead, m.Gap, reduce, eager)
}

// Facts are a machine's size and capacity as numbers (collsim topo
// --json): bandwidths in bytes per second.
type Facts struct {
	Machine          string  `json:"machine"`
	Source           string  `json:"source"`
	Description      string  `json:"description,omitempty"`
	Topology         string  `json:"topology"`
	Hosts            int     `json:"hosts"`
	Switches         int     `json:"switches"`
	Links            int     `json:"links"` // directed
	FailedLinks      int     `json:"failed_links"`
	DegradedLinks    int     `json:"degraded_links"`
	LinkBandwidthMin float64 `json:"link_bandwidth_min_Bps"`
	LinkBandwidthMax float64 `json:"link_bandwidth_max_Bps"`
	// The links' latencies in seconds (the report's machine table showed
	// bandwidths alone, so two machines apart only in latency looked the
	// same: a new user's trial).
	LinkLatencyMin float64 `json:"link_latency_min_s"`
	LinkLatencyMax float64 `json:"link_latency_max_s"`
	RanksPerHost   int     `json:"ranks_per_host"`
	Slots          int     `json:"slots"`         // ranks the machine holds
	Diameter       int     `json:"diameter"`      // links
	Bisection      float64 `json:"bisection_Bps"` // each way
	// The hosts' costs: LogP's o and LogGP's g in seconds, the reduction
	// rate (0: free) and the eager limit in bytes (absent: none).
	Overhead   float64 `json:"overhead_s"`
	Gap        float64 `json:"gap_s"`
	Reduce     float64 `json:"reduce_Bps"`
	EagerLimit *int64  `json:"eager_limit_bytes,omitempty"`
}

// Facts returns the machine's facts.
func (m *Machine) Facts() Facts {
	t := m.Topology
	f := Facts{Machine: m.Name, Source: m.Source, Description: m.Description, Topology: t.Name(), Hosts: t.Hosts(), Switches: t.Switches(),
		Links: len(t.Links()), FailedLinks: len(t.Failed()), DegradedLinks: len(t.DegradedLinks()), RanksPerHost: m.RanksPerHost, Slots: m.Slots(), Diameter: t.Diameter(), Bisection: t.Bisection()}
	f.Overhead, f.Gap = m.Host.Overhead.Seconds(), m.Gap.Seconds()
	if m.Host.ReducePsPerByte > 0 {
		f.Reduce = 1e12 / m.Host.ReducePsPerByte
	}
	if e := m.Host.EagerLimit; e < math.MaxInt64 {
		f.EagerLimit = &e
	}
	for i, l := range t.Links() {
		if i == 0 || l.Bandwidth < f.LinkBandwidthMin {
			f.LinkBandwidthMin = l.Bandwidth
		}
		if i == 0 || l.Latency < f.LinkLatencyMin {
			f.LinkLatencyMin = l.Latency
		}
		f.LinkBandwidthMax = max(f.LinkBandwidthMax, l.Bandwidth)
		f.LinkLatencyMax = max(f.LinkLatencyMax, l.Latency)
	}
	return f
}
