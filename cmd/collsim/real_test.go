package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	lib "github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/root"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/realrun"
)

// TestMain lets this test binary stand in for collsim when `collsim real`
// starts rank processes (it runs os.Executable(), which is this binary),
// or when a test starts collsim as a process of its own.
func TestMain(m *testing.M) {
	_, rank := os.LookupEnv("COLLSIM_RANK")
	if rank || os.Getenv("COLLSIM_TEST_AS_COLLSIM") == "1" {
		os.Exit(root.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

type realResult struct {
	Name      string  `json:"name"`
	Bytes     int64   `json:"bytes"`
	Verified  bool    `json:"verified"`
	AvgNs     int64   `json:"avg_ns"`
	MedianNs  int64   `json:"median_ns"`
	SlowestNs []int64 `json:"slowest_ns"`
}

// realJSON runs collsim real with --json and decodes its results.
func realJSON(t testing.TB, args ...string) []realResult {
	t.Helper()
	return realOutput(t, args...).Results
}

// skipIfShmFull skips a test that found pairs of ranks not sharing memory
// when /dev/shm has too little room left for them while other tests use it
// (they then fall back to TCP, as they should).
func skipIfShmFull(t testing.TB) {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err == nil && st.Bavail*uint64(st.Bsize) < 1<<30 {
		t.Skipf("/dev/shm has %d MiB free: too little for every pair of ranks to share memory while other tests run", st.Bavail*uint64(st.Bsize)>>20)
	}
}

// realRun is what collsim real --json says of a run.
type realRun struct {
	Results []realResult `json:"results"`
	// Iterations timed after Warmup, in rounds when Interleaved.
	Iterations  int  `json:"iterations"`
	Warmup      int  `json:"warmup"`
	Interleaved bool `json:"interleaved"`
	// SharedPairs of the Pairs of ranks talked through shared memory.
	SharedPairs int `json:"shared_pairs"`
	Pairs       int `json:"pairs"`
	// In SingleCopyWays of the 2*SharedPairs directions, large messages
	// go straight out of the sender's memory; SingleCopies did.
	SingleCopyWays int   `json:"single_copy_ways"`
	SingleCopies   int64 `json:"single_copies"`
	// Oversubscribed: a machine had more ranks than cores for them.
	Oversubscribed bool `json:"oversubscribed"`
	// PingPongFit is the fit the text prints, with --pingpong.
	PingPongFit *struct {
		Alpha float64 `json:"alpha_s"`
		Beta  float64 `json:"beta_s_per_byte"`
		Error string  `json:"error"`
	} `json:"pingpong_fit"`
	// CPUs each rank may run on.
	CPUs []string `json:"cpus"`
	// SingleCopyProbes: what each rank measured before the run under
	// --single-copy auto, or null.
	SingleCopyProbes []*probeTimes `json:"single_copy_probes"`
}

// probeTimes is what a rank's single-copy probe measured: the medians of
// its exchanges each way, and which it chose.
type probeTimes struct {
	Rings     int64 `json:"rings_ns"`
	Single    int64 `json:"single_ns"`
	MidRings  int64 `json:"mid_rings_ns"`
	MidSingle int64 `json:"mid_single_ns"`
	Chose     bool  `json:"single_copies"`
	// Above: the size above which the rank copies once; absent when it
	// copies none.
	Above *int64 `json:"single_copies_above"`
}

// realOutput runs collsim real --json with args and decodes its output.
func realOutput(t testing.TB, args ...string) realRun {
	t.Helper()
	stdout, stderr, code := collsim(t, append([]string{"real", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("collsim real %v: exit %d: %s", args, code, stderr)
	}
	var out realRun
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("decoding %q: %v", stdout, err)
	}
	return out
}

// TestRealEveryAlgorithm runs every algorithm of the library for real, one
// process per rank over loopback TCP or shared memory, for 2..8 processes, with sizes of 0,
// one element, a count that does not divide by the ranks, and one large
// enough to go through the connections' writer goroutines; every rank's
// data is checked after every call.
func TestRealEveryAlgorithm(t *testing.T) {
	sizes := []int64{0, 8, 1000, 300000}
	for n := 2; n <= 8; n++ {
		// Odd counts over TCP, even ones through shared memory.
		transport := map[bool]string{true: "tcp", false: "shm"}[n%2 == 1]
		t.Run(fmt.Sprint("np=", n, "/", transport), func(t *testing.T) {
			if err := realrun.SharedMemoryAvailable(); transport == "shm" && err != nil {
				t.Skipf("needs shared memory between processes: %v", err)
			}
			run := realOutput(t, "--np", fmt.Sprint(n), "-c", "all", "-a", "all", "-s", "0,8,1000,300000", "--iterations", "1", "--warmup", "0", "--transport", transport)
			if shared := map[string]int{"tcp": 0, "shm": n * (n - 1) / 2}[transport]; run.SharedPairs != shared || run.Pairs != n*(n-1)/2 {
				skipIfShmFull(t)
				t.Errorf("%d of %d pairs used shared memory, want %d", run.SharedPairs, run.Pairs, shared)
			}
			got := run.Results
			want := buildable(t, n, sizes...)
			if len(got) != want || want < 40*len(sizes) {
				t.Fatalf("%d calls ran, want %d", len(got), want)
			}
			for _, r := range got {
				if !r.Verified {
					t.Errorf("%s %dB: data not checked on every rank", r.Name, r.Bytes)
				}
			}
		})
	}
}

// buildable is how many calls collsim real -c all -a all makes on n ranks
// at these sizes: one per algorithm that supports them and size of the
// call (sizes that make the same call, as a barrier's do, count once).
func buildable(t *testing.T, n int, sizes ...int64) int {
	t.Helper()
	calls := map[string]bool{}
	for _, a := range collectives.All() {
		for _, size := range sizes {
			p, err := lib.Call(a.Collective, n, size, 8, 0)
			if err != nil {
				t.Fatal(err)
			}
			p.NodeSize, p.GroupSize = n, n
			if _, err := a.Build(p); err == nil {
				calls[fmt.Sprint(a.ID(), " ", p.SizeBytes(a.Collective))] = true
			}
		}
	}
	return len(calls)
}

// TestRealSingleCopy runs every algorithm for real through shared memory
// with messages too large for a ring, which ranks copy straight out of
// each other's memory (process_vm_readv), on 2 processes (each serving its
// channels from its own goroutine) and on 4 (more than this machine's
// cores, with reader and writer goroutines), 8 MiB and one element so
// that the pieces do not divide evenly; every rank's data is checked.
func TestRealSingleCopy(t *testing.T) {
	if err := realrun.SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	if err := realrun.SingleCopyAvailable(); err != nil {
		t.Skipf("needs single copies between processes: %v", err)
	}
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint("np=", n), func(t *testing.T) {
			// 1 MiB, a ring's size: the default copies no message once
			// where the ranks outnumber the cores (checked below).
			run := realOutput(t, "--np", fmt.Sprint(n), "-c", "all", "-a", "all", "-s", "8388616", "--iterations", "1", "--warmup", "0", "--single-copy", "1MiB")
			if pairs := n * (n - 1) / 2; run.SharedPairs != pairs {
				skipIfShmFull(t)
				t.Fatalf("%d of %d pairs used shared memory, want all", run.SharedPairs, pairs)
			}
			if run.SingleCopyWays != 2*run.SharedPairs {
				if scope, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil && strings.TrimSpace(string(scope)) != "0" {
					t.Skipf("Yama's ptrace_scope is %s: sibling processes may not read each other's memory", strings.TrimSpace(string(scope)))
				}
				t.Fatalf("%d of %d directions copied once, want all", run.SingleCopyWays, 2*run.SharedPairs)
			}
			if run.SingleCopies == 0 {
				t.Fatal("no message was copied once")
			}
			if want := buildable(t, n, 8388616); len(run.Results) != want || want < 40 {
				t.Fatalf("%d calls ran, want %d", len(run.Results), want)
			}
			for _, r := range run.Results {
				if !r.Verified {
					t.Errorf("%s %dB: data not checked on every rank", r.Name, r.Bytes)
				}
			}
		})
	}
	// --single-copy ring: single copies of messages too large for a ring,
	// unless the ranks outnumber the cores.
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint("ring/np=", n), func(t *testing.T) {
			run := realOutput(t, "--np", fmt.Sprint(n), "-a", "ring", "-s", "8388616", "--iterations", "1", "--warmup", "0", "--single-copy", "ring")
			if pairs := n * (n - 1) / 2; run.SharedPairs != pairs {
				skipIfShmFull(t)
				t.Fatalf("%d of %d pairs used shared memory, want all", run.SharedPairs, pairs)
			}
			// One ring allreduce: each rank sends 2(n-1) pieces of about
			// 8 MiB/n, all above a ring's 1 MiB.
			over := n > runtime.NumCPU()
			ways, copies := n*(n-1), int64(2*n*(n-1))
			if over {
				ways, copies = 0, 0
			}
			if run.Oversubscribed != over || run.SingleCopyWays != ways || run.SingleCopies != copies {
				t.Errorf("%d ranks on %d cores: oversubscribed %t, single copies in %d directions, %d messages copied once; want %t, %d, %d",
					n, runtime.NumCPU(), run.Oversubscribed, run.SingleCopyWays, run.SingleCopies, over, ways, copies)
			}
			stdout, stderr, code := collsim(t, "real", "--np", fmt.Sprint(n), "-a", "ring", "-s", "8388616", "--iterations", "1", "--warmup", "0", "--single-copy", "ring")
			if wantSaid := map[bool]string{true: "every message through the rings (more ranks than cores on a machine", false: fmt.Sprintf("go straight between the ranks' memories, copied once (%d copied so)", copies)}[over]; code != 0 || !strings.Contains(stdout, wantSaid) {
				t.Errorf("collsim real: exit %d, output does not say %q:\n%s%s", code, wantSaid, stdout, stderr)
			}
		})
	}
	// The default, auto: each rank times both ways before the run and
	// copies messages too large for a ring once if that was faster.
	t.Run("default", func(t *testing.T) {
		run := realOutput(t, "--np", "2", "-a", "ring", "-s", "8388616", "--iterations", "1", "--warmup", "0")
		if run.SharedPairs != 1 {
			skipIfShmFull(t)
			t.Fatalf("the ranks did not share memory")
		}
		if len(run.SingleCopyProbes) != 2 {
			t.Fatalf("%d ranks' probes reported, want 2", len(run.SingleCopyProbes))
		}
		chose := 0
		for rank, p := range run.SingleCopyProbes {
			switch {
			case run.Oversubscribed && p != nil:
				t.Fatalf("rank %d probed on a machine with more ranks than cores (where single copies are off): %+v", rank, p)
			case run.Oversubscribed:
				continue
			case p == nil:
				t.Fatalf("rank %d did not probe", rank)
			case p.Rings <= 0 || p.Single <= 0 || p.MidRings <= 0 || p.MidSingle <= 0:
				t.Errorf("rank %d: probe times %+v, want all above 0", rank, p)
			case p.Chose != (p.Single < p.Rings || p.MidSingle < p.MidRings):
				t.Errorf("rank %d: %+v: chose single copies %t, want them where they were faster", rank, p, p.Chose)
			case p.Chose != (p.Above != nil):
				t.Errorf("rank %d: %+v: single_copies_above given %t, want it only with single copies", rank, p, p.Above != nil)
			case p.Above != nil && *p.Above != 64<<10 && (*p.Above <= 64<<10 || *p.Above > 1<<20):
				// 64 KiB, or a ring's size (1 MiB for 2 ranks) less a header.
				t.Errorf("rank %d: single copies above %d bytes: neither 64 KiB nor a ring's size", rank, *p.Above)
			}
			if p.Chose {
				chose++
			}
		}
		// A ring allreduce on 2 ranks: each rank sends 2 pieces of about
		// 4 MiB, above a ring's 1 MiB; the probe's copies are not counted.
		if run.SingleCopyWays != chose || run.SingleCopies != int64(2*chose) {
			t.Errorf("%d ranks chose single copies: single copies in %d directions, %d messages copied once; want %d, %d",
				chose, run.SingleCopyWays, run.SingleCopies, chose, 2*chose)
		}
		// Without data nothing is copied once, and the run says why.
		if stdout, stderr, code := collsim(t, "real", "--np", "2", "-a", "ring", "-s", "8388616", "--iterations", "1", "--warmup", "0", "--verify=false"); code != 0 || !strings.Contains(stdout, "every message through the rings (the calls carry no data under --verify=false") {
			t.Errorf("--verify=false: exit %d, the channels line does not say why nothing is copied once:\n%s%s", code, stdout, stderr)
		}
	})
}

