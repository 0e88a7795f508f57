package trace

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"slices"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"

	"github.com/collsim/collsim/sim"
)

// MaxTimelineRanks bounds a timeline: a Gantt chart is read rank by rank,
// which stops being possible long before this.
const MaxTimelineRanks = 256

// kindColors colour the ops (a colour-blind-safe palette).
var kindColors = map[sim.OpKind]string{sim.OpSend: "#0072b2", sim.OpRecv: "#d55e00", sim.OpCalc: "#009e73"}

// WriteSVG draws the spans as a Gantt chart: a row per rank (more where its
// ops overlap), each op a bar coloured by kind (send, receive, compute)
// from its start to its end (a receive posted before its message was sent
// as a thin line until the send starts, then a bar), each message a thin line from its send's
// start to its receive's end (up to 2,000 of them), and a time axis.
func (r *Recorder) WriteSVG(w io.Writer, ranks int, title string) error {
	if r.err != nil {
		return r.err
	}
	if ranks > MaxTimelineRanks {
		return fmt.Errorf("a timeline of %d ranks is unreadable; draw at most %d (use --trace and Perfetto for more)", ranks, MaxTimelineRanks)
	}
	lanes := r.lanes(ranks)
	var end sim.Time
	for _, s := range r.Spans {
		end = max(end, s.End)
	}
	const left, right, top, laneH, gap = 70.0, 20.0, 46.0, 14.0, 6.0
	width := 960.0
	y := make([]float64, ranks+1) // top of each rank's rows
	y[0] = top
	for i, n := range lanes {
		y[i+1] = y[i] + float64(max(n, 1))*laneH + gap
	}
	height := y[ranks] + 40
	scale := (width - left - right) / math.Max(float64(end), 1)
	x := func(t sim.Time) float64 { return left + float64(t)*scale }
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="18" font-size="13">%s</text>`+"\n", left, html.EscapeString(title))
	// A receive waits, posted, until its message is sent: the wait is a
	// thin line, the transfer (from the send's start) a bar.
	arrives := map[int]sim.Time{}
	msgs := r.messages()
	waits := false
	for _, m := range msgs {
		arrives[m[1]] = r.Spans[m[0]].Start
		waits = waits || r.Spans[m[0]].Start > r.Spans[m[1]].Start
	}
	reductions := slices.ContainsFunc(r.Spans, func(s Span) bool { return s.Reduce > 0 })
	// The legend names what the chart draws: reductions where there are
	// any (a real run's, which are not timed, were named and never drawn:
	// a teacher's trial), the waits, and the messages' lines.
	legendX := left
	for _, k := range []sim.OpKind{sim.OpSend, sim.OpRecv, sim.OpCalc} {
		label := k.String()
		if k == sim.OpCalc && reductions {
			label = "calc, reduction"
		}
		fmt.Fprintf(b, `<rect x="%.0f" y="26" width="10" height="10" fill="%s"/><text x="%.0f" y="35">%s</text>`+"\n", legendX, kindColors[k], legendX+14, label)
		legendX += 70
		if label != k.String() {
			legendX += 30
		}
	}
	if waits {
		fmt.Fprintf(b, `<rect x="%.0f" y="30" width="10" height="2" fill="%s" fill-opacity="0.5"/><text x="%.0f" y="35">receive posted, no data yet</text>`+"\n", legendX, kindColors[sim.OpRecv], legendX+14)
		legendX += 175
	}
	if len(msgs) > 0 && len(msgs) <= 2000 {
		fmt.Fprintf(b, `<line x1="%.0f" y1="31" x2="%.0f" y2="31" stroke="#555" stroke-width="0.6"/><text x="%.0f" y="35">a message, send to receive</text>`+"\n", legendX, legendX+10, legendX+14)
	}
	for rank := range ranks {
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">rank %d</text>`+"\n", left-6, y[rank]+laneH-3, rank)
	}
	for i, s := range r.Spans {
		if s.End < 0 {
			continue
		}
		top := y[s.Rank] + float64(s.Lane)*laneH
		from := s.Start
		if a, ok := arrives[i]; ok && a > s.Start {
			from = min(a, s.End)
			fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="2" fill="%s" fill-opacity="0.5"/>`+"\n", x(s.Start), top+laneH/2-1, x(from)-x(s.Start), kindColors[s.Kind])
		}
		fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.0f" fill="%s" fill-opacity="0.85"><title>%s rank %d`, x(from), top+1, math.Max(x(s.End)-x(from), 0.5), laneH-2, kindColors[s.Kind], s.Kind, s.Rank)
		if s.Kind != sim.OpCalc {
			fmt.Fprintf(b, " peer %d tag %d", s.Peer, s.Tag)
		}
		fmt.Fprintf(b, " %d B, %s to %s</title></rect>\n", s.Bytes, seconds(s.Start), seconds(s.End))
		if s.Reduce > 0 {
			// A reducing receive's reduction, its last part, as compute
			// (it was drawn as part of the receive: a teacher's trial).
			fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.0f" fill="%s" fill-opacity="0.85"><title>reduction rank %d %d B, %s to %s</title></rect>`+"\n",
				x(s.End-s.Reduce), top+1, math.Max(x(s.End)-x(s.End-s.Reduce), 0.5), laneH-2, kindColors[sim.OpCalc], s.Rank, s.Bytes, seconds(s.End-s.Reduce), seconds(s.End))
		}
	}
	if len(msgs) <= 2000 {
		for _, m := range msgs {
			s, v := r.Spans[m[0]], r.Spans[m[1]]
			fmt.Fprintf(b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#555" stroke-width="0.6" stroke-opacity="0.6"/>`+"\n",
				x(s.Start), y[s.Rank]+float64(s.Lane)*laneH+laneH/2, x(v.End), y[v.Rank]+float64(v.Lane)*laneH+laneH/2)
		}
	}
	// The time axis: about 8 ticks at round values.
	axisY := y[ranks] + 4
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="black"/>`+"\n", left, axisY, width-right, axisY)
	step := niceStep(end.Seconds() / 8)
	for i := 0; step > 0 && float64(i)*step <= end.Seconds()*(1+1e-9); i++ {
		t := sim.FromSeconds(float64(i) * step)
		fmt.Fprintf(b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="black"/><text x="%.2f" y="%.1f" text-anchor="middle">%s</text>`+"\n",
			x(t), axisY, x(t), axisY+4, x(t), axisY+16, seconds(t))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", width-right, axisY+30, html.EscapeString(cmp.Or(r.Clock, "simulated time")))
	b.WriteString("</svg>\n")
	return b.Flush()
}

// niceStep is the round step (1, 2 or 5 times a power of ten) at or
// above s.
func niceStep(s float64) float64 {
	if s <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= s*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// seconds is t as cmdutil.Seconds writes it.
func seconds(t sim.Time) string { return cmdutil.Seconds(t.Seconds()) }
