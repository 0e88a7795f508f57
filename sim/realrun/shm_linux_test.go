//go:build linux

package realrun

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/collsim/collsim/sim"
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
	if err := checkRing(ring); err != nil {
		t.Fatal(err) // the test's mistake, not the host's: no skip
	}
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
// one side at a time and both at once, arrive whole and in order.
func TestSharedChannelCarriesBytes(t *testing.T) {
	const ring = 4096
	dir := t.TempDir()
	a, b := sharedPair(t, dir, ring)
	defer a.Close()
	defer b.Close()
	done := make(chan error, 3)
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
		ring := 1 << rapid.IntRange(8, 12).Draw(t, "log2 ring")
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
		a, b := closedAtEnd(t, dir)
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
		_, b := closedAtEnd(t, dir)
		if err := readEndedBy(t, b, func() { b.Close() }, "its own close"); !errors.Is(err, net.ErrClosed) {
			t.Errorf("a read ended by its own close: %v", err)
		}
	})
	t.Run("deadline set while waiting", func(t *testing.T) {
		_, b := closedAtEnd(t, dir)
		if err := readEndedBy(t, b, func() { b.SetReadDeadline(time.Now()) }, "a deadline set while it waited"); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a waiting read given a past deadline: %v", err)
		}
	})
	t.Run("deadline cleared while waiting", func(t *testing.T) {
		a, b := closedAtEnd(t, dir)
		b.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		done := make(chan error, 1)
		go func() {
			_, err := io.ReadFull(b, make([]byte, 5))
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		b.SetReadDeadline(time.Time{})
		time.Sleep(200 * time.Millisecond) // past the cleared deadline
		a.Write([]byte("late!"))
		if err := <-done; err != nil {
			t.Errorf("a read whose deadline was cleared while it waited: %v", err)
		}
	})
	t.Run("write deadline", func(t *testing.T) {
		a, _ := closedAtEnd(t, dir)
		a.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := a.Write(make([]byte, 10000))
		// A 4 KiB ring holds 4,000 bytes: three records of 1,016 bytes (1
		// KiB each with its word), and of the last KiB, less the free line
		// after the last record and its word, 952.
		if !errors.Is(err, os.ErrDeadlineExceeded) || n != 4000 {
			t.Errorf("a write into a full ring past its deadline: %d bytes, %v; want 4000 and the deadline", n, err)
		}
	})
}

// closedAtEnd is a channel of 4 KiB rings that the test closes when it
// ends (closing twice is harmless).
func closedAtEnd(t *testing.T, dir string) (a, b *sharedConn) {
	a, b = sharedPair(t, dir, 4096)
	t.Cleanup(func() {
		a.Close()
		b.Close()
	})
	return a, b
}

// readEndedBy starts a read on c, lets it wait, runs end and returns the
// read's error; the test fails if the read does not end.
func readEndedBy(t *testing.T, c *sharedConn, end func(), what string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it wait: it must end either way
	end()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("a read waited through %s", what)
		return nil
	}
}

// TestSharedSegmentRefusals: a file that is not the creator's (another
// token or size), a missing one and a name that is not a channel file's are
// not used.
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
	if _, err := openSegment(dir, "collsim-0000000001-0123456789abcdef", seg.token, 4096); err == nil {
		t.Error("a missing segment was mapped")
	}
	if _, err := openSegment(dir, "../"+filepath.Base(dir)+"/"+seg.base, seg.token, 4096); err == nil || !strings.Contains(err.Error(), "not the name of a channel file") {
		t.Errorf("a name that is a path: %v", err)
	}
}

