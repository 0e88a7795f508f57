package configs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
)

// noiseYAML is a machine's noise: per-message latency jitter, OS-noise
// detours, slow ranks.
type noiseYAML struct {
	Jitter      *jitterYAML     `yaml:"jitter"`
	Detours     *detoursYAML    `yaml:"detours"`
	CoScheduled bool            `yaml:"co_scheduled"`
	Stragglers  *stragglersYAML `yaml:"stragglers"`
}

type jitterYAML struct {
	Normal    string `yaml:"normal"`    // sigma of a normal delay, cut at 0
	Lognormal string `yaml:"lognormal"` // median of a lognormal delay
}

// detoursYAML is one of: period and duration (periodic), rate and
// duration (Poisson arrivals), or a trace file.
type detoursYAML struct {
	Period   string  `yaml:"period"`
	Rate     float64 `yaml:"rate"`
	Duration string  `yaml:"duration"`
	Trace    string  `yaml:"trace"`
}

type stragglersYAML struct {
	Count  int     `yaml:"count"`
	Factor float64 `yaml:"factor"`
}

// NoiseSpec is a machine's OS noise and slow ranks, as its config gives
// them; For builds them for one run.
type NoiseSpec struct {
	fixed      *sim.Noise // periodic or from a trace: the same for every seed
	rate       float64    // Poisson arrivals, drawn from the run's seed
	duration   sim.Time
	coSched    bool
	stragglers int
	factor     float64
	// stragglersAt is where the config asks for the stragglers (file:line).
	stragglersAt string
}

// CheckRanks refuses a run of ranks ranks with more stragglers than ranks,
// naming the config line that asks for them.
func (s *NoiseSpec) CheckRanks(ranks int) error {
	if s == nil || s.stragglers <= ranks {
		return nil
	}
	return fmt.Errorf("noise.stragglers.count %d (%s): %d slow ranks asked for, but the run has %d; ask for at most %d", s.stragglers, s.stragglersAt, s.stragglers, ranks, ranks)
}

// For returns the noise of a run with the given seed: a fresh value, since
// a run keeps its ranks' offsets in it.
func (s *NoiseSpec) For(seed uint64) *sim.Noise {
	var n *sim.Noise
	switch {
	case s.fixed != nil:
		c := *s.fixed
		n = &c
	case s.rate > 0:
		n, _ = sim.PoissonNoise(s.rate, s.duration, seed) // checked when parsed
	default:
		n = &sim.Noise{}
	}
	n.CoScheduled = s.coSched
	_ = n.SetStragglers(s.stragglers, s.factor) // checked when parsed
	return n
}

// noise validates the noise section.
func (v *validator) noise(m *Machine, n *noiseYAML) {
	keys := []string{"noise"}
	if j := n.Jitter; j != nil {
		jk := with(keys, "jitter")
		switch {
		case (j.Normal == "") == (j.Lognormal == ""):
			v.fail(jk, "give one of normal (the sigma of a delay cut at 0) or lognormal (the median delay), e.g. {normal: 200ns}")
		case j.Normal != "":
			m.Jitter.Sigma = v.positiveDuration(j.Normal, with(jk, "normal"))
		default:
			m.Jitter = network.Jitter{Sigma: v.positiveDuration(j.Lognormal, with(jk, "lognormal")), Lognormal: true}
		}
	}
	spec := &NoiseSpec{coSched: n.CoScheduled, factor: 1}
	if s := n.Stragglers; s != nil {
		sk := with(keys, "stragglers")
		if s.Count < 1 {
			v.fail(with(sk, "count"), "must be at least 1 slow rank, not %d", s.Count)
		}
		if !(s.Factor >= 1) || s.Factor > 1e6 {
			v.fail(with(sk, "factor"), "a slow rank's CPU work takes factor times as long: give 1..1e6, not %g", s.Factor)
		}
		spec.stragglers, spec.factor = s.Count, s.Factor
		spec.stragglersAt = fmt.Sprintf("%s:%d", v.source, v.line(with(sk, "count")...))
	}
	if d := n.Detours; d != nil {
		v.detours(spec, d, with(keys, "detours"))
	} else if n.CoScheduled {
		v.fail(with(keys, "co_scheduled"), "co-scheduling shares the detours' phase among ranks: give detours too")
	}
	if n.Detours != nil || n.Stragglers != nil {
		m.Noise = spec
	}
}

func (v *validator) detours(spec *NoiseSpec, d *detoursYAML, keys []string) {
	kinds := 0
	for _, set := range []bool{d.Period != "", d.Rate != 0, d.Trace != ""} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		v.fail(keys, "give one of period (with duration: a detour every period), rate (with duration: detours per second at random) or trace (a file of start<TAB>duration lines, in ns)")
		return
	}
	var err error
	switch {
	case d.Trace != "":
		if d.Duration != "" {
			v.fail(with(keys, "duration"), "a trace gives each detour's duration; remove duration")
			return
		}
		spec.fixed, err = v.trace(d.Trace)
	case d.Period != "":
		period := v.positiveDuration(d.Period, with(keys, "period"))
		duration := v.positiveDuration(d.Duration, with(keys, "duration"))
		if period > 0 && duration > 0 {
			spec.fixed, err = sim.PeriodicNoise(period, duration)
		}
	default:
		if !(d.Rate > 0) || d.Rate > 1e9 {
			v.fail(with(keys, "rate"), "detours per second: give a number in (0, 1e9], not %g", d.Rate)
		}
		spec.rate, spec.duration = d.Rate, v.positiveDuration(d.Duration, with(keys, "duration"))
		if spec.duration > 0 {
			_, err = sim.PoissonNoise(spec.rate, spec.duration, 0)
		}
	}
	if err != nil {
		v.fail(keys, "%v", err)
	}
}

// trace reads a noise trace named in the config, relative to the config's
// directory.
func (v *validator) trace(name string) (*sim.Noise, error) {
	if strings.HasPrefix(v.source, "builtin:") {
		return nil, fmt.Errorf("a built-in machine cannot read noise trace %q", name)
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(v.source), name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("noise trace: %w", err)
	}
	defer f.Close()
	return sim.ParseNoise(Bounded(f, MaxTraceBytes, "a noise trace"), name)
}

// positiveDuration parses a duration that must be above zero.
func (v *validator) positiveDuration(s string, keys []string) sim.Time {
	if s == "" {
		v.fail(keys, "missing; give a duration such as 25us")
		return 0
	}
	before := len(v.errs)
	d := v.duration(s, keys)
	if d <= 0 && len(v.errs) == before {
		v.fail(keys, "must be above zero, not %s", s)
	}
	return d
}
