package cost

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Sample is one timing measurement: a message of Bytes bytes took Seconds
// (one way, as osu_latency reports it).
type Sample struct {
	Bytes   float64
	Seconds float64
}

// HockneyFit is a least-squares fit of t(n) = alpha + beta*n with the
// standard error of each parameter, so that a caller can see how far to
// trust it.
type HockneyFit struct {
	Model             Hockney // Gamma is left zero: point-to-point data says nothing of it
	AlphaErr, BetaErr float64 // standard errors, seconds and seconds per byte
	MaxRelResidual    float64 // worst |fit-measured|/measured over the samples
	Samples           int
	// AlphaSizes, from FitHockneyRobust, is how many sizes alpha is the
	// lower median of; with one, AlphaErr is 0 for want of a spread, not
	// because alpha is exact.
	AlphaSizes int
}

// ErrTooFewSamples reports measurements that cannot determine a fit.
var ErrTooFewSamples = errors.New("too few distinct measurements to fit")

// FitHockney fits alpha and beta to samples by weighted least squares.
// Each sample is weighted by 1/t^2, which minimises relative rather than
// absolute residuals: timings span decades (a microsecond for 8 bytes, a
// millisecond for 8 MiB), and unweighted least squares would let the largest
// messages decide alpha too. It needs at least two distinct sizes; with
// exactly two the fit is exact and its errors are unknown (NaN).
func FitHockney(samples []Sample) (HockneyFit, error) {
	xs := make([]float64, 0, len(samples))
	ys := make([]float64, 0, len(samples))
	ws := make([]float64, 0, len(samples))
	for i, s := range samples {
		if !(s.Seconds > 0) || s.Bytes < 0 || math.IsInf(s.Seconds, 0) || math.IsNaN(s.Bytes) {
			return HockneyFit{}, fmt.Errorf("sample %d (%g bytes, %g s): times must be positive and sizes non-negative", i+1, s.Bytes, s.Seconds)
		}
		xs, ys, ws = append(xs, s.Bytes), append(ys, s.Seconds), append(ws, 1/(s.Seconds*s.Seconds))
	}
	if distinct(xs) < 2 {
		return HockneyFit{}, fmt.Errorf("%w: %d samples of %d distinct sizes; measure at least two message sizes, far apart (say 8 B and 1 MiB)", ErrTooFewSamples, len(samples), distinct(xs))
	}
	alpha, beta := stat.LinearRegression(xs, ys, ws, false)
	fit := HockneyFit{Model: Hockney{Alpha: alpha, Beta: beta}, Samples: len(samples)}

	// Standard errors of weighted least squares.
	var sw, swx, ssr float64
	for i, x := range xs {
		sw += ws[i]
		swx += ws[i] * x
		r := ys[i] - (alpha + beta*x)
		ssr += ws[i] * r * r
		fit.MaxRelResidual = max(fit.MaxRelResidual, math.Abs(r)/ys[i])
	}
	mean := swx / sw
	var sxx float64
	for i, x := range xs {
		sxx += ws[i] * (x - mean) * (x - mean)
	}
	fit.AlphaErr, fit.BetaErr = math.NaN(), math.NaN()
	if dof := len(xs) - 2; dof > 0 {
		s2 := ssr / float64(dof)
		fit.BetaErr = math.Sqrt(s2 / sxx)
		fit.AlphaErr = math.Sqrt(s2 * (1/sw + mean*mean/sxx))
	}
	if beta <= 0 {
		return fit, fmt.Errorf("the fitted time per byte is %g s, not positive: the measurements do not grow with size; measure larger messages (up to MiB) or check the file", beta)
	}
	if alpha < 0 {
		return fit, fmt.Errorf("the fitted latency is %g s, negative: small messages are faster than a straight line through the large ones allows (often a protocol switch); fit a narrower size range", alpha)
	}
	return fit, nil
}

// EagerFit is a fit of point-to-point times with the eager limit they show.
type EagerFit struct {
	HockneyFit
	// EagerLimit is the largest message, in bytes, sent without a
	// handshake: +Inf where the times show no jump (every message priced
	// by the line alone).
	EagerLimit float64
}

// jumpVisible is how far a line through every size must miss one of
// them before FitHockneyEager looks for a jump: timing precision, not a
// protocol, explains less (three sizes on a line rounded to the printed
// digits read as a jump otherwise).
const jumpVisible = 0.01

