package realcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
)

// NetnsOptions describe an emulated cluster: hosts as Linux network
// namespaces on one bridge, each host's link shaped to a known bandwidth
// with a token bucket (tc tbf) in both directions. tbf is in every kernel
// that has tc; netem (delay, loss) is not, so latency is left as the
// kernel's.
type NetnsOptions struct {
	enabled   bool
	hosts     int
	bandwidth string
}

func (n *NetnsOptions) flags(f *pflag.FlagSet) {
	f.BoolVar(&n.enabled, "netns", false, "with --np: run the ranks in an emulated cluster of network namespaces (needs root, ip and tc)")
	f.IntVar(&n.hosts, "hosts", 0, "with --netns: hosts of the emulated cluster; ranks are placed in blocks (default: one per rank)")
	f.StringVar(&n.bandwidth, "link-bandwidth", "1Gbps", "with --netns: each host link's bandwidth, each way")
}

// Enabled reports whether --netns was given.
func (n *NetnsOptions) Enabled() bool { return n.enabled }

// Hosts is --hosts (0: one host per rank).
func (n *NetnsOptions) Hosts() int { return n.hosts }

// Bandwidth is --link-bandwidth as given.
func (n *NetnsOptions) Bandwidth() string { return n.bandwidth }

// gsoBytes bounds the packets the emulated hosts' links carry.
const gsoBytes = 16 << 10

// maxCappedBuffer: links whose queue holds twice this or more keep the
// kernel's TCP buffers (whose largest are 4-6 MiB).
const maxCappedBuffer = 4 << 20

// cluster is a built emulated cluster.
type cluster struct {
	prefix   string   // names start with it: cs<pid>
	subnet   string   // 10.a.b
	ns       []string // namespace of each host
	perHost  int
	bridge   string
	built    []func() error // teardown steps, in reverse order of building
	rateBits int64
}

func newCluster(o NetnsOptions, ranks int) (*cluster, error) {
	hosts := o.hosts
	if hosts == 0 {
		hosts = ranks
	}
	switch {
	case hosts < 1 || hosts > 250:
		return nil, cmdutil.Flagf("--hosts must be 1..250, not %d", hosts)
	case ranks%hosts != 0:
		return nil, cmdutil.Flagf("--np %d does not split evenly over --hosts %d; use a multiple", ranks, hosts)
	case os.Geteuid() != 0:
		return nil, errors.New("--netns needs root: it creates network namespaces, veth pairs, a bridge and tc qdiscs")
	}
	bw, err := configs.ParseBandwidth(o.bandwidth) // bytes per second
	if err != nil {
		return nil, &cmdutil.FlagError{Err: fmt.Errorf("--link-bandwidth: %w", err)}
	}
	if bw*8 < 1e6 || bw*8 > 400e9 {
		return nil, cmdutil.Flagf("--link-bandwidth %s: tc shapes 1Mbps..400Gbps", o.bandwidth)
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("--netns needs %s (Debian package iproute2): %w", tool, err)
		}
	}
	removeStale()
	pid := os.Getpid()
	c := &cluster{prefix: fmt.Sprintf("cs%d", pid), subnet: fmt.Sprintf("10.%d.%d", 100+pid/256%100, pid%256),
		perHost: ranks / hosts, rateBits: int64(bw * 8)}
	c.bridge = c.prefix + "br"
	if err := c.build(hosts); err != nil {
		c.teardown(io.Discard)
		return nil, err
	}
	return c, nil
}

