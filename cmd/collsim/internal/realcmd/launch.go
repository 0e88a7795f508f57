package realcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/sim/realrun"
)

// maxLocalRanks bounds --np: every rank is a process with a socket to
// every other.
const maxLocalRanks = 256

// checkNP refuses an --np outside 1..maxLocalRanks.
func (l *Launcher) checkNP() error {
	if l.NP < 1 || l.NP > maxLocalRanks {
		return cmdutil.Flagf("--np must be 1..%d, not %d", maxLocalRanks, l.NP)
	}
	return nil
}

// Launcher says how to start the rank processes of a real run.
type Launcher struct {
	NP    int
	Netns NetnsOptions
	// BindTo is --bind-to: "core" binds each rank to a CPU of its own
	// when there are enough, "none" leaves them to the scheduler.
	BindTo string
	// Timeout bounds registration at the rendezvous (the ranks watch their
	// own progress).
	Timeout time.Duration
}

// AddFlags registers the launcher's flags (--np, --netns, --hosts,
// --link-bandwidth) on f.
func (l *Launcher) AddFlags(f *pflag.FlagSet) {
	f.IntVar(&l.NP, "np", 0, "start this many local rank processes (without it, ranks come from srun or mpirun)")
	f.StringVar(&l.BindTo, "bind-to", "core", `with --np: "core" binds each rank to a CPU of its own when the CPUs this process may use are enough, as mpirun binds to cores by default (two ranks left to the scheduler were at times runnable on one CPU, where polling ranks take turns); "none" does not`)
	l.Netns.flags(f)
}

// CheckFlags refuses the emulated cluster's flags without --netns, which
// would otherwise be ignored.
func (l *Launcher) CheckFlags(f *pflag.FlagSet) error {
	if f.Changed("np") {
		if err := l.checkNP(); err != nil {
			return err
		}
	}
	if l.BindTo != "core" && l.BindTo != "none" {
		return cmdutil.Flagf("--bind-to %q: want core (a CPU for each rank, when there are enough) or none", l.BindTo)
	}
	if l.Netns.enabled {
		return nil
	}
	return cmdutil.NotApplicable(f, "it describes the emulated cluster of --netns (add --netns, as root)", "hosts", "link-bandwidth")
}

// launcherOnly flags configure the launcher, not the ranks it starts.
var launcherOnly = map[string]bool{"np": true, "json": true, "netns": true, "hosts": true, "link-bandwidth": true, "bind-to": true}

