package cost

import (
	"strings"
	"testing"
)

const osuLatency = `# OSU MPI Latency Test v7.3
# Datatype: MPI_CHAR.
# Size       Latency (us)
1                       1.50
2                       1.50
4                       1.51
1048576               101.50
`

const osuBW = `# OSU MPI Bandwidth Test v7.3
# Size      Bandwidth (MB/s)
1                       2.53
4194304             12100.37
`

const osuAllreduceFull = `
# OSU MPI Allreduce Latency Test v7.3
# Datatype: MPI_INT.
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
4                       3.12              2.98              3.30        1000
8                       3.20              3.01              3.41        1000
`

func TestParseOSU(t *testing.T) {
	lat, err := ParseOSU("lat.txt", strings.NewReader(osuLatency))
	if err != nil {
		t.Fatal(err)
	}
	if lat.Kind != OSULatency || lat.Column != "Latency (us)" || len(lat.Points) != 4 {
		t.Fatalf("got %+v", lat)
	}
	if p := lat.Points[3]; p.Bytes != 1<<20 || relErr(p.Value, 101.5e-6) > 1e-12 || p.Line != 7 {
		t.Fatalf("last point %+v, want 1 MiB in 101.5 µs on line 7", p)
	}
	// The points fit alpha = 1.5 µs, beta = 100 µs per MiB.
	fit, err := FitHockney(lat.Samples())
	if err != nil {
		t.Fatal(err)
	}
	if relErr(fit.Model.Beta, 100e-6/(1<<20)) > 0.01 || relErr(fit.Model.Alpha, 1.5e-6) > 0.01 {
		t.Fatalf("fit %+v", fit.Model)
	}

	bw, err := ParseOSU("bw.txt", strings.NewReader(osuBW))
	if err != nil {
		t.Fatal(err)
	}
	if bw.Kind != OSUBandwidth || relErr(bw.Points[1].Value, 12100.37e6) > 1e-12 {
		t.Fatalf("got %+v", bw)
	}

	ar, err := ParseOSU("ar.txt", strings.NewReader(osuAllreduceFull))
	if err != nil {
		t.Fatal(err)
	}
	if ar.Column != "Avg Latency(us)" || relErr(ar.Points[1].Value, 3.2e-6) > 1e-12 {
		t.Fatalf("read %q %+v, want the average column", ar.Column, ar.Points)
	}
	// The title names the benchmark.
	if ar.Benchmark != "allreduce" || lat.Benchmark != "latency" || bw.Benchmark != "bw" {
		t.Errorf("benchmarks %q, %q, %q; want allreduce, latency and bw", ar.Benchmark, lat.Benchmark, bw.Benchmark)
	}
}

// The titles of OSU's programs as they print them (OMB 5-7: the library
// after "OSU", bcast's "Broadcast", alltoall's "All-to-All Personalized
// Exchange"), each read as the program it is; a program calibrate cannot
// fit keeps its title and no benchmark.
func TestOSUTitles(t *testing.T) {
	for _, c := range []struct{ title, benchmark, name string }{
		{"OSU MPI Latency Test v7.3", "latency", "Latency"},
		{"OSU MPI-CUDA Bandwidth Test v5.6.3", "bw", "Bandwidth"},
		{"OSU MPI Bi-Directional Bandwidth Test v7.3", "bibw", "Bi-Directional Bandwidth"},
		{"OSU MPI Broadcast Latency Test v7.3", "bcast", "Broadcast Latency"},
		{"OSU MPI Bcast Latency Test", "bcast", "Bcast Latency"},
		{"OSU MPI All-to-All Personalized Exchange Latency Test v5.6.2", "alltoall", "All-to-All Personalized Exchange Latency"},
		{"OSU MPI Allgather Latency Test v7.1", "allgather", "Allgather Latency"},
		{"OSU MPI Reduce_scatter Latency Test v7.3", "reduce_scatter", "Reduce_scatter Latency"},
		{"OSU MPI Reduce-Scatter Latency Test v7.3", "reduce_scatter", "Reduce-Scatter Latency"},
		{"OSU NCCL Allreduce Latency Test v7.3", "allreduce", "Allreduce Latency"},
		{"OSU MPI Gather Latency Test v7.3", "gather", "Gather Latency"},
		{"OSU MPI Scatter Latency Test v7.3", "scatter", "Scatter Latency"},
		{"OSU MPI Reduce Latency Test v7.3", "reduce", "Reduce Latency"},
		{"OSU MPI Barrier Latency Test v7.3", "barrier", "Barrier Latency"},
		{"OSU MPI Allgatherv Latency Test v7.3", "", "Allgatherv Latency"},
		{"OSU MPI Non-blocking Allreduce Latency Test v7.3", "", "Non-blocking Allreduce Latency"},
		{"OSU MPI Reduce_scatter_block Latency Test v7.3", "", "Reduce_scatter_block Latency"},
		{"OSU MPI Multiple Bandwidth / Message Rate Test v7.3", "", "Multiple Bandwidth / Message Rate"},
	} {
		r, err := ParseOSU("t.txt", strings.NewReader("# "+c.title+"\n# Size  Avg Latency(us)\n8  2.5\n"))
		if err != nil {
			t.Errorf("%q: %v", c.title, err)
		} else if r.Benchmark != c.benchmark || r.Title != c.name {
			t.Errorf("%q: read as %q, title %q; want %q, %q", c.title, r.Benchmark, r.Title, c.benchmark, c.name)
		}
	}
}

func TestParseOSUBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "bad.txt: no OSU header"},
		{"truncated", "# OSU MPI Latency Test v7.3\n# Size       Latency (us)\n", "bad.txt:2: the file ends before its first measurement"},
		{"not osu", "hello world\n", "bad.txt:1: a data row before the OSU header"},
		{"bad number", "# Size  Latency (us)\n1  1.5\n2  fast\n", "bad.txt:3: figure \"fast\""},
		{"bad size", "# Size  Latency (us)\n-1  1.5\n", "bad.txt:2: message size \"-1\""},
		{"one column", "# Size  Latency (us)\n1\n", "bad.txt:2:"},
		{"pasted runs", "# Size  Latency (us)\n1  1.5\n2  1.5\n1  1.4\n", "bad.txt:4: size 1 after 2"},
		{"unknown unit", "# Size  Latency (ms)\n1  1.5\n", "bad.txt:1: header"},
		{"zero", "# Size  Bandwidth (MB/s)\n1  0\n", "bad.txt:2: figure \"0\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOSU("bad.txt", strings.NewReader(tc.text))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to start %q", err, tc.want)
			}
		})
	}
}

// ParseOSU never panics, and what it accepts is well formed.
func FuzzParseOSU(f *testing.F) {
	for _, s := range []string{osuLatency, osuBW, osuAllreduceFull, "# Size Latency (us)\n0 1e308\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		res, err := ParseOSU("fuzz", strings.NewReader(text))
		if err != nil {
			return
		}
		if len(res.Points) == 0 {
			t.Fatal("accepted a file without points")
		}
		for i, p := range res.Points {
			if !(p.Value > 0) || p.Bytes < 0 || (i > 0 && p.Bytes <= res.Points[i-1].Bytes) {
				t.Fatalf("accepted bad point %+v", p)
			}
		}
	})
}
