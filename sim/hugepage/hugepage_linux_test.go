package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestMakeAsksForHugePages: the kernel records the advice on the mapping
// that holds a large table (VmFlags "hg" in /proc/self/smaps), whether or
// not it has huge pages free to give.
func TestMakeAsksForHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("this kernel has no transparent huge pages:", err)
	}
	adviseWhile(t, true)
	s := Make[byte](8 * Size)
	addr := uintptr(unsafe.Pointer(&s[4*Size]))
	flags, err := vmFlags(addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("the mapping of a %d-byte table has VmFlags %q, without hg", len(s), flags)
	}
}

// vmFlags returns the VmFlags line of the mapping that holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(flags), nil
		}
	}
	return "", fmt.Errorf("no mapping in /proc/self/smaps holds %#x", addr)
}

func TestGODEBUGDisablesTHP(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                          false,
		"disablethp=1":              true,
		"disablethp=2":              true,
		"gctrace=1,disablethp=1":    true,
		"gctrace=1, disablethp=1":   false, // the runtime does not trim keys
		"disablethp=1,disablethp=0": false,
		"disablethp=0":              false,
		"disablethp=x":              false,
		"disablethp=1,disablethp=x": true, // an invalid value changes nothing
		"xdisablethp=1":             false,
	} {
		if got := disablesTHP(godebug); got != want {
			t.Errorf("disablesTHP(%q) = %v, want %v", godebug, got, want)
		}
	}
}

// BenchmarkFirstTouch times writing one byte a page of fresh memory, in
// 4 KiB pages and in huge pages: what a large table's first use costs.
// Each iteration maps fresh memory, so that none was touched before.
func BenchmarkFirstTouch(b *testing.B) {
	const size = 128 << 20
	for _, huge := range []bool{false, true} {
		name := "small-pages"
		if huge {
			name = "huge-pages"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				m, err := syscall.Mmap(-1, 0, size+Size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
				if err != nil {
					b.Skip("mmap:", err)
				}
				if huge {
					unix.Madvise(m, unix.MADV_HUGEPAGE)
				}
				for i := 0; i < len(m); i += 4096 {
					m[i] = 1
				}
				syscall.Munmap(m)
			}
		})
	}
}

// adviseWhile sets whether tables ask for huge pages for the rest of t
// (policy On or Off), whatever the machine's policy chose.
func adviseWhile(t *testing.T, on bool) {
	before := policy.Load()
	SetPolicy(map[bool]Policy{true: On, false: Off}[on])
	t.Cleanup(func() { policy.Store(before) })
}

// thpOffered reads the setting in force, the one in brackets: "always"
// and "madvise" give huge pages on advice, "never" and anything
// unreadable do not.
func TestTHPOffered(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]bool{
		"[always] madvise never\n": true,
		"always [madvise] never\n": true,
		"always madvise [never]\n": false,
		"":                         false,
	} {
		file := filepath.Join(dir, "enabled")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := thpOffered(file); got != want {
			t.Errorf("enabled %q: %v, want %v", text, got, want)
		}
	}
	if thpOffered(filepath.Join(dir, "missing")) {
		t.Error("a missing file offers huge pages")
	}
}

