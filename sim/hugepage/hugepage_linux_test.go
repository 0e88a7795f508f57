package hugepage

import (
	"bufio"
	"fmt"
	"os"
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
	if thpOff {
		t.Skip("GODEBUG has disablethp=1")
	}
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