// procsWith lists the processes whose command line contains marker.
func procsWith(marker string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && bytes.Contains(b, []byte(marker)) {
			found = append(found, d)
		}
	}
	return found
}

// TestRealFaults checks that a rank that crashes, stalls or sends garbage
// ends the run on every rank, through shared memory and over TCP, quickly, with a message that names it, and
// that no rank process is left behind.
func TestRealFaults(t *testing.T) {
	cases := []struct {
		fault string
		want  []string
	}{
		{"crash@1", []string{"rank 1", "exited or crashed"}},
		// Killed without a word, as the out-of-memory killer kills: the
		// launcher names the signal.
		{"killed@1", []string{"rank 1 was killed by SIGKILL: by kill -9, or by the kernel's out-of-memory killer"}},
		// Whichever rank notices first reports it (under load, not always
		// the same one); it must blame rank 2 and no other.
		{"stall@2", []string{`the run failed: rank [013]: [^\n]*no word from rank 2 for 2s: it stalled`}},
		{"garbage@1", []string{"rank 1 sent a malformed frame"}},
	}
	for i, tc := range cases {
		for j, transport := range []string{"shm", "tcp"} {
			t.Run(tc.fault+"/"+transport, func(t *testing.T) {
				if err := realrun.SharedMemoryAvailable(); transport == "shm" && err != nil {
					t.Skipf("needs shared memory between processes: %v", err)
				}
				seed := fmt.Sprint(900000 + 10*i + j) // marks this run's processes
				start := time.Now()
				_, stderr, code := collsim(t, "real", "--np", "4", "-s", "8,64KiB", "--iterations", "3", "--timeout", "2s",
					"--seed", seed, "--inject-fault", tc.fault, "--transport", transport)
				if code == 0 {
					t.Fatalf("a run with %s succeeded", tc.fault)
				}
				for _, w := range tc.want {
					if !regexp.MustCompile(w).MatchString(stderr) {
						t.Errorf("stderr does not match %q:\n%s", w, stderr)
					}
				}
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("the run took %v to fail", d)
				}
				// A stall is noticed after --timeout (2 s) of silence; the run
				// then ends at once (it took 7.5 s with 5 s of fixed grace).
				if d := time.Since(start); strings.HasPrefix(tc.fault, "stall") && d > 6*time.Second {
					t.Errorf("a stall took %v to end the run, with --timeout 2s", d)
				}
				if left := procsWith("--seed=" + seed); len(left) > 0 {
					t.Errorf("rank processes left behind: %v", left)
				}
			})
		}
	}
}

// TestRealInterrupted sends Ctrl-C (SIGINT), then SIGTERM, to a launcher
// whose ranks are stuck, and checks that it exits promptly, leaving no
// rank, with the status a shell gives a process the signal ended (130,
// 143; it exited 1, which a script cannot tell from a failed run).
func TestRealInterrupted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		seed := fmt.Sprint(912345 + i)
		cmd := exec.Command(exe, "real", "--np", "3", "-s", "8", "--iterations", "1000000", "--timeout", "1m", "--seed", seed, "--inject-fault", "stall@0")
		cmd.Env = append(os.Environ(), "COLLSIM_TEST_AS_COLLSIM=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The launcher takes the signals over before it starts a rank:
		// once one runs, the signal is the launcher's to handle (sent
		// earlier, on a busy machine, it would kill it outright).
		for deadline := time.Now().Add(20 * time.Second); len(procsWith("--seed="+seed)) == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%v: no rank started within 20s", c.sig)
			}
		}
		time.Sleep(500 * time.Millisecond) // the ranks reach their stall
		cmd.Process.Signal(c.sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			if got := cmd.ProcessState.ExitCode(); got != c.code {
				t.Errorf("%v: exit status %d, want %d", c.sig, got, c.code)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: the launcher did not exit within 20s", c.sig)
		}
		if !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("%v: stderr does not say the run was interrupted:\n%s", c.sig, stderr.String())
		}
		if left := procsWith("--seed=" + seed); len(left) > 0 {
			t.Errorf("%v: rank processes left behind: %v", c.sig, left)
		}
	}
	// A rank of a cluster run (as srun starts it; scancel sends SIGTERM)
	// waiting for its peer exits so too (it exited 1: an audit).
	addr := freePort(t)
	r0 := asRank(0, 2, "--rendezvous", addr, "-s", "8", "--timeout", "1m")
	r0.Env = append(r0.Env, "COLLSIM_SECRET="+testSecret)
	if err := r0.Start(); err != nil {
		t.Fatal(err)
	}
	// Its rendezvous listens once it has taken the signals over.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			r0.Process.Kill()
			t.Fatal("rank 0's rendezvous did not listen within 20s")
		}
	}
	r0.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- r0.Wait() }()
	select {
	case <-done:
		if got := r0.ProcessState.ExitCode(); got != 143 {
			t.Errorf("a cluster rank's SIGTERM: exit status %d, want 143", got)
		}
	case <-time.After(20 * time.Second):
		r0.Process.Kill()
		t.Fatal("a cluster rank did not exit within 20s of SIGTERM")
	}
}

