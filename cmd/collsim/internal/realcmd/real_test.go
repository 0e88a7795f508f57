package realcmd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/realrun"
)

// TestRankFromEnv: each launcher's variables, their precedence, and what
// is refused.
func TestRankFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env        map[string]string
		rank, size int
		found      bool
		err        string
	}{
		{env: map[string]string{}},
		{env: map[string]string{"SLURM_PROCID": "3", "SLURM_NTASKS": "8"}, rank: 3, size: 8, found: true},
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}, rank: 0, size: 2, found: true},
		{env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "4"}, rank: 1, size: 4, found: true},
		// mpirun inside an allocation: Open MPI's own variables win.
		{env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "6"}, rank: 5, size: 6, found: true},
		{env: map[string]string{"COLLSIM_RANK": "2", "COLLSIM_SIZE": "3", "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, rank: 2, size: 3, found: true},
		{env: map[string]string{"PMI_RANK": "4", "PMI_SIZE": "4"}, err: "PMI_RANK=4 is not a rank of PMI_SIZE=4"},
		{env: map[string]string{"SLURM_PROCID": "x", "SLURM_NTASKS": "4"}, err: "must be whole numbers"},
		{env: map[string]string{"SLURM_PROCID": "1"}, err: "must be whole numbers"},
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "-1", "OMPI_COMM_WORLD_SIZE": "4"}, err: "is not a rank"},
	} {
		rank, size, found, err := rankFromEnv(func(k string) string { return tc.env[k] })
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one saying %q", tc.env, err, tc.err)
			}
		case err != nil || rank != tc.rank || size != tc.size || found != tc.found:
			t.Errorf("%v: got rank %d size %d found %v err %v", tc.env, rank, size, found, err)
		}
	}
}

// TestRankProfile: a rank of a job of several writes path.rank<N>; a
// process alone, or one whose launcher's variables are wrong, path.
func TestRankProfile(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, "p"},
		{map[string]string{"COLLSIM_RANK": "1", "COLLSIM_SIZE": "2"}, "p.rank1"},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "4"}, "p.rank0"},
		{map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, "p"},
		{map[string]string{"PMI_RANK": "x", "PMI_SIZE": "2"}, "p"},
	} {
		if got := RankProfile("p", func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestRankProcs: each rank its share of the host's cores, at least one.
func TestRankProcs(t *testing.T) {
	for _, c := range []struct{ cpus, ranks, want int }{{2, 2, 1}, {2, 8, 1}, {8, 2, 4}, {16, 3, 5}, {1, 1, 1}} {
		if got := RankProcs(c.cpus, c.ranks); got != c.want {
			t.Errorf("%d cores, %d ranks: %d, want %d", c.cpus, c.ranks, got, c.want)
		}
	}
}

// TestLocalRanks: the launchers' counts of ranks on this host.
func TestLocalRanks(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int
	}{
		{nil, 0},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "4"}, 4},
		{map[string]string{"MPI_LOCALNRANKS": "2"}, 2},
		{map[string]string{"SLURM_NTASKS_PER_NODE": "8"}, 8},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "x"}, 0},
	} {
		if got := localRanks(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %d, want %d", c.env, got, c.want)
		}
	}
}

// TestBetaTextWithoutSpread: a fit whose beta rests on one slope (two
// large sizes) has no error to give; the line says so instead of "± NaN".
func TestBetaTextWithoutSpread(t *testing.T) {
	one := cost.HockneyFit{Model: cost.Hockney{Beta: 3.5e-10}, BetaErr: math.NaN()}
	if got := BetaText(one); strings.Contains(got, "NaN") || !strings.Contains(got, "one slope") || !strings.HasPrefix(got, "3.5e-10 s/B") {
		t.Errorf("BetaText of a one-slope fit: %q", got)
	}
	if got, want := BetaText(cost.HockneyFit{Model: cost.Hockney{Beta: 3.5e-10}, BetaErr: 1e-11}), "3.5e-10 s/B ± 1e-11"; got != want {
		t.Errorf("BetaText: %q, want %q", got, want)
	}
}

