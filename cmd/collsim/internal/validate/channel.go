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

// autoExchange is --exchange's default: exchangeSizes of the -s sizes.
const autoExchange = "auto"

// minExchange is the smallest size --exchange's auto times: smaller
// messages are latency, which the ping-pong's small sizes give.
const minExchange = 4 << 10

// exchangeSizes is --exchange's auto: each power of two from the smallest
// message a collective of the -s sizes sends among ranks (the smallest
// size over ranks, at least minExchange) up to the largest (a recursive
// doubling's, the largest size), each the start of a band of the fitted
// channel (oneHostYAML). A rank's channel moves data that fits in the
// caches faster than data that does not, and it does so both ways at
// once more readily: one line fitted over all sizes made the model 17-65%
// slow for a ring at 1-4 MiB on 2 ranks (512 KiB-2 MiB messages) and
// right at 64 MiB on this project's machine.
func exchangeSizes(sizes []int64, ranks int) string {
	smallest, largest := slices.Min(sizes)/int64(ranks), min(slices.Max(sizes), realrun.MaxMessageBytes)
	b := int64(minExchange)
	for b*2 <= smallest {
		b *= 2
	}
	var out []string
	for ; b <= largest; b *= 2 {
		out = append(out, configs.FormatBytes(b))
	}
	if len(out) == 0 { // every size below minExchange: one band
		out = append(out, configs.FormatBytes(minExchange))
	}
	return strings.Join(out, ",")
}

// channelFit is what the exchanges between two ranks of one host say of
// the channel between them, beside the ping-pong's alpha and beta.
type channelFit struct {
	// Ratio is an exchange's time over a one-way message's of the same
	// size (the ping-pong measured at that size where its band was
	// fitted, else the ping-pong's fit), the median over the exchange's
	// sizes.
	Ratio float64 `json:"exchange_to_one_way"`
	// DuplexShare is what an exchange of b bytes takes beyond the
	// message's time on the channel over that time (the band's share
	// where b has a band, else against b beta), the median over sizes,
	// from 0 (full duplex: both ways at once) to 1 (half: one after the
	// other): the fitted machine's host.local_duplex below its first
	// band, with which the machine's exchange of b bytes takes (1+share)
	// b beta, or alpha + b beta where that is more.
	DuplexShare float64 `json:"duplex_share"`
	// ReduceSecondsPerByte is a reducing exchange's time over a plain
	// one's, per byte received, the median over sizes, and 0 where it is
	// faster: the gamma of the reduction as the transport does it (a
	// real run reduces a message's pieces as they land, in the core's
	// cache, rather than after the whole has arrived).
	ReduceSecondsPerByte float64 `json:"reduce_s_per_byte"`
	// Sizes are the exchanges' sizes the fit used, ascending.
	Sizes []int64 `json:"sizes"`
	// Bands price the channel by size: one for each exchange size with a
	// ping-pong of its own (validate times one at every --exchange
	// size), ascending.
	Bands []bandFit `json:"bands"`
	// Unbanded are the exchange sizes with a ping-pong that got no band:
	// their one-way time was not above alpha (a loaded machine's alpha
	// can pass a small size's whole time), so the band below prices
	// them, or below the first band the channel's line and median share.
	Unbanded []int64 `json:"unbanded_sizes,omitempty"`
}

// bandFit is the channel for messages of From bytes up to the next
// band's: the bandwidth that gives the one-way time the ping-pong
// measured at From, and the duplex share that gives the exchange's.
type bandFit struct {
	From        int64   `json:"from"`
	OneWay      float64 `json:"one_way_s"`
	Exchange    float64 `json:"exchange_s"`
	Bandwidth   float64 `json:"bandwidth_bytes_per_s"`
	DuplexShare float64 `json:"duplex_share"`
}

// fitBand is the band of b bytes that a one-way time and an exchange's
// give, on a channel of latency alpha: a message takes alpha + b/bw, so
// bw = b / (oneWay - alpha); an exchange takes (1+share) b/bw when that
// is more than alpha + b/bw (validate's machine: network.LocalBand), so
// share = exchange / (b/bw) - 1, from 0 to 1. ok is false where the
// one-way time is not above alpha.
func fitBand(b int64, oneWay, exchange, alpha float64) (bandFit, bool) {
	ser := oneWay - alpha
	if b <= 0 || !(ser > 0) || !(exchange > 0) {
		return bandFit{}, false
	}
	share := min(1, max(0, exchange/ser-1))
	return bandFit{From: b, OneWay: oneWay, Exchange: exchange, Bandwidth: float64(b) / ser, DuplexShare: share}, true
}