// TestStaleSegmentsRemoved: making a channel file removes the ones whose
// creators have died, and only those.
func TestStaleSegmentsRemoved(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	stale := filepath.Join(dir, fmt.Sprintf("collsim-%010d-0123456789abcdef", dead.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf("collsim-%010d-0123456789abcdef", os.Getpid()))
	other := filepath.Join(dir, "collsim-not-ours")
	for _, f := range []string{stale, live, other} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	seg, err := createSegment(dir, 4096)
	if err != nil {
		t.Skipf("no shared-memory channel in %s: %v", dir, err)
	}
	seg.unlink()
	seg.release()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the file of a dead process is still there (%v)", err)
	}
	for _, f := range []string{live, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
	}
}

// TestSharedMemoryLeavesNoFiles: once ranks have connected, none of the
// channel files they made has a name left, whether they then close or
// abort.
func TestSharedMemoryLeavesNoFiles(t *testing.T) {
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	mine := filepath.Join(shmDir, fmt.Sprintf("collsim-%010d-*", os.Getpid()))
	for _, abort := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		meshes, err := ConnectLocal(ctx, 4, 1, SharedMemory)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if left, _ := filepath.Glob(mine); len(left) > 0 {
			t.Errorf("after connecting: %v", left)
		}
		var wg sync.WaitGroup
		for _, m := range meshes {
			wg.Go(func() {
				if abort {
					m.Abort(nil)
				} else {
					m.Close(time.Now().Add(10 * time.Second))
				}
			})
		}
		wg.Wait()
		if left, _ := filepath.Glob(mine); len(left) > 0 {
			t.Errorf("after closing (abort %t): %v", abort, left)
		}
	}
}

// TestReaderShowsItsPlaceLazily: the reader publishes how far it has read
// when it finds nothing new and after each piece of records it finishes
// (shmPiece), not after each small frame (see sharedConn.taken): the
// writer's room is unchanged after the reader takes a small frame, whole
// once the reader looks again and finds nothing, and a long read frees
// room while it goes on. Positions count records whole: a word of 8 bytes,
// the bytes, padding to the next 64-byte line.
func TestReaderShowsItsPlaceLazily(t *testing.T) {
	const ring = 1 << 20
	a, b := sharedPair(t, t.TempDir(), ring)
	defer a.Close()
	defer b.Close()
	shown := func() uint64 { return atomic.LoadUint64(a.out.read) } // the word b publishes
	take := func(c *sharedConn, n, want int) {
		t.Helper()
		if got, err := c.take(make([]byte, n)); got != want || err != nil {
			t.Fatalf("took %d bytes (%v), want %d", got, err, want)
		}
	}
	a.put(make([]byte, 40)) // one record: 8 + 40 bytes, one line
	take(b, 64, 40)
	if got := shown(); got != 0 {
		t.Fatalf("after a 40-byte frame the reader shows %d bytes read, want 0 (not yet)", got)
	}
	take(b, 64, 0)
	if got := shown(); got != 64 {
		t.Fatalf("after finding nothing new the reader shows %d bytes read, want 64 (the record's line)", got)
	}
	// 100 KiB in two records: 65,528 bytes (the most a record holds, 64
	// KiB with its word) and 36,872 (36,880 with the word, 577 lines:
	// 36,928 bytes). Taken in one call, the first is shown as soon as it
	// is done, a piece after the last showing; the second when the reader
	// finds nothing new.
	a.put(make([]byte, 100<<10))
	take(b, 100<<10, 100<<10)
	if got, want := shown(), uint64(64+65536); got != want {
		t.Fatalf("after a 100 KiB read the reader shows %d bytes read, want %d", got, want)
	}
	take(b, 1, 0)
	if got, want := shown(), uint64(64+65536+36928); got != want {
		t.Fatalf("after finding nothing new the reader shows %d bytes read, want %d", got, want)
	}
	// A small ring (a large job's) holds records of a quarter of it: in
	// 4 KiB, 1,016 bytes (1 KiB with the word), and the writer keeps a
	// line free after its last record, so 8 KiB offered fill it with
	// 3 x 1,016 + 952 = 4,000 bytes. Each record done is shown: after
	// 2,500 bytes taken, two whole (2 KiB of the ring), the third not yet.
	c, d := sharedPair(t, t.TempDir(), 4096)
	defer c.Close()
	defer d.Close()
	if n := c.put(make([]byte, 8192)); n != 4000 {
		t.Fatalf("a 4 KiB ring took %d bytes, want 4000", n)
	}
	take(d, 2500, 2500)
	if got := atomic.LoadUint64(c.out.read); got != 2048 {
		t.Fatalf("after taking 2,500 bytes of a 4 KiB ring the reader shows %d bytes read, want 2048", got)
	}
}