// FitHockneyEager fits the time collsim's MPI send semantics give one
// message of n bytes on a machine of latency alpha, time per byte beta and
// eager limit E: alpha + beta n up to E, and above it handshake more
// latencies first (the rendezvous request and its reply: 2 on collsim's
// networks), alpha (1 + handshake) + beta n. A line through every size, as
// FitHockney draws, would count the handshake in alpha and beta, and a
// machine written from it would charge it twice above E. E is taken among
// the measured sizes (the largest below the jump: sizes between two
// measured ones are not told apart), weighted by 1/t^2 as FitHockney
// weighs them, where the line misses some size by more than 1% and the
// jump halves its residual (timing noise alone seldom does; a jump of 2
// alpha does); else +Inf. At least two sizes must lie at or below E. The
// standard errors are those of the chosen model.
func FitHockneyEager(samples []Sample, handshake float64) (EagerFit, error) {
	line, err := FitHockney(samples)
	if err != nil {
		return EagerFit{HockneyFit: line, EagerLimit: math.Inf(1)}, err
	}
	best := EagerFit{HockneyFit: line, EagerLimit: math.Inf(1)}
	if line.MaxRelResidual <= jumpVisible {
		return best, nil // the line holds every size: no jump to find
	}
	bestSSR := weightedSSR(samples, line.Model.Alpha, line.Model.Beta, handshake, math.Inf(1)) / 2
	var sizes []float64
	for _, x := range samples {
		sizes = append(sizes, x.Bytes)
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	// E below the second size leaves one eager size: alpha and the jump
	// are then the same unknown; E at the largest size is no jump at all.
	for i := 1; i+1 < len(sizes); i++ {
		e := sizes[i]
		fit, ok := fitWithJump(samples, handshake, e)
		if !ok || fit.Model.Alpha < 0 || fit.Model.Beta <= 0 {
			continue
		}
		if ssr := weightedSSR(samples, fit.Model.Alpha, fit.Model.Beta, handshake, e); ssr < bestSSR {
			best, bestSSR = EagerFit{HockneyFit: fit, EagerLimit: e}, ssr
		}
	}
	return best, nil
}

// jumpFactor is the multiple of alpha a message of n bytes pays on a
// machine of eager limit e.
func jumpFactor(n, handshake, e float64) float64 {
	if n > e {
		return 1 + handshake
	}
	return 1
}

// weightedSSR is the 1/t^2-weighted sum of squared residuals of the model
// alpha jumpFactor + beta n.
func weightedSSR(samples []Sample, alpha, beta, handshake, e float64) float64 {
	var ssr float64
	for _, x := range samples {
		r := (x.Seconds - alpha*jumpFactor(x.Bytes, handshake, e) - beta*x.Bytes) / x.Seconds
		ssr += r * r
	}
	return ssr
}

// fitWithJump is the 1/t^2-weighted least-squares fit of alpha u + beta n,
// u the jumpFactor, solved from its 2x2 normal equations; ok is false when
// they are singular.
func fitWithJump(samples []Sample, handshake, e float64) (HockneyFit, bool) {
	var suu, sun, snn, suy, sny float64
	for _, x := range samples {
		w := 1 / (x.Seconds * x.Seconds)
		u := jumpFactor(x.Bytes, handshake, e)
		suu += w * u * u
		sun += w * u * x.Bytes
		snn += w * x.Bytes * x.Bytes
		suy += w * u * x.Seconds
		sny += w * x.Bytes * x.Seconds
	}
	det := suu*snn - sun*sun
	if !(det > 0) || det <= 1e-12*suu*snn {
		return HockneyFit{}, false
	}
	alpha := (suy*snn - sun*sny) / det
	beta := (suu*sny - sun*suy) / det
	fit := HockneyFit{Model: Hockney{Alpha: alpha, Beta: beta}, Samples: len(samples)}
	var ssr float64
	for _, x := range samples {
		r := x.Seconds - alpha*jumpFactor(x.Bytes, handshake, e) - beta*x.Bytes
		ssr += r * r / (x.Seconds * x.Seconds)
		fit.MaxRelResidual = max(fit.MaxRelResidual, math.Abs(r)/x.Seconds)
	}
	fit.AlphaErr, fit.BetaErr = math.NaN(), math.NaN()
	if dof := len(samples) - 2; dof > 0 {
		s2 := ssr / float64(dof)
		fit.AlphaErr = math.Sqrt(s2 * snn / det)
		fit.BetaErr = math.Sqrt(s2 * suu / det)
	}
	return fit, true
}

func distinct(xs []float64) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return len(slices.Compact(s))
}

