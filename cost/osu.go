package cost

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim/lines"
)

// OSUKind says what an OSU micro-benchmark file measures.
type OSUKind int

// The kinds of OSU output that ParseOSU reads.
const (
	OSULatency   OSUKind = iota // a time per message size: osu_latency, osu_allreduce, ...
	OSUBandwidth                // a bandwidth per message size: osu_bw, osu_bibw
)

// OSUPoint is one row of OSU output: a message size and its figure, in
// seconds (OSULatency) or bytes per second (OSUBandwidth).
type OSUPoint struct {
	Bytes int64
	Value float64
	Line  int // line of the file it came from
}

// OSUResult is a parsed OSU output file.
type OSUResult struct {
	Kind   OSUKind
	Column string // the header of the column read: "Latency (us)", "Avg Latency(us)", "Bandwidth (MB/s)"
	// Benchmark is the OSU program the title line names, without its
	// osu_ prefix: "latency", "bw", "bibw", or one of collsim's
	// collectives ("allreduce", "bcast", "alltoall", ...); "" for a file
	// without the title or a program not among those (Title says which).
	Benchmark string
	// Title is what the title line says between "OSU <library>" and
	// "Test" ("Allgatherv Latency", "Broadcast Latency"); "" if none.
	Title  string
	Points []OSUPoint
}

// osuTitles are the benchmarks OSU's titles name, as osuBenchmark keys
// them: "OSU MPI%s Broadcast Latency Test" is osu_bcast (older releases
// say Bcast), "All-to-All Personalized Exchange" osu_alltoall.
var osuTitles = map[string]string{
	"latency":                  "latency",
	"bandwidth":                "bw",
	"bi_directional bandwidth": "bibw",
	"allgather latency":        "allgather",
	"allreduce latency":        "allreduce",
	"all_to_all personalized exchange latency": "alltoall",
	"barrier latency":                          "barrier",
	"broadcast latency":                        "bcast",
	"bcast latency":                            "bcast",
	"gather latency":                           "gather",
	"reduce latency":                           "reduce",
	"reduce_scatter latency":                   "reduce_scatter",
	"scatter latency":                          "scatter",
}

// osuBenchmark reads a title line's text (after '#'): the benchmark it
// names (osuTitles) and its title, or ok false if the line is no title.
// A title is "OSU <library> <title> Test [version]", the library MPI,
// MPI-CUDA, NCCL and so on.
func osuBenchmark(text string) (benchmark, title string, ok bool) {
	rest, ok := strings.CutPrefix(text, "OSU ")
	if !ok {
		return "", "", false
	}
	_, rest, _ = strings.Cut(rest, " ") // the library
	title, _, ok = strings.Cut(rest, " Test")
	if !ok || title == "" {
		return "", "", false
	}
	return osuTitles[strings.ReplaceAll(strings.ToLower(title), "-", "_")], title, true
}

// OSUCountsABlock reports whether OSU's size for collective c is a
// rank's block, 1/ranks of the size collsim gives the call
// (collectives.Params.SizeBytes): osu_allgather, osu_gather and
// osu_scatter give what each rank sends or receives, osu_alltoall what
// goes to each peer (MPI's sendcount). Its allreduce, bcast, reduce and
// reduce_scatter give the whole vector, as collsim does.
func OSUCountsABlock(c collectives.Collective) bool {
	switch c {
	case collectives.Allgather, collectives.Alltoall, collectives.Gather, collectives.Scatter:
		return true
	}
	return false
}

// Samples returns a latency result's points as timing samples.
func (r *OSUResult) Samples() []Sample {
	return samplesOf(r.Points, func(p OSUPoint) Sample { return Sample{Bytes: float64(p.Bytes), Seconds: p.Value} })
}

// samplesOf converts a file's points to timing samples.
func samplesOf[P any](points []P, sample func(P) Sample) []Sample {
	out := make([]Sample, len(points))
	for i, p := range points {
		out[i] = sample(p)
	}
	return out
}

// ParseOSU reads the text output of an OSU micro-benchmark: comment lines
// starting with '#', among them the header that names the columns
// ("# Size  Latency (us)", "# Size  Bandwidth (MB/s)", "# Size  Avg
// Latency(us)  Min Latency(us) ..."), then one row per message size. The
// first figure after the size is read (the average where there are
// several); microseconds become seconds and MB/s (10^6 bytes per second,
// OSU's unit) bytes per second. name is used in errors, which give the
// line.
func ParseOSU(name string, r io.Reader) (*OSUResult, error) {
	var res *OSUResult
	benchmark, title := "", "" // what the title line names
	sc := lines.New(r, name, 1<<20)
	line := 0
	var scale float64
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "#") {
			if res == nil && title == "" {
				if b, t, ok := osuBenchmark(strings.TrimSpace(strings.TrimPrefix(text, "#"))); ok {
					benchmark, title = b, t
				}
			}
			if res != nil || !strings.Contains(text, "Size") {
				continue
			}
			h := strings.TrimSpace(strings.TrimPrefix(text, "#"))
			h = strings.TrimSpace(strings.TrimPrefix(h, "Size"))
			switch {
			case strings.Contains(h, "Latency") && strings.Contains(h, "(us)"):
				res, scale = &OSUResult{Kind: OSULatency}, 1e-6
			case strings.Contains(h, "Bandwidth") && strings.Contains(h, "(MB/s)"):
				res, scale = &OSUResult{Kind: OSUBandwidth}, 1e6
			default:
				return nil, fmt.Errorf("%s:%d: header %s names neither a latency in us nor a bandwidth in MB/s; give the output of osu_latency, osu_bw or a collective benchmark", name, line, lines.Quote(text))
			}
			res.Column, res.Benchmark, res.Title = firstColumn(h), benchmark, title
			continue
		}
		if res == nil {
			return nil, fmt.Errorf("%s:%d: a data row before the OSU header line (\"# Size  Latency (us)\" or \"# Size  Bandwidth (MB/s)\"); is this an OSU micro-benchmark output?", name, line)
		}
		f := strings.Fields(text)
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: %s: want a message size and a figure", name, line, lines.Quote(text))
		}
		size, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("%s:%d: message size %s is not a non-negative integer", name, line, lines.Quote(f[0]))
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil || !(v > 0) || v > 1e300 {
			return nil, fmt.Errorf("%s:%d: figure %s is not a positive number", name, line, lines.Quote(f[1]))
		}
		if n := len(res.Points); n > 0 && size <= res.Points[n-1].Bytes {
			return nil, fmt.Errorf("%s:%d: size %d after %d: OSU rows grow in size; is the file two runs pasted together?", name, line, size, res.Points[n-1].Bytes)
		}
		res.Points = append(res.Points, OSUPoint{Bytes: size, Value: v * scale, Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("%s: no OSU header line (\"# Size  Latency (us)\" or \"# Size  Bandwidth (MB/s)\"); is this an OSU micro-benchmark output?", name)
	}
	if len(res.Points) == 0 {
		return nil, fmt.Errorf("%s:%d: the file ends before its first measurement (truncated?)", name, line)
	}
	return res, nil
}

// firstColumn returns the first column title of an OSU header after Size:
// titles are separated by runs of two or more spaces.
func firstColumn(h string) string {
	if i := strings.Index(h, "  "); i >= 0 {
		return h[:i]
	}
	return h
}
