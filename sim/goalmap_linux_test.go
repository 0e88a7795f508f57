package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mapped file cut short while it is parsed is an error that says so,
// not a crash: the pages past its new end fault.
func TestMappedFileCutShortIsAnError(t *testing.T) {
	text := bigGOAL(4 << 20)
	file := filepath.Join(t.TempDir(), "cut.goal")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap, ok := mapFile(f, int64(len(text)))
	if !ok {
		t.Fatal("the file was not mapped")
	}
	defer unmap()
	if err := os.Truncate(file, 1<<20); err != nil {
		t.Fatal(err)
	}
	g, err := parseMapped(&mappedInput{data: data, window: mappedWindow, release: releasePages}, file)
	if g != nil || err == nil || !strings.Contains(err.Error(), "the file changed while it was read") {
		t.Fatalf("got %v, %v; want the error of a file cut short", g, err)
	}
}
