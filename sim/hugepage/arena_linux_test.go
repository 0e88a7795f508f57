package hugepage

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// needArenaAdvice skips t where arenas' advice cannot be seen: under the
// race detector (arenas hand out Go memory) and without transparent huge
// pages.
func needArenaAdvice(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("this kernel has no transparent huge pages:", err)
	}
}

// An arena's first chunk, small, asks for no huge pages; its later chunks
// and tables with a mapping of their own start on a huge page boundary
// and ask for them (VmFlags "hg" in /proc/self/smaps), so that the kernel
// can back them with huge pages from the first touch. Free unmaps what it
// does not keep for the next arenas.
func TestArenaChunksAreAdvisedAndFreed(t *testing.T) {
	needArenaAdvice(t)
	adviseWhile(t, true)
	a := NewArena()
	first := Alloc[uint32](a, 100)
	var chunk [][]byte
	for range 5 { // 900 KB each: past the first chunk; four fill a 4 MiB chunk, the fifth starts another
		chunk = append(chunk, Alloc[byte](a, 900<<10))
	}
	large := Alloc[uint64](a, 3*Size/8) // a mapping of its own, 3 huge pages
	flagsOf := func(p uintptr) string {
		flags, err := vmFlags(p)
		if err != nil {
			t.Fatal(err)
		}
		return " " + flags + " "
	}
	if flags := flagsOf(uintptr(unsafe.Pointer(&first[0]))); strings.Contains(flags, " hg ") {
		t.Errorf("the first chunk's mapping has VmFlags %q, with hg", flags)
	}
	for _, c := range []struct {
		what string
		p    uintptr
	}{
		{"the second chunk", uintptr(unsafe.Pointer(&chunk[0][0]))},
		{"the third chunk", uintptr(unsafe.Pointer(&chunk[4][0]))},
		{"a table of its own", uintptr(unsafe.Pointer(&large[0]))},
	} {
		if c.p%Size != 0 {
			t.Errorf("%s at %#x: not on a huge page boundary", c.what, c.p)
		}
		if flags := flagsOf(c.p); !strings.Contains(flags, " hg ") {
			t.Errorf("the mapping of %s (%#x) has VmFlags %q, without hg", c.what, c.p, flags)
		}
	}
	addr := uintptr(unsafe.Pointer(&large[0]))
	a.Free()
	if flags, err := vmFlags(addr); err == nil && strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("after Free a mapping with huge page advice still holds %#x (VmFlags %q)", addr, flags)
	}
	// The arena serves again after Free.
	s := Alloc[uint32](a, 10)
	s[9] = 1
	a.Free()
}

// Reserve's room takes memory only where the table reaches: a gigabyte's
// room, a few elements used, adds a huge page at most to the process's
// resident memory; appending within it never moves the table.
func TestReserveCostsWhatIsTouched(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	a := NewArena()
	defer a.Free()
	const n = 1 << 27 // 1 GiB of uint64
	before := rssKiB(t)
	s := Reserve[uint64](a, n)
	if s == nil {
		t.Skip("no room for a gigabyte here (a limit on address space or memory commit?)")
	}
	if len(s) != 0 || cap(s) != n {
		t.Fatalf("Reserve(%d): len %d cap %d", n, len(s), cap(s))
	}
	first := unsafe.SliceData(s)
	for i := range 1000 {
		s = append(s, uint64(i))
	}
	if unsafe.SliceData(s) != first {
		t.Fatal("appending within the room moved the table")
	}
	if grew := rssKiB(t) - before; grew > 4<<10 {
		t.Fatalf("resident memory grew by %d KiB for 8,000 bytes used of a 1 GiB room", grew)
	}
}

