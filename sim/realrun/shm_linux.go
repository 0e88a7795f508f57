//go:build linux

package realrun

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A shared-memory channel between two ranks on one host, in the manner of
// Open MPI's vader and MPICH's nemesis: a file in /dev/shm both processes
// map, holding one ring of records per direction, each written by one side
// and read by the other (single producer, single consumer: positions are
// counters that only their owner advances, published with atomic stores).
// The channel is a byte stream with the semantics of the TCP connection it
// replaces, so that framing, the reader and writer goroutines and the fault
// handling stay as they are.
//
// A side with nothing to do polls briefly, then sleeps on a futex word in
// the shared page (its "sleeps" flag); the other side makes the futex call
// that wakes it only when the flag says it sleeps. (A FIFO watched by Go's
// poller was tried first as the doorbell: 14-18 us one way against 8-9 us
// for a futex, in a ping-pong between two processes.) The TCP
// connection the ranks authenticated over stays open, carrying nothing: its
// end tells this side that the peer's process closed or died, as a mapping
// cannot.
//
// The file layout: a 4 KiB page whose first tokenBytes are the token the
// creator also sends over TCP (so the opener knows it mapped the creator's
// file, not a namesake on another host), then for each direction a control
// block of ringCtrl bytes and the ring's data:
//
//	+0   written: bytes the writer has published (uint64; the writer's line)
//	+64  read: bytes the reader has consumed (uint64; the reader's line)
//	+128 readerSleeps: the reader sleeps, waiting for data (a futex word)
//	+192 writerSleeps: the writer sleeps, waiting for room (a futex word)
//
// The ring holds records, each starting on a cache line (recordAlign): a
// word that says the record is there and how long it is (recordWord),
// then its bytes, wrapping at the ring's end. A polling reader looks at
// the word where the next record will start, not at written, so that a
// small frame reaches it in the one cache line it polls, as the fast boxes
// of Open MPI's vader carry a small message with its sequence number: with
// the position in a line of its own, each message cost the reader two
// lines from the writer's core (see the README's "The progress loop").
// Before it publishes a record, the writer zeroes the word where the next
// one will start (a line it keeps free for that), so that the reader finds
// there either 0 or that record's word, never bytes of an earlier lap that
// happen to look like it. written still counts the bytes of published
// records, padding included, for a side about to sleep and for the
// writer's wake-up.
const (
	shmHeader = 4096
	ringCtrl  = 256
	// tokenBytes is the length of the random token that proves the mapping.
	tokenBytes = 16
	// shmSpin is how many times a side polls its ring, yielding to the
	// rank's other goroutines in between, before it sleeps, when ranks
	// share cores: a few microseconds, enough to catch a prompt answer
	// without a wake-up, and short enough not to starve the ranks it
	// shares a core with.
	shmSpin = 64
	// shmPoll is how long a side polls its ring before it sleeps when the
	// host has a core for each of its ranks, as MPI libraries poll: a
	// wake-up costs microseconds to tens of microseconds.
	shmPoll = 200 * time.Microsecond
	// shmPiece is how much a side copies before it publishes its position
	// (a record holds at most a piece, word included):
	// a writer that filled the whole ring before publishing left the reader
	// idle long enough to fall asleep, and the two then took turns at
	// waking each other (a 16 MiB ping-pong crossed at 1.0 GB/s, against
	// 2.6 GB/s in 64 KiB pieces).
	shmPiece = 64 << 10
	// recordAlign is where records start: each on its own cache line.
	recordAlign = 64
	// wordBytes is the size of a record's word.
	wordBytes = 8
	// recordLenBits is how much of a record's word is its length; the
	// rest is the record's tag (recordWord).
	recordLenBits = 24
	// minRing is the smallest ring: room for a record and the free line
	// after it.
	minRing = 256
	// leastRoom is the least room put can use: a line of record and the
	// free line after it.
	leastRoom = 2 * recordAlign
)

// recordWord is the word of a record of n bytes at ring position pos: its
// tag, the number of the line it starts on (mod 2^40-1) plus one, never 0,
// above its length. Where the reader looks, the writer has zeroed the word
// (see above), so the tag is a check on the protocol, not what tells a
// record from old bytes.
func recordWord(pos uint64, n int) uint64 {
	return (pos/recordAlign%(1<<(64-recordLenBits)-1)+1)<<recordLenBits | uint64(n)
}

