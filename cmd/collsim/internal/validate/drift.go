package validate

import (
	"fmt"
	"math"

	"github.com/collsim/collsim/cmd/collsim/internal/realcmd"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/realrun"
)

// driftNoted is how far beta (as a fraction) or the duplex share may move
// between the pairs timed before the collectives and those timed after (or
// between the first and the second half of interleaved rounds) before the
// notes say that the machine changed during the run.
const (
	driftNotedBeta  = 0.10
	driftNotedShare = 0.20
	// A band is fitted to one size's timings, noisier than beta's fit
	// over several: its bandwidth is named when it moved by more.
	driftNotedBand = 0.20
)

// drift is what the ping-pongs and exchanges timed at two times of the
// run say: after the collectives against before them (--pairs-again), or
// in the second half of the rounds against the first (--interleave). A
// machine that changed during the run (another load, a host's slow spell)
// makes the points measure the change as much as the model.
type drift struct {
	// Between says when the two were timed: aroundCollectives or
	// acrossRounds.
	Between string `json:"between"`
	// BetaBefore and BetaAfter are the ping-pong fit's beta at the first
	// time and at the second, and BetaChange the change: BetaAfter /
	// BetaBefore - 1.
	BetaBefore float64 `json:"beta_before"`
	BetaAfter  float64 `json:"beta_after"`
	BetaChange float64 `json:"beta_change"`
	// DuplexShareBefore and DuplexShareAfter are the channel's duplex
	// share at the two times, on one host (null between emulated hosts).
	DuplexShareBefore *float64 `json:"duplex_share_before,omitempty"`
	DuplexShareAfter  *float64 `json:"duplex_share_after,omitempty"`
	// BandFrom is the channel's band whose bandwidth moved the most
	// between the two times, on one host, and BandChange that move:
	// after / before - 1 (both absent without bands at both times).
	BandFrom   int64    `json:"band_from,omitempty"`
	BandChange *float64 `json:"band_bandwidth_change,omitempty"`
}

// When a drift's two sets of pairs were timed (drift.Between).
const (
	aroundCollectives = "before and after the collectives"
	acrossRounds      = "in the first and the second half of the rounds"
)

// driftTimes names the two times of each kind of drift in a sentence.
var driftTimes = map[string][2]string{
	aroundCollectives: {"before the collectives", "after"},
	acrossRounds:      {"in the first half of the rounds", "in the second"},
}

// measureDrift fits the pairs timed later (after) as those timed before
// were fitted (fit, to the ping-pongs of the sizes keep, and ch on one
// host; nil between emulated hosts); nil when they do not fit.
func measureDrift(between string, after []realrun.Summary, fit cost.HockneyFit, ch *channelFit, keep map[int64]bool) *drift {
	again, err := fitPingPong(after, keep)
	if err != nil || !(again.Model.Beta > 0) || !(fit.Model.Beta > 0) {
		return nil
	}
	d := &drift{Between: between, BetaBefore: fit.Model.Beta, BetaAfter: again.Model.Beta, BetaChange: again.Model.Beta/fit.Model.Beta - 1}
	if ch != nil {
		if c, err := fitChannel(after, cost.Hockney{Alpha: again.Model.Alpha, Beta: again.Model.Beta}); err == nil {
			d.DuplexShareBefore, d.DuplexShareAfter = &ch.DuplexShare, &c.DuplexShare
			d.BandFrom, d.BandChange = bandsMoved(ch.Bands, c.Bands)
		}
	}
	return d
}

// bandsMoved is the band of before whose bandwidth moved the most in
// after (a band of the same size), and by how much (nil when no band is
// in both).
func bandsMoved(before, after []bandFit) (from int64, change *float64) {
	for _, b := range before {
		for _, a := range after {
			if a.From != b.From {
				continue
			}
			if c := a.Bandwidth/b.Bandwidth - 1; change == nil || math.Abs(c) > math.Abs(*change) {
				from, change = b.From, &c
			}
		}
	}
	return from, change
}

// measureRoundsDrift is measureDrift between the first and the second
// half of the rounds of an interleaved run of iterations rounds (nil when
// either half does not fit), on one host when oneHost, fitting the
// ping-pongs of the sizes keep. Of an odd number of rounds, the middle
// one is in neither half.
func measureRoundsDrift(reports []realrun.Report, iterations int, oneHost bool, keep map[int64]bool) *drift {
	half := iterations / 2
	first := realcmd.SummariesOfIterations(reports, 0, half)
	fit, err := fitPingPong(first, keep)
	if err != nil || !(fit.Model.Beta > 0) {
		return nil
	}
	var ch *channelFit
	if oneHost {
		c, err := fitChannel(first, cost.Hockney{Alpha: fit.Model.Alpha, Beta: fit.Model.Beta})
		if err != nil {
			return nil
		}
		ch = &c
	}
	return measureDrift(acrossRounds, realcmd.SummariesOfIterations(reports, iterations-half, iterations), fit, ch, keep)
}

// driftNote says, when the machine changed during the run by more than
// driftNoted*, how; else "".
func driftNote(d *drift) string {
	if d == nil {
		return ""
	}
	when := driftTimes[d.Between]
	share := ""
	if d.DuplexShareBefore != nil && d.DuplexShareAfter != nil && math.Abs(*d.DuplexShareAfter-*d.DuplexShareBefore) > driftNotedShare {
		share = fmt.Sprintf("; the channel's duplex share %.2f %s, %.2f %s", *d.DuplexShareBefore, when[0], *d.DuplexShareAfter, when[1])
	}
	if d.BandChange != nil && math.Abs(*d.BandChange) > driftNotedBand {
		share += fmt.Sprintf("; the channel's band from %s moved its bandwidth by %+.0f%% %s", configs.FormatBytes(d.BandFrom), 100**d.BandChange, when[1])
	}
	betaMoved := math.Abs(d.BetaChange) > driftNotedBeta
	if !betaMoved && share == "" {
		return ""
	}
	refuse := ""
	if betaMoved {
		refuse = "; --max-drift refuses runs whose beta moves more than it allows"
	}
	return fmt.Sprintf("the machine changed during the run: the ping-pong's beta was %.3g s/B %s and %.3g %s (%+.0f%%)%s; the points measure that change as much as the model (run again on a quieter machine%s)",
		d.BetaBefore, when[0], d.BetaAfter, when[1], 100*d.BetaChange, share, refuse)
}