// TestStaleRecordsIgnored: the reader takes a record only when the writer
// has published one where it looks, so the bytes of the ring's earlier
// laps, still in its memory, are never read as records, whatever they
// hold: not the records themselves, nor payload bytes that happen to equal
// the word expected there (a helper's audit found that the tag alone let
// such bytes through), nor zeros or small integers where the tag wraps
// after 2^40 lines (64 TiB through one direction). A word whose length
// cannot be ends the channel with an error rather than a wild copy.
func TestStaleRecordsIgnored(t *testing.T) {
	const ring = 4096
	buf := make([]byte, ring)
	// lap writes, takes and checks each of msgs as one record.
	lap := func(t *testing.T, a, b *sharedConn, msgs ...[]byte) {
		t.Helper()
		for i, msg := range msgs {
			if n := a.put(msg); n != len(msg) {
				t.Fatalf("record %d: put %d bytes, want %d", i, n, len(msg))
			}
			if n, err := b.take(buf[:len(msg)]); n != len(msg) || err != nil || !bytes.Equal(buf[:n], msg) {
				t.Fatalf("record %d: took %d bytes (%v), want the %d put", i, n, err, len(msg))
			}
		}
	}
	nothingMore := func(t *testing.T, b *sharedConn) {
		t.Helper()
		if n, err := b.take(buf); n != 0 || err != nil {
			t.Fatalf("the writer wrote nothing more, yet the reader took %d bytes (%v): % x", n, err, buf[:n])
		}
	}
	// startAt moves a fresh channel's a-to-b direction to position pos, as
	// if pos bytes of records had gone through it.
	startAt := func(a, b *sharedConn, pos uint64) {
		atomic.StoreUint64(a.out.written, pos)
		atomic.StoreUint64(a.out.read, pos)
		a.seenRead = pos
		b.taken, b.shown = pos, pos
	}
	// Three records of 1,016 bytes and one of 952 fill a 4 KiB ring but
	// its free line: 4,032 bytes of ring, the last record's payload at
	// offsets 3,080-4,031. After them, 63 records of 40 bytes (a line
	// each) take 4,032 bytes more, so the reader looks next at offset
	// 8,064 mod 4,096 = 3,968, where the first lap left the 952-byte
	// record's bytes 888-895.
	full := func(last []byte) [][]byte {
		return [][]byte{bytes.Repeat([]byte{1}, 1016), bytes.Repeat([]byte{2}, 1016), bytes.Repeat([]byte{3}, 1016), last}
	}
	small := func() [][]byte {
		var msgs [][]byte
		for i := range 63 {
			msgs = append(msgs, bytes.Repeat([]byte{byte(i + 10)}, 40))
		}
		return msgs
	}
	withWord := func(word uint64) []byte {
		last := bytes.Repeat([]byte{4}, 952)
		binary.LittleEndian.PutUint64(last[888:], word)
		return last
	}
	t.Run("old records", func(t *testing.T) {
		a, b := sharedPair(t, t.TempDir(), ring)
		defer a.Close()
		defer b.Close()
		for i := range 24 { // a lap and a half of 100-byte records
			lap(t, a, b, bytes.Repeat([]byte{byte(i + 1)}, 100))
			nothingMore(t, b)
		}
	})
	t.Run("payload that looks like the next word", func(t *testing.T) {
		a, b := sharedPair(t, t.TempDir(), ring)
		defer a.Close()
		defer b.Close()
		lap(t, a, b, full(withWord(recordWord(8064, 40)))...)
		lap(t, a, b, small()...)
		nothingMore(t, b)
	})
	t.Run("payload that looks like the next word, zeroAhead kept out", func(t *testing.T) {
		// As above, but when the record before the last is put, the
		// writer's last look at the reader is old (3,968: conservative,
		// as a look is), so zeroAhead finds the line after it (8,064, the
		// forged word's) not yet free and leaves it: put must then look.
		a, b := sharedPair(t, t.TempDir(), ring)
		defer a.Close()
		defer b.Close()
		lap(t, a, b, full(withWord(recordWord(8064, 40)))...)
		msgs := small()
		lap(t, a, b, msgs[:61]...)
		a.seenRead = 3968
		lap(t, a, b, msgs[61:]...)
		nothingMore(t, b)
	})
	t.Run("payload that looks like the word after a two-line record", func(t *testing.T) {
		// put reads the word after a record only when zeroAhead did not
		// leave it 0, which it knows only for one-line records: after 25 records
		// of 100 bytes (two lines each) from 4,032, the reader looks next
		// at 7,232, offset 3,136 of the ring, byte 56 of the first lap's
		// last record, where that record forged the word expected there.
		a, b := sharedPair(t, t.TempDir(), ring)
		defer a.Close()
		defer b.Close()
		last := bytes.Repeat([]byte{4}, 952)
		binary.LittleEndian.PutUint64(last[56:], recordWord(7232, 40))
		lap(t, a, b, full(last)...)
		for i := range 25 {
			lap(t, a, b, bytes.Repeat([]byte{byte(i + 10)}, 100))
			// The reader shows how far it read, and the writer looks, so
			// that zeroAhead finds the next line free, as a writer whose
			// reader keeps up does.
			b.show()
			a.room(ring)
		}
		if got := atomic.LoadUint64(a.out.written); got != 7232 {
			t.Fatalf("at %d, want 7232", got)
		}
		nothingMore(t, b)
	})
	wrap := uint64(1<<(64-recordLenBits)-1) * recordAlign // the first line whose tag is 1 again
	for _, word := range []uint64{0, 40, recordWord(wrap, 40)} {
		t.Run(fmt.Sprintf("word %#x where the tag wraps", word), func(t *testing.T) {
			a, b := sharedPair(t, t.TempDir(), ring)
			defer a.Close()
			defer b.Close()
			startAt(a, b, wrap-8064)
			lap(t, a, b, full(withWord(word))...)
			lap(t, a, b, small()...)
			if got := atomic.LoadUint64(a.out.written); got != wrap {
				t.Fatalf("at %#x, want %#x", got, wrap)
			}
			nothingMore(t, b)
			lap(t, a, b, []byte("past the wrap"), []byte("and on"))
		})
	}
	t.Run("malformed", func(t *testing.T) {
		a, b := sharedPair(t, t.TempDir(), ring)
		defer a.Close()
		defer b.Close()
		// A word tagged for the next place whose length is more than a
		// record holds.
		pos := atomic.LoadUint64(a.out.written)
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&a.out.data[pos&a.out.mask])), recordWord(pos, 5000))
		if n, err := b.take(buf); n != 0 || !errors.Is(err, errMalformedRecord) {
			t.Fatalf("a malformed record: took %d bytes, error %v; want %v", n, err, errMalformedRecord)
		}
		if _, err := b.Read(buf); !errors.Is(err, errMalformedRecord) {
			t.Fatalf("a read after a malformed record: %v, want %v", err, errMalformedRecord)
		}
	})
}