// TestChannelsLineSaysWhatTheProbesChose: the channels line under
// --single-copy auto names the messages the ranks chose to copy once, by
// each rank's probe: above 64 KiB, those too large for a ring, both (ranks
// that chose differently), or none.
func TestChannelsLineSaysWhatTheProbesChose(t *testing.T) {
	probe := func(above int64) *realrun.Probe {
		return &realrun.Probe{Rings: 2, Single: 1, MidRings: 2, MidSingle: 1, Above: above, Chose: above != realrun.SingleCopyOff}
	}
	ring := int64(1<<20 - 32)
	for _, tc := range []struct {
		above []int64
		ways  int
		want  string
	}{
		{[]int64{64 << 10, 64 << 10}, 2, "; messages above 64KiB go straight between the ranks' memories, copied once (4 copied so), the faster way: "},
		{[]int64{ring, ring}, 2, "; messages too large for a ring go straight between the ranks' memories, copied once"},
		// In a job of many ranks a ring holds 64 KiB, less than the probe's
		// 64 KiB limit once its header is taken off.
		{[]int64{64<<10 - 32, 64<<10 - 32}, 2, "; messages too large for a ring go straight between the ranks' memories, copied once"},
		{[]int64{ring, 64 << 10}, 2, "; messages above 64KiB or messages too large for a ring, as each rank chose, go straight"},
		{[]int64{realrun.SingleCopyOff, 64 << 10}, 1, "in 1 of the 2 directions, through the rings in the others (4 copied so): the ranks' exchanges"},
		{[]int64{realrun.SingleCopyOff, realrun.SingleCopyOff}, 0, "; every message through the rings, the faster way: the ranks' exchanges before the run took"},
	} {
		var reports []realrun.Report
		for _, a := range tc.above {
			reports = append(reports, realrun.Report{SingleCopyProbe: probe(a)})
		}
		got := singleCopies("auto", 1, tc.ways, 4, false, probed(reports), true, true, chosenLimits(reports))
		if !strings.Contains(got, tc.want) {
			t.Errorf("probes choosing above %v: %q, want it to contain %q", tc.above, got, tc.want)
		}
	}
}

// TestBusFactorOfALibrarysChoice: a row of -a ompi is named after the
// library ("ompi: alltoall/linear") and gets its collective's bus
// bandwidth factor as a named algorithm's row does: nccl-tests' (n-1)/n
// for an alltoall on 4 ranks, 2(n-1)/n for an allreduce.
func TestBusFactorOfALibrarysChoice(t *testing.T) {
	for _, c := range []struct {
		job  string
		want float64
	}{
		{"alltoall/pairwise", 0.75},
		{"ompi: alltoall/linear", 0.75},
		{"mpich: allreduce/recursive_doubling", 1.5},
		{"allreduce/ring", 1.5},
	} {
		if got := busFactor(c.job, 4); got != c.want {
			t.Errorf("%s on 4 ranks: bus factor %g, want %g", c.job, got, c.want)
		}
	}
}

// TestHostSysctlsCapBuffers: an emulated host's TCP buffers are capped at
// half its link's 20 ms queue (at 200 Mb/s: 25 MB/s x 20 ms = 500 kB, so
// 250 kB), and left to the kernel where that half would be 4 MiB or more
// (at 100 Gb/s the queue holds 250 MB).
func TestHostSysctlsCapBuffers(t *testing.T) {
	got := strings.Join(hostSysctls(200e6), "; ")
	for _, want := range []string{"net.ipv4.tcp_congestion_control=reno", "net.ipv4.tcp_rmem=4096 131072 250000", "net.ipv4.tcp_wmem=4096 16384 250000"} {
		if !strings.Contains(got, want) {
			t.Errorf("200 Mb/s: %q lacks %q", got, want)
		}
	}
	if got := strings.Join(hostSysctls(100e9), "; "); strings.Contains(got, "tcp_rmem") || strings.Contains(got, "tcp_wmem") {
		t.Errorf("100 Gb/s: %q caps the buffers", got)
	}
	// 1 Mb/s: a 20 ms queue of 2,500 B, half of it 1,250 B; the receive
	// buffer cannot go below a page.
	got = strings.Join(hostSysctls(1e6), "; ")
	for _, want := range []string{"net.ipv4.tcp_rmem=4096 4096 4096", "net.ipv4.tcp_wmem=1250 1250 1250"} {
		if !strings.Contains(got, want) {
			t.Errorf("1 Mb/s: %q lacks %q", got, want)
		}
	}
}

// TestHostSysctlsTheKernelTakes sets each emulated host's TCP settings in
// a network namespace of its own, at link rates from the least --netns
// takes up: the kernel refuses some values (a tcp_rmem below a page), and
// a refused setting fails the cluster's setup.
func TestHostSysctlsTheKernelTakes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to set TCP settings in a new network namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux) to make a network namespace")
	}
	if _, err := exec.LookPath("sysctl"); err != nil {
		t.Skip("needs sysctl (procps) to set TCP settings")
	}
	for _, rate := range []int64{1e6, 2e6, 3e6, 3.3e6, 10e6, 200e6, 2e9} {
		args := []string{"-n", "sysctl", "-q"}
		for _, kv := range hostSysctls(rate) {
			args = append(args, "-w", kv)
		}
		if out, err := exec.Command("unshare", args...).CombinedOutput(); err != nil {
			t.Errorf("%d b/s: unshare %s: %v\n%s", rate, strings.Join(args, " "), err, out)
		}
	}
}