// TestRealRankHearsOfItsSignalLate: a launcher signals its ranks one
// after another (mpirun on Ctrl-C, srun on scancel), so a rank can hear
// from a peer its signal stopped before its own signal arrives. It exits
// as its signal does all the same (it exited 1: a new user's trial).
func TestRealRankHearsOfItsSignalLate(t *testing.T) {
	addr := freePort(t)
	ranks := make([]*exec.Cmd, 2)
	var stderr [2]bytes.Buffer
	for r := range ranks {
		ranks[r] = asRank(r, 2, "--rendezvous", addr, "-s", "8", "--iterations", "100000000", "--timeout", "1m")
		ranks[r].Env = append(ranks[r].Env, "COLLSIM_SECRET="+testSecret)
		ranks[r].Stderr = &stderr[r]
		if err := ranks[r].Start(); err != nil {
			t.Fatal(err)
		}
		defer ranks[r].Process.Kill()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("rank 0's rendezvous did not listen within 20s")
		}
	}
	time.Sleep(time.Second) // the ranks meet and run
	ranks[0].Process.Signal(syscall.SIGTERM)
	time.Sleep(50 * time.Millisecond) // rank 1 hears of it first
	ranks[1].Process.Signal(syscall.SIGTERM)
	for r, cmd := range ranks {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			if got := cmd.ProcessState.ExitCode(); got != 143 {
				t.Errorf("rank %d: exit status %d, want 143; stderr:\n%s", r, got, stderr[r].String())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("rank %d did not exit within 20s of SIGTERM", r)
		}
	}
}

// asRank starts this binary as one rank of a cluster run, as srun would.
func asRank(rank, size int, args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, append([]string{"real"}, args...)...)
	cmd.Env = append(os.Environ(), "COLLSIM_TEST_AS_COLLSIM=1", fmt.Sprintf("SLURM_PROCID=%d", rank), fmt.Sprintf("SLURM_NTASKS=%d", size))
	return cmd
}

// testSecret is a job secret for ranks started by hand.
const testSecret = "00112233445566778899aabbccddeeff"

// freePort returns a loopback address free now, for a rank to listen on
// later. It is drawn below the kernel's ephemeral ports (32768 up on
// Linux): a port the kernel handed out for :0 and got back could go to
// another test's outgoing connection before the rank bound it (rank 0
// once found 127.0.0.1:41977 in use under a loaded go test ./...).
func freePort(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("no free port from 20000 to 31999 on 127.0.0.1")
	return ""
}

// TestRealUnderSlurm starts ranks as srun does (rank and size in the
// environment), meeting through a rendezvous file and through an address,
// and checks that rank 0 prints the results.
func TestRealUnderSlurm(t *testing.T) {
	for _, how := range []string{"file", "address"} {
		t.Run(how, func(t *testing.T) {
			var where []string
			if how == "file" {
				where = []string{"--rendezvous-file", filepath.Join(t.TempDir(), "rdv"), "--bind", "127.0.0.1"}
			} else {
				where = []string{"--rendezvous", freePort(t)}
			}
			cmds := make([]*exec.Cmd, 3)
			outs := make([]*bytes.Buffer, 3)
			for r := range cmds {
				cmds[r] = asRank(r, 3, append(where, "-s", "8,4KiB", "--iterations", "2", "--timeout", "20s")...)
				if how == "address" {
					cmds[r].Env = append(cmds[r].Env, "COLLSIM_SECRET="+testSecret)
				}
				outs[r] = &bytes.Buffer{}
				cmds[r].Stdout, cmds[r].Stderr = outs[r], outs[r]
				if err := cmds[r].Start(); err != nil {
					t.Fatal(err)
				}
			}
			for r, c := range cmds {
				if err := c.Wait(); err != nil {
					t.Errorf("rank %d: %v: %s", r, err, outs[r])
				}
			}
			if !strings.Contains(outs[0].String(), "real allreduce on 3 ranks") || !strings.Contains(outs[0].String(), "checked") {
				t.Errorf("rank 0 printed:\n%s", outs[0])
			}
			if outs[1].Len() != 0 {
				t.Errorf("rank 1 printed:\n%s", outs[1])
			}
		})
	}
}

// TestRealUnreachableRendezvous: a rank whose rendezvous nobody answers
// gives up after the setup's minimum (30 s, realrun.MinSetup) and says so.
// It runs in parallel with the package's other parallel tests, since it
// mostly waits.
func TestRealUnreachableRendezvous(t *testing.T) {
	t.Parallel()
	addr := freePort(t) // nobody listens there now
	r1 := asRank(1, 2, "--rendezvous", addr, "--timeout", "1s")
	r1.Env = append(r1.Env, "COLLSIM_SECRET="+testSecret)
	out, err := r1.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "rank 1: cannot reach the rendezvous") {
		t.Errorf("%v: %s", err, out)
	}
}

