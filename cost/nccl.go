package cost

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim/lines"
)

// NCCLPoint is one row of nccl-tests output: the size in bytes and the
// out-of-place time in seconds.
type NCCLPoint struct {
	Bytes   int64
	Seconds float64
	BusBW   float64 // GB/s, as printed
	Line    int
}

// NCCLResult is a parsed nccl-tests output file (all_reduce_perf and its
// siblings).
type NCCLResult struct {
	Ranks  int // "#  Rank  N ..." lines in the header
	Points []NCCLPoint
	// Test is the benchmark its "# Collective test starting: NAME" line
	// names (all_reduce_perf, ...), "" without one; TestLine is that
	// line's number.
	Test     string
	TestLine int
	// Redop and Root are the first row's reduction ("sum", "none", ...)
	// and root (-1 for none; RootUnknown where the release has no root
	// column), and RowLine that row's line: what a log without its test
	// line still says of its collective.
	Redop   string
	Root    int
	RowLine int
}

// RootUnknown is NCCLResult.Root for a release without a root column.
const RootUnknown = math.MinInt

// Fits reports whether the log's rows can be times of collective c:
// nccl-tests' rooted collectives (broadcast, reduce, gather, scatter)
// print a root rank and the others -1; the reductions (allreduce,
// reduce, reduce_scatter) a reduction, the others none.
func (r *NCCLResult) Fits(c collectives.Collective) bool {
	if !slices.Contains([]string{"none", "sum", "prod", "max", "min", "avg", "mulsum"}, r.Redop) {
		return true // no row, or a release that prints no reduction there
	}
	reduces := c == collectives.Allreduce || c == collectives.Reduce || c == collectives.ReduceScatter
	rooted := c == collectives.Bcast || c == collectives.Reduce || c == collectives.Gather || c == collectives.Scatter
	if reduces != (r.Redop != "none") {
		return false
	}
	return r.Root == RootUnknown || rooted == (r.Root >= 0)
}

// ncclTests are the nccl-tests benchmarks of collectives collsim has.
var ncclTests = map[string]collectives.Collective{
	"all_reduce_perf": collectives.Allreduce, "all_gather_perf": collectives.Allgather,
	"broadcast_perf": collectives.Bcast, "reduce_perf": collectives.Reduce,
	"reduce_scatter_perf": collectives.ReduceScatter, "alltoall_perf": collectives.Alltoall,
	"gather_perf": collectives.Gather, "scatter_perf": collectives.Scatter,
}

// Collective is the collective the log's benchmark ran, and whether the
// log names one collsim has (sendrecv_perf and hypercube_perf are not
// collectives).
func (r *NCCLResult) Collective() (collectives.Collective, bool) {
	c, ok := ncclTests[r.Test]
	return c, ok
}

// Samples returns the points as timing samples, but for 0 bytes: NCCL
// returns at once from a call of no elements, which times no message (one
// such row set alpha to 20 ns where 2 us was measured: an audit).
func (r *NCCLResult) Samples() []Sample {
	points := slices.DeleteFunc(slices.Clone(r.Points), func(p NCCLPoint) bool { return p.Bytes == 0 })
	return samplesOf(points, func(p NCCLPoint) Sample { return Sample{Bytes: float64(p.Bytes), Seconds: p.Seconds} })
}

