package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlot draws a hand-written results table and checks what the picture
// says: every series in the legend once, a panel per facet, axis labels
// with units, and the notes on failed rows and rows averaged together.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "r.csv")
	os.WriteFile(table, []byte(`machine,algorithm,size_bytes,time_s,seed
small,ring,1024,0.001,1
small,ring,2048,0.002,1
small,tree,1024,0.0015,1
small,tree,2048,,1
big,ring,1024,0.003,1
big,ring,1024,0.005,2
big,tree,2048,0.004,1
`), 0o644)
	svg := filepath.Join(dir, "p.svg")
	out, stderr, code := collsim(t, "plot", table, "--x", "size_bytes", "--y", "time_s", "--series", "algorithm", "--facet", "machine", "--logx", "-o", svg)
	if code != 0 || strings.TrimSpace(out) != svg {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "1 rows without time_s (failed points) left out") || !strings.Contains(stderr, "the rows differ in: seed") {
		t.Errorf("notes: %s", stderr)
	}
	data, _ := os.ReadFile(svg)
	pic := string(data)
	for _, want := range []string{">machine small<", ">machine big<", ">size (bytes)<", ">time (s)<", ">1KiB<", ">2KiB<"} {
		if strings.Count(pic, want) < 1 {
			t.Errorf("the picture has no %q", want)
		}
	}
	for _, name := range []string{">ring<", ">tree<"} { // in the legend, once for both panels
		if n := strings.Count(pic, name); n != 1 {
			t.Errorf("%s is written %d times, want once (one legend for the figure)", name, n)
		}
	}
	// A --where filter is in each panel's title (nothing in the plot said
	// taper=2: a new user's trial).
	where := filepath.Join(dir, "w.svg")
	if _, stderr, code := collsim(t, "plot", table, "--x", "size_bytes", "--y", "time_s", "--facet", "machine", "--where", "algorithm=ring", "-o", where); code != 0 {
		t.Fatalf("--where: exit %d: %s", code, stderr)
	}
	if data, _ := os.ReadFile(where); !strings.Contains(string(data), ">machine small, where algorithm=ring<") {
		t.Errorf("the --where plot's panels do not say the filter")
	}
	png := filepath.Join(dir, "p.png")
	if _, stderr, code := collsim(t, "plot", table, "--x", "size_bytes", "--y", "time_s", "-o", png); code != 0 {
		t.Fatalf("png: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(png); len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Error("the .png is not a PNG")
	}
	// Axes with units, as a sweep writes them; rows a log axis cannot
	// hold, and infinities, are counted, not drawn.
	units := filepath.Join(dir, "u.csv")
	os.WriteFile(units, []byte("link.bandwidth,time_s\n100Gbit/s,0.002\n400Gbit/s,0.001\n0,0.004\n1Gbit/s,Inf\n"), 0o644)
	_, stderr, code = collsim(t, "plot", units, "--x", "link.bandwidth", "--y", "time_s", "--logx", "-o", filepath.Join(dir, "u.svg"))
	if code != 0 || !strings.Contains(stderr, "1 rows whose link.bandwidth or time_s is not a finite number left out") || !strings.Contains(stderr, "1 rows with a value of 0 or less on a log axis left out") {
		t.Errorf("units: exit %d: %s", code, stderr)
	}
	// NaN or Inf in the first row is a point left out like any other (it
	// refused the whole table as not numbers; a new user's trial).
	first := filepath.Join(dir, "f.csv")
	os.WriteFile(first, []byte("size,time_s\n8,NaN\n16,2e-6\n32,3e-6\n"), 0o644)
	if _, stderr, code := collsim(t, "plot", first, "--x", "size", "--y", "time_s", "-o", filepath.Join(dir, "f.svg")); code != 0 || !strings.Contains(stderr, "1 rows whose size or time_s is not a finite number left out") {
		t.Errorf("NaN in the first row: exit %d: %s", code, stderr)
	}
	// run --json's output, a JSON document, read as CSV said "bare \" in
	// non-quoted-field"; it is named for what it is.
	doc := filepath.Join(dir, "r.json")
	os.WriteFile(doc, []byte("[\n  {\"ranks\": 4, \"time_s\": 1e-6}\n]\n"), 0o644)
	if _, stderr, code := collsim(t, "plot", doc, "--x", "ranks", "--y", "time_s", "-o", filepath.Join(dir, "r.svg")); code == 0 || !strings.Contains(stderr, "JSON, not CSV (run --json's output?)") {
		t.Errorf("a JSON document: exit %d: %s", code, stderr)
	}
	// JSON Lines whose later objects have more keys: the earlier rows
	// have no value there (they used to index past their end and panic).
	jl := filepath.Join(dir, "k.jsonl")
	os.WriteFile(jl, []byte("{\"a\":1,\"b\":2}\n{\"a\":2,\"b\":3,\"c\":4}\n{\"a\":3,\"c\":5}\n"), 0o644)
	if _, stderr, code := collsim(t, "plot", jl, "--x", "a", "--y", "c", "-o", filepath.Join(dir, "k.svg")); code != 0 || !strings.Contains(stderr, "1 rows without c (failed points) left out") {
		t.Errorf("keys added later: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--x", "sizes"}, "--x sizes: no such column; columns: machine, algorithm, size_bytes, time_s, seed"},
		{[]string{"--x", "machine"}, "r.csv:2: machine=\"small\", time_s=\"0.001\": --x and --y need columns of numbers"},
		{[]string{"--x", "size_bytes", "-o", filepath.Join(dir, "p.gif")}, "give a .png or .svg file"},
	} {
		if _, stderr, code := collsim(t, append([]string{"plot", table}, c.args...)...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q: %s", c.args, code, c.want, stderr)
		}
	}
}

// TestPlotRowsApartOnlyInY: rows that share an x and differ in nothing but
// their y are averaged with a note that says so (it read "the rows differ
// in:  (name one with --series...)", naming nothing; a new user's trial),
// and values spanning more than a float64 holds are refused, not a hang.
func TestPlotRowsApartOnlyInY(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "d.csv")
	os.WriteFile(table, []byte("x,y\n1,1\n1,2\n2,3\n"), 0o644)
	_, stderr, code := collsim(t, "plot", table, "--x", "x", "--y", "y", "-o", filepath.Join(dir, "d.svg"))
	if code != 0 || !strings.Contains(stderr, "with nothing but their y apart (replicas, or the same point run twice)") || strings.Contains(stderr, "differ in:") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	wide := filepath.Join(dir, "w.csv")
	os.WriteFile(wide, []byte("x,y\n1,1\n2,1e308\n3,-1e308\n"), 0o644)
	if _, stderr, code := collsim(t, "plot", wide, "--x", "x", "--y", "y", "-o", filepath.Join(dir, "w.png")); code != 1 || !strings.Contains(stderr, "a span wider than a float64 holds") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