// recordSpan is the ring space a record of n bytes takes, word and padding
// included.
func recordSpan(n int) uint64 {
	return (wordBytes + uint64(n) + recordAlign - 1) &^ (recordAlign - 1)
}

// errMalformedRecord is a record word whose length cannot be: the peer
// does not follow this protocol (or wrote over the ring).
var errMalformedRecord = errors.New("shared memory: the peer wrote a malformed record")

// ringBytes is the size of each direction's ring for a job of size ranks:
// 1 MiB, less in jobs of more than 33 ranks, so that the rings a rank
// writes stay within about 32 MiB (at least 64 KiB each). It goes by the
// job's size: how many ranks share a host is not known when a channel is
// set up.
func ringBytes(size int) int {
	b := 1 << 20
	for b > 64<<10 && (size-1)*b > 32<<20 {
		b >>= 1
	}
	return b
}

// ring is one direction of a channel, as this side sees it.
type ring struct {
	written, read              *uint64
	readerSleeps, writerSleeps *uint32
	data                       []byte
	mask                       uint64
}

func newRing(mem []byte, off, size int) ring {
	word := func(at int) unsafe.Pointer { return unsafe.Pointer(&mem[off+at]) }
	return ring{
		written: (*uint64)(word(0)), read: (*uint64)(word(64)),
		readerSleeps: (*uint32)(word(128)), writerSleeps: (*uint32)(word(192)),
		// Capped at the ring's end, so that a slice of data that ran past
		// it panics rather than reading the next ring's control words.
		data: mem[off+ringCtrl : off+ringCtrl+size : off+ringCtrl+size], mask: uint64(size - 1),
	}
}

// wake wakes whoever sleeps on the futex word sleeps, if it says someone
// does. The word is shared between processes: no FUTEX_PRIVATE_FLAG.
func wake(sleeps *uint32) {
	if atomic.LoadUint32(sleeps) != 0 && atomic.SwapUint32(sleeps, 0) != 0 {
		// All of them: a polling rank's read and its watcher may both wait.
		syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(sleeps)), futexWake, math.MaxInt32, 0, 0, 0)
	}
}

const (
	futexWait = 0
	futexWake = 1
	// futexSlice bounds one futex wait without a deadline. Whatever ends a
	// wait (data, room, a close, the peer's end, a new deadline) also wakes
	// the sleeper; the bound is a second line of defence, long enough that
	// idle channels cost nothing.
	futexSlice = time.Second
	// storeDrain bounds the first futex wait of a side that goes to sleep
	// (see sharedConn.futexSleep): far longer than a store takes to become
	// visible, and short enough that a missed wake-up costs little.
	storeDrain = 100 * time.Microsecond
)

// errPeerClosedShared is a write to a peer whose process has closed its end.
var errPeerClosedShared = errors.New("shared memory: the peer closed the channel")

// sharedConn is a shared-memory channel; it implements net.Conn.
type sharedConn struct {
	mem     []byte
	in, out ring        // in: the peer writes, this side reads
	ctrl    net.Conn    // the authenticated TCP connection, kept as a liveness signal
	gone    atomic.Bool // the control connection ended: the peer closed or died
	closed  atomic.Bool
	use     sync.RWMutex // Read and Write hold it shared, Close alone to unmap
	readDL  atomic.Int64 // deadlines in Unix nanoseconds; 0: none
	writeDL atomic.Int64
	// poll is how long a side polls before it sleeps; 0: shmSpin turns.
	poll time.Duration

	// The reader's own view of the in ring, touched by whoever reads (one
	// goroutine at a time). taken is how far it has consumed, shown is
	// what it has published in in.read: it publishes when it finds nothing
	// new, or every showEvery bytes, not at each frame, because a store to a line
	// the writer reads stalls the reader until the line is its own (a
	// full fence on amd64) while a frame waits to be handled.
	taken, shown uint64
	// The record being taken, when one is: its length and how much of it
	// has been copied (taken is where it starts until it is done).
	recLen, recOff int
	// broken: a malformed record was found; the channel reads nothing more.
	broken bool
	// The writer's last look at out.read: room is reckoned from it and
	// looked at again only when it seems short, so that a small frame
	// does not wait for the line the reader has just written.
	seenRead uint64
	// zeroed is the out ring position whose word zeroAhead last left 0:
	// put publishes a one-line record there without looking at the word
	// again (see put).
	zeroed uint64
}