// rssKiB is the process's resident memory (VmRSS).
func rssKiB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib int
			if _, err := fmt.Sscan(v, &kib); err != nil {
				t.Fatal(err)
			}
			return kib
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// An arena nobody freed is unmapped once it is unreachable.
func TestUnreachableArenaIsUnmapped(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	addr := func() uintptr {
		a := NewArena()
		s := Alloc[uint64](a, Size/8)
		s[0] = 1
		return uintptr(unsafe.Pointer(&s[0]))
	}()
	if _, err := vmFlags(addr); err != nil {
		t.Fatalf("the table is not mapped while its arena may still be reachable: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		if _, err := vmFlags(addr); err != nil {
			return // unmapped
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table at %#x is still mapped 30 s after its arena became unreachable", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Wherever the kernel puts a mapping one huge page longer than its table,
// trimming it leaves the table on a huge page boundary inside it, and
// unmaps the rest exactly.
func TestTrimAlignsTheTable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		start := uintptr(rapid.Uint64Range(1, 1<<35).Draw(t, "page")) << 12
		n := uintptr(rapid.Uint64Range(Size>>12, 1<<20).Draw(t, "pages")) << 12
		head, tail := trim(start, Size)
		table := start + head
		if table%Size != 0 {
			t.Fatalf("mapping at %#x: table at %#x, off a boundary", start, table)
		}
		if head+n+tail != n+Size || head > Size {
			t.Fatalf("mapping at %#x of %d bytes: head %d + table %d + tail %d", start, n+Size, head, n, tail)
		}
	})
}

// A chunk an arena freed serves the next arena, cleared of what the first
// one wrote in it.
func TestFreedChunkServesTheNextArenaCleared(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	a := NewArena()
	s := Alloc[uint64](a, 1000)
	for i := range s {
		s[i] = ^uint64(0)
	}
	first := &s[0]
	a.Free()
	b := NewArena()
	defer b.Free()
	u := Alloc[uint64](b, 2000)
	if &u[0] != first {
		t.Fatalf("the next arena's first table is at %p, not in the freed chunk at %p", &u[0], first)
	}
	for i, v := range u {
		if v != 0 {
			t.Fatalf("a table in a reused chunk holds %#x at %d", v, i)
		}
	}
}

// A chunk back from the pool takes the policy in force when it is handed
// out, not the one it was mapped under.
func TestPooledChunkTakesThePolicy(t *testing.T) {
	needArenaAdvice(t)
	adviseWhile(t, false)
	chunk := func() (*Arena, *byte) {
		a := NewArena()
		_ = Alloc[byte](a, 100)               // the first chunk
		return a, &Alloc[byte](a, 900<<10)[0] // a chunk of chunkBytes
	}
	a, p := chunk()
	// (It may itself come from the pool, advised under another policy.)
	if flags, err := vmFlags(uintptr(unsafe.Pointer(p))); err != nil || !strings.Contains(" "+flags+" ", " nh ") {
		t.Fatalf("a chunk handed out with huge pages off has VmFlags %q (%v), without nh", flags, err)
	}
	a.Free()
	SetPolicy(On)
	b, q := chunk()
	defer b.Free()
	if p != q {
		t.Skipf("the second arena's chunk is at %p, not the pooled one at %p (another test took it)", q, p)
	}
	flags, err := vmFlags(uintptr(unsafe.Pointer(q)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("a pooled chunk handed out with huge pages on has VmFlags %q", flags)
	}
}

// The pool gives each arena chunks of the size it asks for, whatever the
// order they were freed in.
func TestPoolGivesChunksOfTheirSize(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	pool.Lock()
	for _, c := range pool.chunks { // start from an empty pool
		unmap(c.p, c.n)
	}
	pool.chunks = nil
	pool.Unlock()
	a := NewArena()
	small := Alloc[byte](a, 100)     // the first chunk
	large := Alloc[byte](a, 900<<10) // a chunk of chunkBytes, freed after the first
	smallAt, largeAt := unsafe.Pointer(&small[0]), unsafe.Pointer(&large[0])
	a.Free()
	if p := newChunk(firstChunkBytes); p != smallAt {
		t.Errorf("a first chunk from the pool at %p, want the freed one at %p", p, smallAt)
	}
	if p := newChunk(chunkBytes); p != largeAt {
		t.Errorf("a large chunk from the pool at %p, want the freed one at %p", p, largeAt)
	}
	unmap(smallAt, firstChunkBytes)
	unmap(largeAt, chunkBytes)
}

// Chunks that arenas freed, several of one arena, serve the next arena
// cleared, every one of them.
func TestFreedChunksAreAllCleared(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	a := NewArena()
	for range 20 { // 768 KiB each: five chunks
		s := Alloc[uint64](a, 96<<10)
		for i := range s {
			s[i] = ^uint64(0)
		}
	}
	a.Free()
	b := NewArena()
	defer b.Free()
	for k := range 20 {
		for i, v := range Alloc[uint64](b, 96<<10) {
			if v != 0 {
				t.Fatalf("table %d of the next arena holds %#x at %d", k, v, i)
			}
		}
	}
}

// sink keeps reads of freed tables from being optimized away.
var sink byte

// A table used after its arena's Free faults, whether its chunk was
// unmapped or kept for the next arenas: it does not read or write memory
// another run may hold.
func TestTableAfterFreeFaults(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for _, n := range []int{100, 900 << 10, 3 << 20} { // the first chunk, a later one, a mapping of its own
		a := NewArena()
		_ = Alloc[byte](a, 100)
		s := Alloc[byte](a, n)
		s[n-1] = 1
		a.Free()
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a %d-byte table was read after Free without a fault", n)
				}
			}()
			sink = s[n-1]
		}()
	}
}

