package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --plot's directory is checked before the measurement but made only
// with the plots: checking made it, and a run that failed or was stopped
// left it empty (a new user's trial). A path under a file is refused.
func TestCanMakeDirMakesNothing(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	if err := canMakeDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "a")); !os.IsNotExist(err) {
		t.Errorf("checking made %s: %v", filepath.Join(base, "a"), err)
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("checking left %v", entries)
	}
	file := filepath.Join(base, "f")
	os.WriteFile(file, nil, 0o644)
	if err := canMakeDir(filepath.Join(file, "x")); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("under a file: %v", err)
	}
}