// segment is a channel's file while it is being set up.
type segment struct {
	dir, base string
	mem       []byte
	token     [tokenBytes]byte
	ring      int
}

func (s *segment) path() string { return filepath.Join(s.dir, s.base) }

// createSegment makes a channel's file in dir, sized for
// rings of ring bytes, reserving the file's memory now so that a full
// tmpfs fails here rather than with SIGBUS later.
func createSegment(dir string, ring int) (*segment, error) {
	if err := checkRing(ring); err != nil {
		return nil, err
	}
	removeStale(dir)
	var name [8]byte
	if _, err := rand.Read(name[:]); err != nil {
		return nil, err
	}
	s := &segment{dir: dir, base: fmt.Sprintf("collsim-%010d-%s", os.Getpid(), hex.EncodeToString(name[:])), ring: ring}
	if _, err := rand.Read(s.token[:]); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.path(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	named.add(s.path())
	defer f.Close()
	size := segmentBytes(ring)
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, int64(size)); err != nil {
		s.unlink()
		return nil, fmt.Errorf("reserving %d bytes in %s: %w", size, dir, err)
	}
	if err := s.mapFile(f, size); err != nil {
		s.unlink()
		return nil, err
	}
	s.touch()
	copy(s.mem, s.token[:])
	return s, nil
}

// segmentName is what createSegment names a file: its creator's process
// ID (ten digits) and 16 random hexadecimal digits.
var segmentName = regexp.MustCompile(`^collsim-([0-9]{10})-[0-9a-f]{16}$`)

// removeStale removes the channel files in dir whose creators have died:
// a rank killed between creating a file and its peer's answer (the names
// are removed once both sides have mapped it) leaves its file behind.
func removeStale(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, "collsim-*"))
	for _, name := range names {
		m := segmentName.FindStringSubmatch(filepath.Base(name))
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.Remove(name)
		}
	}
}

// openSegment maps the segment another rank created, checks its token, and
// removes its name (the creator removes it too, if this side dies first).
func openSegment(dir, base string, token [tokenBytes]byte, ring int) (*segment, error) {
	if !segmentName.MatchString(base) {
		return nil, fmt.Errorf("%q is not the name of a channel file", base)
	}
	if err := checkRing(ring); err != nil {
		return nil, err
	}
	s := &segment{dir: dir, base: base, token: token, ring: ring}
	f, err := os.OpenFile(s.path(), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := segmentBytes(ring)
	if st, err := f.Stat(); err != nil || st.Size() != int64(size) {
		return nil, fmt.Errorf("%s is not a channel of %d-byte rings", s.path(), ring)
	}
	if err := s.mapFile(f, size); err != nil {
		return nil, err
	}
	if string(s.mem[:tokenBytes]) != string(token[:]) {
		s.release()
		return nil, fmt.Errorf("%s holds another token: not the peer's file", s.path())
	}
	s.unlink()
	s.touch()
	return s, nil
}

// checkRing refuses a ring size the channel cannot use: positions are
// masked (a power of two), and a record needs its lines.
func checkRing(ring int) error {
	if ring < minRing || ring&(ring-1) != 0 {
		return fmt.Errorf("shared memory: a ring of %d bytes: want a power of two of at least %d", ring, minRing)
	}
	return nil
}

// segmentBytes is the size of a channel file with rings of ring bytes.
func segmentBytes(ring int) int { return shmHeader + 2*(ringCtrl+ring) }

// mapFile maps the segment's file f of size bytes, shared.
func (s *segment) mapFile(f *os.File, size int) error {
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	s.mem = mem
	return err
}

// touch writes to each page of the mapping before either side uses it: a
// page of a shared mapping is otherwise mapped writable only at its first
// write, and that fault, in each process, cost 8-15 us here (a 64 KiB
// message over fresh pages took 0.5-1 ms instead of 25 us). MAP_POPULATE
// does not help: it maps a shared mapping's pages read-only.
func (s *segment) touch() {
	for off := 0; off < len(s.mem); off += os.Getpagesize() {
		// A write that changes nothing (a plain self-assignment would be
		// compiled away); no one else writes yet: neither side has begun.
		atomic.AddUint32((*uint32)(unsafe.Pointer(&s.mem[off])), 0)
	}
}

// unlink removes the segment's name; the mappings live on until both
// sides close them.
func (s *segment) unlink() {
	os.Remove(s.path())
	named.forget(s.path())
}

// named holds the channel files this process created whose names it has
// not removed yet: a rank that gives up during setup removes them
// (RemoveOwnFiles), rather than leave them for the next run on the host
// (a helper found them after killing one rank of 40 while the others
// connected: ranks waiting for a peer's answer never reached their
// unlink).
var named createdFiles

type createdFiles struct {
	mu    sync.Mutex
	paths map[string]bool
}

func (f *createdFiles) add(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.paths == nil {
		f.paths = map[string]bool{}
	}
	f.paths[path] = true
}

func (f *createdFiles) forget(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.paths, path)
}

