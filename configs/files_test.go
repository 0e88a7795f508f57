package configs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file of exactly the limit is read whole; one byte more is refused with
// the path and the limit named; /dev/zero, which never ends, is refused
// after the limit (in well under a second for 1 MiB).
func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact")
	over := filepath.Join(dir, "over")
	os.WriteFile(exact, []byte(strings.Repeat("x", 1000)), 0o644)
	os.WriteFile(over, []byte(strings.Repeat("x", 1001)), 0o644)
	if b, err := ReadFile(exact, 1000, "a test file"); err != nil || len(b) != 1000 {
		t.Errorf("a file of exactly the limit: %d bytes, %v", len(b), err)
	}
	_, err := ReadFile(over, 1000, "a test file")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), over+": file too large: more than 1000B, too large for a test file") {
		t.Errorf("a file past the limit: %v", err)
	}
	start := time.Now()
	if _, err := ReadFile("/dev/zero", MaxConfigBytes, "a machine config"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 1MiB") {
		t.Errorf("/dev/zero: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("/dev/zero took %v: not bounded", d)
	}
}