// TestNextRecord: the reader's look at the next record where it lies
// (sharedConn.nextRecord), against what take would do there.
func TestNextRecord(t *testing.T) {
	const ring = 4096
	a, b := sharedPair(t, t.TempDir(), ring)
	defer a.Close()
	defer b.Close()
	look := func(t *testing.T, wantRec []byte, wantBytePath bool, wantErr error) {
		t.Helper()
		rec, bytePath, err := b.nextRecord()
		if !bytes.Equal(rec, wantRec) || (rec == nil) != (wantRec == nil) || bytePath != wantBytePath || err != wantErr {
			t.Fatalf("nextRecord: % x, byte path %t, %v; want % x, %t, %v", rec, bytePath, err, wantRec, wantBytePath, wantErr)
		}
	}
	// Nothing yet: nothing, and the read position shown.
	look(t, nil, false, nil)
	msg := []byte("forty bytes of frame, header and payload")
	if n := a.put(msg); n != len(msg) {
		t.Fatalf("put %d bytes, want %d", n, len(msg))
	}
	look(t, msg, false, nil)
	b.consumeRecord(len(msg))
	if got := atomic.LoadUint64(b.in.read); got != 0 {
		t.Fatalf("a small record consumed showed %d at once; want it shown at the next look that finds nothing", got)
	}
	look(t, nil, false, nil)
	if got, want := atomic.LoadUint64(b.in.read), recordSpan(len(msg)); got != want {
		t.Fatalf("after a look that found nothing the reader shows %d, want %d", got, want)
	}
	// In the middle of a record: the byte path.
	a.put(msg)
	buf := make([]byte, len(msg))
	if n, err := b.take(buf[:10]); n != 10 || err != nil {
		t.Fatalf("take of 10 bytes: %d, %v", n, err)
	}
	look(t, nil, true, nil)
	if n, err := b.take(buf[10:]); n != len(msg)-10 || err != nil || !bytes.Equal(buf, msg) {
		t.Fatalf("take of the rest: %d, %v, % x", n, err, buf)
	}
	// wrapsAt moves the writer's position to pos (empty records' room, as
	// if read) and puts rec there: a record that does not fit before the
	// ring's end goes the byte path, and take reads it whole.
	wrapsAt := func(t *testing.T, pos uint64, rec []byte) {
		t.Helper()
		atomic.StoreUint64(a.out.written, pos)
		atomic.StoreUint64(a.out.read, pos)
		a.seenRead, b.taken, b.shown = pos, pos, pos
		if n := a.put(rec); n != len(rec) {
			t.Fatalf("put %d bytes, want %d", n, len(rec))
		}
		look(t, nil, true, nil)
		got := make([]byte, len(rec))
		if n, err := b.take(got); n != len(rec) || err != nil || !bytes.Equal(got, rec) {
			t.Fatalf("take of a record of %d bytes put at %d: %d, %v", len(rec), pos, n, err)
		}
	}
	// A record that wraps around the ring's end, 64 bytes before it.
	wrapsAt(t, 2*ring-64, bytes.Repeat([]byte{7}, 100))
	// One whose word fits before the end and whose bytes then run 4
	// bytes past it.
	wrapsAt(t, 3*ring-64, bytes.Repeat([]byte{9}, 60))
	// A word left from the lap before at the reader's position, of a
	// record of 40 bytes: not this lap's, so nothing new.
	at := b.taken & b.in.mask
	binary.LittleEndian.PutUint64(b.in.data[at:], recordWord(b.taken-ring, 40))
	look(t, nil, false, nil)
	// The peer gone: what it wrote first, then the end.
	a.put(msg)
	b.gone.Store(true)
	look(t, msg, false, nil)
	b.consumeRecord(len(msg))
	look(t, nil, false, io.EOF)
}