// build creates the bridge, then each host: a namespace, a veth pair whose
// outer end joins the bridge, addresses, and a tbf on both ends.
func (c *cluster) build(hosts int) error {
	if err := ipCmd("link", "add", c.bridge, "type", "bridge"); err != nil {
		return err
	}
	c.built = append(c.built, func() error { return ipCmd("link", "del", c.bridge) })
	if err := ipCmd("addr", "add", c.storeIP()+"/24", "dev", c.bridge); err != nil {
		return err
	}
	if err := ipCmd("link", "set", c.bridge, "up"); err != nil {
		return err
	}
	// A token bucket passes a burst at the speed of the CPU, and must be
	// able to hold the largest packet, or it drops it. So packets are kept
	// small (GSO segments of at most gsoBytes, where veth would otherwise
	// hand over 64 KiB at a time) and the bucket just above that, or 100 µs
	// of the rate: then messages of every size see the rate, as the model's
	// links do (a 125 KB bucket let messages below it through at twice a
	// 1 Gb/s rate).
	// The queue behind the bucket holds 20 ms of data: with BBR, a 100 ms
	// queue delayed the ACKs of hosts that send and receive at once; with
	// Reno (below), 5 ms made drops and retransmissions frequent enough to
	// stall a step now and then.
	burst := max(gsoBytes+4096, c.rateBits/8/10000)
	tbf := []string{"root", "tbf", "rate", strconv.FormatInt(c.rateBits, 10) + "bit", "burst", strconv.FormatInt(burst, 10), "latency", "20ms"}
	for h := range hosts {
		ns := fmt.Sprintf("%sh%d", c.prefix, h)
		veth := fmt.Sprintf("%sv%d", c.prefix, h)
		if err := ipCmd("netns", "add", ns); err != nil {
			return err
		}
		c.ns = append(c.ns, ns)
		c.built = append(c.built, func() error { return ipCmd("netns", "del", ns) })
		steps := [][]string{
			{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
			{"link", "set", veth, "master", c.bridge, "up", "gso_max_size", strconv.Itoa(gsoBytes)},
			{"-n", ns, "link", "set", "eth0", "gso_max_size", strconv.Itoa(gsoBytes)},
			{"-n", ns, "addr", "add", fmt.Sprintf("%s.%d/24", c.subnet, h+1), "dev", "eth0"},
			{"-n", ns, "link", "set", "eth0", "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		}
		sysctls := hostSysctls(c.rateBits)
		for _, kv := range sysctls {
			if err := runTool("ip", "netns", "exec", ns, "sysctl", "-qw", kv); err != nil {
				return err
			}
		}
		for i, s := range steps {
			if err := ipCmd(s...); err != nil {
				return err
			}
			if i == 0 {
				// Deleting the namespace would take the pair with it, but
				// asynchronously: delete it first, and synchronously.
				c.built = append(c.built, func() error { return ipCmd("link", "del", veth) })
			}
		}
		// Shape both ends: the outer end's egress is the host's download,
		// eth0's inside the namespace its upload.
		if err := runTool("tc", append([]string{"qdisc", "add", "dev", veth}, tbf...)...); err != nil {
			return err
		}
		if err := runTool("tc", append([]string{"-n", ns, "qdisc", "add", "dev", "eth0"}, tbf...)...); err != nil {
			return err
		}
	}
	return nil
}

// leastReceiveBuffer is the least value the kernel takes for tcp_rmem.
const leastReceiveBuffer = 4096

// hostSysctls are the settings of an emulated host's TCP whose link is
// shaped to rateBits per second with a queue of 20 ms.
func hostSysctls(rateBits int64) []string {
	// TCP as a cluster interconnect would want it: Reno rather than this
	// kernel's default BBR, whose probing after a connection's idle spell
	// overran the shaped queue and stalled messages for hundreds of
	// milliseconds in algorithms that change partners every step
	// (Rabenseifner ran 45% over the model with BBR, 6% with Reno); and no
	// slow start again after idling between steps.
	sysctls := []string{"net.ipv4.tcp_congestion_control=reno", "net.ipv4.tcp_slow_start_after_idle=0"}
	// And lossless, as the model's links (and HPC fabrics) are: a socket's
	// buffers, and so what it has in flight, are capped at half the shaped
	// queue, so that Reno never overflows it. With the kernel's own
	// (megabytes), 8 hosts at 200 Mb/s retransmitted hundreds of segments
	// in a run of Rabenseifner's allreduce from 1 to 64 MiB, and now and
	// then a step stalled: Rabenseifner ran 17-23% over the model at one
	// size in 2 validate runs of 3, every other point within 12%. Capped,
	// 1-3 segments a host.
	// The kernel refuses a receive buffer below a page (4096 B: Linux
	// 6.18 says "Invalid argument" to any tcp_rmem value below it), which
	// is more than half the queue below about 3.3 Mb/s: there the receive
	// side stays at 4096 B and the send side alone keeps to the cap.
	queueBytes := rateBits / 8 / 50 // 20 ms
	if bufs := queueBytes / 2; bufs < maxCappedBuffer {
		rbuf := max(bufs, leastReceiveBuffer)
		sysctls = append(sysctls,
			fmt.Sprintf("net.ipv4.tcp_rmem=%d %d %d", leastReceiveBuffer, min(131072, rbuf), rbuf),
			fmt.Sprintf("net.ipv4.tcp_wmem=%d %d %d", min(4096, bufs), min(16384, bufs), bufs))
	}
	return sysctls
}

// storeIP is the launcher's address on the bridge.
func (c *cluster) storeIP() string { return c.subnet + ".254" }

// wrap runs a rank's command inside its host's namespace.
func (c *cluster) wrap(rank int, argv []string) []string {
	return append([]string{"ip", "netns", "exec", c.ns[rank/c.perHost]}, argv...)
}

// teardown removes everything build created, reporting what it could not.
func (c *cluster) teardown(w io.Writer) {
	for i := len(c.built) - 1; i >= 0; i-- {
		if err := c.built[i](); err != nil {
			fmt.Fprintf(w, "collsim: cleaning up the emulated cluster: %v\n", err)
		}
	}
	c.built = nil
}

var staleName = regexp.MustCompile(`^cs(\d+)(h\d+|br)$`)

// removeStale deletes namespaces and bridges left by launchers that were
// killed before they could clean up (their process is gone).
func removeStale() {
	out, _ := exec.Command("ip", "-o", "link", "show", "type", "bridge").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			name := strings.TrimSuffix(f[1], ":")
			if m := staleName.FindStringSubmatch(name); m != nil && !alive(m[1]) {
				ipCmd("link", "del", name)
			}
		}
	}
	out, _ = exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if m := staleName.FindStringSubmatch(f[0]); m != nil && !alive(m[1]) {
				ipCmd("netns", "del", f[0])
			}
		}
	}
}

func alive(pid string) bool {
	_, err := os.Stat("/proc/" + pid)
	return err == nil
}

func ipCmd(args ...string) error { return runTool("ip", args...) }

func runTool(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