// RemoveFilesOf removes the shared-memory channel files the processes
// pids created, once they have exited: a launcher that had to kill its
// ranks (SIGKILL runs no cleanup) removes what they left.
func RemoveFilesOf(pids []int) {
	for _, pid := range pids {
		names, _ := filepath.Glob(filepath.Join(shmDir, fmt.Sprintf("collsim-%010d-*", pid)))
		for _, name := range names {
			if segmentName.MatchString(filepath.Base(name)) {
				os.Remove(name)
			}
		}
	}
}

// RemoveOwnFiles removes the names of the shared-memory channel files this
// process created and has not removed yet; mappings live on until closed.
// A rank calls it when it stops, however it stops.
func RemoveOwnFiles() {
	named.mu.Lock()
	defer named.mu.Unlock()
	for path := range named.paths {
		os.Remove(path)
	}
	clear(named.paths)
}

func (s *segment) release() {
	if s.mem != nil {
		syscall.Munmap(s.mem)
	}
}

// conn turns the mapped segment into this side's channel: the creator
// writes direction 0 and reads direction 1, the opener the reverse.
func (s *segment) conn(creator bool, ctrl net.Conn) *sharedConn {
	d0 := newRing(s.mem, shmHeader, s.ring)
	d1 := newRing(s.mem, shmHeader+ringCtrl+s.ring, s.ring)
	c := &sharedConn{mem: s.mem, ctrl: ctrl, out: d0, in: d1}
	if !creator {
		c.out, c.in = d1, d0
	}
	// The handshake's deadline must not end the watch: a timeout would
	// read as the peer's end.
	ctrl.SetDeadline(time.Time{})
	go c.watch()
	return c
}

// watch waits for the control connection to end and then wakes this side,
// so that a read drains what the peer wrote and then sees the end, and a
// write fails rather than wait for room that will not come.
func (c *sharedConn) watch() {
	io.Copy(io.Discard, c.ctrl)
	c.gone.Store(true)
	c.wakeSelf()
}

// wakeSelf wakes this side's sleeping read and write, so that they look
// again at the channel's state.
func (c *sharedConn) wakeSelf() {
	if c.enter() { // else Close has woken them
		wake(c.in.readerSleeps)
		wake(c.out.writerSleeps)
		c.use.RUnlock()
	}
}

// enter takes the mapping for use, unless the channel is closed (and so
// soon unmapped): then it reports false and holds nothing. A true return
// is to be ended with c.use.RUnlock.
func (c *sharedConn) enter() bool {
	c.use.RLock()
	if c.closed.Load() {
		c.use.RUnlock()
		return false
	}
	return true
}

// sleep waits until ready turns true, polling, then sleeping on the futex
// word sleeps; it returns os.ErrDeadlineExceeded when the deadline (Unix
// nanoseconds, 0 for none; read again at each turn, as a deadline set
// during a wait counts) passes first.
func (c *sharedConn) sleep(sleeps *uint32, deadline *atomic.Int64, ready func() bool) error {
	if c.spin(ready) {
		return nil
	}
	return c.futexSleep(sleeps, deadline, ready)
}