// LogGP holds the LogGP parameters in seconds: L the wire latency, o the
// CPU overhead of a send or a receive, g the least gap between messages,
// G the time per byte of a long message.
type LogGP struct {
	L, O, Gap, G float64
}

// PRTT holds the parametrised round-trip times of Hoefler, Lichei and
// Rehm's LogGP assessment (Netgauge, 2007). PRTT(n, d, s) is the time for
// a client to send n messages of s bytes back to back, waiting d between
// consecutive sends, and for the server to echo them: the last echo ends
// the measurement. Each map entry holds repeated measurements of one size;
// the fit takes their median, which ignores the outliers that OS noise
// brings into real runs.
//
// The LogGP model of these series is
//
//	PRTT(1, 0, s) = 2 (L + 2o + (s-1) G)
//	PRTT(n, 0, s) = PRTT(1, 0, s) + (n-1) (g + (s-1) G)
//	PRTT(n, d, s) = PRTT(1, 0, s) + (n-1) (o + d)   when o + d > g + (s-1) G
//
// so o, and g + (s-1)G for each s, are differences of measurements, G and g
// the slope and intercept of the latter in s, and L what remains of the
// single round trips: the intercept of PRTT(1,0,s)/2 against s-1, less 2o.
// o is the mean of its per-size estimates, weighted by 1/PRTT(n,d,s)^2
// (LogGP's o does not depend on s; averaging over sizes damps the noise
// that the subtraction of two round trips amplifies, and the weights favour
// the small sizes whose round trips carry the least absolute noise).
//
// A burst's gap measures g + (s-1)G only where that is above o: a sender
// paces a burst by max(o, g + (s-1)G), and a receiver that takes each
// message in for o + (s-1)G of CPU (LogGOPSim's semantics, and collsim's)
// by that, so that there g looks like o at every size. g and G are fitted
// on the sizes whose burst gap is clearly above o (gapAboveO). With one
// such size, G is the slope of the round trips and g what that size's gap
// leaves; with none, G is that slope and g is o. (Fitted on every size,
// sender-paced bursts with o = 3 us above g = 1 us gave g = 2.8 us and G
// 13% fast: an audit.)
type PRTT struct {
	N int // messages per burst, n > 1 (Netgauge uses 10)
	// D is the delay between sends in PRTT(n, d, s), per size; it must
	// exceed g + (s-1)G, and Netgauge takes d = PRTT(1, 0, s).
	D      map[int64]float64
	One    map[int64][]float64 // PRTT(1, 0, s)
	Burst  map[int64][]float64 // PRTT(n, 0, s)
	Spaced map[int64][]float64 // PRTT(n, d, s)
}

// LogGPFit is a LogGP fit with the spread of its per-size estimates.
type LogGPFit struct {
	Model LogGP
	// OSpread is the largest minus the smallest per-size estimate of o:
	// o should not depend on s in LogGP, so a large spread says the model
	// fits the machine poorly (an o that grows with s is LogGOPS's O).
	OSpread float64
	// GapFit is the fit of g + (s-1)G against s-1 that gave g and G, over
	// the sizes whose bursts it paced (GapSizes of them; see PRTT).
	GapFit   HockneyFit
	GapSizes int
}

// gapAboveO is how far above o a burst's gap must be for the size to
// measure g + (s-1)G rather than o.
const gapAboveO = 1.05

