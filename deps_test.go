package collsim_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencyDAG enforces the architecture's one-way arrows
// (DESIGN.md): cmd -> collsim (root) -> {workloads, cost} -> collectives
// -> sim <- network -> topology. Each package may import only the collsim packages listed,
// and the leaf utilities, which import none: sim/lines (line readers of
// input files), sim/workers (goroutines whose panics are not lost) and
// sim/hugepage (large tables in huge pages).
func TestDependencyDAG(t *testing.T) {
	const mod = "github.com/collsim/collsim/"
	leaves := []string{"sim/lines", "sim/workers", "sim/hugepage"}
	allowed := map[string][]string{
		"sim/lines":           {},
		"sim/workers":         {},
		"sim/hugepage":        {},
		"sim":                 {},
		"sim/realrun":         {"sim"},
		"topology":            {},
		"network":             {"sim", "topology"},
		"network/networktest": {"sim", "topology"},
		"collectives":         {"sim"},
		"cost":                {"collectives", "sim"},
		"configs":             {"network", "sim", "topology", "collectives", "workloads", "workloads/dnn", "workloads/fft", "workloads/taskbench"},
		"workloads":           {"collectives", "sim"},
		"workloads/dnn":       {"collectives", "sim", "workloads"},
		"workloads/fft":       {"collectives", "sim", "workloads"},
		"workloads/taskbench": {"collectives", "sim", "workloads"},
		"workloads/redist":    {"collectives", "sim", "workloads"},
		"workloads/farm":      {"sim"},
		"workloads/tiles":     {"collectives", "sim", "workloads"},
		// The root package, the public API for one experiment, assembles
		// the others; only cmd imports it.
		"": {"collectives", "configs", "cost", "network", "sim", "topology", "workloads", "workloads/dnn", "workloads/fft", "workloads/taskbench", "workloads/redist", "workloads/farm", "workloads/tiles"},
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
			if !slices.Contains(leaves, pkg) { // the leaves import nothing of collsim's
				found = found || slices.Contains(leaves, name)
			}
			if !found {
				t.Errorf("%s imports %s, which the architecture forbids (allowed: %v)", pkg, name, ok)
			}
		}
	}
}
