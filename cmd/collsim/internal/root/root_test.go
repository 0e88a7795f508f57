package root

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/sim/hugepage"
	"github.com/collsim/collsim/sim/workers"
)

// A panic, in the command's goroutine or in a worker, ends collsim with one
// line naming a report file that holds the stack, and exit status 70; the
// Go runtime alone would print a goroutine dump and exit 2, the usage
// status.
func TestPanicBecomesAnInternalError(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, tc := range []struct {
		name  string
		boom  func()
		frame string // a function the report's stack must show
	}{
		{"direct", func() { panic("direct failure") }, "TestPanicBecomesAnInternalError"},
		{"worker", func() {
			workers.Each(3, func(i int) {
				if i == 1 {
					panic("worker failure")
				}
			})
		}, "TestPanicBecomesAnInternalError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd, stop := New(&cmdutil.IO{Out: &stdout, Err: &stderr})
			stopped := false
			cmd.AddCommand(&cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error { tc.boom(); return nil }})
			code := execute(cmd, func() { stop(); stopped = true }, []string{"boom"}, &stderr)
			if code != 70 {
				t.Errorf("exit %d, want 70", code)
			}
			if !stopped {
				t.Error("the root's stop (which ends a CPU profile) was not called")
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			want := regexp.MustCompile(`^collsim: internal error, please report it with (\S+): ` + tc.name + ` failure$`)
			m := want.FindStringSubmatch(lines[0])
			if len(lines) != 1 || m == nil {
				t.Fatalf("stderr %q: want one line matching %s", stderr.String(), want)
			}
			report, err := os.ReadFile(m[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"collsim boom", "panic: " + tc.name + " failure", tc.frame} {
				if !strings.Contains(string(report), s) {
					t.Errorf("report %s lacks %q:\n%s", m[1], s, report)
				}
			}
		})
	}
}

// --huge-pages decides the policy before the command runs: on and off
// outright, whatever the machine.
func TestHugePagesFlagSetsThePolicy(t *testing.T) {
	defer hugepage.SetPolicy(hugepage.Auto)
	for _, c := range []struct {
		value string
		want  bool
	}{{"on", true}, {"off", false}, {"on", true}} {
		var stdout, stderr bytes.Buffer
		cmd, stop := New(&cmdutil.IO{Out: &stdout, Err: &stderr})
		var during bool
		cmd.AddCommand(&cobra.Command{Use: "look", RunE: func(*cobra.Command, []string) error { during = hugepage.Advising(); return nil }})
		if code := execute(cmd, stop, []string{"--huge-pages", c.value, "look"}, &stderr); code != 0 {
			t.Fatalf("--huge-pages %s: exit %d: %s", c.value, code, stderr.String())
		}
		if during != c.want {
			t.Errorf("--huge-pages %s: tables ask for huge pages: %v", c.value, during)
		}
	}
}
