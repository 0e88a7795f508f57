package main

import (
	"encoding/json"
	"testing"
)

// The progress line goes to stderr only, and only after 2 s: a short run
// with --progress (or --quiet) prints the same JSON as without, and nothing
// on stderr. (The line itself is tested with a fake clock in cmdutil.)
func TestProgressLeavesOutputAlone(t *testing.T) {
	plain, _, code := collsim(t, "run", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"--progress", "--quiet", "-q"} {
		out, errs, code := collsim(t, "run", "--json", flag)
		if code != 0 || errs != "" {
			t.Fatalf("%s: exit %d, stderr %q", flag, code, errs)
		}
		if !json.Valid([]byte(out)) || mask(out) != mask(plain) {
			t.Errorf("%s changed the output:\n%s\nwant\n%s", flag, out, plain)
		}
	}
}