// TestSleeperLooksAgainSoon: a side that goes to sleep looks again within
// storeDrain though nobody wakes it, so that a writer's position that was
// still in its store buffer when the side last looked (and whose writer
// saw no sleeper to wake: see sharedConn.futexSleep) is found at once,
// not a futexSlice later.
func TestSleeperLooksAgainSoon(t *testing.T) {
	a, b := sharedPair(t, t.TempDir(), 4096)
	defer a.Close()
	defer b.Close()
	looks := 0
	start := time.Now()
	var none atomic.Int64
	err := b.futexSleep(b.in.readerSleeps, &none, func() bool {
		looks++
		return looks > 1 // the position "arrives" right after the first look, unannounced
	})
	if took := time.Since(start); err != nil || took > futexSlice/2 {
		t.Fatalf("the sleeper looked again after %v (error %v), want within about %v", took, err, storeDrain)
	}
}

// TestOwnFilesRemoved: a channel file whose name its creator has not
// removed yet (its peer never answered) goes with RemoveOwnFiles, as a
// rank's run ends however it ends; a file of the same pattern that this
// process did not create stays.
func TestOwnFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	waiting, err := createSegment(dir, 4096)
	if err != nil {
		t.Skipf("no shared-memory channel in %s: %v", dir, err)
	}
	defer waiting.release()
	done, err := createSegment(dir, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer done.release()
	done.unlink()
	// A file of the same pattern that this process did not create.
	other := filepath.Join(dir, "collsim-0000000001-0000000000000000")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	RemoveOwnFiles()
	if _, err := os.Stat(waiting.path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file waiting for its peer is still there after RemoveOwnFiles (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("RemoveOwnFiles removed a file this process did not create: %v", err)
	}
}

// TestFilesOfRemoved: RemoveFilesOf removes the channel files named after
// the given processes (a launcher's ranks, killed), and no others.
func TestFilesOfRemoved(t *testing.T) {
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs %s: %v", shmDir, err)
	}
	// Process IDs above Linux's largest (2^22), so no live process's.
	const gone, other = 1<<22 + 12345, 1<<22 + 12346
	path := func(pid int) string {
		return filepath.Join(shmDir, fmt.Sprintf("collsim-%010d-%016x", pid, 0xc0ffee))
	}
	for _, pid := range []int{gone, other} {
		if err := os.WriteFile(path(pid), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path(pid))
	}
	RemoveFilesOf([]int{gone})
	if _, err := os.Stat(path(gone)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file of a process given is still there (%v)", err)
	}
	if _, err := os.Stat(path(other)); err != nil {
		t.Errorf("the file of a process not given was removed: %v", err)
	}
}

