package main

import (
	"slices"
	"strings"
	"testing"
)

// TestCompletion checks the values the shell is offered for the flags
// that name things (README: shell completion), against the lists the
// errors give as valid.
func TestCompletion(t *testing.T) {
	complete := func(args ...string) []string {
		out, stderr, code := collsim(t, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var vals []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, ":") {
				vals = append(vals, l)
			}
		}
		return vals
	}
	// The valid algorithms, as run's error for an unknown one lists them.
	_, stderr, _ := collsim(t, "run", "-c", "alltoall", "-a", "nosuch")
	_, list, _ := strings.Cut(stderr, "valid: ")
	list = strings.NewReplacer(" (or a library's choice: ", ", ", ")", "").Replace(strings.TrimSpace(strings.Split(list, "\n")[0]))
	want := strings.Split(list, ", ")
	if got := complete("run", "-c", "alltoall", "-a", ""); !slices.Equal(got, want) {
		t.Errorf("-a after -c alltoall: %v, want %v", got, want)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "-m", ""}, []string{"cori", "dragonfly-72", "fattree-1024", "gpu-cluster", "gpu-node-nvlink", "gpu-node-nvswitch", "gpu-node-pcie", "small", "xc40"}},
		{[]string{"sweep", "x.yaml", "--help"}, nil},
		{[]string{"run", "--network", ""}, []string{"analytic", "flow", "loggops"}},
		{[]string{"run", "--routing", ""}, []string{"minimal", "valiant", "ugal", "ecmp"}},
		{[]string{"tune", "-c", ""}, nil},
	} {
		got := complete(c.args...)
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
	if got := complete("tune", "-c", ""); !slices.Contains(got, "allreduce") || !slices.Contains(got, "alltoall") {
		t.Errorf("tune -c: %v", got)
	}
	if out, _, code := collsim(t, "completion", "bash"); code != 0 || !strings.Contains(out, "__start_collsim") {
		t.Errorf("completion bash: exit %d", code)
	}
}