// FitLogGP fits LogGP's parameters to PRTT series. Sizes must include at
// least two distinct values, and every size must have all three series.
func FitLogGP(m PRTT) (LogGPFit, error) {
	if m.N < 2 {
		return LogGPFit{}, fmt.Errorf("PRTT burst length n = %d; it must be at least 2 (Netgauge uses 10)", m.N)
	}
	sizes := make([]int64, 0, len(m.One))
	for s := range m.One {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	if len(sizes) < 2 {
		return LogGPFit{}, fmt.Errorf("%w: PRTT series for %d message sizes; measure at least two", ErrTooFewSamples, len(sizes))
	}
	n1 := float64(m.N - 1)
	var fit LogGPFit
	var os, oWeights []float64
	var gaps, halfTrips []Sample
	for _, s := range sizes {
		if s < 1 {
			return LogGPFit{}, fmt.Errorf("PRTT size %d: sizes start at 1 byte", s)
		}
		one, err := median(m.One[s], "PRTT(1,0,s)", s)
		if err != nil {
			return LogGPFit{}, err
		}
		burst, err := median(m.Burst[s], "PRTT(n,0,s)", s)
		if err != nil {
			return LogGPFit{}, err
		}
		spaced, err := median(m.Spaced[s], "PRTT(n,d,s)", s)
		if err != nil {
			return LogGPFit{}, err
		}
		d, ok := m.D[s]
		if !ok || d < 0 {
			return LogGPFit{}, fmt.Errorf("PRTT size %d: the delay d of PRTT(n,d,s) is missing or negative", s)
		}
		gapAll := (burst - one) / n1
		switch {
		case d < gapAll && math.Abs(d-one) <= 0.01*one:
			// d is PRTT(1,0,s) already (the advice below, given to a
			// measurement that followed it: a new user's trial).
			return LogGPFit{}, fmt.Errorf("PRTT size %d: a burst's messages came %.4g s apart, g+(s-1)G by the method, more than a whole round trip, PRTT(1,0,s) = %.4g s: they waited for each other (flow control, or noise), which LogGP does not describe; measure again, or leave this size out", s, gapAll, one)
		case d < gapAll:
			return LogGPFit{}, fmt.Errorf("PRTT size %d: d = %.4g s is not above g+(s-1)G = %.4g s, so PRTT(n,d,s) measures the gap, not o; use d = PRTT(1,0,s)", s, d, gapAll)
		}
		os = append(os, (spaced-one)/n1-d)
		oWeights = append(oWeights, 1/(spaced*spaced))
		gaps = append(gaps, Sample{Bytes: float64(s - 1), Seconds: gapAll})
		halfTrips = append(halfTrips, Sample{Bytes: float64(s - 1), Seconds: one / 2})
	}
	fit.Model.O = stat.Mean(os, oWeights)
	fit.OSpread = slices.Max(os) - slices.Min(os)
	half, err := FitHockney(halfTrips)
	if err != nil {
		return LogGPFit{}, fmt.Errorf("fitting PRTT(1,0,s)/2 = L + 2o + (s-1)G: %w", err)
	}
	fit.Model.L = half.Model.Alpha - 2*fit.Model.O
	paced := slices.DeleteFunc(gaps, func(s Sample) bool { return s.Seconds <= gapAboveO*fit.Model.O })
	fit.GapSizes = len(paced)
	switch len(paced) {
	case 0:
		fit.Model.Gap, fit.Model.G = fit.Model.O, half.Model.Beta
		fit.GapFit = HockneyFit{Model: Hockney{Alpha: fit.Model.Gap, Beta: fit.Model.G}}
	case 1:
		fit.Model.G = half.Model.Beta
		fit.Model.Gap = max(paced[0].Seconds-paced[0].Bytes*fit.Model.G, 0)
		fit.GapFit = HockneyFit{Model: Hockney{Alpha: fit.Model.Gap, Beta: fit.Model.G}, Samples: 1}
	default:
		g, err := FitHockney(paced)
		if err != nil {
			return LogGPFit{}, fmt.Errorf("fitting g + (s-1)G: %w", err)
		}
		fit.GapFit = g
		fit.Model.Gap, fit.Model.G = g.Model.Alpha, g.Model.Beta
	}
	if fit.Model.O < 0 || fit.Model.L < 0 {
		// (In microseconds: raw floats of seconds were unfriendly, a new
		// user's walkthrough.)
		return fit, fmt.Errorf("the fit gives o = %.4g µs and L = %.4g µs; a negative value means the series do not follow LogGP (check d and n)", fit.Model.O*1e6, fit.Model.L*1e6)
	}
	return fit, nil
}

func median(xs []float64, series string, size int64) (float64, error) {
	m, ok := Median(xs)
	if !ok {
		return 0, fmt.Errorf("PRTT size %d: no %s measurements", size, series)
	}
	return m, nil
}

// Median is the median of xs (the mean of the middle two for an even
// count), xs left as it is; false if xs is empty.
func Median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := len(s) / 2
	if len(s)%2 == 1 {
		return s[k], true
	}
	return (s[k-1] + s[k]) / 2, true
}