// ParseNCCLTests reads the text output of an nccl-tests benchmark
// (all_reduce_perf, all_gather_perf, ...): comment lines starting with
// '#', among them one "#  Rank  r ..." line per rank, then rows of
//
//	size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
//
// (out-of-place, then in-place; times in microseconds). The out-of-place
// time is read. Releases before 2.0, still common in the wild and in
// rccl-tests, have no root column and an error column (the largest error
// seen) for #wrong: the columns are found by the header's names. name is
// used in errors, which give the line.
func ParseNCCLTests(name string, r io.Reader) (*NCCLResult, error) {
	res := &NCCLResult{}
	sc := lines.New(r, name, 1<<20)
	line := 0
	header := false
	// timeCol is where the out-of-place time is (busbw 2 and the check 3
	// after it); checkCols where the checks are, out of place and in
	// place, as the header names them; maxError whether a check is an
	// error, not a count.
	timeCol, maxError := 5, false
	var checkCols []int
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "#") {
			f := strings.Fields(strings.TrimPrefix(text, "#"))
			switch {
			case len(f) == 4 && f[0] == "Collective" && f[1] == "test" && f[2] == "starting:":
				res.Test, res.TestLine = f[3], line
			case len(f) >= 2 && f[0] == "Rank":
				if len(res.Points) > 0 {
					// Two runs in one file were fitted as one of twice the
					// ranks (an audit).
					return nil, fmt.Errorf("%s:%d: a rank listed after data rows: two nccl-tests runs pasted together? Give one run's output", name, line)
				}
				res.Ranks++
			case len(f) >= 6 && f[0] == "size" && f[1] == "count":
				if header && len(res.Points) > 0 {
					return nil, fmt.Errorf("%s:%d: a second column header: two nccl-tests runs pasted together? Give one run's output", name, line)
				}
				header = true
				timeCol = slices.Index(f, "time")
				if timeCol < 0 || len(f) < timeCol+4 || f[timeCol+2] != "busbw" {
					return nil, fmt.Errorf("%s:%d: header %s: no time, algbw, busbw columns after size and count; is this nccl-tests output?", name, line, lines.Quote(text))
				}
				maxError = f[timeCol+3] == "error"
				// The checks where the header puts them: with per-iteration
				// timing (-I 1) nccl-tests puts i_min, i_max, i_p99 and
				// i_cv% after each, and the in-place check was read in
				// i_cv%'s column (a log refused as broken: an audit).
				checkCols = checkCols[:0]
				for i, name := range f {
					if name == f[timeCol+3] {
						checkCols = append(checkCols, i)
					}
				}
			}
			continue
		}
		if !header {
			return nil, fmt.Errorf("%s:%d: a data row before the column header (\"# size count type redop root time algbw busbw ...\"): is this nccl-tests output?", name, line)
		}
		f := strings.Fields(text)
		if len(f) < timeCol+4 {
			return nil, fmt.Errorf("%s:%d: %d columns; nccl-tests rows have %d (size, count, type, redop%s, then time, algbw, busbw, #wrong out of place and in place): is the file truncated?", name, line, len(f), 2*timeCol+8, map[bool]string{true: ", root", false: ""}[timeCol == 5])
		}
		size, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("%s:%d: size %s is not a byte count", name, line, lines.Quote(f[0]))
		}
		us, err := strconv.ParseFloat(f[timeCol], 64)
		if err != nil || !(us > 0) || math.IsInf(us, 0) {
			return nil, fmt.Errorf("%s:%d: time %s is not a positive number of microseconds", name, line, lines.Quote(f[timeCol]))
		}
		bus, err := strconv.ParseFloat(f[timeCol+2], 64)
		if err != nil || bus < 0 || math.IsNaN(bus) || math.IsInf(bus, 0) {
			return nil, fmt.Errorf("%s:%d: bus bandwidth %s is not a number of GB/s", name, line, lines.Quote(f[timeCol+2]))
		}
		// Both checks, out of place and in place where the row has one (the
		// in-place one was not read: an audit).
		for _, col := range checkCols {
			if col >= len(f) {
				continue
			}
			check := f[col]
			if maxError {
				// Rounding leaves errors of 1e-7 or so in float sums; the
				// releases' own checks flagged 1e-2 and more as wrong.
				if e, err := strconv.ParseFloat(check, 64); check != "N/A" && (err != nil || !(e < 1e-2)) {
					return nil, fmt.Errorf("%s:%d: nccl-tests found an error of %s at %d bytes: the run was broken, do not fit it", name, line, check, size)
				}
			} else if check != "0" && check != "N/A" {
				return nil, fmt.Errorf("%s:%d: nccl-tests counted %s wrong elements at %d bytes: the run was broken, do not fit it", name, line, check, size)
			}
		}
		if n := len(res.Points); n > 0 && size <= res.Points[n-1].Bytes {
			return nil, fmt.Errorf("%s:%d: size %d after %d: two nccl-tests runs pasted together? Give one run's output", name, line, size, res.Points[n-1].Bytes)
		}
		if res.Redop == "" {
			res.Redop, res.Root, res.RowLine = f[3], RootUnknown, line
			if timeCol == 5 {
				if root, err := strconv.Atoi(f[4]); err == nil {
					res.Root = root
				}
			}
		}
		res.Points = append(res.Points, NCCLPoint{Bytes: size, Seconds: us * 1e-6, BusBW: bus, Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.Points) == 0 {
		return nil, fmt.Errorf("%s: no data rows: is it nccl-tests output, and did the run finish?", name)
	}
	return res, nil
}

