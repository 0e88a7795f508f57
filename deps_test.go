package collsim_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDAG enforces the architecture's one-way arrows
// (DESIGN.md): cmd -> {workloads, cost} -> collectives -> sim <- network
// -> topology. Each package may import only the collsim packages listed.
func TestDependencyDAG(t *testing.T) {
	const mod = "github.com/collsim/collsim/"
	allowed := map[string][]string{
		"sim":                 {},
		"sim/realrun":         {"sim"},
		"topology":            {},
		"network":             {"sim", "topology"},
		"network/networktest": {"sim", "topology"},
		"collectives":         {"sim"},
		"cost":                {"collectives", "sim"},
		"configs":             {"network", "sim", "topology"},
	}
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			name, ours := strings.CutPrefix(dep, mod)
			if !ours || name == pkg {
				continue
			}
			found := false
			for _, a := range ok {
				found = found || a == name
			}
			if !found {
				t.Errorf("%s imports %s, which the architecture forbids (allowed: %v)", pkg, name, ok)
			}
		}
	}
}
