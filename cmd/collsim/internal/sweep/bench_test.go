package sweep

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSweep runs a 1,000-point sweep of 64-rank runs (5 algorithms x
// 20 sizes x 10 seeds) on one worker per processor: compare -cpu 1,2 for
// how it scales with cores (README: Sweeps).
func BenchmarkSweep(b *testing.B) {
	s, err := Parse("bench.yaml", []byte(`
base: {ranks: 64, verify: "off"}
axes:
  algo: [ring, recursive_doubling, rabenseifner, ompi, mpich]
  size: 8..4MiB
replicas: 10
`))
	if err != nil {
		b.Fatal(err)
	}
	if s.Points() != 1000 {
		b.Fatalf("%d points", s.Points())
	}
	b.ReportAllocs()
	for b.Loop() {
		w := &writer{w: io.Discard, format: CSV, cols: s.Columns()}
		failed, err := s.Run(w, Plan{})
		if err != nil || failed > 0 {
			b.Fatal(err, failed)
		}
	}
}

// BenchmarkMerge merges 100 shards of 10,000 rows each (a million rows of
// a sweep's CSV, about 400 bytes a row) into one output.
func BenchmarkMerge(b *testing.B) {
	dir := b.TempDir()
	const shards, perShard = 100, 10_000
	total := shards * perShard
	header := "point,points,sweep," + strings.Repeat("column,", 38) + "error\n"
	tail := strings.Repeat("0.000123456789,", 27) + "allreduce,ring,fattree-1024,fat-tree k=32 n=2,flow,block,1,64,1048576,8,131072,"
	var names []string
	for s := range shards {
		name := filepath.Join(dir, fmt.Sprintf("part-%d.csv", s))
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteString(header)
		for p := s; p < total; p += shards {
			fmt.Fprintf(w, "%d,%d,0123456789abcdef,%s\n", p, total, tail)
		}
		w.Flush()
		f.Close()
		names = append(names, name)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := Merge(io.Discard, names); err != nil {
			b.Fatal(err)
		}
	}
}