// CollectiveFit is alpha and beta fitted to the times of one algorithm of
// a collective at several sizes, with the standard errors carried over
// from the line fitted to the times.
type CollectiveFit struct {
	Model             Hockney
	AlphaErr, BetaErr float64
	MaxRelResidual    float64
	Samples           int
}

// FitCollective fits the alpha and beta of the Hockney model to measured
// times of algorithm a on ranks ranks (8-byte elements; sizes as
// collectives.Params.SizeBytes counts them, which is nccl-tests' size, and
// OSU's but where OSUCountsABlock), taking gamma as
// given (a single collective cannot tell moving a byte from reducing it).
// It needs an exact closed form for a at these ranks: the form is then
// linear in alpha, beta and gamma, t(n) = A alpha + B(n) beta + C(n) gamma,
// and with B and C proportional to n for sizes that divide evenly, a line
// t = a0 + a1 n fitted to the samples (weighted as FitHockney weighs) gives
// alpha = a0 / A and beta = (a1 - c gamma) / b, where b = B(n)/n and
// c = C(n)/n.
func FitCollective(a collectives.Algorithm, ranks int, gamma float64, samples []Sample) (CollectiveFit, error) {
	// Probe at a size that divides evenly into blocks and segments: the
	// form is then exact where the algorithm's is.
	params := collectives.Params{Ranks: ranks, Count: int64(ranks) * 65536}
	n := float64(params.SizeBytes(a.Collective))
	var coef, twice [3]float64
	for i, m := range []Hockney{{Alpha: 1}, {Beta: 1}, {Gamma: 1}} {
		pr, err := m.Predict(a, params)
		if err != nil {
			return CollectiveFit{}, fmt.Errorf("%s on %d ranks: %w", a.ID(), ranks, err)
		}
		if !pr.Exact {
			return CollectiveFit{}, fmt.Errorf("%s on %d ranks: its closed form is a bound here, not exact; fit an algorithm whose form is exact (ring, say)", a.ID(), ranks)
		}
		coef[i] = pr.Time
		double := params
		double.Count *= 2
		if pr, err = m.Predict(a, double); err != nil {
			return CollectiveFit{}, fmt.Errorf("%s on %d ranks: %w", a.ID(), ranks, err)
		}
		twice[i] = pr.Time
	}
	// The fit takes B and C proportional to n and A constant: a pipeline's
	// form is not (its segments add (p-2)s beta whatever n), and the line
	// through a chain's times gave beta 6% fast with no warning (an audit).
	if !near(twice[0], coef[0]) || !near(twice[1], 2*coef[1]) || !near(twice[2], 2*coef[2]) {
		return CollectiveFit{}, fmt.Errorf("%s on %d ranks: its closed form is not alpha times a count plus beta and gamma times the size (a pipeline's segments cost beyond the size), so a line through its times gives no alpha and beta; fit an unsegmented algorithm (ring, say)", a.ID(), ranks)
	}
	if coef[0] <= 0 || coef[1] <= 0 {
		return CollectiveFit{}, fmt.Errorf("%s on %d ranks: its time does not depend on both alpha and beta; nothing to fit", a.ID(), ranks)
	}
	line, err := FitHockney(samples)
	if line.Samples == 0 && err != nil {
		return CollectiveFit{}, err
	}
	b, c := coef[1]/n, coef[2]/n
	fit := CollectiveFit{
		Model:          Hockney{Alpha: line.Model.Alpha / coef[0], Beta: (line.Model.Beta - c*gamma) / b, Gamma: gamma},
		AlphaErr:       line.AlphaErr / coef[0],
		BetaErr:        line.BetaErr / b,
		MaxRelResidual: line.MaxRelResidual,
		Samples:        line.Samples,
	}
	switch {
	case err != nil && !errors.Is(err, ErrTooFewSamples):
		return fit, fmt.Errorf("the line through the times: %w", err)
	case err != nil:
		return fit, err
	case fit.Model.Beta <= 0:
		return fit, fmt.Errorf("beta comes out %g s/B, not positive: the given reduction rate (gamma %g s/B) already accounts for more than the measured growth with size; give the host's real reduction rate", fit.Model.Beta, gamma)
	}
	return fit, nil
}

// near reports whether a and b agree to a relative 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