// TestRealBadClusterInput checks the errors of ranks that cannot work
// together: different jobs, a port in use, a rank outside the size (an
// unreachable rendezvous: TestRealUnreachableRendezvous).
func TestRealBadClusterInput(t *testing.T) {
	// Rank 1 runs another job (another size; another way of moving large
	// messages, or another transport, under which ranks would probe single
	// copies or not): the rendezvous refuses it and tells it why, and goes
	// on waiting for its own rank 1 (which never comes here: rank 0 is
	// stopped once rank 1 has its answer).
	for _, other := range [][]string{{"-s", "16"}, {"-s", "8", "--single-copy", "ring"}, {"-s", "8", "--transport", "tcp"}} {
		t.Run("different jobs "+strings.Join(other, " "), func(t *testing.T) { differentJobs(t, other) })
	}
	// The same job spelled otherwise runs: a size, a range of one size,
	// the collective given or left to its default, the transport too.
	for _, other := range [][]string{{"-s", "1024", "-a", "ring"}, {"-s", "1KiB..1KiB", "-c", "allreduce", "-a", "ring"}, {"-s", "1KiB", "--transport", "shm", "-a", "ring"}} {
		t.Run("same job "+strings.Join(other, " "), func(t *testing.T) {
			sameJob(t, []string{"-s", "1KiB", "-a", "ring"}, other)
		})
	}
	t.Run("port in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		r0 := asRank(0, 2, "--rendezvous", ln.Addr().String(), "--timeout", "1s")
		r0.Env = append(r0.Env, "COLLSIM_SECRET="+testSecret)
		out, err := r0.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "is the port in use?") {
			t.Errorf("%v: %s", err, out)
		}
	})
	t.Run("no secret", func(t *testing.T) {
		r := asRank(1, 2, "--rendezvous", "127.0.0.1:1")
		out, err := r.CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), "needs the job's secret, the same on every rank") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("short secret", func(t *testing.T) {
		r := asRank(1, 2, "--rendezvous", "127.0.0.1:1")
		r.Env = append(r.Env, "COLLSIM_SECRET=abcd")
		out, err := r.CombinedOutput()
		if code := exitCode(err); code != 1 || !strings.Contains(string(out), "$COLLSIM_SECRET has 16 bits; a secret needs at least 128") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("secret file others can read", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(path, []byte(testSecret), 0o644); err != nil {
			t.Fatal(err)
		}
		r := asRank(1, 2, "--rendezvous", "127.0.0.1:1", "--secret-file", path)
		out, err := r.CombinedOutput()
		if code := exitCode(err); code != 1 || !strings.Contains(string(out), "can be read by others (mode 0644): chmod 600 "+path) {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("secret file with --np", func(t *testing.T) {
		_, stderr, code := collsim(t, "real", "--np", "2", "--secret-file", "x")
		if code != 2 || !strings.Contains(stderr, "with --np, collsim serves the rendezvous and makes each run's secret itself") {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	t.Run("rank outside size", func(t *testing.T) {
		r := asRank(5, 2, "--rendezvous", "127.0.0.1:1")
		out, err := r.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "SLURM_PROCID=5 is not a rank of SLURM_NTASKS=2") {
			t.Errorf("%v: %s", err, out)
		}
	})
}

// differentJobs starts rank 0 of a 2-rank job of 8-byte calls and a rank 1
// with other options, and checks that the rendezvous refuses rank 1.
func differentJobs(t *testing.T, other []string) {
	addr := freePort(t)
	r0 := asRank(0, 2, "--rendezvous", addr, "-s", "8", "--timeout", "10s")
	r1 := asRank(1, 2, append([]string{"--rendezvous", addr, "--timeout", "10s"}, other...)...)
	r0.Env = append(r0.Env, "COLLSIM_SECRET="+testSecret)
	r1.Env = append(r1.Env, "COLLSIM_SECRET="+testSecret)
	var e0, e1 bytes.Buffer
	r0.Stderr, r1.Stderr = &e0, &e1
	if err := r0.Start(); err != nil {
		t.Fatal(err)
	}
	defer r0.Process.Kill()
	if err := r1.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r1.Wait(); err == nil || !strings.Contains(e1.String(), "the rendezvous refused it: this rank runs another job than the rendezvous's") {
		t.Errorf("rank 1 of another job: %v\n%s", err, e1.String())
	}
	r0.Process.Kill()
	r0.Wait()
}

// sameJob starts rank 0 of a 2-rank job with args0 and rank 1 with
// args1, which should spell the same job, and requires both to finish.
func sameJob(t *testing.T, args0, args1 []string) {
	addr := freePort(t)
	var out [2]bytes.Buffer
	ranks := make([]*exec.Cmd, 2)
	for r, args := range [][]string{args0, args1} {
		ranks[r] = asRank(r, 2, append([]string{"--rendezvous", addr, "--timeout", "20s", "--iterations", "2"}, args...)...)
		ranks[r].Env = append(ranks[r].Env, "COLLSIM_SECRET="+testSecret)
		ranks[r].Stdout, ranks[r].Stderr = &out[r], &out[r]
		if err := ranks[r].Start(); err != nil {
			t.Fatal(err)
		}
		defer ranks[r].Process.Kill()
	}
	for r, p := range ranks {
		if err := p.Wait(); err != nil {
			t.Errorf("rank %d (%v): %v\n%s", r, [][]string{args0, args1}[r], err, out[r].String())
		}
	}
}

// exitCode is the exit status of a finished command's error.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestRealStrangers runs a cluster run's ranks as srun would, with
// strangers in their midst: a connection to the rendezvous that says
// nothing, and a collsim rank 1 with another secret, started before the
// real rank 1. The stranger is refused and told why; the real ranks run to
// the end as if neither had come.
func TestRealStrangers(t *testing.T) {
	addr := freePort(t)
	args := []string{"--rendezvous", addr, "-s", "8,4KiB", "--iterations", "2", "--timeout", "20s"}
	ranks := make([]*exec.Cmd, 3)
	outs := make([]*bytes.Buffer, 3)
	for r := range ranks {
		ranks[r] = asRank(r, 3, args...)
		ranks[r].Env = append(ranks[r].Env, "COLLSIM_SECRET="+testSecret)
		outs[r] = &bytes.Buffer{}
		ranks[r].Stdout, ranks[r].Stderr = outs[r], outs[r]
	}
	if err := ranks[0].Start(); err != nil {
		t.Fatal(err)
	}
	defer ranks[0].Process.Kill()
	var idle net.Conn
	for deadline := time.Now().Add(20 * time.Second); idle == nil; time.Sleep(50 * time.Millisecond) {
		idle, _ = net.Dial("tcp", addr)
		if time.Now().After(deadline) {
			t.Fatalf("rank 0 did not listen at %s: %s", addr, outs[0])
		}
	}
	defer idle.Close()

	stranger := asRank(1, 3, args...)
	stranger.Env = append(stranger.Env, "COLLSIM_SECRET=ffeeddccbbaa99887766554433221100")
	out, err := stranger.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "rank 1: the rendezvous refused it: this rank did not prove it knows the job's secret") {
		t.Errorf("the stranger: %v: %s", err, out)
	}

	for _, r := range ranks[1:] {
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for r, c := range ranks {
		if err := c.Wait(); err != nil {
			t.Errorf("rank %d: %v: %s", r, err, outs[r])
		}
	}
	if !strings.Contains(outs[0].String(), "real allreduce on 3 ranks") || !strings.Contains(outs[0].String(), "checked") {
		t.Errorf("rank 0 printed:\n%s", outs[0])
	}
}

// TestRealNetns builds an emulated cluster (one network namespace per
// host, links shaped by tc tbf) and checks that the shaping holds: a ring
// allreduce between two hosts can be no faster than its bytes over the
// shaped link allow. Ranks on one emulated host share memory, ranks on two
// never do. Nothing of the cluster may be left afterwards.
func TestRealNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces (.ci/run runs it as root)")
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (Debian package iproute2)", tool)
		}
	}
	run := realOutput(t, "--np", "2", "--netns", "--link-bandwidth", "200Mbps", "-s", "4MiB", "--iterations", "2", "--warmup", "1")
	if run.SharedPairs != 0 {
		t.Errorf("ranks on two emulated hosts shared memory (%d pairs): they must cross the shaped link", run.SharedPairs)
	}
	got := run.Results
	// Ring allreduce on 2 ranks: each rank sends half the vector twice.
	bound := time.Duration(float64(2*(4<<20)/2) / (200e6 / 8) * 1e9)
	if len(got) != 1 || time.Duration(got[0].AvgNs) < bound*9/10 {
		t.Errorf("results %+v: faster than the shaped link allows (%v)", got, bound)
	}
	// The ping-pong's fit must find the shaped link: every size the fit
	// uses is limited by the bucket (a bucket that let small sizes through
	// at line rate once fitted a link 1.6x faster than the shaping). The
	// payload rate is the shaped 25 MB/s less TCP/IP's headers (1448 of
	// every 1514 bytes on the wire carry payload: 23.9 MB/s); fitted here
	// 23.5-25.5 MB/s over 17 runs, quiet and loaded, with the earlier
	// weighted fit. The robust fit, over four large sizes and three
	// iterations: 22.2-23.2 MB/s idle, 22.4-23.8 with two busy loops (7 runs;
	// 19.2 once with three sizes and two iterations while the suite ran).
	// Its spread is allowed to 50% here (the bounds below judge the
	// result): loaded, the slopes spread up to 8%, past the default 5%.
	//
	// Calibrated so, the simulation must follow the real ring: errors
	// -9.4%..+7% over the same 17 runs. Four shaped hosts on two cores
	// wait for the CPU when the rest of the suite and two busy loops run
	// alongside (once -27.7%: real 0.37 s, simulated 0.27 s), so a miss is
	// measured again, up to three times, as TestRealPRTT does; a model or a
	// shaping that is wrong misses every time. Starved for CPU, the
	// ping-pong may not fit at all (loadedFit): once, with the suite and
	// more than two busy loops alongside, it fitted 6.3 MB/s, then a
	// negative time per byte. That too is measured again.
	// (Refused fits are counted apart: a miss is still measured 3 times.)
	for attempt, refused := 1, 0; ; attempt++ {
		stdout, stderr, code := collsim(t, "validate", "--real", "--json", "--np", "4", "--netns", "--link-bandwidth", "200Mbps", "-a", "ring", "-s", "4MiB", "--pingpong", "8,512,1MiB,2MiB,3MiB,4MiB", "--iterations", "3", "--max-fit-spread", "0.5")
		if loadedFit(t, code, stderr, refused+1) {
			refused++
			attempt--
			continue
		}
		if code != 0 {
			t.Fatalf("collsim validate: exit %d: %s", code, stderr)
		}
		var v validateOut
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("decoding %q: %v", stdout, err)
		}
		var problems []string
		if bw := 1 / v.Beta; bw > 25e6*1.15 || bw < 25e6*0.8 {
			problems = append(problems, fmt.Sprintf("the ping-pong fits a link of %.4g B/s; the shaped link carries 25e6 B/s less headers", bw))
		}
		if len(v.Points) != 1 || math.Abs(v.Points[0].SimError) > 0.2 {
			problems = append(problems, fmt.Sprintf("simulated ring 4MiB on 4 shaped hosts: %+v", v.Points))
		}
		if v.Channel != nil {
			t.Errorf("emulated hosts have a NIC each, but the exchanges of one host were fitted: %+v", *v.Channel)
		}
		if v.Interleaved {
			t.Error("between emulated hosts the calls were interleaved; the default there is the OSU order")
		}
		if len(problems) == 0 {
			break
		}
		if attempt >= 3 {
			t.Error(strings.Join(problems, "\n"))
			break
		}
		t.Logf("measured again: %s", strings.Join(problems, "; "))
	}
	// Two emulated hosts of two ranks each: the pairs within a host, and
	// only they, share memory.
	if err := realrun.SharedMemoryAvailable(); err == nil {
		if two := realOutput(t, "--np", "4", "--netns", "--hosts", "2", "--link-bandwidth", "1Gbps", "-s", "8", "--iterations", "1", "--warmup", "0"); two.SharedPairs != 2 || two.Pairs != 6 {
			skipIfShmFull(t)
			t.Errorf("4 ranks on 2 emulated hosts: %d of %d pairs shared memory, want 2 of 6", two.SharedPairs, two.Pairs)
		}
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	prefix := fmt.Sprintf("cs%d", os.Getpid())
	if strings.Contains(string(out), prefix) || strings.Contains(string(links), prefix) {
		t.Errorf("left behind:\n%s\n%s", out, links)
	}
}

type validatePoint struct {
	Algorithm string  `json:"algorithm"`
	Bytes     int64   `json:"bytes"`
	Real      float64 `json:"real_median_s"`
	Simulated float64 `json:"simulated_s"`
	SimError  float64 `json:"simulated_error"`
	Flow      float64 `json:"flow_s"`
}

type validateOut struct {
	Alpha   float64 `json:"alpha_s"`
	Beta    float64 `json:"beta_s_per_byte"`
	Channel *struct {
		Ratio float64 `json:"exchange_to_one_way"`
		Share float64 `json:"duplex_share"`
		Gamma float64 `json:"reduce_s_per_byte"`
		Sizes []int64 `json:"sizes"`
		Bands []struct {
			From        int64   `json:"from"`
			Bandwidth   float64 `json:"bandwidth_bytes_per_s"`
			DuplexShare float64 `json:"duplex_share"`
		} `json:"bands"`
		Unbanded []int64 `json:"unbanded_sizes"`
	} `json:"channel"`
	Drift *struct {
		Between    string  `json:"between"`
		BetaBefore float64 `json:"beta_before"`
		BetaAfter  float64 `json:"beta_after"`
		BetaChange float64 `json:"beta_change"`
	} `json:"drift"`
	// Interleaved: the calls were timed in rounds (on one host, by
	// default; in the OSU order with --netns).
	Interleaved bool            `json:"interleaved"`
	Points      []validatePoint `json:"points"`
	Notes       []string        `json:"notes"`
}

// TestValidateReal: real runs on loopback, a fitted machine, and every
// point's simulated time and error beside the real one; plots that are
// PNG and SVG files; --max-error that fails the run.
func TestValidateReal(t *testing.T) {
	dir := t.TempDir()
	// Any fit: this checks the mechanics on a machine the other tests load
	// (the refusal of an unstable fit is checked below).
	// A loaded machine's ping-pong may not fit at all (times that do not
	// grow with size): measured again (see loadedFit).
	var out validateOut
	for attempt := 1; ; attempt++ {
		stdout, stderr, code := collsim(t, "validate", "--real", "--json", "--np", "2", "-s", "64KiB,256KiB", "--pingpong", "8,1KiB,1MiB..16MiB", "--iterations", "2", "--plot", dir, "--max-fit-spread", "1e9")
		if loadedFit(t, code, stderr, attempt) {
			continue
		}
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		break
	}
	if !out.Interleaved {
		t.Error("on one host the calls were not interleaved, validate's default there")
	}
	if !(out.Alpha >= 0 && out.Beta > 0) { // alpha 0: the small sizes took no longer than their bytes
		t.Errorf("fit alpha %g, beta %g", out.Alpha, out.Beta)
	}
	// The ranks share this host: the exchanges, at the default sizes
	// (auto: each power of two from the smallest message, 64 KiB over 2
	// ranks, to the largest size), fit its channel (plain and reducing
	// ones, their data checked), a band from each size up, the ping-pong
	// timed there too.
	sizes := []int64{32 << 10, 64 << 10, 128 << 10, 256 << 10}
	if c := out.Channel; c == nil || !(c.Ratio > 0) || c.Gamma < 0 || !(c.Share >= 0 && c.Share <= 1) || !slices.Equal(c.Sizes, sizes) {
		t.Errorf("channel fit %+v, want a positive ratio, no negative gamma, a duplex share from 0 to 1, sizes %v", c, sizes)
	} else {
		for i, b := range c.Bands {
			if !slices.Contains(sizes, b.From) || i > 0 && b.From <= c.Bands[i-1].From || !(b.Bandwidth > 0) || !(b.DuplexShare >= 0 && b.DuplexShare <= 1) {
				t.Errorf("band %d: %+v, want bands from exchange sizes (%v) in increasing order, a positive bandwidth and a duplex share from 0 to 1", i, b, sizes)
			}
		}
		// A size whose one-way time a loaded machine's alpha passes gets
		// no band, and the notes say so; every other gets one.
		banded := map[int64]bool{}
		for _, b := range c.Bands {
			banded[b.From] = true
		}
		for _, b := range c.Unbanded {
			if banded[b] || !slices.Contains(sizes, b) {
				t.Errorf("size %d listed as without a band: bands %+v, sizes %v", b, c.Bands, sizes)
			}
			banded[b] = true
		}
		if len(banded) != len(sizes) {
			t.Errorf("bands %+v and sizes without one %v do not cover the exchange sizes %v", c.Bands, c.Unbanded, sizes)
		}
		if len(c.Unbanded) > 0 && !slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, "the channel has no band at") }) {
			t.Errorf("sizes %v got no band, and the notes %q do not say so", c.Unbanded, out.Notes)
		}
	}
	// The calls were timed in rounds (the default), and the drift is the
	// ping-pong's between the halves of the rounds (its fit can fail on a
	// loaded machine, as the whole run's can: then there is no drift).
	if d := out.Drift; d != nil && (d.Between != "in the first and the second half of the rounds" || !(d.BetaBefore > 0 && d.BetaAfter > 0) || math.Abs(d.BetaChange-(d.BetaAfter/d.BetaBefore-1)) > 1e-9) {
		t.Errorf("drift %+v", *d)
	}
	if len(out.Points) != 6 {
		t.Fatalf("%d points, want 3 algorithms x 2 sizes", len(out.Points))
	}
	for _, p := range out.Points {
		if !(p.Real > 0 && p.Simulated > 0 && p.Flow > 0) {
			t.Errorf("%+v: times must be positive", p)
		}
		if want := (p.Simulated - p.Real) / p.Real; math.Abs(p.SimError-want) > 1e-12 {
			t.Errorf("%+v: error %g, want %g", p, p.SimError, want)
		}
	}
	for _, name := range []string{"validate-real.png", "validate-real.svg", "validate-real-error.png", "validate-real-error.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if png := strings.HasSuffix(name, ".png"); png && !bytes.HasPrefix(b, []byte("\x89PNG")) || !png && !bytes.Contains(b[:min(len(b), 200)], []byte("<svg")) {
			t.Errorf("%s is not a %s file", name, filepath.Ext(name))
		}
	}
	// --timeout bounds a rank's wait for progress; starting and
	// registering get SetupTimeout's 30 s whatever it says, as in real
	// (validate gave them 1 ms, and every run failed at the rendezvous).
	if _, stderr, _ := collsim(t, "validate", "--real", "--np", "2", "-a", "ring", "-s", "64KiB", "--pingpong", "8,256KiB..4MiB", "--iterations", "1", "--timeout", "1ms", "--max-fit-spread", "1e9"); strings.Contains(stderr, "never registered") {
		t.Errorf("--timeout 1ms: the ranks were not given the time to register: %s", stderr)
	}
	// A spread of 0 allowed: real slopes never agree exactly.
	if _, stderr, code := collsim(t, "validate", "--real", "--np", "2", "-a", "ring", "-s", "64KiB", "--pingpong", "8,256KiB..4MiB", "--iterations", "2", "--max-fit-spread", "0"); code != 1 || !strings.Contains(stderr, "the ping-pong fit is unstable") && !strings.Contains(stderr, "cannot be judged") && !strings.Contains(stderr, "fitting the ping-pong") {
		t.Errorf("--max-fit-spread 0: exit %d, stderr %s", code, stderr)
	}
	// The fit may fail on a loaded machine (see loadedFit). Timed as the
	// OSU benchmarks time (--interleave=false), the pairs are timed again
	// after the collectives, and the drift is between the two, the first
	// being the model's fit.
	for attempt := 1; ; attempt++ {
		stdout, stderr, code := collsim(t, "validate", "--real", "--json", "--interleave=false", "--np", "2", "-a", "ring", "-s", "64KiB", "--pingpong", "8,1MiB..16MiB", "--iterations", "2", "--max-error", "1e-9", "--max-fit-spread", "1e9")
		if loadedFit(t, code, stderr, attempt) {
			continue
		}
		if code != 3 || !strings.Contains(stderr, "points off by more than") {
			t.Errorf("--max-error 1e-9: exit %d, stderr %s", code, stderr)
		}
		var seq validateOut
		if err := json.Unmarshal([]byte(stdout), &seq); err != nil {
			t.Fatalf("decoding %q: %v", stdout, err)
		}
		if d := seq.Drift; d != nil && (d.Between != "before and after the collectives" || d.BetaBefore != seq.Beta || math.Abs(d.BetaChange-(d.BetaAfter/seq.Beta-1)) > 1e-9) {
			t.Errorf("--interleave=false: drift %+v against beta %g", *d, seq.Beta)
		}
		break
	}
}

