package cost

import (
	"fmt"
	"io"
	"strconv"
	"strings"

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
	// Benchmark is what the title line names between "OSU MPI" and
	// "Latency Test", lower case with '_' for '-' ("allreduce", "bcast");
	// "" for a point-to-point test or a file without the title.
	Benchmark string
	Points    []OSUPoint
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
	title := "" // the benchmark the title line names
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
			if res == nil {
				if t, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(text, "#")), "OSU MPI "); ok {
					if b, _, ok := strings.Cut(t, " Latency Test"); ok && !strings.Contains(b, " ") {
						title = strings.ReplaceAll(strings.ToLower(b), "-", "_")
					}
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
			res.Column, res.Benchmark = firstColumn(h), title
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
