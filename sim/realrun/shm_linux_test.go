//go:build linux

package realrun

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// sharedPair makes a channel with rings of ring bytes in dir, as the two
// ends of a connection would, with a net.Pipe for the control connection.
func sharedPair(t interface {
	Helper()
	Skipf(string, ...any)
	Fatal(...any)
}, dir string, ring int) (creator, opener *sharedConn) {
	t.Helper()
	seg, err := createSegment(dir, ring)
	if err != nil {
		t.Skipf("no shared-memory channel in %s: %v", dir, err)
	}
	other, err := openSegment(dir, seg.base, seg.token, ring)
	if err != nil {
		t.Fatal(err)
	}
	seg.unlink()
	a, b := net.Pipe()
	return seg.conn(true, a), other.conn(false, b)
}

// TestSharedChannelCarriesBytes: writes of every size around the ring's,
// one side at a time and both at once, arrive whole and in order, and the
// files' names are gone once the channel is set up.
func TestSharedChannelCarriesBytes(t *testing.T) {
	const ring = 4096
	dir := t.TempDir()
	a, b := sharedPair(t, dir, ring)
	defer a.Close()
	defer b.Close()
	done := make(chan error, 3)
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Errorf("names left after setup: %v", left)
	}
	for _, n := range []int{0, 1, 7, ring - 1, ring, ring + 1, 3*ring + 5, 1 << 20} {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i*7 + n)
		}
		back := make([]byte, n)
		go func() {
			_, err := a.Write(msg)
			done <- err
		}()
		if _, err := io.ReadFull(b, back); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(msg, back) {
			t.Fatalf("%d bytes arrived changed", n)
		}
		// Both ways at once, more than a ring holds each way: a side's
		// write must not wait on its own read, nor the other way round.
		got := make([]byte, n)
		go func() {
			_, err := b.Write(msg)
			done <- err
		}()
		go func() {
			_, err := io.ReadFull(a, got)
			done <- err
		}()
		go func() {
			_, err := a.Write(msg)
			done <- err
		}()
		if _, err := io.ReadFull(b, back); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(msg, back) || !bytes.Equal(msg, got) {
			t.Fatalf("%d bytes both ways arrived changed", n)
		}
	}
}

// TestSharedChannelProperty: any sequence of writes, read in any pieces,
// arrives as the concatenation of the writes (the byte stream TCP gives).
func TestSharedChannelProperty(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		ring := 1 << rapid.IntRange(6, 12).Draw(t, "log2 ring")
		a, b := sharedPair(t, dir, ring)
		defer a.Close()
		defer b.Close()
		writes := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 3*ring), 1, 20).Draw(t, "writes")
		reads := rapid.SliceOfN(rapid.IntRange(1, 2*ring), 1, 50).Draw(t, "read sizes")
		var want []byte
		for _, w := range writes {
			want = append(want, w...)
		}
		done := make(chan error, 1)
		go func() {
			for _, w := range writes {
				if _, err := a.Write(w); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		got := make([]byte, 0, len(want))
		for i := 0; len(got) < len(want); i++ {
			buf := make([]byte, min(reads[i%len(reads)], len(want)-len(got)))
			n, err := b.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf[:n]...)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes that differ from the %d written", len(got), len(want))
		}
	})
}

// TestSharedChannelEnds: when one side closes, the other reads what was
// written before and then the end, and its writes fail rather than wait;
// a side's own close ends its waiting read; a write deadline ends a write
// into a full ring.
func TestSharedChannelEnds(t *testing.T) {
	dir := t.TempDir()
	t.Run("peer closes", func(t *testing.T) {
		a, b := sharedPair(t, dir, 4096)
		defer b.Close()
		a.Write([]byte("last words"))
		a.Close()
		got, err := io.ReadAll(b)
		if err != nil || string(got) != "last words" {
			t.Errorf("read %q, %v; want the last words, then the end", got, err)
		}
		if _, err := b.Write(make([]byte, 10000)); !errors.Is(err, errPeerClosedShared) {
			t.Errorf("a write to a closed peer: %v", err)
		}
	})
	t.Run("own close", func(t *testing.T) {
		a, b := sharedPair(t, dir, 4096)
		defer a.Close()
		done := make(chan error, 1)
		go func() {
			_, err := b.Read(make([]byte, 10))
			done <- err
		}()
		time.Sleep(20 * time.Millisecond) // let it wait: it must end either way
		b.Close()
		select {
		case err := <-done:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("a read ended by its own close: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a read waited through its own close")
		}
	})
	t.Run("write deadline", func(t *testing.T) {
		a, b := sharedPair(t, dir, 4096)
		defer a.Close()
		defer b.Close()
		a.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := a.Write(make([]byte, 10000))
		if !errors.Is(err, os.ErrDeadlineExceeded) || n != 4096 {
			t.Errorf("a write into a full ring past its deadline: %d bytes, %v; want 4096 and the deadline", n, err)
		}
	})
}

// TestSharedSegmentRefusals: a file that is not the creator's (another
// token or size) is not used.
func TestSharedSegmentRefusals(t *testing.T) {
	dir := t.TempDir()
	seg, err := createSegment(dir, 4096)
	if err != nil {
		t.Skipf("no shared-memory channel in %s: %v", dir, err)
	}
	defer seg.unlink()
	defer seg.release()
	wrong := seg.token
	wrong[0] ^= 1
	if s, err := openSegment(dir, seg.base, wrong, 4096); err == nil {
		s.release()
		t.Error("a segment with another token was mapped")
	}
	if s, err := openSegment(dir, seg.base, seg.token, 8192); err == nil {
		s.release()
		t.Error("a segment of another ring size was mapped")
	}
	if _, err := openSegment(dir, "collsim-none", seg.token, 4096); err == nil {
		t.Error("a missing segment was mapped")
	}
}