// loadedFit reports whether validate's attempt failed only because a
// loaded machine's ping-pong could not be fitted (times that do not grow
// with size: the 8-byte round trip stretched by scheduling delays, in one
// loaded run past a quarter of the 4 MiB one, so the tests' ping-pongs go
// to 16 MiB), so that the caller measures again, after waiting 1, 2, 4 s
// for the load to change; up to four attempts.
//
// When the fourth fails the same way, the machine stays too busy for the
// fit these tests need to check validate's mechanics, and the test skips,
// saying so: with two busy loops and 4-process runs alongside, one fit in
// two failed (their ranks poll, yielding, before they sleep). Alone, or
// with two busy loops only, it fitted 5 times of 5.
func loadedFit(t *testing.T, code int, stderr string, attempt int) bool {
	t.Helper()
	if code != 1 || !strings.Contains(stderr, "fitting the ping-pong") && !strings.Contains(stderr, "the ping-pong fit cannot be judged") {
		return false
	}
	if attempt == 4 {
		t.Skipf("the machine is too busy to fit a ping-pong, 4 times in a row (run this test alone: go test ./cmd/collsim -run %s): %s", t.Name(), stderr)
	}
	t.Logf("measured again: %s", stderr)
	time.Sleep(time.Second << (attempt - 1))
	return true
}

