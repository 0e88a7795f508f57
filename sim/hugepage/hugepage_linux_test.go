package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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

// adviseWhile sets whether tables ask for huge pages for the rest of t,
// whatever the machine's policy chose.
func adviseWhile(t *testing.T, on bool) {
	before := advising.Load()
	advising.Store(on)
	t.Cleanup(func() { advising.Store(before) })
}

// Auto finds free page reporting from sysfs: a balloon (device 0x0005)
// whose features string has bit 5 set; another device with that bit, a
// balloon without it, or nothing readable, is none.
func TestReportsFreePages(t *testing.T) {
	bits := func(set ...int) string {
		b := []byte(strings.Repeat("0", 64))
		for _, i := range set {
			b[i] = '1'
		}
		return string(b) + "\n"
	}
	for _, c := range []struct {
		name    string
		devices map[string][2]string // name: device ID, features
		want    bool
	}{
		{"none", nil, false},
		{"balloon reporting", map[string][2]string{"virtio0": {"0x0005\n", bits(1, 2, 5)}}, true},
		{"balloon without reporting", map[string][2]string{"virtio0": {"0x0005\n", bits(1, 2)}}, false},
		{"block device with bit 5", map[string][2]string{"virtio0": {"0x0002\n", bits(5)}}, false},
		{"balloon among others", map[string][2]string{"virtio0": {"0x0002\n", bits(5)}, "virtio3": {"0x0005\n", bits(5)}}, true},
		{"balloon without features", map[string][2]string{"virtio0": {"0x0005\n", ""}}, false},
	} {
		dir := t.TempDir()
		for name, d := range c.devices {
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, "device"), []byte(d[0]), 0o644); err != nil {
				t.Fatal(err)
			}
			if d[1] != "" {
				if err := os.WriteFile(filepath.Join(dir, name, "features"), []byte(d[1]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := reportsFreePages(dir); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if reportsFreePages(filepath.Join(t.TempDir(), "missing")) {
		t.Error("a missing directory reports free pages")
	}
}

// SetPolicy(On) makes a large table ask for huge pages and Off not;
// under Off, an arena's own mappings are marked to get none (VmFlags
// "nh"), for machines that give them unasked. (The advice is checked on
// fresh memory of the test's own: a table of Go's heap may lie on memory
// an earlier table advised, which keeps the advice.)
func TestPolicyDecidesTheAdvice(t *testing.T) {
	needArenaAdvice(t)
	adviseWhile(t, advising.Load())
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

// Auto asks for huge pages unless a balloon reports free pages (or
// GODEBUG turns them off); On and Off decide whatever Auto would.
func TestAutoFollowsTheMachine(t *testing.T) {
	adviseWhile(t, advising.Load())
	t.Setenv("GODEBUG", "")
	defer func(dir string) { virtioDevices = dir }(virtioDevices)
	for _, balloon := range []bool{false, true} {
		dir := t.TempDir()
		if balloon {
			if err := os.Mkdir(filepath.Join(dir, "virtio0"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"device": "0x0005\n", "features": "0110010000000000000000000000000010000000\n"} {
				if err := os.WriteFile(filepath.Join(dir, "virtio0", name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		virtioDevices = dir
		for p, want := range map[Policy]bool{Auto: !balloon, On: true, Off: false} {
			SetPolicy(p)
			if Advising() != want {
				t.Errorf("balloon %v, policy %d: advising %v, want %v", balloon, p, Advising(), want)
			}
		}
	}
	virtioDevices = t.TempDir()
	t.Setenv("GODEBUG", "madvdontneed=1,disablethp=1")
	if SetPolicy(Auto); Advising() {
		t.Error("Auto advises with GODEBUG disablethp=1")
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