// ChildArgs are the arguments a launcher passes to its ranks: verb and
// every flag the user set on cmd, except the launcher's own and those in
// skip.
func ChildArgs(cmd *cobra.Command, verb string, skip ...string) []string {
	args := []string{verb}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if !launcherOnly[f.Name] && !slices.Contains(skip, f.Name) {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// RootArgs are the root's flags the user set (--huge-pages,
// --cpuprofile), as a launcher that writes its ranks' arguments itself
// passes them on: ChildArgs has them among cmd's own.
func RootArgs(cmd *cobra.Command) []string {
	var args []string
	// (Visit would see none: the inherited set is made afresh, and knows
	// which flags were set only by their Changed.)
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// exitText says how a rank's process ended: its exit status, or the
// signal that killed it (sig, when not the launcher's own kill), with what
// usually sends a SIGKILL.
func exitText(ps *os.ProcessState, sig syscall.Signal) string {
	switch {
	case sig == syscall.SIGKILL:
		return "was killed by SIGKILL: by kill -9, or by the kernel's out-of-memory killer when memory runs out (dmesg says; smaller --sizes or fewer --np need less)"
	case sig != 0:
		return fmt.Sprintf("was killed by signal %d (%v)", int(sig), sig)
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

// exitGrace is how long a rank's failed exit waits before it ends the run,
// so that the rendezvous hears the failure's cause first.
const exitGrace = time.Second

// abortGrace is how long the ranks of a failed run have to exit on their
// own before the launcher kills them.
const abortGrace = 300 * time.Millisecond

// Launch starts l.NP processes of this collsim binary with args (on this
// machine, or in an emulated cluster of network namespaces), serves their
// rendezvous, and returns every rank's report. Ranks' diagnostics go to
// stderr. However the run ends (success, a failed rank, Ctrl-C), no rank
// process and no namespace outlives it.
func (l *Launcher) Launch(args []string, stderr io.Writer) ([]realrun.Report, error) {
	if err := l.checkNP(); err != nil {
		return nil, err
	}
	sigCtx, caught, stop := cmdutil.SignalContext()
	defer stop()
	// A rank that exits before the run is over ends it: the rendezvous
	// would otherwise wait for it to register until the timeout.
	ctx, cancel := context.WithCancelCause(sigCtx)
	defer cancel(nil)
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find collsim's own executable to start ranks: %w", err)
	}
	listen := "127.0.0.1:0"
	wrap := func(rank int, argv []string) []string { return argv }
	if l.Netns.enabled {
		cl, err := newCluster(l.Netns, l.NP)
		if err != nil {
			return nil, err
		}
		defer cl.teardown(stderr)
		listen = net.JoinHostPort(cl.storeIP(), "0")
		wrap = cl.wrap
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("rendezvous: %w", err)
	}
	defer ln.Close()

	// Every run has its own secret: only the ranks started here, which
	// find it in their environment (which other users cannot read), can
	// join the rendezvous or each other.
	secret, err := realrun.NewSecret()
	if err != nil {
		return nil, err
	}
	errw := &lockedWriter{w: stderr}
	procs := make([]*exec.Cmd, l.NP)
	exited := make(chan int, l.NP)
	var killing atomic.Bool // the launcher kills the ranks: their signals are its own
	defer func() {          // whatever happened, no rank outlives the launcher
		killing.Store(true)
		for _, p := range procs {
			if p != nil && p.Process != nil {
				p.Process.Kill()
			}
		}
	}()
	killedBy := make([]syscall.Signal, l.NP) // a signal not the launcher's, by rank
	var cores []int
	if l.BindTo == "core" {
		cores = coresFor(l.NP)
	}
	for r := range l.NP {
		argv := wrap(r, append([]string{exe}, args...))
		p := exec.Command(argv[0], argv[1:]...)
		p.Env = append(os.Environ(), fmt.Sprintf("COLLSIM_RANK=%d", r), fmt.Sprintf("COLLSIM_SIZE=%d", l.NP), "COLLSIM_RENDEZVOUS="+ln.Addr().String(), secretEnv+"="+secret.String())
		if cores != nil {
			p.Env = append(p.Env, fmt.Sprintf("COLLSIM_CPU=%d", cores[r]))
		}
		if os.Getenv("GOMAXPROCS") == "" {
			procs := RankProcs(runtime.NumCPU(), l.NP)
			if cores != nil {
				procs = 1 // the rank's one CPU
			}
			p.Env = append(p.Env, fmt.Sprintf("GOMAXPROCS=%d", procs))
		}
		p.Stdout = io.Discard
		p.Stderr = errw
		p.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := p.Start(); err != nil {
			return nil, fmt.Errorf("starting rank %d: %w", r, err)
		}
		procs[r] = p
		go func() {
			p.Wait()
			if ws, ok := p.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && !killing.Load() {
				killedBy[r] = ws.Signal() // read after exited
			}
			if c := p.ProcessState.ExitCode(); c != 0 {
				// A rank that failed has told the rendezvous why before it
				// exits, and its peers exit too when they lose it: give the
				// rendezvous a moment to hear the cause before this exit,
				// perhaps a consequence, ends the run.
				why := exitText(p.ProcessState, killedBy[r])
				time.AfterFunc(exitGrace, func() {
					cancel(fmt.Errorf("rank %d %s before the run was over", r, why))
				})
			}
			exited <- r
		}()
	}
	reports, serr := realrun.Serve(ctx, ln, l.NP, l.Timeout, secret, 0) // the ranks it starts share its job
	// The ranks end on their own once the rendezvous has said done or
	// abort; give them a moment, then kill the rest. After a failure the
	// cause is known and a stalled rank will not end by itself: the
	// moment is short, so that the run ends within about --timeout.
	wait := 5 * time.Second
	if serr != nil {
		wait = abortGrace
	}
	grace := time.After(wait)
	var failed []string
	for left := l.NP; left > 0; left-- {
		select {
		case r := <-exited:
			if c := procs[r].ProcessState.ExitCode(); c != 0 {
				failed = append(failed, fmt.Sprintf("rank %d %s", r, exitText(procs[r].ProcessState, killedBy[r])))
			}
		case <-grace:
			killing.Store(true)
			for _, p := range procs {
				p.Process.Kill()
			}
			grace = nil
			left++
		}
	}
	// Every rank has exited; those killed above ran no cleanup.
	pids := make([]int, 0, len(procs))
	for _, p := range procs {
		pids = append(pids, p.Process.Pid)
	}
	realrun.RemoveFilesOf(pids)
	switch {
	case sigCtx.Err() != nil:
		return nil, &cmdutil.Interrupted{Signal: caught(), Err: errors.New("interrupted: every rank was stopped")}
	case serr != nil:
		for r, sig := range killedBy {
			if sig != 0 { // the rank could not say why: the signal does
				serr = fmt.Errorf("%w; rank %d %s", serr, r, exitText(procs[r].ProcessState, sig))
			}
		}
		return nil, wrongData(procs, fmt.Errorf("the run failed: %w", serr))
	case len(failed) > 0:
		return nil, wrongData(procs, errors.New(strings.Join(failed, "; ")))
	}
	return reports, nil
}

// lockedWriter lets every rank's stderr share the launcher's.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// RankProcs is the GOMAXPROCS of each of ranks processes on a host of cpus
// cores: its share of the cores, at least 1. A rank's goroutine serves most
// of its channels itself (sim/realrun/progress.go); the goroutines left (the
// watchers that wake it, readers and writers of TCP peers it does not
// serve) mostly wait, and with one P a reader that takes a frame hands it
// to the program on the same P, where with more each hand-over wakes a
// thread: before the progress loop, on this project's 2-core machine, an
// 8-byte one-way ping-pong between 2 ranks took 34 us with one P each
// against 66 us with two (README, Real runs).
func RankProcs(cpus, ranks int) int { return max(1, cpus/max(ranks, 1)) }

// wrongData is err, a failed run's, as collsim's error for wrong data
// (exit 3) where a rank exited so, having found a result wrong.
func wrongData(procs []*exec.Cmd, err error) error {
	for _, p := range procs {
		if p.ProcessState != nil && p.ProcessState.ExitCode() == cmdutil.ExitValidation {
			return &cmdutil.ValidationError{Err: err}
		}
	}
	return err
}