// fitChannel reads the exchanges among sums against the ping-pong's fit.
func fitChannel(sums []realrun.Summary, h cost.Hockney) (channelFit, error) {
	if !(h.Beta > 0) {
		return channelFit{}, fmt.Errorf("the ping-pong's fit gives beta %g s/B: a channel's share of a message's time needs a positive one", h.Beta)
	}
	plain, reducing, measured := map[int64]float64{}, map[int64]float64{}, map[int64]float64{}
	var sizes []int64
	for _, s := range sums {
		if realcmd.IsPingPong(s) {
			measured[s.Bytes] = s.Median.Seconds() // one way
		}
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
	var bands []bandFit
	var unbanded []int64
	for _, b := range slices.Compact(slices.Sorted(slices.Values(sizes))) {
		r, ok := reducing[b]
		// The ping-pong's line must give the size a time to compare
		// with (a fallback alpha can be negative).
		oneWay := h.Alpha + h.Beta*float64(b)
		if b == 0 || !ok || !(oneWay > 0) {
			continue
		}
		// Against the one-way time measured at b where there is one (its
		// band's share), else the line's: the line fits every size at
		// once and can be 2-4x off one of them, which gave a channel
		// "full duplex" above bands of share 1 (an audit).
		ratio, share := plain[b]/oneWay, plain[b]/(h.Beta*float64(b))-1
		if math.IsInf(ratio, 0) { // a one-way time too small to divide by
			continue
		}
		if t, ok := measured[b]; ok {
			if band, ok := fitBand(b, t, plain[b], h.Alpha); ok {
				bands = append(bands, band)
				ratio, share = plain[b]/t, band.DuplexShare
			} else {
				unbanded = append(unbanded, b)
			}
		}
		ratios, gammas, fitted = append(ratios, ratio), append(gammas, (r-plain[b])/float64(b)), append(fitted, b)
		shares = append(shares, share)
	}
	if len(ratios) == 0 {
		return channelFit{}, fmt.Errorf("no exchange of a nonzero size, plain and reducing, that the ping-pong's fit gives a positive one-way time, to fit the channel to; give larger --exchange sizes")
	}
	ratio, _ := cost.Median(ratios)
	share, _ := cost.Median(shares)
	gamma, _ := cost.Median(gammas)
	return channelFit{Ratio: ratio, DuplexShare: min(1, max(0, share)), ReduceSecondsPerByte: max(0, gamma), Sizes: fitted, Bands: bands, Unbanded: unbanded}, nil
}

// oneHostYAML is the fitted machine of ranks that share one host: each
// rank's channel to the others has the ping-pong's alpha and beta and the
// exchanges' duplex (the median share) for messages below the first band,
// each band's bandwidth and duplex from its size up, and reductions cost
// what the reducing exchanges added. Every message is eager, as in real
// runs.
func oneHostYAML(ranks int, h cost.Hockney, ch channelFit) []byte {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	// A duplex share is written as a plain decimal, which is all
	// host.local_duplex takes (5e-05 would not load).
	share := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	reduce := ""
	if ch.ReduceSecondsPerByte > 0 {
		reduce = fmt.Sprintf("  reduce_bandwidth: %sB/s\n", num(1/ch.ReduceSecondsPerByte))
	}
	bands := ""
	if len(ch.Bands) > 0 {
		bands = "  local_by_size:\n"
		for _, b := range ch.Bands {
			bands += fmt.Sprintf("    - {from: %d, bandwidth: %sB/s, duplex: %s}\n", b.From, num(b.Bandwidth), share(b.DuplexShare))
		}
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
%s%s  eager_limit: none
placement: block
`, ranks, cmdutil.Seconds(h.Alpha), configs.FormatBandwidth(1/h.Beta), ch.DuplexShare, ch.Ratio,
		num(1/h.Beta), ranks, num(1/h.Beta), num(h.Alpha*1e9), share(ch.DuplexShare), bands, reduce)
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
	text := fmt.Sprintf("exchanges (%s) took %.2fx a one-way message (the median): each rank's channel is %s; reducing exchanges %s",
		strings.Join(sizes, ", "), ch.Ratio, duplex, gamma)
	if len(ch.Bands) > 0 {
		var bands []string
		for _, b := range ch.Bands {
			bands = append(bands, fmt.Sprintf("%s %s %.2f", configs.FormatBytes(b.From), configs.FormatBandwidth(b.Bandwidth), b.DuplexShare))
		}
		text += fmt.Sprintf("\nchannel by size (from, bandwidth, duplex share; below %s the median above and beta): %s", configs.FormatBytes(ch.Bands[0].From), strings.Join(bands, "; "))
	}
	return text
}