// TestWriteFailureReportsThePeersReason: rank 1 gives up, writing its
// reason into the ring before it closes; rank 0, which has not read it yet,
// then sends to rank 1, and the write fails at once (the peer is gone).
// The error rank 0 gets is rank 1's reason, not a crash.
func TestWriteFailureReportsThePeersReason(t *testing.T) {
	ctx, ms := sharedMeshes(t)
	p := ms[0].served(1)
	if p == nil {
		t.Fatal("rank 0 shares memory with rank 1 but does not serve the channel")
	}
	conn, ok := p.conn.(*sharedConn)
	if !ok {
		t.Fatalf("rank 0 serves rank 1 through a %T, not a shared-memory channel", p.conn)
	}
	const reason = "rank 1 ran out of patience"
	ms[1].Abort(errors.New(reason))
	for !conn.gone.Load() { // rank 0's next write fails
		if ctx.Err() != nil {
			t.Fatal("rank 0 never saw rank 1's end")
		}
		time.Sleep(time.Millisecond)
	}
	prog := sim.Program{
		{Kind: sim.OpSend, Peer: 1, Bytes: 8, Data: sim.Region{Buf: 0, Count: 1}},
		{Kind: sim.OpRecv, Peer: 1, Bytes: 8, Data: sim.Region{Buf: 1, Count: 1}},
	}
	r := NewRank(ms[0])
	r.Timeout = 10 * time.Second
	err := r.Execute(sim.FromPrograms("after the end", []sim.Program{prog, nil}, 2), [][]uint64{{7}, {0}})
	var lost *PeerLostError
	if !errors.As(err, &lost) || lost.Peer != 1 || lost.GaveUp != reason {
		t.Fatalf("rank 0's error: %v; want rank 1's reason, %q", err, reason)
	}
}