// spin polls ready for shmSpin turns, then for c.poll, and reports whether
// it turned true.
func (c *sharedConn) spin(ready func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if ready() {
			return true
		}
		if i >= shmSpin {
			if c.poll == 0 {
				return false
			}
			if i == shmSpin {
				start = time.Now()
			} else if i%16 == 0 && time.Since(start) > c.poll {
				return false
			}
		}
		runtime.Gosched()
	}
}

// futexSleep sleeps on the futex word sleeps until ready turns true or the
// deadline (as sleep's) passes.
//
// Its first wait lasts at most storeDrain. A writer publishes its position
// with a release store and then looks at the reader's word without a fence
// between (sharedConn.put), so it may see the word still 0 while its own
// store waits in the core's store buffer, just as this side sets the word
// and finds the old position: then no one wakes it. The store is visible
// within microseconds (a store buffer drains as fast as the cache takes
// it, and at once when the thread is switched out), so the look after the
// first wait finds it; a writer that comes later sees the word set.
func (c *sharedConn) futexSleep(sleeps *uint32, deadline *atomic.Int64, ready func() bool) error {
	for turn := 0; ; turn++ {
		atomic.StoreUint32(sleeps, 1)
		if ready() {
			atomic.StoreUint32(sleeps, 0)
			return nil
		}
		wait := futexSlice
		if turn == 0 {
			wait = storeDrain
		}
		if dl := deadline.Load(); dl != 0 {
			left := time.Until(time.Unix(0, dl))
			if left <= 0 {
				atomic.StoreUint32(sleeps, 0)
				return os.ErrDeadlineExceeded
			}
			wait = min(wait, left)
		}
		// Returns at once unless the word is still 1: a wake-up that came
		// between the look above and this call is not lost.
		ts := syscall.NsecToTimespec(int64(wait))
		syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(sleeps)), futexWait, 1, uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
}

// Read reads what the peer wrote; at the peer's end, once drained, io.EOF.
func (c *sharedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !c.enter() {
		return 0, net.ErrClosed
	}
	defer c.use.RUnlock()
	r := &c.in
	for {
		if c.closed.Load() {
			return 0, net.ErrClosed
		}
		gone := c.gone.Load() // before looking: what was written before the end is read
		if n, err := c.take(p); n > 0 || err != nil {
			return n, err
		}
		if gone {
			return 0, io.EOF
		}
		pos := c.taken // published: take found nothing
		err := c.sleep(r.readerSleeps, &c.readDL, func() bool {
			return atomic.LoadUint64(r.written) != pos || c.gone.Load() || c.closed.Load()
		})
		if err != nil {
			return 0, err
		}
	}
}

// readSome is Read without waiting: it returns 0 and no error when the
// peer has written nothing new.
//
// readSome, writeSome and writeWhole are the owner's: the one goroutine
// that serves the channel (the rank's, progress.go) and alone closes it.
// So they take no share of c.use: Close cannot unmap under them, and its
// two locked instructions a call were a tenth of what an 8-byte message
// cost its reader.
func (c *sharedConn) readSome(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	gone := c.gone.Load()
	if n, err := c.take(p); n > 0 || err != nil || !gone || len(p) == 0 {
		return n, err
	}
	return 0, io.EOF
}

