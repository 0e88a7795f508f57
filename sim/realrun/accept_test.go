package realrun

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// failingListener fails its first fails Accepts as a process out of file
// descriptors does, then hands out conn.
type failingListener struct {
	net.Listener
	fails int
	conn  net.Conn
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return l.conn, nil
}

// TestAcceptRetry: a listener that runs out of file descriptors (a flood
// of connections) is retried until it accepts again, not given up on;
// one closed, or one the caller is done with, ends the wait.
func TestAcceptRetry(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	l := &failingListener{fails: 4, conn: a}
	c, err := acceptRetry(l, func() bool { return false })
	if err != nil || c != a || l.fails != 0 {
		t.Fatalf("accept after 4 failures: %v, %v (%d failures left)", c, err, l.fails)
	}
	l = &failingListener{fails: 4}
	if _, err := acceptRetry(l, func() bool { return true }); !errors.Is(err, syscall.EMFILE) || l.fails != 3 {
		t.Errorf("a caller done with the listener: %v after %d failures, want EMFILE after 1", err, 4-l.fails)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if _, err := acceptRetry(ln, func() bool { return false }); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a closed listener: %v, want net.ErrClosed", err)
	}
}