// Under a limit on address space, Reserve leaves three quarters of it to
// the rest of the process, counting every live reservation: room for more
// than a quarter is nil, though the kernel would map it, room for exactly
// a quarter is given, and then room for more is nil until that arena is
// freed. (In a process of its own, under a limit of 16 GiB or the hard
// limit if lower: a limit cannot be lifted again.)
func TestReserveLeavesAddressSpace(t *testing.T) {
	needRoomToReserve(t)
	if inChild(t, "HUGEPAGE_RESERVE_CHILD") {
		var l unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_AS, &l); err != nil {
			t.Skip("cannot read RLIMIT_AS:", err)
		}
		limit := min(uint64(16<<30), l.Max)
		if limit < 4<<30 {
			t.Skipf("the hard limit on address space, %d bytes, leaves no room to test", l.Max)
		}
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: l.Max}); err != nil {
			t.Skip("cannot set RLIMIT_AS:", err)
		}
		quarter := limit / 4
		a := NewArena()
		if room := Reserve[byte](a, int(quarter+1)); room != nil {
			t.Fatalf("room for %d bytes under a limit of %d", cap(room), limit)
		}
		if room := Reserve[byte](a, int(quarter)); uint64(cap(room)) != quarter {
			t.Fatalf("room for %d bytes under a limit of %d, want %d", cap(room), limit, quarter)
		}
		b := NewArena()
		if room := Reserve[byte](b, Size); room != nil {
			t.Fatalf("room for %d more bytes while a quarter of the limit is reserved", cap(room))
		}
		a.Free()
		if room := Reserve[byte](b, int(quarter)); uint64(cap(room)) != quarter {
			t.Fatalf("room for %d bytes once the first arena is freed, want %d", cap(room), quarter)
		}
		b.Free()
	}
}

// An arena freed while the collector runs, and freed twice: its cleanup
// never unmaps what Free is unmapping (a fault when Free was the arena's
// last use), and the room its reservations held is given back once.
func TestFreeWhileCollecting(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector arenas hand out Go memory")
	}
	before := reservedBytes.Load()
	var stop atomic.Bool
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for !stop.Load() {
			runtime.GC()
		}
	}()
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for range 600 {
				reserveAndFree(g == 1)
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	<-collected
	a := NewArena()
	_ = Reserve[byte](a, 1<<20)
	a.Free()
	a.Free()
	runtime.GC()
	if got := reservedBytes.Load(); got != before {
		t.Fatalf("%d bytes of room held after every arena was freed, %d before", got, before)
	}
}

// reserveAndFree reserves room in a fresh arena, maybe touches it, and
// frees the arena, whose last use is Free.
//
//go:noinline
func reserveAndFree(touch bool) {
	a := NewArena()
	var rooms [][]byte
	for range 20 {
		rooms = append(rooms, Reserve[byte](a, 1<<20))
	}
	if touch {
		for _, r := range rooms {
			r = r[:cap(r)]
			for i := 0; i < len(r); i += 64 << 10 {
				r[i] = 1
			}
		}
	}
	a.Free()
}