// take copies what the ring's records hold into p, up to len(p). It hands
// the room back to the writer when it finds nothing new, and after each
// showEvery bytes of records it has finished, but not at once after a
// small frame (see sharedConn.taken): every wait on this side starts with
// a take that found nothing, so a writer that waits for room is never kept
// waiting by a sleeping or polling reader. The caller has entered.
func (c *sharedConn) take(p []byte) (int, error) {
	r := &c.in
	if c.broken {
		return 0, errMalformedRecord
	}
	done := 0
	for done < len(p) {
		if c.recLen == 0 {
			at := c.taken & r.mask
			word := atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.data[at])))
			n := int(word & (1<<recordLenBits - 1))
			if word != recordWord(c.taken, n) {
				if done == 0 {
					c.show()
				}
				return done, nil
			}
			if n == 0 || n > maxRecord(len(r.data)) {
				c.broken = true
				return done, errMalformedRecord
			}
			c.recLen, c.recOff = n, 0
		}
		n := min(c.recLen-c.recOff, len(p)-done)
		at := int((c.taken + wordBytes + uint64(c.recOff)) & r.mask)
		k := copy(p[done:done+n], r.data[at:])
		copy(p[done+k:done+n], r.data)
		done += n
		if c.recOff += n; c.recOff == c.recLen {
			c.consumeRecord(c.recLen)
			c.recLen = 0
		}
	}
	return done, nil
}

// nextRecord is readSome for a reader that can use the next record where
// it lies in the ring: when this side is at a record's start and that
// record is published and does not wrap around the ring's end, it returns
// the record's bytes, which stay the reader's until consumeRecord (the
// writer reuses the room only once this side shows it has read past it).
// When nothing new is published it does what readSome does then (shows
// how far it has read; io.EOF once the peer has ended), and returns no
// bytes. Otherwise (in the middle of a record, a record that wraps, a
// closed or broken channel) it returns bytePath: readSome reads on. Only
// the owner calls it (see readSome).
func (c *sharedConn) nextRecord() (rec []byte, bytePath bool, err error) {
	r := &c.in
	if c.broken || c.recLen != 0 || c.closed.Load() {
		return nil, true, nil
	}
	gone := c.gone.Load() // before looking, as readSome
	at := c.taken & r.mask
	word := atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.data[at])))
	n := int(word & (1<<recordLenBits - 1))
	if word != recordWord(c.taken, n) {
		c.show()
		if gone {
			return nil, false, io.EOF
		}
		return nil, false, nil
	}
	start := int(at) + wordBytes
	if n == 0 || n > maxRecord(len(r.data)) || start+n > len(r.data) {
		return nil, true, nil // take reports a malformed record
	}
	return r.data[start : start+n], false, nil
}

// consumeRecord finishes the record of n bytes nextRecord returned, as
// take finishes one.
func (c *sharedConn) consumeRecord(n int) {
	c.taken += recordSpan(n)
	if c.taken-c.shown >= c.showEvery() {
		c.show()
	}
}

// maxRecord is the most bytes one record of a ring of size bytes holds:
// a record spans at most a piece (shmPiece), and at most a quarter of the
// ring, so that the writer can fill the ring again while the reader copies
// the rest.
func maxRecord(size int) int { return min(shmPiece, size/4) - wordBytes }

// showEvery is how much take copies before it publishes, found something
// new or not: a piece (shmPiece), and at most a quarter of the ring, so
// that the writer can fill the ring again while the rest is read.
func (c *sharedConn) showEvery() uint64 { return min(shmPiece, uint64(len(c.in.data))/4) }

// show publishes how far this side has read, and wakes a writer that
// sleeps for room.
func (c *sharedConn) show() {
	if c.taken != c.shown {
		c.shown = c.taken
		atomic.StoreUint64(c.in.read, c.taken)
		wake(c.in.writerSleeps)
	}
}

