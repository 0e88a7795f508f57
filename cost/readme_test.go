package cost

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
)

// TestREADMEFormsList: the README's list of which closed forms are exact
// and how wide the others' bounds are is what TightnessOf measures: every
// algorithm in exactly one bullet, the bullet its form's class, and each
// bound's largest and median upper/lower ratio as measured (3 significant
// digits).
func TestREADMEFormsList(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skipf("the README is not beside the module's packages: %v", err)
	}
	text := string(raw)
	start := strings.Index(text, "## Closed forms and how well they match")
	end := strings.Index(text, "Where the bounds come from:")
	if start < 0 || end < start {
		t.Fatal("README: the closed-forms section or its \"Where the bounds come from:\" line is missing")
	}
	section := text[start:end]
	bullet := regexp.MustCompile(`(?m)^- \*\*([^*]+)\*\*`)
	entry := regexp.MustCompile("`([a-z_]+/[a-z_]+)`(?:\\s*\\(([^)]*)\\))?")
	marks := bullet.FindAllStringSubmatchIndex(section, -1)
	if len(marks) == 0 {
		t.Fatal("README: no bullets in the closed-forms list")
	}
	seen := map[string]string{}
	for i, m := range marks {
		class := section[m[2]:m[3]]
		stop := len(section)
		if i+1 < len(marks) {
			stop = marks[i+1][0]
		}
		for _, e := range entry.FindAllStringSubmatch(section[m[1]:stop], -1) {
			id, widths := e[1], strings.Join(strings.Fields(e[2]), " ")
			if prev, dup := seen[id]; dup {
				t.Errorf("README lists %s twice (%q and %q)", id, prev, class)
			}
			seen[id] = class
			c, name, _ := strings.Cut(id, "/")
			a, err := collectives.Lookup(collectives.Collective(c), name)
			if err != nil {
				t.Errorf("README lists %s: %v", id, err)
				continue
			}
			got := TightnessOf(a)
			if got.Class() != class {
				t.Errorf("README lists %s as %q; its form is %q: %s", id, class, got.Class(), got)
				continue
			}
			if class == "exact" {
				continue
			}
			want := fmt.Sprintf("%.3g, %.3g", got.Width, got.Median)
			if math.IsInf(got.Width, 1) {
				want = fmt.Sprintf("no lower bound on some, %.3g", got.Median)
			}
			if widths != want {
				t.Errorf("README gives %s's bounds as (%s); measured (%s)", id, widths, want)
			}
		}
	}
	for _, a := range collectives.All() {
		if _, ok := seen[a.ID()]; !ok {
			t.Errorf("README's closed-forms list leaves out %s (%s)", a.ID(), TightnessOf(a))
		}
	}
}
