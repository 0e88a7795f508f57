package cmdutil

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// Interrupted is a run stopped by Ctrl-C (SIGINT) or SIGTERM once it has
// cleaned up (real runs stop their ranks first): collsim exits as a shell
// reports a process the signal ended, 128 + its number (130, 143), as the
// README says of every command.
type Interrupted struct {
	Signal os.Signal
	Err    error
}

func (e *Interrupted) Error() string { return e.Err.Error() }
func (e *Interrupted) Unwrap() error { return e.Err }

// status is the exit status of a process the signal ended.
func (e *Interrupted) status() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitError
}

// SignalContext is signal.NotifyContext for SIGINT and SIGTERM that also
// tells which of them arrived (caught: nil while none has). stop releases
// the signals.
func SignalContext() (ctx context.Context, caught func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(InterruptedBy(s))
		case <-done:
		}
	}()
	caught = func() os.Signal {
		var c *caughtSignal
		if errors.As(context.Cause(ctx), &c) {
			return c.sig
		}
		return nil
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(nil)
		})
	}
	return ctx, caught, stop
}

// InterruptedBy is the cause a SignalContext is cancelled with when sig
// arrives.
func InterruptedBy(sig os.Signal) error { return &caughtSignal{sig} }

// caughtSignal is the cause of a SignalContext's cancellation.
type caughtSignal struct{ sig os.Signal }

func (c *caughtSignal) Error() string { return interruptedBy + c.sig.String() }

// interruptedBy begins the text of a SignalContext's cause, which a real
// run's rank passes on to its peers when the signal stops it.
const interruptedBy = "interrupted by "

// SaysInterrupted reports whether text, another process's account of why
// it stopped, says a signal stopped it (a SignalContext's cause).
func SaysInterrupted(text string) bool { return strings.Contains(text, interruptedBy) }
