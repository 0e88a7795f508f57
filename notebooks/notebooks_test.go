// Package notebooks_test executes the course's notebooks (Jupyter, a
// Python kernel) against collsim built from this tree, and checks that
// none is committed with outputs.
package notebooks_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func notebooks(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.ipynb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no notebooks here (%v)", err)
	}
	return files
}

// TestNoOutputsCommitted: notebooks are kept without outputs or
// execution counts, so that diffs show what changed in the course, not in
// a run of it.
func TestNoOutputsCommitted(t *testing.T) {
	for _, f := range notebooks(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var nb struct {
			Cells []struct {
				Type    string            `json:"cell_type"`
				Outputs []json.RawMessage `json:"outputs"`
				Count   *int              `json:"execution_count"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(data, &nb); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, c := range nb.Cells {
			if len(c.Outputs) > 0 || c.Count != nil {
				t.Errorf("%s: cell %d has outputs; clear them before committing (jupyter nbconvert --clear-output --inplace %s)", f, i, f)
			}
		}
	}
}

// python returns the interpreter jupyter-nbconvert runs with (its kernel's
// by default), or "" with the reason the course cannot run here.
func python() (string, string) {
	nbconvert, err := exec.LookPath("jupyter-nbconvert")
	if err != nil {
		return "", "jupyter-nbconvert is not installed (Debian: apt-get install jupyter-nbconvert python3-ipykernel python3-matplotlib python3-pandas; .ci/run installs them)"
	}
	head, err := os.ReadFile(nbconvert)
	if err != nil {
		return "", err.Error()
	}
	line, _, _ := strings.Cut(string(head), "\n")
	py := strings.TrimSpace(strings.TrimPrefix(line, "#!"))
	if f := strings.Fields(py); len(f) > 0 {
		py = f[len(f)-1] // "/usr/bin/env python3" -> python3
	}
	if out, err := exec.Command(py, "-c", "import ipykernel, matplotlib, numpy, pandas").CombinedOutput(); err != nil {
		return "", "the notebooks' Python modules are missing (" + strings.TrimSpace(string(out)) + "); Debian: apt-get install python3-ipykernel python3-matplotlib python3-pandas"
	}
	return py, ""
}

// TestCourseRuns executes every notebook top to bottom, the solutions
// included (whose checks fail on a wrong or missing answer), two at a
// time, each within its timeout: any error or failed check fails the test.
func TestCourseRuns(t *testing.T) {
	if _, why := python(); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "collsim")
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goCmd, "build", "-o", bin, "../cmd/collsim").CombinedOutput(); err != nil {
		t.Fatalf("building collsim: %v\n%s", err, out)
	}
	files := notebooks(t)
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				start := time.Now()
				cmd := exec.Command("jupyter-nbconvert", "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=180",
					"--output-dir", dir, f)
				cmd.Env = append(os.Environ(), "COLLSIM="+bin, "PYDEVD_DISABLE_FILE_VALIDATION=1", "MPLBACKEND=Agg")
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := runWithin(cmd, 5*time.Minute)
				mu.Lock()
				if err != nil {
					t.Errorf("%s: %v\n%s", f, err, tail(out.String(), 3000))
				} else {
					t.Logf("%s: ran in %v", f, time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
}

func runWithin(cmd *exec.Cmd, limit time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return &timeoutError{limit}
	}
}

type timeoutError struct{ limit time.Duration }

func (e *timeoutError) Error() string { return "did not finish within " + e.limit.String() }

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