// Summaries: a collective's median is of the slowest rank in each
// iteration; a ping-pong's, rank 0's own one way; an exchange's, the
// slower of its two ranks in each iteration (rank 1, idle, slow here, is
// not one of them), a round. Medians by hand from the times below.
func TestSummaries(t *testing.T) {
	const mib = 1 << 20 // one round per call at this size
	us := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Microsecond)
		}
		return out
	}
	report := func(rank int, ping, ex, coll []time.Duration) realrun.Report {
		res := func(name string, times []time.Duration) realrun.Result {
			return realrun.Result{Timing: realrun.Timing{Name: name, Bytes: mib, Iterations: len(times), Verified: true}, Times: times}
		}
		return realrun.Report{Rank: rank, Results: []realrun.Result{res("pingpong/0-2", ping), res("exchange/0-2", ex), res("allreduce/ring", coll)}}
	}
	reports := []realrun.Report{
		report(0, us(20, 40, 60), us(10, 10, 10), us(50, 50, 50)),
		report(1, us(0, 0, 0), us(100, 100, 100), us(90, 10, 10)),
		report(2, us(0, 0, 0), us(30, 5, 12), us(10, 60, 10)),
	}
	sums := Summaries(reports)
	// Ping-pong: rank 0's 20, 40, 60 over 2 one-way messages: 20µs.
	// Exchange: the slower of ranks 0 and 2, 30, 10, 12: 12µs.
	// Collective: the slowest of all, 90, 60, 50: 60µs.
	for i, want := range []time.Duration{20 * time.Microsecond, 12 * time.Microsecond, 60 * time.Microsecond} {
		if got := sums[i].Median; got != want {
			t.Errorf("%s: median %v, want %v", sums[i].Name, got, want)
		}
	}
}

// TestSingleCopyLimitHasItsUnit: --single-copy 8 read "messages above 8"
// (a new user's trial); the limit is written in bytes with its unit.
func TestSingleCopyLimitHasItsUnit(t *testing.T) {
	for limit, want := range map[string]string{"8": "messages above 8B go straight", "4096": "messages above 4KiB go straight", "4": "all messages with data go straight"} {
		if got := singleCopies(limit, 1, 2, 0, false, "", true, true, ""); !strings.Contains(got, want) {
			t.Errorf("--single-copy %s: %q, want %q", limit, got, want)
		}
	}
}

// TestPeerInterrupted: a rank waits for its own signal only when a peer
// says a signal stopped it, as a SignalContext's cause reads, whether the
// peer told it or the rendezvous did; a peer that crashed, or gave up for
// another failure, gives none to wait for (a rank waited a second after a
// peer's SIGKILL: an audit).
func TestPeerInterrupted(t *testing.T) {
	signalled := fmt.Errorf("allreduce/ring: rank 0: %w", cmdutil.InterruptedBy(syscall.SIGTERM))
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&realrun.PeerLostError{Rank: 1, Peer: 0, GaveUp: signalled.Error()}, true},
		{fmt.Errorf("allreduce/ring: %w", &realrun.AbortedError{Rank: 1, Reason: signalled.Error()}), true},
		{&realrun.PeerLostError{Rank: 1, Peer: 0, Cause: io.EOF}, false},
		{&realrun.AbortedError{Rank: 1, Reason: "lost the rendezvous (the launcher or rank 0 exited)"}, false},
		{&realrun.PeerLostError{Rank: 1, Peer: 0, GaveUp: "rank 2: connection to rank 3 lost: rank 3 exited or crashed"}, false},
		{errors.New("rank 1: interrupted by terminated"), false}, // its own, not a peer's
	} {
		if got := peerInterrupted(c.err); got != c.want {
			t.Errorf("%v: %t, want %t", c.err, got, c.want)
		}
	}
}

// A wrong result, found by this rank or by a peer that stopped this one
// for it, exits 3 as a simulated run's wrong data does (it exited 1: a
// new user's trial); the launcher exits 3 where a rank did.
func TestWrongResultExitsAsWrongData(t *testing.T) {
	wrong := fmt.Errorf("allreduce/ring: %w", &realrun.WrongResultError{Err: errors.New("rank 0 buffer 0 element 63 is 5, want 6")})
	for _, c := range []struct {
		err  error
		want bool
	}{
		{wrong, true},
		{&realrun.AbortedError{Rank: 1, Reason: "rank 0: " + wrong.Error()}, true},
		{&realrun.PeerLostError{Rank: 1, Peer: 0, GaveUp: wrong.Error()}, true},
		{&realrun.AbortedError{Rank: 1, Reason: "lost the rendezvous (the launcher or rank 0 exited)"}, false},
		{errors.New("rank 1: timed out"), false},
	} {
		if got := realrun.WrongResult(c.err); got != c.want {
			t.Errorf("%v: %t, want %t", c.err, got, c.want)
		}
	}
	if code := cmdutil.ExitCode(&cmdutil.ValidationError{Err: wrong}); code != 3 {
		t.Errorf("exit %d for wrong data, want 3", code)
	}
	// The launcher: a rank that exited 3.
	p := exec.Command("sh", "-c", "exit 3")
	p.Run()
	if err := wrongData([]*exec.Cmd{p}, errors.New("rank 1 exited with status 3")); cmdutil.ExitCode(err) != 3 {
		t.Errorf("launcher: %v exits %d, want 3", err, cmdutil.ExitCode(err))
	}
}