// Auto asks for huge pages where the measurement finds them cheaper to
// touch, and measures only where they may be given: not with GODEBUG
// disablethp=1, nor where the kernel's setting is "never".
func TestAutoMeasures(t *testing.T) {
	t.Setenv("GODEBUG", "")
	defer func(file string, measure func() (time.Duration, time.Duration, bool)) {
		thpEnabled, measureTouch = file, measure
	}(thpEnabled, measureTouch)
	dir := t.TempDir()
	offered, never := filepath.Join(dir, "offered"), filepath.Join(dir, "never")
	for file, text := range map[string]string{offered: "always [madvise] never\n", never: "always madvise [never]\n"} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ms := time.Millisecond
	for _, c := range []struct {
		name        string
		godebug     string
		thp         string
		small, huge time.Duration
		ok          bool
		want        bool
		measured    bool
	}{
		{"huge pages cheaper", "", offered, 4 * ms, 1 * ms, true, true, true},
		{"small pages cheaper", "", offered, 1 * ms, 4 * ms, true, false, true},
		{"as costly", "", offered, 2 * ms, 2 * ms, true, false, true},
		{"no memory to measure", "", offered, 4 * ms, 1 * ms, false, false, true},
		{"never", "", never, 4 * ms, 1 * ms, true, false, false},
		{"no setting", "", filepath.Join(dir, "missing"), 4 * ms, 1 * ms, true, false, false},
		{"disablethp", "gctrace=1,disablethp=1", offered, 4 * ms, 1 * ms, true, false, false},
	} {
		t.Setenv("GODEBUG", c.godebug)
		thpEnabled = c.thp
		measured := false
		measureTouch = func() (time.Duration, time.Duration, bool) {
			measured = true
			return c.small, c.huge, c.ok
		}
		if got := autoAdvises(); got != c.want || measured != c.measured {
			t.Errorf("%s: advises %v, measured %v; want %v, %v", c.name, got, measured, c.want, c.measured)
		}
	}
}

// The policy decides what Advising says: On and Off whatever the
// machine, Auto what its measurement found, measured once however often
// it is asked.
func TestPolicyDecidesAdvising(t *testing.T) {
	defer func(before int32, decision func() bool) { policy.Store(before); autoDecision = decision }(policy.Load(), autoDecision)
	for _, cheaper := range []bool{false, true} {
		calls := 0
		autoDecision = sync.OnceValue(func() bool { calls++; return cheaper })
		for p, want := range map[Policy]bool{On: true, Off: false, Auto: cheaper} {
			SetPolicy(p)
			if Advising() != want || Advising() != want {
				t.Errorf("huge pages cheaper %v, policy %d: advising %v, want %v", cheaper, p, Advising(), want)
			}
		}
		if calls != 1 {
			t.Errorf("Auto measured %d times, want once", calls)
		}
	}
	if SetPolicy(Policy(7)); Policy(policy.Load()) != Auto {
		t.Errorf("an unknown policy sets %d, want Auto", policy.Load())
	}
}

// The measurement runs on this machine and gives both costs.
func TestTouchCostsRuns(t *testing.T) {
	small, huge, ok := touchCosts()
	if !ok {
		t.Skip("no memory could be mapped to measure")
	}
	if small <= 0 || huge <= 0 {
		t.Fatalf("small pages %v, huge pages %v", small, huge)
	}
	t.Logf("2 MiB touched in small pages: %v; as a huge page: %v", small, huge)
}

// SetPolicy(On) makes a large table ask for huge pages and Off not;
// under Off, an arena's own mappings are marked to get none (VmFlags
// "nh"), for machines that give them unasked. (The advice is checked on
// fresh memory of the test's own: a table of Go's heap may lie on memory
// an earlier table advised, which keeps the advice.)
func TestPolicyDecidesTheAdvice(t *testing.T) {
	needArenaAdvice(t)
	adviseWhile(t, Advising())
	has := func(flags, flag string) bool { return strings.Contains(" "+flags+" ", " "+flag+" ") }
	for _, c := range []struct {
		p     Policy
		table bool   // whether a table asks (hg)
		arena string // the flag an arena's mapping has
	}{
		{On, true, "hg"},
		{Off, false, "nh"},
	} {
		SetPolicy(c.p)
		m, err := syscall.Mmap(-1, 0, 8*Size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			t.Fatal(err)
		}
		advise(unsafe.Pointer(&m[0]), uintptr(len(m)))
		flags, err := vmFlags(uintptr(unsafe.Pointer(&m[4*Size])))
		syscall.Munmap(m)
		if err != nil {
			t.Fatal(err)
		}
		if has(flags, "hg") != c.table {
			t.Errorf("policy %d: a table's mapping has VmFlags %q", c.p, flags)
		}
		a := NewArena()
		big := Alloc[byte](a, 3*Size)
		flags, err = vmFlags(uintptr(unsafe.Pointer(&big[0])))
		if err != nil {
			t.Fatal(err)
		}
		if !has(flags, c.arena) {
			t.Errorf("policy %d: an arena's mapping has VmFlags %q, without %s", c.p, flags, c.arena)
		}
		a.Free()
	}
}

