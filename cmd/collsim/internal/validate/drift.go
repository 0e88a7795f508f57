package validate

import (
	"fmt"
	"math"

	"github.com/collsim/collsim/cmd/collsim/internal/realcmd"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/realrun"
)

// driftNoted is how far beta (as a fraction) or the duplex share may move
// between the pairs timed before the collectives and those timed after
// before the notes say that the machine changed during the run.
const (
	driftNotedBeta  = 0.10
	driftNotedShare = 0.20
)

// drift is what the ping-pongs and exchanges timed again after the
// collectives say, against those timed before them, whose fit the model
// uses: a machine that changed during the run (another load, a host's
// slow spell) makes the points measure the change as much as the model.
type drift struct {
	// BetaAfter is the ping-pong fit's beta after the collectives, and
	// BetaChange its change: BetaAfter / beta before - 1.
	BetaAfter  float64 `json:"beta_after"`
	BetaChange float64 `json:"beta_change"`
	// DuplexShareAfter is the channel's duplex share after the
	// collectives, on one host (null between emulated hosts).
	DuplexShareAfter *float64 `json:"duplex_share_after,omitempty"`
}

// measureDrift fits the pairs timed after the collectives as the ones
// before were fitted (fit, and ch on one host; nil between emulated
// hosts); nil when they do not fit.
func measureDrift(after []realrun.Summary, fit cost.HockneyFit, ch *channelFit) *drift {
	again, err := realcmd.FitPingPong(after)
	if err != nil || !(again.Model.Beta > 0) || !(fit.Model.Beta > 0) {
		return nil
	}
	d := &drift{BetaAfter: again.Model.Beta, BetaChange: again.Model.Beta/fit.Model.Beta - 1}
	if ch != nil {
		if c, err := fitChannel(after, cost.Hockney{Alpha: again.Model.Alpha, Beta: again.Model.Beta}); err == nil {
			d.DuplexShareAfter = &c.DuplexShare
		}
	}
	return d
}

// driftNote says, when the machine changed during the run by more than
// driftNoted*, how; else "".
func driftNote(d *drift, beta float64, ch *channelFit) string {
	if d == nil {
		return ""
	}
	share := ""
	if ch != nil && d.DuplexShareAfter != nil && math.Abs(*d.DuplexShareAfter-ch.DuplexShare) > driftNotedShare {
		share = fmt.Sprintf("; the channel's duplex share %.2f before, %.2f after", ch.DuplexShare, *d.DuplexShareAfter)
	}
	betaMoved := math.Abs(d.BetaChange) > driftNotedBeta
	if !betaMoved && share == "" {
		return ""
	}
	refuse := ""
	if betaMoved {
		refuse = "; --max-drift refuses runs whose beta moves more than it allows"
	}
	return fmt.Sprintf("the machine changed during the run: the ping-pong's beta was %.3g s/B before the collectives and %.3g after (%+.0f%%)%s; the points measure that change as much as the model (run again on a quieter machine%s)",
		beta, d.BetaAfter, 100*d.BetaChange, share, refuse)
}
