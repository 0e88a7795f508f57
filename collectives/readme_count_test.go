package collectives

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestREADMEAlgorithmCount: the README's count of algorithms ("N in this
// release") is the registry's.
func TestREADMEAlgorithmCount(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skipf("README not found beside the module: %v", err)
	}
	m := regexp.MustCompile(`(\d+) in this release`).FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README does not say how many algorithms there are ("N in this release")`)
	}
	if n, _ := strconv.Atoi(string(m[1])); n != len(All()) {
		t.Errorf("README counts %d algorithms, the registry has %d", n, len(All()))
	}
}
