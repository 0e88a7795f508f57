//go:build linux

package realrun

import (
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tcpServed serves a TCP connection from the rank's goroutine (see
// progress.go) with system calls that never wait, on the connection's
// descriptor, as an MPI library's TCP transport polls its sockets. Go's
// own reads and writes park the goroutine in the runtime's poller, and a
// frame then reached the rank through a wake-up of the reader goroutine
// and another of the rank's.
type tcpServed struct {
	rc syscall.RawConn
	// The rank's goroutine's reads and writes go through closures made
	// once, with their buffer and result here: a closure made per call
	// escaped to the heap, and the rank polls, so each look at the socket
	// allocated (about 26 objects per message of a ping-pong).
	rbuf, wbuf      []byte
	rn, wn          int
	rerr, werr      error
	readFn, writeFn func(fd uintptr)
}

// serveTCP returns c as a channel the rank's goroutine can serve.
func serveTCP(c net.Conn) (servedConn, bool) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil, false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, false
	}
	t := &tcpServed{rc: rc}
	t.readFn = func(fd uintptr) { t.rn, t.rerr = rawIO(syscall.SYS_READ, fd, t.rbuf) }
	t.writeFn = func(fd uintptr) { t.wn, t.werr = rawIO(syscall.SYS_WRITE, fd, t.wbuf) }
	return t, true
}

// rawIO reads or writes (trap) p on the non-blocking descriptor fd without
// telling Go's scheduler it enters a system call: the call never waits,
// and with syscall.Read the scheduler handed the rank's processor over
// and back around it, 4 times as many context switches in an 8-byte
// ping-pong over loopback TCP as Go's collector ran less often.
func rawIO(trap, fd uintptr, p []byte) (int, error) {
	r, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// readSome reads what the socket holds, up to len(p), without waiting.
func (t *tcpServed) readSome(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	// Control, not Read: it does not wait for the read lock a watcher
	// holds while it waits in the poller.
	t.rbuf = p
	rerr := t.rc.Control(t.readFn)
	n, err := t.rn, t.rerr
	t.rbuf = nil
	if rerr != nil {
		return 0, rerr // closed
	}
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
		return 0, nil
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// writeSome writes what the socket's buffer takes, without waiting; only
// the rank's goroutine calls it (writeWhole has its own way).
func (t *tcpServed) writeSome(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	t.wbuf = p
	werr := t.rc.Control(t.writeFn)
	n, err := t.wn, t.werr
	t.wbuf = nil
	if werr != nil {
		return 0, werr
	}
	return writeResult(n, err)
}

// writeOnce is writeSome for any goroutine.
func (t *tcpServed) writeOnce(p []byte) (int, error) {
	var n int
	var err error
	if werr := t.rc.Control(func(fd uintptr) {
		n, err = rawIO(syscall.SYS_WRITE, fd, p)
	}); werr != nil {
		return 0, werr
	}
	return writeResult(n, err)
}

// writeResult is what a non-blocking write of n bytes, failing with err,
// reports: nothing written and no error when the socket's buffer is full.
func writeResult(n int, err error) (int, error) {
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
		return 0, nil
	case err != nil:
		return 0, err
	}
	return n, nil
}

// writeWhole writes p within a short time: only an abort frame, just
// before the connection closes, is written this way. If the socket's
// buffer does not take it all, the peer sees the frame cut and the end.
func (t *tcpServed) writeWhole(p []byte) {
	for end := time.Now().Add(100 * time.Millisecond); len(p) > 0 && time.Now().Before(end); {
		n, err := t.writeOnce(p)
		if err != nil {
			return
		}
		p = p[n:]
	}
}

// waitReadable waits in Go's poller until the socket has data, its end, or
// an error, or is closed, without reading.
func (t *tcpServed) waitReadable() {
	t.rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN && err != syscall.EINTR
	})
}

// waitRoom waits in Go's poller until the socket's buffer has room, or it
// fails or is closed, without writing.
func (t *tcpServed) waitRoom() {
	t.rc.Write(func(fd uintptr) bool {
		// unix.Poll, not a poll system call of its own: linux/arm64 has
		// only ppoll.
		n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, 0)
		return n != 0 // writable, or an error or hang-up: the write says which
	})
}
