package validate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/realcmd"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/realrun"
)

// autoExchange is --exchange's default: exchangeSizes of the largest
// -s size.
const autoExchange = "auto"

// exchangeSizes is --exchange's auto: 4 MiB, 16 MiB, and each 4x above
// up to largest, the largest message a collective of that size sends (a
// recursive doubling's on 2 ranks). A rank's channel moves data that fits
// in the caches faster, and reduces it faster, than data that does not:
// a fit on small exchanges alone makes the model fast for large
// collectives (the README's one-host measurements).
func exchangeSizes(largest int64) string {
	sizes := []string{"4MiB", "16MiB"}
	for b := int64(64 << 20); b <= largest && b <= realrun.MaxMessageBytes; b *= 4 {
		sizes = append(sizes, configs.FormatBytes(b))
	}
	return strings.Join(sizes, ",")
}

// channelFit is what the exchanges between two ranks of one host say of
// the channel between them, beside the ping-pong's alpha and beta.
type channelFit struct {
	// Ratio is an exchange's time over a one-way message's of the same
	// size (the ping-pong's fit), the median over the exchange's sizes.
	Ratio float64 `json:"exchange_to_one_way"`
	// DuplexShare is what an exchange of b bytes takes beyond the
	// message's time on the channel, b beta, over b beta, the median over
	// sizes, from 0 (full duplex: both ways at once) to 1 (half: one
	// after the other): the fitted machine's host.local_duplex, with
	// which the machine's exchange of b bytes takes (1+share) b beta, or
	// alpha + b beta where that is more, what was measured wherever the
	// share's part is more than alpha.
	DuplexShare float64 `json:"duplex_share"`
	// ReduceSecondsPerByte is a reducing exchange's time over a plain
	// one's, per byte received, the median over sizes, and 0 where it is
	// faster: the gamma of the reduction as the transport does it (a
	// real run reduces a message's pieces as they land, in the core's
	// cache, rather than after the whole has arrived).
	ReduceSecondsPerByte float64 `json:"reduce_s_per_byte"`
	// Sizes are the exchanges' sizes the fit used, ascending.
	Sizes []int64 `json:"sizes"`
}

// fitChannel reads the exchanges among sums against the ping-pong's fit.
func fitChannel(sums []realrun.Summary, h cost.Hockney) (channelFit, error) {
	if !(h.Beta > 0) {
		return channelFit{}, fmt.Errorf("the ping-pong's fit gives beta %g s/B: a channel's share of a message's time needs a positive one", h.Beta)
	}
	plain, reducing := map[int64]float64{}, map[int64]float64{}
	var sizes []int64
	for _, s := range sums {
		ex, reduces := realcmd.IsExchange(s)
		if !ex {
			continue
		}
		if reduces {
			reducing[s.Bytes] = s.Median.Seconds()
		} else {
			plain[s.Bytes] = s.Median.Seconds()
			sizes = append(sizes, s.Bytes)
		}
	}
	var ratios, shares, gammas []float64
	var fitted []int64
	for _, b := range slices.Compact(slices.Sorted(slices.Values(sizes))) {
		r, ok := reducing[b]
		// The ping-pong's line must give the size a time to compare
		// with (a fallback alpha can be negative).
		oneWay := h.Alpha + h.Beta*float64(b)
		if b == 0 || !ok || !(oneWay > 0) {
			continue
		}
		ratio := plain[b] / oneWay
		if math.IsInf(ratio, 0) { // a one-way time too small to divide by
			continue
		}
		ratios, gammas, fitted = append(ratios, ratio), append(gammas, (r-plain[b])/float64(b)), append(fitted, b)
		shares = append(shares, plain[b]/(h.Beta*float64(b))-1)
	}
	if len(ratios) == 0 {
		return channelFit{}, fmt.Errorf("no exchange of a nonzero size, plain and reducing, that the ping-pong's fit gives a positive one-way time, to fit the channel to; give larger --exchange sizes")
	}
	ratio, _ := cost.Median(ratios)
	share, _ := cost.Median(shares)
	gamma, _ := cost.Median(gammas)
	return channelFit{Ratio: ratio, DuplexShare: min(1, max(0, share)), ReduceSecondsPerByte: max(0, gamma), Sizes: fitted}, nil
}

// oneHostYAML is the fitted machine of ranks that share one host: each
// rank's channel to the others has the ping-pong's alpha and beta and the
// exchanges' duplex, and reductions cost what the reducing exchanges
// added. Every message is eager, as in real runs.
func oneHostYAML(ranks int, h cost.Hockney, ch channelFit) []byte {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	reduce := ""
	if ch.ReduceSecondsPerByte > 0 {
		reduce = fmt.Sprintf("  reduce_bandwidth: %sB/s\n", num(1/ch.ReduceSecondsPerByte))
	}
	return fmt.Appendf(nil, `# Written by collsim validate --real (ping-pong and exchanges on one host).
name: "fitted"
description: >-
  %d ranks on one host, each with a channel of %s and %s to the others,
  duplex share %.3g (an exchange took %.2fx a one-way message).
network:
  crossbar:
    hosts: 1
    link: {bandwidth: %sB/s, latency: 0ns}
host:
  ranks_per_host: %d
  local: {bandwidth: %sB/s, latency: %sns}
  local_duplex: %s
%s  eager_limit: none
placement: block
`, ranks, cmdutil.Seconds(h.Alpha), configs.FormatBandwidth(1/h.Beta), ch.DuplexShare, ch.Ratio,
		num(1/h.Beta), ranks, num(1/h.Beta), num(h.Alpha*1e9), num(ch.DuplexShare), reduce)
}

// channelText says what the exchanges found, for the table's header.
func channelText(ch channelFit) string {
	var duplex string
	switch ch.DuplexShare {
	case 0:
		duplex = "full duplex: sends and takes in at once"
	case 1:
		duplex = "half duplex: sends or takes in, one at a time"
		if ch.Ratio > 2 {
			duplex += " (the exchanges took more than twice a one-way message; the model's share stops at 1)"
		}
	default:
		duplex = fmt.Sprintf("partly duplex: a message keeps the other direction busy for a share %.3g of its time", ch.DuplexShare)
	}
	gamma := "no slower than plain ones: reductions cost nothing more"
	if ch.ReduceSecondsPerByte > 0 {
		gamma = fmt.Sprintf("%.3g s/B more (%s)", ch.ReduceSecondsPerByte, configs.FormatBandwidth(1/ch.ReduceSecondsPerByte))
	}
	var sizes []string
	for _, b := range ch.Sizes {
		sizes = append(sizes, configs.FormatBytes(b))
	}
	return fmt.Sprintf("exchanges (%s) took %.2fx a one-way message: each rank's channel is %s; reducing exchanges %s",
		strings.Join(sizes, ", "), ch.Ratio, duplex, gamma)
}
