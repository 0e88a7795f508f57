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
	return &tcpServed{rc: rc}, true
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
	var n int
	var err error
	// Control, not Read: it does not wait for the read lock a watcher
	// holds while it waits in the poller.
	if rerr := t.rc.Control(func(fd uintptr) {
		n, err = rawIO(syscall.SYS_READ, fd, p)
	}); rerr != nil {
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

// writeSome writes what the socket's buffer takes, without waiting.
func (t *tcpServed) writeSome(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var err error
	if werr := t.rc.Control(func(fd uintptr) {
		n, err = rawIO(syscall.SYS_WRITE, fd, p)
	}); werr != nil {
		return 0, werr
	}
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
		n, err := t.writeSome(p)
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
