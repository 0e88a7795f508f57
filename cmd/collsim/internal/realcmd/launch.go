package realcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/sim/realrun"
)

// maxLocalRanks bounds --np: every rank is a process with a socket to
// every other.
const maxLocalRanks = 256

// launch starts o.np rank processes (on this machine, or in an emulated
// cluster of network namespaces), serves their rendezvous, and prints what
// they measured. However the run ends (success, a failed rank, Ctrl-C), no
// rank process and no namespace outlives it.
func launch(cmd *cobra.Command, streams *cmdutil.IO, o *options) error {
	if o.np < 1 || o.np > maxLocalRanks {
		return cmdutil.Flagf("--np must be 1..%d, not %d", maxLocalRanks, o.np)
	}
	// Check the flags here, once, rather than in every rank.
	if _, _, err := buildJobs(o, 0, o.np); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find collsim's own executable to start ranks: %w", err)
	}
	listen := "127.0.0.1:0"
	wrap := func(rank int, argv []string) []string { return argv }
	if o.netns.enabled {
		cl, err := newCluster(o.netns, o.np)
		if err != nil {
			return err
		}
		defer cl.teardown(streams.Err)
		listen = net.JoinHostPort(cl.storeIP(), "0")
		wrap = cl.wrap
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("rendezvous: %w", err)
	}
	defer ln.Close()

	errw := &lockedWriter{w: streams.Err}
	procs := make([]*exec.Cmd, o.np)
	exited := make(chan int, o.np)
	defer func() { // whatever happened, no rank outlives the launcher
		for _, p := range procs {
			if p != nil && p.Process != nil {
				p.Process.Kill()
			}
		}
	}()
	args := childArgs(cmd)
	for r := range o.np {
		argv := wrap(r, append([]string{exe}, args...))
		p := exec.Command(argv[0], argv[1:]...)
		p.Env = append(os.Environ(), fmt.Sprintf("COLLSIM_RANK=%d", r), fmt.Sprintf("COLLSIM_SIZE=%d", o.np), "COLLSIM_RENDEZVOUS="+ln.Addr().String())
		p.Stdout = io.Discard
		p.Stderr = errw
		p.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := p.Start(); err != nil {
			return fmt.Errorf("starting rank %d: %w", r, err)
		}
		procs[r] = p
		go func() {
			p.Wait()
			exited <- r
		}()
	}
	reports, serr := realrun.Serve(ctx, ln, o.np, o.timeout)
	// The ranks end on their own once the rendezvous has said done or
	// abort; give them a moment, then kill the rest.
	grace := time.After(5 * time.Second)
	var failed []string
	for left := o.np; left > 0; left-- {
		select {
		case r := <-exited:
			if c := procs[r].ProcessState.ExitCode(); c != 0 {
				failed = append(failed, fmt.Sprintf("rank %d exited with status %d", r, c))
			}
		case <-grace:
			for _, p := range procs {
				p.Process.Kill()
			}
			grace = nil
			left++
		}
	}
	if ctx.Err() != nil {
		return errors.New("interrupted: every rank was stopped")
	}
	if serr != nil {
		return fmt.Errorf("the run failed: %w", serr)
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return report(streams.Out, o, o.np, reports)
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