func TestParsePolicy(t *testing.T) {
	for s, want := range map[string]Policy{"auto": Auto, "on": On, "off": Off} {
		if got, err := ParsePolicy(s); err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "yes", "On", "always"} {
		if _, err := ParsePolicy(s); err == nil || !strings.Contains(err.Error(), "auto, on or off") {
			t.Errorf("ParsePolicy(%q): %v", s, err)
		}
	}
}

// touchCosts compares like with like: each side the faster of two
// samples, small pages in samples of smallSample pages scaled to 2 MiB,
// without huge pages, and 2 MiB asked as a huge page.
func TestTouchCostsSamples(t *testing.T) {
	defer func(f func(uintptr, uintptr, int) (time.Duration, bool)) { timeTouch = f }(timeTouch)
	page := uintptr(unix.Getpagesize())
	if Size/page < smallSample {
		t.Skipf("%d-byte pages: a huge page holds fewer than %d", page, smallSample)
	}
	type call struct {
		n      uintptr
		advice int
	}
	var calls []call
	ms := time.Millisecond
	times := map[int][]time.Duration{unix.MADV_NOHUGEPAGE: {2 * ms, 1 * ms}, unix.MADV_HUGEPAGE: {1 * ms, 3 * ms}}
	timeTouch = func(n, p uintptr, advice int) (time.Duration, bool) {
		if p != page {
			t.Errorf("touched every %d bytes, want every page (%d)", p, page)
		}
		calls = append(calls, call{n, advice})
		d := times[advice][0]
		times[advice] = times[advice][1:]
		return d, true
	}
	small, huge, ok := touchCosts()
	scale := time.Duration(Size / (smallSample * page))
	if !ok || small != 1*ms*scale || huge != 1*ms {
		t.Errorf("small pages %v, huge page %v, %v; want %v, 1ms", small, huge, ok, 1*ms*scale)
	}
	sample := call{smallSample * page, unix.MADV_NOHUGEPAGE}
	if want := []call{sample, {Size, unix.MADV_HUGEPAGE}, sample, {Size, unix.MADV_HUGEPAGE}}; !slices.Equal(calls, want) {
		t.Errorf("samples %v, want %v", calls, want)
	}
}

// A sample starts on a huge page boundary, so that 2 MiB of it can be
// one huge page.
func TestMapFreshIsAligned(t *testing.T) {
	for range 4 {
		b, unmap := mapFresh(Size)
		if b == nil {
			t.Skip("no memory could be mapped")
		}
		at := uintptr(unsafe.Pointer(&b[0]))
		unmap()
		if at%Size != 0 || len(b) != Size {
			t.Fatalf("%d bytes at %#x, want %d on a %d boundary", len(b), at, Size, Size)
		}
	}
}

// Auto measures once per process, however many goroutines ask at once.
// (In a process of its own: the measurement is the process's.)
func TestAutoMeasuresOnce(t *testing.T) {
	if !inChild(t, "HUGEPAGE_MEASURE_ONCE_CHILD") {
		return
	}
	inMeasuringProcess(t)
	var calls atomic.Int32
	measureTouch = func() (time.Duration, time.Duration, bool) {
		calls.Add(1)
		time.Sleep(10 * time.Millisecond) // so that the others ask meanwhile
		return 2 * time.Millisecond, time.Millisecond, true
	}
	SetPolicy(Auto)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if !Advising() {
				t.Error("Auto does not advise where huge pages measured cheaper")
			}
		})
	}
	wg.Wait()
	if Advising(); calls.Load() != 1 {
		t.Fatalf("measured %d times, want once", calls.Load())
	}
}

// inMeasuringProcess sets up a test's own process (inChild) so that Auto
// would measure there: no GODEBUG, and huge pages given on advice.
func inMeasuringProcess(t *testing.T) {
	t.Helper()
	os.Setenv("GODEBUG", "")
	thpEnabled = filepath.Join(t.TempDir(), "enabled")
	if err := os.WriteFile(thpEnabled, []byte("always [madvise] never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