// TestValidateBadInput: what validate refuses before starting anything.
func TestValidateBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		// A new user's trial: a selector ran the whole measurement, then
		// failed reading its own row; another collective's default was
		// allreduce's ring; outputs failed after the run.
		{[]string{"validate", "--real", "--np", "2", "-a", "mpich"}, "-a mpich: validate --real fits a model to named algorithms"},
		{[]string{"validate", "--real", "--np", "2", "-c", "bcast"}, "-a: name the algorithms to run for -c bcast"},
		{[]string{"real", "--np", "2", "-s", "8", "--timeline", "/nonexistent-dir/x.json"}, "--timeline /nonexistent-dir/x.json: there is no directory"},
		{[]string{"real", "--np", "2", "-a", "ompi4"}, `unknown allreduce algorithm "ompi4"; valid: `},
		{[]string{"real", "--np", "2", "-a", "ompi4"}, "(or a library's choice: ompi, ompi40, ompi5, mpich, mpich4)"},
		{[]string{"validate", "--np", "2"}, "give --real"},
		{[]string{"validate", "--real", "--np", "1"}, "at least 2"},
		{[]string{"validate", "--real", "--np", "4", "--netns", "--hosts", "2"}, "one rank per host"},
		{[]string{"validate", "--real", "--np", "2", "--pingpong", "8,1x"}, `unknown unit "x"`},
		{[]string{"validate", "--real", "--np", "2", "--exchange", "12"}, "--exchange: size 12B is not a whole number of 8-byte words"},
		{[]string{"validate", "--real", "--np", "2", "--exchange", ""}, "--exchange: give sizes"},
		// validate has no --elem-size, which the call's message named
		// (a new user's trial).
		{[]string{"validate", "--real", "--np", "2", "-s", "12"}, "-s 12B: validate runs 8-byte elements; give sizes that are multiples of 8"},
		{[]string{"validate", "-c", "allreduce", "-n", "3", "-s", "12"}, "-s 12B: validate runs 8-byte elements; give sizes that are multiples of 8"},
		{[]string{"validate", "--real", "--np", "2", "--max-drift", "-0.1"}, "--max-drift -0.1: a fraction of beta"},
		{[]string{"real", "--np", "2", "--prtt", "8", "--pairs-again"}, "--pairs-again"},
		// Interleaved, every call is timed in every round: nothing after
		// the collectives, and PRTT's round trips are not interleaved.
		{[]string{"real", "--np", "2", "--interleave", "--pingpong", "8", "--pairs-again"}, "--pairs-again does not apply"},
		{[]string{"real", "--np", "2", "--prtt", "8", "--interleave"}, "--interleave does not apply"},
		// A drift check that one round cannot make, and real runs' flags
		// without --real.
		{[]string{"validate", "--real", "--np", "2", "--iterations", "1", "--max-drift", "0.1"}, "--max-drift with --iterations 1"},
		// Between emulated hosts the calls are not interleaved by default,
		// and the drift is between before and after the collectives: one
		// iteration is no reason to refuse (this fails later, for --hosts).
		{[]string{"validate", "--real", "--np", "4", "--netns", "--hosts", "2", "--iterations", "1", "--max-drift", "0.1"}, "one rank per host"},
		{[]string{"validate", "--interleave=false"}, "--interleave does not apply"},
		{[]string{"validate", "--max-drift", "0.1"}, "--max-drift does not apply"},
		{[]string{"validate", "--single-copy", "off"}, "--single-copy does not apply"},
		// validate passes --single-copy on to real, which refuses it over TCP.
		{[]string{"validate", "--real", "--np", "2", "--transport", "tcp", "--single-copy", "ring"}, "--single-copy does not apply"},
		// --exchange's auto reads -s before real does.
		{[]string{"validate", "--real", "--np", "2", "-s", "1MiB,2y"}, `-s: `},
		{[]string{"real", "--np", "2", "--exchange", "8,1y"}, `--exchange: `},
		// A mistyped fault ran without one (a new user's trial).
		{[]string{"real", "--np", "2", "-s", "8", "--inject-fault", "bogus@1"}, `--inject-fault "bogus@1": give crash@R`},
		{[]string{"real", "--np", "2", "-s", "8", "--inject-fault", "crash"}, `--inject-fault "crash": give crash@R`},
		{[]string{"real", "--np", "2", "--prtt", "8", "--exchange", "8"}, "--exchange"},
		{[]string{"validate", "--real", "--np", "2", "-c", "allreduce", "-a", "nope"}, "nope"},
	} {
		_, stderr, code := collsim(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRealPRTT: collsim real --prtt measures Netgauge's three round trips
// over real sockets in two launches and writes them in Netgauge's format.
// What must hold whatever the machine: a burst of n messages takes longer
// than one, and the spaced burst at least the n-1 delays d = PRTT(1,0,s)
// on top of one round trip. Whether LogGP fits is the machine's affair (on
// two shared cores it does not: see the README).
func TestRealPRTT(t *testing.T) {
	// Round trips over loopback are timed for real: on a loaded machine
	// (the other packages' tests run alongside) a median of a few can
	// catch a scheduling delay (medians of 15 rather than 5 catch fewer),
	// and two ranks that share one core while the other is busy wait out
	// each other's polling for a whole run (a lone round trip of 1 ms
	// against 80 us for a burst of ten, three runs in a row, once, with
	// two busy loops and the other packages' tests alongside). So the
	// ordering is checked again, up to five times, waiting 1, 2, 4, then
	// 8 s first for the load to change; a PRTT that is wrong breaks it
	// every time.
	for attempt := 1; ; attempt++ {
		problems := measurePRTT(t)
		if len(problems) == 0 {
			break
		}
		if attempt == 5 {
			t.Fatal(strings.Join(problems, "\n"))
		}
		t.Logf("measured again: %s", strings.Join(problems, "; "))
		time.Sleep(time.Second << (attempt - 1))
	}
	if _, errs, code := collsim(t, "real", "--prtt", "1"); code != 2 || !strings.Contains(errs, "--np") {
		t.Errorf("--prtt without --np: exit %d, %s", code, errs)
	}
}

// measurePRTT measures PRTT(1,0,s), PRTT(n,0,s) and PRTT(n,d,s) through
// the CLI and returns where they break their ordering: a burst of n takes
// longer than one round trip, and n spaced by d at least their (n-1)d of
// waits.
func measurePRTT(t *testing.T) []string {
	file := filepath.Join(t.TempDir(), "loggp.out")
	out, errs, code := collsim(t, "real", "--np", "2", "--prtt", "1,4KiB,64KiB", "--iterations", "15", "--warmup", "1", "--prtt-out", file)
	if code != 0 || !strings.Contains(out, "PRTT(n,d,s)") || !strings.Contains(out, "LogGP fit") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := cost.ParseNetgauge(file, f)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != 10 || len(m.One) != 3 {
		t.Fatalf("series %+v", m)
	}
	var problems []string
	for s, one := range m.One {
		burst, spaced := m.Burst[s][0], m.Spaced[s][0]
		// n round trips spaced by d take at least their n-1 waits; the
		// first round trip's time on top is what an idle machine shows,
		// but a loaded one can inflate the median of PRTT(1,0,s) (and d,
		// which is set from it) more than the spaced run's.
		if burst <= one[0] || spaced < 9*m.D[s] {
			problems = append(problems, fmt.Sprintf("%d bytes: PRTT(1,0,s) %g s, PRTT(n,0,s) %g s, PRTT(n,d,s) %g s with d %g s", s, one[0], burst, spaced, m.D[s]))
		}
	}
	return problems
}

// TestRealLibrariesAndLaunchers: -a ompi and -a mpich run each library's
// own choice for real (its name in the row, every rank's data checked),
// ping-pongs check their words, and --np under a launcher that started
// several processes is refused (each would start a job of its own), while
// a launcher of one process (a batch script's step) may run --np.
func TestRealLibrariesAndLaunchers(t *testing.T) {
	run := realOutput(t, "--np", "3", "-a", "ompi,mpich", "-s", "8,300000", "--pingpong", "8,1000", "--iterations", "1", "--warmup", "0")
	got := run.Results
	// The ping-pongs' fit, which the text prints, is in the JSON too (it
	// was left out): a fit, or why there is none (the times are noise).
	if f := run.PingPongFit; f == nil || f.Error == "" && !(f.Alpha > 0 && f.Beta > 0) {
		t.Errorf("pingpong_fit %+v: want alpha and beta, or an error", f)
	}
	names := map[string]bool{}
	for _, r := range got {
		names[r.Name] = true
		if !r.Verified {
			t.Errorf("%s %dB: not checked", r.Name, r.Bytes)
		}
	}
	// Open MPI 4.1 on 3 ranks: recursive doubling for 8 B, the ring
	// (segmented above its thresholds) for 300 kB; the ping-pongs' rows.
	for _, want := range []string{"ompi: allreduce/recursive_doubling", "pingpong/0-2"} {
		if !names[want] {
			t.Errorf("no row %q in %v", want, names)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d rows, want 2 ping-pongs and 2 libraries x 2 sizes: %v", len(got), names)
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", "1")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	if _, errs, code := collsim(t, "real", "--np", "2"); code != 2 || !strings.Contains(errs, "--np 2 under a launcher that started 2 processes") {
		t.Errorf("--np under mpirun -np 2: exit %d %q", code, errs)
	}
	// validate --real starts its own ranks: under mpirun -np 2 each
	// process ran a whole validation of its own (a new user's trial).
	for _, args := range [][]string{{"validate", "--real", "--np", "2"}, {"validate", "--real"}} {
		if _, errs, code := collsim(t, args...); code != 2 || !strings.Contains(errs, "validate --real starts its ranks itself, with --np: run it outside srun or mpirun") {
			t.Errorf("%v under mpirun -np 2: exit %d %q", args, code, errs)
		}
	}
}

// TestRealListsWithSelectors: -c all -a ompi and -a mpich run every
// collective by the library's rules (it failed on gather before they
// were transcribed, then skipped gather and scatter): on 2 ranks and 16
// B, 8 B a rank (one 8-byte element, as Open MPI's dsize x count reads
// it), Open MPI's gather is binomial and its scatter basic_linear (size <
// 4: 4 <= b < 32768, 2 <= b < 131072), MPICH's both binomial; sizes that
// make the same call run once (a barrier's four rows were identical).
func TestRealListsWithSelectors(t *testing.T) {
	for lib, want := range map[string][]string{
		"ompi":  {"ompi: allreduce/", "ompi: gather/binomial ", "ompi: scatter/basic_linear "},
		"mpich": {"mpich: allreduce/", "mpich: gather/binomial ", "mpich: scatter/binomial "},
	} {
		stdout, stderr, code := collsim(t, "real", "--np", "2", "-c", "all", "-a", lib, "-s", "16", "--iterations", "1")
		if code != 0 || strings.Contains(stderr, "not transcribed") {
			t.Errorf("-c all -a %s: exit %d:\n%s%s", lib, code, stdout, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stdout, w) {
				t.Errorf("-c all -a %s: no row %q:\n%s", lib, w, stdout)
			}
		}
	}
	// A barrier has no size: at three sizes it runs once, and says
	// nothing of rounding.
	stdout, stderr, code := collsim(t, "real", "--np", "2", "-c", "barrier", "-a", "linear", "-s", "8,16,1KiB", "--iterations", "1")
	if rows := strings.Count(stdout, "barrier/linear"); code != 0 || rows != 1 || strings.Contains(stderr, "note") {
		t.Errorf("a barrier at 3 sizes: exit %d, %d rows, want 1 and no notes:\n%s%s", code, rows, stdout, stderr)
	}
	if strings.Contains(stdout, "channels: shared memory") && !strings.Contains(stdout, "through the rings (no call moves data") {
		t.Errorf("a barrier through shared memory: the channels line does not say no call moves data (and nothing was probed):\n%s", stdout)
	}
	// An algorithm of a list that cannot run on these ranks is left out
	// with a note; alone, it is an error of ranks that do not fit (exit
	// 1, as in collsim run).
	stdout, stderr, code = collsim(t, "real", "--np", "3", "-c", "alltoall", "-a", "two_procs,pairwise", "-s", "48", "--iterations", "1")
	if code != 0 || !strings.Contains(stderr, "note: skipped: alltoall/two_procs on 3 ranks: two_procs runs on 2 ranks, not 3") || strings.Contains(stdout, "two_procs") || !strings.Contains(stdout, "alltoall/pairwise") {
		t.Errorf("two_procs and pairwise on 3 ranks: exit %d, want pairwise alone and a note:\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := collsim(t, "real", "--np", "3", "-c", "alltoall", "-a", "two_procs", "-s", "48"); code != 1 || !strings.Contains(stderr, "two_procs runs on 2 ranks, not 3") {
		t.Errorf("two_procs alone on 3 ranks: exit %d, want 1 and why:\n%s", code, stderr)
	}
	// On 3 ranks each rank's alltoall data splits into 3 blocks of whole
	// 8-byte words: 8 and 16 bytes send nothing, 40 bytes sends 24, the
	// call that 24 bytes makes, and 56 bytes sends 48, of which 8 are
	// left; each says so on stderr, as collsim run does, and alone 16
	// bytes is refused.
	stdout, stderr, code = collsim(t, "real", "--np", "3", "-c", "alltoall", "-a", "pairwise", "-s", "8,16,24,40,56", "--iterations", "1", "--warmup", "0")
	for _, want := range []string{
		"note: skipped: alltoall of 8B on 3 ranks: nothing would be sent (a multiple of 24B moves everything)",
		"note: skipped: alltoall of 16B on 3 ranks: nothing would be sent",
		"note: skipped: alltoall/pairwise of 40B on 3 ranks: the same call as the 24B it rounds to, run once",
		"note: alltoall splits each rank's 56B evenly over 3 ranks in whole 8-byte elements: 2 elements to each, 48B in all (8B is not sent",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("alltoall of 8, 16, 24, 40 and 56 bytes on 3 ranks: stderr does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "splits each rank's 40B") {
		t.Errorf("40 bytes, run once as 24, also has a note of its rounding:\n%s", stderr)
	}
	if rows := strings.Count(stdout, "alltoall/pairwise"); code != 0 || rows != 2 || !strings.Contains(stdout, "alltoall/pairwise  24B") || !strings.Contains(stdout, "alltoall/pairwise  48B") {
		t.Errorf("alltoall of 8, 16, 24, 40 and 56 bytes on 3 ranks: exit %d, %d rows, want two, of 24B and 48B:\n%s%s", code, rows, stdout, stderr)
	}
	if _, stderr, code := collsim(t, "real", "--np", "3", "-c", "alltoall", "-s", "16"); code != 2 || !strings.Contains(stderr, "--sizes 16B: nothing would be sent") {
		t.Errorf("alltoall of 16 bytes on 3 ranks: exit %d, want 2 and a refusal:\n%s", code, stderr)
	}
}

// TestRealTCPTakesTheDefaultSingleCopy: --single-copy auto, the default,
// given with --transport tcp has nothing to choose and is accepted, as a
// script that always passes it expects; a limit is refused there
// (hostile_test.go).
func TestRealTCPTakesTheDefaultSingleCopy(t *testing.T) {
	stdout, stderr, code := collsim(t, "real", "--np", "2", "--transport", "tcp", "--single-copy", "auto", "-c", "bcast", "-a", "binomial", "-s", "8", "--iterations", "1")
	if code != 0 || !strings.Contains(stdout, "TCP between every pair of ranks (--transport tcp)") {
		t.Errorf("--transport tcp --single-copy auto: exit %d, want a TCP run:\n%s%s", code, stdout, stderr)
	}
}

// TestRealOneRankSaysRank: one rank is "1 rank" in notes and the header.
func TestRealOneRankSaysRank(t *testing.T) {
	stdout, stderr, code := collsim(t, "real", "--np", "1", "-c", "alltoall", "-s", "8,7", "--iterations", "1")
	if code != 0 || !strings.Contains(stderr, "alltoall of 7B on 1 rank: nothing would be sent") || !strings.HasPrefix(stdout, "real alltoall on 1 rank (") {
		t.Errorf("alltoall of 8 and 7 bytes on 1 rank: exit %d:\n%s%s", code, stdout, stderr)
	}
}

// TestRealInterleaved: collsim real --interleave runs (its order is
// TestBenchInterleave's), checks its data and says so in its JSON, whose
// calls each have the slowest rank's time of every round, their median the
// call's median (of 3, the middle one), ping-pongs one way as their median
// is.
func TestRealInterleaved(t *testing.T) {
	run := realOutput(t, "--np", "2", "-a", "ring,recursive_doubling", "-s", "8,64KiB", "--pingpong", "8,64KiB", "--iterations", "3", "--warmup", "1", "--interleave")
	if run.Iterations != 3 || run.Warmup != 1 || !run.Interleaved {
		t.Errorf("iterations %d, warm-up %d, interleaved %t; want 3, 1, true", run.Iterations, run.Warmup, run.Interleaved)
	}
	if len(run.Results) != 6 {
		t.Fatalf("%d results, want 2 ping-pongs and 2 algorithms x 2 sizes", len(run.Results))
	}
	for _, r := range run.Results {
		sorted := slices.Sorted(slices.Values(r.SlowestNs))
		if !r.Verified || len(sorted) != 3 || sorted[1] != r.MedianNs || sorted[0] <= 0 {
			t.Errorf("%s of %d B: verified %t, slowest %v, median %d; want verified, 3 positive times, the middle one the median", r.Name, r.Bytes, r.Verified, r.SlowestNs, r.MedianNs)
		}
	}
}

// TestRealRefusesWhatTheMachineCannotHold: real --np and validate --real
// both check the machine's room before they start a rank (the room's
// arithmetic is realcmd's TestThreadRoom and TestMemoryRoom). 4 ranks of
// a 16 GiB allreduce hold 4 x 16 GiB x 2 = 128 GiB; 256 ranks need 256 x
// 264 = 67,584 threads. Each case runs only where this machine's /proc
// says it must be refused, so that no test starts such a job.
func TestRealRefusesWhatTheMachineCannotHold(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the machine's room is read from Linux's /proc")
	}
	// procNumber is the number that follows field on a line of file, or
	// with field "" the file's first word.
	procNumber := func(file, field string) int64 {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Skipf("%s: %v", file, err)
		}
		f := strings.Fields(string(b))
		at := 0
		if field != "" {
			at = slices.Index(f, field) + 1
		}
		if at < 0 || at >= len(f) || (field != "" && at == 0) {
			t.Skipf("%s: no %q", file, field)
		}
		v, err := strconv.ParseInt(f[at], 10, 64)
		if err != nil {
			t.Skipf("%s: %v", file, err)
		}
		return v
	}
	const need = 128 << 30
	if avail := procNumber("/proc/meminfo", "MemAvailable:") << 10; avail >= need {
		t.Logf("skipping the memory cases: %d bytes available, 128 GiB would fit", avail)
	} else {
		for _, args := range [][]string{
			{"real", "--np", "4", "-c", "allreduce", "-a", "ring", "-s", "16GiB", "--iterations", "1"},
			{"validate", "--real", "--np", "4", "-a", "ring", "-s", "16GiB", "--iterations", "1"},
		} {
			// Exit 1, as ranks that do not fit a machine (the README's
			// table; it was 2, a usage error: a new user's trial).
			if _, errs, code := collsim(t, args...); code != 1 || !strings.Contains(errs, "128.0 GiB") || !strings.Contains(errs, "memory this machine has available") {
				t.Errorf("%v: exit %d %q; want exit 1 and the memory it would take", args, code, errs)
			}
		}
	}
	limit := min(procNumber("/proc/sys/kernel/threads-max", ""), procNumber("/proc/sys/kernel/pid_max", ""))
	if limit >= 256*264 {
		t.Skipf("the threads' limit %d holds 256 ranks", limit)
	}
	for _, args := range [][]string{
		{"real", "--np", "256", "-c", "allreduce", "-s", "8", "--iterations", "1"},
		{"validate", "--real", "--np", "256", "-a", "ring", "-s", "8", "--iterations", "1"},
	} {
		if _, errs, code := collsim(t, args...); code != 1 || !strings.Contains(errs, "256 ranks need about 67584 threads") {
			t.Errorf("%v: exit %d %q; want exit 1 and the threads it would take", args, code, errs)
		}
	}
}

// TestRealTimelines: real --timeline draws a name ending in .svg as an SVG
// Gantt chart by rank, as run --timeline does (it wrote the Chrome trace's
// JSON into it: a new user's trial), and writes any other name as a Chrome
// trace whose every rank names its tracks (rank 0's only did). A 3-rank
// ring allreduce has 2(p-1) = 4 sends and 4 receives a rank: 24 bars.
func TestRealTimelines(t *testing.T) {
	dir := t.TempDir()
	svg, js := filepath.Join(dir, "t.svg"), filepath.Join(dir, "t.json")
	for _, path := range []string{svg, js} {
		if _, stderr, code := collsim(t, "real", "--np", "3", "-a", "ring", "-s", "3KiB", "--iterations", "1", "--timeline", path); code != 0 {
			t.Fatalf("--timeline %s: exit %d: %s", path, code, stderr)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasPrefix(text, "<svg ") || !strings.Contains(text, "real allreduce/ring 3KiB on 3 ranks") || !strings.Contains(text, "wall time") {
		t.Errorf("the SVG timeline does not start as an SVG, title its call or name its clock:\n%.400s", text)
	}
	// A real run's reductions are not timed, and the legend does not
	// name them (it did, and none was drawn: a teacher's trial).
	if strings.Contains(text, "reduction") || !strings.Contains(text, ">calc<") {
		t.Errorf("the legend names reductions a real run does not draw")
	}
	if bars := strings.Count(text, "<title>send rank") + strings.Count(text, "<title>recv rank"); bars != 24 {
		t.Errorf("%d send and receive bars, want 24", bars)
	}
	for rank := range 3 {
		if !strings.Contains(text, fmt.Sprintf(">rank %d</text>", rank)) {
			t.Errorf("no row for rank %d", rank)
		}
	}
	var tr struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Pid  int            `json:"pid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if b, err = os.ReadFile(js); err != nil || json.Unmarshal(b, &tr) != nil {
		t.Fatalf("the Chrome trace: %v: %.200s", err, b)
	}
	named := map[int]bool{}
	for _, e := range tr.TraceEvents {
		if e.Name == "thread_name" && e.Args["name"] == "allreduce/ring 3KiB" {
			named[e.Pid] = true
		}
	}
	if len(named) != 3 {
		t.Errorf("tracks named on ranks %v, want all 3", named)
	}
	// Refused before the run, as rank 0 of 300 that srun started (--np
	// stops at 256 ranks, the most a timeline draws).
	r0 := asRank(0, 300, "--rendezvous", freePort(t), "-s", "8", "--timeline", svg)
	r0.Env = append(r0.Env, "COLLSIM_SECRET="+testSecret)
	out, err := r0.CombinedOutput()
	if code := r0.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "a timeline of 300 ranks is unreadable") {
		t.Errorf("an SVG timeline of 300 ranks: exit %d (%v): %s", code, err, out)
	}
}

// A --rendezvous-file that names a file of the user's own is refused,
// and the file kept (it was written over and removed after the run: a
// new user's trial); a file rank 0 wrote is removed after the run.
func TestRealRendezvousFileKeepsOthersFiles(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o600)
	out, err := asRank(0, 2, "--rendezvous-file", notes, "--bind", "127.0.0.1", "-s", "8", "--timeout", "5s").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "exists and is not a rendezvous file collsim wrote") {
		t.Errorf("rank 0 on a file of notes: %v: %s", err, out)
	}
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Errorf("the notes now hold %q", b)
	}
	rdv := filepath.Join(dir, "rdv")
	cmds := []*exec.Cmd{asRank(0, 2, "--rendezvous-file", rdv, "--bind", "127.0.0.1", "-s", "8", "--timeout", "20s"), asRank(1, 2, "--rendezvous-file", rdv, "--bind", "127.0.0.1", "-s", "8", "--timeout", "20s")}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	if _, err := os.Stat(rdv); !os.IsNotExist(err) {
		t.Errorf("the rendezvous file is left after the run: %v", err)
	}
}

// --pairs-again's second ping-pongs are told apart from the first, in the
// table and in the JSON (they had the same names: a new user's trial):
// of ping-pong, allreduce, ping-pong, the last alone is after.
func TestRealPairsAgainLabelled(t *testing.T) {
	out, stderr, code := collsim(t, "real", "--np", "2", "-s", "8", "--pingpong", "8", "--pairs-again", "--iterations", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Results []struct {
			Name  string `json:"name"`
			After bool   `json:"after_collectives"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Results) != 3 {
		t.Fatalf("%v: %s", err, out)
	}
	for i, r := range res.Results {
		if r.After != (i == 2) {
			t.Errorf("row %d (%s): after_collectives %t", i, r.Name, r.After)
		}
	}
	text, _, _ := collsim(t, "real", "--np", "2", "-s", "8", "--pingpong", "8", "--pairs-again", "--iterations", "2")
	if strings.Count(text, "(again, after)") != 1 {
		t.Errorf("the table does not mark the second ping-pong once:\n%s", text)
	}
}