// Write copies p into the ring as room frees, publishing each piece.
func (c *sharedConn) Write(p []byte) (int, error) {
	if !c.enter() {
		return 0, net.ErrClosed
	}
	defer c.use.RUnlock()
	r := &c.out
	size := uint64(len(r.data))
	done := 0
	for done < len(p) {
		switch {
		case c.closed.Load():
			return done, net.ErrClosed
		case c.gone.Load():
			return done, errPeerClosedShared
		}
		if n := c.put(p[done:]); n > 0 {
			done += n
			continue
		}
		pos := atomic.LoadUint64(r.written)
		err := c.sleep(r.writerSleeps, &c.writeDL, func() bool {
			return pos-atomic.LoadUint64(r.read) <= size-leastRoom || c.gone.Load() || c.closed.Load()
		})
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeSome is Write without waiting: it copies what the ring has room
// for, perhaps nothing. Only the owner calls it (see readSome).
func (c *sharedConn) writeSome(p []byte) (int, error) {
	switch {
	case c.closed.Load():
		return 0, net.ErrClosed
	case c.gone.Load():
		return 0, errPeerClosedShared
	}
	return c.put(p), nil
}

// writeWhole writes p if the ring has room for all of it, and else
// nothing. Only the owner calls it (see readSome).
func (c *sharedConn) writeWhole(p []byte) {
	if c.closed.Load() || c.gone.Load() {
		return
	}
	most := maxRecord(len(c.out.data))
	span := uint64(len(p)/most)*recordSpan(most) + recordAlign // and the free line
	if rest := len(p) % most; rest > 0 {
		span += recordSpan(rest)
	}
	if span > c.room(span) {
		return
	}
	c.put(p)
}

// room is how many bytes the out ring has free, looking at how far the
// reader has read again only when the last look leaves less than want.
func (c *sharedConn) room(want uint64) uint64 {
	r := &c.out
	pos := atomic.LoadUint64(r.written)
	size := uint64(len(r.data))
	if room := size - (pos - c.seenRead); room >= want {
		return room
	}
	c.seenRead = atomic.LoadUint64(r.read)
	return size - (pos - c.seenRead)
}

// put copies as much of p as the ring has room for, a record at a time,
// publishing each. The caller has entered.
func (c *sharedConn) put(p []byte) int {
	r := &c.out
	pos := atomic.LoadUint64(r.written)
	most := maxRecord(len(r.data))
	done := 0
	for done < len(p) {
		n := min(len(p)-done, most)
		// Room for the record and the line after it, whose word is zeroed.
		room := c.room(recordSpan(n) + recordAlign)
		if room < leastRoom {
			break
		}
		n = min(n, int(room)-recordAlign-wordBytes) // room is whole lines: the record fits
		at := int((pos + wordBytes) & r.mask)
		k := copy(r.data[at:], p[done:done+n])
		copy(r.data, p[done+k:done+n])
		next := pos + recordSpan(n)
		// Stores leave in order: a zero still to be stored would hold the
		// word back until its line is the writer's, so it is stored only
		// if needed; zeroAhead has mostly stored it already. When it has
		// (next is the position it zeroed: a one-line record), the word is
		// not even read: the reader, polling the line before it, may have
		// pulled that line to its core, and the read waited for it before
		// the record could be published (an 8-byte one-way ping-pong
		// took 10-20 ns less without it).
		if next != c.zeroed {
			if w := (*uint64)(unsafe.Pointer(&r.data[next&r.mask])); *w != 0 {
				*w = 0
			}
		}
		// Release stores, no fence: an atomic store stalled the writer
		// until it owned the line the reader polls (see
		// sharedConn.futexSleep for the wake-up it may miss). The word
		// last, so that a reader that sees it sees the bytes and the next
		// word's zero.
		storeRelease((*uint64)(unsafe.Pointer(&r.data[pos&r.mask])), recordWord(pos, n))
		pos = next
		done += n
		storeRelease(r.written, pos)
		wake(r.readerSleeps)
		c.zeroAhead(pos)
	}
	return done
}

// zeroAhead zeroes the word of the line after pos, the next record's
// start, when that line is free: the end of a one-line record written
// there next, whose zero put then finds stored, its line already the
// writer's, rather than storing it in front of the record's word (an
// 8-byte ping-pong took 0.85 us one way so, against 0.72 us).
func (c *sharedConn) zeroAhead(pos uint64) {
	r := &c.out
	if size := uint64(len(r.data)); pos+2*recordAlign <= c.seenRead+size {
		if w := (*uint64)(unsafe.Pointer(&r.data[(pos+recordAlign)&r.mask])); *w != 0 {
			*w = 0
		}
		// Only this writer stores into the ring, and its next record
		// starts at pos: if that record takes one line, this word is
		// still 0 when put publishes it; a longer one starts its next
		// record further on, and put looks there as before.
		c.zeroed = pos + recordAlign
	}
}

// waitReadable sleeps, without polling, until a read would not wait: the
// peer wrote, ended, or this side closed.
func (c *sharedConn) waitReadable() {
	if !c.enter() {
		return
	}
	defer c.use.RUnlock()
	r := &c.in
	var none atomic.Int64
	c.futexSleep(r.readerSleeps, &none, func() bool {
		return atomic.LoadUint64(r.written) != atomic.LoadUint64(r.read) || c.gone.Load() || c.closed.Load()
	})
}

// waitRoom sleeps, without polling, until a write would not wait: the ring
// has room, or the peer ended, or this side closed.
func (c *sharedConn) waitRoom() {
	if !c.enter() {
		return
	}
	defer c.use.RUnlock()
	r := &c.out
	size := uint64(len(r.data))
	var none atomic.Int64
	c.futexSleep(r.writerSleeps, &none, func() bool {
		return atomic.LoadUint64(r.written)-atomic.LoadUint64(r.read) <= size-leastRoom || c.gone.Load() || c.closed.Load()
	})
}

// Close ends this side: the peer's reads see the end after what was
// written, and the mapping is released once no read or write uses it.
func (c *sharedConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.ctrl.Close()
	wake(c.in.readerSleeps) // still mapped: only Close unmaps
	wake(c.out.writerSleeps)
	c.use.Lock()
	defer c.use.Unlock()
	return syscall.Munmap(c.mem)
}

// yieldCore gives the core to another runnable thread, if there is one
// (sched_yield), as Open MPI's progress loop does between looks when a
// node has more ranks than cores.
func yieldCore() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

// pollWhenAlone makes the channel poll before sleeping: the host has a
// core for each of its ranks.
func (c *sharedConn) pollWhenAlone() { c.poll = shmPoll }

// LocalAddr and RemoteAddr are the control connection's.
func (c *sharedConn) LocalAddr() net.Addr  { return c.ctrl.LocalAddr() }
func (c *sharedConn) RemoteAddr() net.Addr { return c.ctrl.RemoteAddr() }

// SetDeadline sets both deadlines.
func (c *sharedConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds reads' waits, as on a socket.
func (c *sharedConn) SetReadDeadline(t time.Time) error {
	c.readDL.Store(unixNanos(t))
	c.wakeSelf() // a sleeping read takes the new deadline
	return nil
}

// SetWriteDeadline bounds writes' waits, as on a socket.
func (c *sharedConn) SetWriteDeadline(t time.Time) error {
	c.writeDL.Store(unixNanos(t))
	c.wakeSelf()
	return nil
}

func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// shmDir is where channels' files go: /dev/shm, which is memory.
const shmDir = "/dev/shm"

// SharedMemoryAvailable reports why ranks on this host cannot share
// memory (nil: they can), by making and removing a small channel file.
func SharedMemoryAvailable() error {
	s, err := createSegment(shmDir, 4096)
	if err != nil {
		return fmt.Errorf("shared memory in %s: %w", shmDir, err)
	}
	s.unlink()
	s.release()
	return nil
}

// sharedHostID names this side's boot of this host and its network
// namespace: ranks in different namespaces stand for different hosts (the
// emulated clusters of --netns), so they keep to TCP even though they share
// /dev/shm; the boot ID tells hosts apart, whose initial namespaces have
// the same inode.
func sharedHostID() ([16]byte, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return [16]byte{}, false
	}
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/net", &st); err != nil {
		return [16]byte{}, false
	}
	return hashID(fmt.Sprintf("%s|%d|%d", bytes.TrimSpace(boot), st.Dev, st.Ino)), true
}

// machineID names this boot of this machine, whatever the network
// namespace: ranks with the same one share its cores.
func machineID() ([16]byte, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return [16]byte{}, false
	}
	return hashID("machine|" + string(bytes.TrimSpace(boot))), true
}

func hashID(s string) [16]byte {
	var id [16]byte
	sum := sha256.Sum256([]byte(s))
	copy(id[:], sum[:])
	return id
}

// ownCPUs is the set of CPUs this process may run on (empty if unknown,
// or if the machine has more CPUs than a cpuSet holds).
func ownCPUs() cpuSet {
	var set unix.CPUSet
	var s cpuSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return s
	}
	for cpu := range 8 * cpuSetBytes {
		if set.IsSet(cpu) {
			s[cpu/8] |= 1 << (cpu % 8)
		}
	}
	return s
}