// FitHockneyRobust fits alpha and beta to ping-pong samples the way noisy
// measurements allow: beta from the large messages alone (those taking at
// least 4x the smallest message's time, where bytes dominate) as the
// median of the slopes between every pair of them (Theil-Sen: one bad
// point moves it little), alpha as the lower median (noise only adds time)
// of what the small messages leave after beta, those whose bytes take a
// tenth of their time or less (else the smallest). Microseconds of noise on
// an 8-byte ping-pong then cannot tilt the line, as they can in
// FitHockney's 1/t^2-weighted fit.
// AlphaErr and BetaErr are robust spreads (1.4826 x the median absolute
// deviation of the intercepts and of the slopes, over the square root of
// their count; NaN with fewer than three large sizes, whose one slope has
// no spread to judge it by); Stable says whether the slopes agree within
// MaxRelSpread.
func FitHockneyRobust(samples []Sample) (HockneyFit, error) {
	for i, s := range samples {
		if !(s.Seconds > 0) || s.Bytes < 0 || math.IsInf(s.Seconds, 0) || math.IsNaN(s.Bytes) {
			return HockneyFit{}, fmt.Errorf("sample %d (%g bytes, %g s): times must be positive and sizes non-negative", i+1, s.Bytes, s.Seconds)
		}
	}
	s := slices.Clone(samples)
	slices.SortFunc(s, func(a, b Sample) int { return cmp.Compare(a.Bytes, b.Bytes) })
	if len(s) == 0 {
		return HockneyFit{}, fmt.Errorf("%w: no samples", ErrTooFewSamples)
	}
	floor := s[0].Seconds
	var large, small []Sample
	for _, x := range s {
		if x.Seconds >= 4*floor && x.Bytes > s[0].Bytes {
			large = append(large, x)
		} else {
			small = append(small, x)
		}
	}
	var xs []float64
	for _, x := range large {
		xs = append(xs, x.Bytes)
	}
	if distinct(xs) < 2 {
		return HockneyFit{}, fmt.Errorf("%w: %d sizes take 4x the smallest's time or more, and beta needs two such sizes; measure larger messages (up to several MiB)", ErrTooFewSamples, distinct(xs))
	}
	var slopes []float64
	for i := range large {
		for j := i + 1; j < len(large); j++ {
			if dx := large[j].Bytes - large[i].Bytes; dx > 0 {
				slopes = append(slopes, (large[j].Seconds-large[i].Seconds)/dx)
			}
		}
	}
	beta, _ := Median(slopes)
	// Alpha from the sizes whose bytes take at most a tenth of their time
	// at that beta (the latency dominates them), else the smallest size.
	var icepts []float64
	for _, x := range small {
		if beta*x.Bytes <= 0.1*x.Seconds {
			icepts = append(icepts, x.Seconds-beta*x.Bytes)
		}
	}
	if len(icepts) == 0 {
		icepts = append(icepts, s[0].Seconds-beta*s[0].Bytes)
	}
	// The lower median: timing noise only ever adds time, so of two small
	// sizes the faster is the better estimate of the latency.
	sorted := slices.Clone(icepts)
	slices.Sort(sorted)
	alpha := sorted[(len(sorted)-1)/2]
	fit := HockneyFit{Model: Hockney{Alpha: alpha, Beta: beta}, Samples: len(samples), AlphaSizes: len(icepts)}
	fit.BetaErr = 1.4826 * mad(slopes, beta) / math.Sqrt(float64(len(slopes)))
	if len(slopes) < 3 {
		fit.BetaErr = math.NaN() // two large sizes give one slope: no spread to judge it by
	}
	fit.AlphaErr = 1.4826 * mad(icepts, alpha) / math.Sqrt(float64(len(icepts)))
	for _, x := range s {
		fit.MaxRelResidual = max(fit.MaxRelResidual, math.Abs(x.Seconds-(alpha+beta*x.Bytes))/x.Seconds)
	}
	if beta <= 0 {
		return fit, fmt.Errorf("the fitted time per byte is %g s, not positive: the large messages' times do not grow with size; measure larger messages", beta)
	}
	if alpha < 0 {
		fit.Model.Alpha = 0 // below the line's resolution: the small messages took no longer than their bytes
	}
	return fit, nil
}

// MaxRelSpread is how far the pairwise slopes of FitHockneyRobust may
// spread (BetaErr over beta) for a fit to predict from.
const MaxRelSpread = 0.05

// Stable reports whether the fit's beta is pinned within MaxRelSpread (not
// when its spread is unknown).
func (f HockneyFit) Stable() bool {
	return f.Model.Beta > 0 && f.BetaErr/f.Model.Beta <= MaxRelSpread
}

// mad is the median absolute deviation of v from m.
func mad(v []float64, m float64) float64 {
	d := make([]float64, len(v))
	for i, x := range v {
		d[i] = math.Abs(x - m)
	}
	m, _ = Median(d)
	return m
}