// Room counted but not mapped (the kernel refused the mapping, here for
// want of address space under a limit set just above what the process
// has) is given back: Reserve returns nil, and the room held is as before.
// (In a process of its own, as above.)
func TestReserveGivesBackRoomItCouldNotMap(t *testing.T) {
	needRoomToReserve(t)
	if inChild(t, "HUGEPAGE_UNMAPPED_CHILD") {
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Skip(err)
		}
		var vmSize uint64 // KiB
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
				fmt.Sscan(v, &vmSize)
			}
		}
		var l unix.Rlimit
		if vmSize == 0 || unix.Getrlimit(unix.RLIMIT_AS, &l) != nil {
			t.Skip("cannot read the process's size or its limit")
		}
		limit := vmSize<<10 + 64<<20 // 64 MiB above what the process has mapped
		if limit > l.Max {
			t.Skipf("the hard limit on address space, %d bytes, is below %d", l.Max, limit)
		}
		before := reservedBytes.Load()
		a := NewArena()
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: l.Max}); err != nil {
			t.Skip("cannot set RLIMIT_AS:", err)
		}
		room := Reserve[byte](a, int(limit/4)) // within the count's quarter, beyond the 64 MiB left
		held := reservedBytes.Load()
		if err := unix.Setrlimit(unix.RLIMIT_AS, &l); err != nil {
			t.Fatal(err)
		}
		if room != nil {
			t.Fatalf("room for %d bytes with 64 MiB of address space left", cap(room))
		}
		if held != before {
			t.Fatalf("%d bytes of room held after a mapping failed, %d before", held, before)
		}
	}
}

// inChild reports whether this process is the child that runs t's body
// (env is set in it). In the parent it runs t again in a process of its
// own, with env set, and passes on its outcome: a skip there skips t.
func inChild(t *testing.T, env string) bool {
	t.Helper()
	if os.Getenv(env) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(out), "--- SKIP"):
		t.Skipf("in the child process:\n%s", out)
	case err != nil || !strings.Contains(string(out), "--- PASS"):
		t.Fatalf("%v\n%s", err, out)
	}
	return false
}

// needRoomToReserve skips t where Reserve's room cannot be tested: under
// the race detector, which gives none, and in a 32-bit address space.
func needRoomToReserve(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("under the race detector Reserve gives no room")
	}
	if unsafe.Sizeof(uintptr(0)) < 8 {
		t.Skip("a 32-bit address space")
	}
}

// Only a mapping that can hold a huge page makes Auto measure: a small
// run's arena, whose mappings are smaller, never does; and a mapping of
// exactly a huge page is advised.
func TestSmallMappingsDoNotMeasure(t *testing.T) {
	needArenaAdvice(t)
	defer func(before int32, decision func() bool) { policy.Store(before); autoDecision = decision }(policy.Load(), autoDecision)
	calls := 0
	autoDecision = func() bool { calls++; return true }
	SetPolicy(Auto)
	a := NewArena()
	defer a.Free()
	_ = Alloc[byte](a, 100)      // the first chunk
	_ = Alloc[byte](a, ownBytes) // a mapping of its own, below a huge page
	if calls != 0 {
		t.Fatalf("mappings below a huge page asked Auto %d times", calls)
	}
	exact := Alloc[byte](a, Size)
	if calls == 0 {
		t.Fatal("a mapping of a huge page did not ask Auto")
	}
	flags, err := vmFlags(uintptr(unsafe.Pointer(&exact[0])))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("a mapping of %d bytes with huge pages advised has VmFlags %q", Size, flags)
	}
}

// Under Auto a small mapping is marked to get no huge pages once the
// measurement has said no, and left as it is before. (In a process of
// its own: the measurement is the process's.)
func TestSmallMappingsFollowAMeasuredNo(t *testing.T) {
	needArenaAdvice(t)
	if !inChild(t, "HUGEPAGE_MEASURED_NO_CHILD") {
		return
	}
	inMeasuringProcess(t)
	measureTouch = func() (time.Duration, time.Duration, bool) { return time.Millisecond, 2 * time.Millisecond, true }
	SetPolicy(Auto)
	nh := func() bool {
		a := NewArena() // not freed: each arena's first chunk is a new mapping
		p := &Alloc[byte](a, 100)[0]
		flags, err := vmFlags(uintptr(unsafe.Pointer(p)))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(" "+flags+" ", " nh ")
	}
	if nh() {
		t.Fatal("a small mapping marked before Auto measured")
	}
	if Advising() {
		t.Fatal("Auto advises where small pages measured cheaper")
	}
	if !nh() {
		t.Fatal("a small mapping not marked after Auto measured no")
	}
}
