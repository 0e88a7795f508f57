package explain

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
)

// maxCells bounds the elements a picture shows per buffer.
const maxCells = 256

// arrival is a message that lands in a frame.
type arrival struct {
	from, to int32
	data     sim.Region
	bytes    int64
	reduce   bool
	cost     float64 // its closed form: alpha + n beta (+ n gamma)
}

// frame is the state after every message of one instant has landed.
type frame struct {
	at       sim.Time
	arrivals []arrival
	state    [][][]uint64 // [rank][shown buffer][element]: the set of ranks (bits) each element holds
}

// pictures runs the algorithm with origin-tracking data (each element's
// value the set of ranks whose input it holds) and returns a frame for
// the start and for every instant at which data landed.
func pictures(m *configs.Machine, a collectives.Algorithm, p collectives.Params) ([]frame, []string, sim.Time, error) {
	s, err := a.Build(p)
	if err != nil {
		return nil, nil, 0, err
	}
	d, err := a.Origins(p)
	if err != nil {
		return nil, nil, 0, err
	}
	// Every buffer: the collective's, and the scratch the algorithm
	// stages data in (Bruck's rotations, a reduction's incoming blocks).
	shown := len(d.Buffers[0])
	var names []string
	total := 0
	for b, buf := range d.Buffers[0] {
		names = append(names, bufferName(a.Collective, uint8(b)))
		total += len(buf)
	}
	if total > maxCells {
		return nil, nil, 0, cmdutil.Flagf("%d elements in a rank's buffers: a picture shows at most %d; give a smaller --size", total, maxCells)
	}
	place, err := m.Place(p.Ranks, "", 1)
	if err != nil {
		return nil, nil, 0, err
	}
	net, err := m.Analytic(place)
	if err != nil {
		return nil, nil, 0, err
	}
	gamma := m.Host.ReducePsPerByte * 1e-12
	snapshot := func() [][][]uint64 {
		out := make([][][]uint64, len(d.Buffers))
		for r, bufs := range d.Buffers {
			for _, b := range bufs[:shown] {
				out[r] = append(out[r], append([]uint64(nil), b...))
			}
		}
		return out
	}
	// Each receive's rank, as it completes (its data is in by then):
	// grouped by instant after the run, a frame's state is every rank's
	// last picture up to it.
	type landed struct {
		at    sim.Time
		ar    arrival
		state [][]uint64
	}
	var events []landed
	trace := func(e sim.TraceEvent) {
		copied := isCopy(e) // done when it starts
		if !copied && (!e.Completed || e.Op.Kind != sim.OpRecv) || int(e.Op.Data.Buf) >= shown {
			return
		}
		ar := arrival{from: e.Op.Peer, to: e.Rank, data: e.Op.Data, bytes: e.Op.Bytes, reduce: e.Op.Reduce}
		if copied {
			ar.from = e.Rank // a local copy
		}
		alpha, beta := m.PathParams(int(place[ar.from]), int(place[ar.to]))
		ar.cost = alpha + float64(ar.bytes)*beta
		if ar.reduce {
			ar.cost += float64(ar.bytes) * gamma
		}
		var st [][]uint64
		for _, b := range d.Buffers[e.Rank][:shown] {
			st = append(st, append([]uint64(nil), b...))
		}
		events = append(events, landed{e.At, ar, st})
	}
	state := snapshot()
	frames := []frame{{state: snapshot()}}
	res, err := sim.Execute(sim.New(1), s, sim.Config{Host: m.Host, Network: net, Data: d.Buffers, Trace: trace})
	if err != nil {
		return nil, nil, 0, err
	}
	slices.SortStableFunc(events, func(x, y landed) int { return cmp.Compare(x.at, y.at) })
	for i := 0; i < len(events); {
		f := frame{at: events[i].at}
		for ; i < len(events) && events[i].at == f.at; i++ {
			f.arrivals = append(f.arrivals, events[i].ar)
			state[events[i].ar.to] = events[i].state
		}
		f.state = slices.Clone(state)
		frames = append(frames, f)
	}
	// The end as it is (local copies included).
	frames[len(frames)-1].state = snapshot()
	if err := d.Verify(); err != nil {
		return nil, nil, 0, &cmdutil.ValidationError{Err: fmt.Errorf("%s moved the wrong data: %w", a.ID(), err)}
	}
	return frames, names, res.Makespan, nil
}

// palette colours rank r's contribution.
// (Ranks 13 to 15 took colours close to 5, 4 and 0's; a teacher's trial.)
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
	"#bcbd22", "#17becf", "#393b79", "#e7ba52", "#637939", "#f3c300", "#a1caf1", "#8db600"}

const cell = 22

// layout places p rank boxes on a circle.
type layout struct {
	p          int
	boxW, boxH float64
	cx, cy, r  float64
	w, h       float64
	cols       int
}

func newLayout(p int, cells []int) *layout {
	cols := 1
	for _, n := range cells {
		cols = max(cols, min(n, 16))
	}
	l := &layout{p: p, cols: cols}
	l.boxW = math.Max(float64(cols*cell)+16, 100)
	rows := 0
	for _, n := range cells {
		rows += (n + cols - 1) / cols
	}
	l.boxH = float64(rows*cell) + 20 + 14*float64(len(cells))
	l.r = math.Max(150, float64(p)*(l.boxW+l.boxH+20)/(2*math.Pi))
	l.cx, l.cy = l.r+l.boxW/2+20, l.r+l.boxH/2+20
	l.w, l.h = 2*l.cx, 2*l.cy
	return l
}

// center is rank r's box centre: rank 0 at the top, clockwise.
func (l *layout) center(r int) (float64, float64) {
	a := 2*math.Pi*float64(r)/float64(l.p) - math.Pi/2
	if l.p == 1 {
		return l.cx, l.cy
	}
	return l.cx + l.r*math.Cos(a), l.cy + l.r*math.Sin(a)
}

// svg draws one frame.
func (l *layout) svg(f *frame, prev *frame, k int, names []string, title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`, l.w, l.h, l.w, l.h)
	fmt.Fprintf(&b, `<title>%s</title><defs><marker id="arr%[2]d" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>`, html.EscapeString(title), k)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`)
	// The caption in sight, for a step's SVG file shown alone (on a slide:
	// it was only in <title>, a teacher's trial).
	fmt.Fprintf(&b, `<text x="6" y="16" font-size="12" fill="#333">%s</text>`, html.EscapeString(title))
	for _, a := range f.arrivals {
		if a.from == a.to {
			continue
		}
		x1, y1 := l.center(int(a.from))
		x2, y2 := l.center(int(a.to))
		// Stop at the boxes' edges.
		dx, dy := x2-x1, y2-y1
		n := math.Hypot(dx, dy)
		ux, uy := dx/n, dy/n
		cut := math.Min(l.boxW/2/math.Max(math.Abs(ux), 1e-9), l.boxH/2/math.Max(math.Abs(uy), 1e-9)) + 3
		x1, y1, x2, y2 = x1+ux*cut, y1+uy*cut, x2-ux*cut, y2-uy*cut
		// A reduction's arrow is dashed and marked "+": its data is added
		// into what the receiver holds, not written over it.
		dash := ""
		if a.reduce {
			dash = ` stroke-dasharray="6 3"`
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="14" font-weight="bold" fill="#222">+</text>`, (x1+x2)/2+4, (y1+y2)/2-4)
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444" stroke-width="2"%s marker-end="url(#arr%d)"/>`, x1, y1, x2, y2, dash, k)
	}
	for r := range l.p {
		x, y := l.center(r)
		x0, y0 := x-l.boxW/2, y-l.boxH/2
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="4" fill="#fafafa" stroke="%s" stroke-width="2"/>`, x0, y0, l.boxW, l.boxH, palette[r%len(palette)])
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="bold">rank %d</text>`, x0+6, y0+13, r)
		yy := y0 + 20
		for bi, buf := range f.state[r] {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9" fill="#555">%s</text>`, x0+8, yy+9, names[bi])
			yy += 12
			for i, v := range buf {
				cx := x0 + 8 + float64(i%l.cols*cell)
				cy := yy + float64(i/l.cols*cell)
				b.WriteString(cellSVG(cx, cy, v, l.p))
				// The element's index, and a frame where it changed in
				// this step.
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="8" fill="#000" fill-opacity="0.55">%d</text>`, cx+2, cy+9, i)
				if prev != nil && prev.state[r][bi][i] != v {
					fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="none" stroke="black" stroke-width="2.5"/>`, cx+1, cy+1, cell-2, cell-2)
				}
			}
			yy += float64((len(buf)+l.cols-1)/l.cols*cell) + 2
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// cellSVG draws an element: a stripe for each rank whose input it holds,
// light grey when it holds none.
func cellSVG(x, y float64, v uint64, p int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="#e8e8e8" stroke="white" stroke-width="0.5"/>`, x, y, cell, cell)
	var holders []int
	for r := range p {
		if v&(1<<r) != 0 {
			holders = append(holders, r)
		}
	}
	w := float64(cell) / float64(max(len(holders), 1))
	for k, r := range holders {
		fmt.Fprintf(&b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%d" fill="%s"/>`, x+float64(k)*w, y, w, cell, palette[r%len(palette)])
	}
	return b.String()
}

// caption describes a frame in text: when, what landed, and the closed
// form of the step (its slowest message).
func caption(c collectives.Collective, f *frame, k, n int, prev sim.Time) string {
	if k == 0 {
		return "Start: each rank holds its own input (its colour); grey elements hold nothing yet."
	}
	var b strings.Builder
	step, copies := 0.0, 0
	for _, a := range f.arrivals {
		if a.from == a.to {
			copies++
			continue
		}
		step = math.Max(step, a.cost)
	}
	fmt.Fprintf(&b, "Step %d of %d, at %v (simulated; %v after the step before).", k, n-1, f.at, f.at-prev)
	if step > 0 {
		fmt.Fprintf(&b, " Closed form of the step's slowest message: %s.", cmdutil.Seconds(step))
	}
	if copies > 0 {
		fmt.Fprintf(&b, " Local copies: %d.", copies)
	}
	b.WriteString("\n")
	shown := 0
	for _, a := range f.arrivals {
		if a.from == a.to {
			continue
		}
		if shown == 12 {
			fmt.Fprintf(&b, "... and more\n")
			break
		}
		shown++
		verb := "into"
		if a.reduce {
			verb = "added into"
		}
		fmt.Fprintf(&b, "rank %d -> rank %d: %d B %s %s (alpha + n beta%s = %s)\n", a.from, a.to, a.bytes, verb, elements(c, a.data),
			map[bool]string{true: " + n gamma", false: ""}[a.reduce], cmdutil.Seconds(a.cost))
	}
	return b.String()
}

// writePictures writes the frames as an HTML step-through (html != "")
// and as one SVG per step into svgDir (svgDir != "").
func writePictures(m *configs.Machine, a collectives.Algorithm, p collectives.Params, htmlFile, svgDir string) error {
	frames, names, end, err := pictures(m, a, p)
	if err != nil {
		return err
	}
	c := a.Collective
	cells := make([]int, len(names))
	for i := range names {
		cells[i] = len(frames[0].state[0][i])
	}
	l := newLayout(p.Ranks, cells)
	title := fmt.Sprintf("%s on %s, %s, on %s", a.ID(), collsim.RankCount(p.Ranks), configs.FormatBytes(p.SizeBytes(c)), m.Name)
	var svgs, caps []string
	prev := sim.Time(0)
	for k := range frames {
		f := &frames[k]
		// Marker ids differ per frame: a marker in a hidden frame would
		// not draw in the frame shown.
		var before *frame
		if k > 0 {
			before = &frames[k-1]
		}
		svgs = append(svgs, l.svg(f, before, k, names, fmt.Sprintf("%s: step %d", title, k)))
		caps = append(caps, caption(c, f, k, len(frames), prev))
		prev = f.at
	}
	if svgDir != "" {
		if err := os.MkdirAll(svgDir, 0o755); err != nil {
			return err
		}
		for k, s := range svgs {
			if err := os.WriteFile(filepath.Join(svgDir, fmt.Sprintf("step-%03d.svg", k)), []byte(s), 0o644); err != nil {
				return err
			}
		}
	}
	if htmlFile == "" {
		return nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>%s</title><style>
body{font-family:sans-serif;margin:20px;max-width:1400px}
.frame{display:none}.frame.on{display:block}
.frame svg{max-width:100%%;height:auto}
#controls button{font-size:16px;margin-right:4px}
#step{width:420px;vertical-align:middle}
pre{background:#f4f4f4;padding:8px;white-space:pre-wrap}
.legend span{display:inline-block;margin-right:10px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
</style></head><body>
<h1>%s</h1>
<p>%s</p>
<p>Each box is a rank and each small square an element of its %s, striped with the colours of the ranks whose input it
holds (a reduction's partial sums hold several); the number in a square is the element's index, and a black
frame marks the elements that changed in the step. Arrows are the messages that land in the step (dashed, with a
+: added into the elements). A step is a moment at which messages land, not a round of the algorithm: a round
whose blocks differ in size lands at two moments, and a tree level's messages at as many as their routes take.
Done at %v simulated (<code>collsim run</code> with the same call prints the algorithm's closed form, counted by
rounds, beside it).</p>
<div class="legend">`, html.EscapeString(title), html.EscapeString(title), html.EscapeString(a.Summary), html.EscapeString(strings.Join(names, " and ")), end)
	for r := range p.Ranks {
		fmt.Fprintf(&b, `<span><i style="background:%s"></i>rank %d</span>`, palette[r%len(palette)], r)
	}
	fmt.Fprintf(&b, `</div>
<div id="controls"><button id="first" title="first (Home)">|&#x25C0;</button><button id="prev" title="previous (&larr;)">&#x25C0;</button><button id="play" title="play / pause (space)">&#x25B6;</button><button id="next" title="next (&rarr;)">&#x25B6;&#x25B6;</button><button id="last" title="last (End)">&#x25B6;|</button>
<input type="range" id="step" min="0" max="%d" value="0"> <span id="label"></span></div>
`, len(frames)-1)
	for k := range frames {
		fmt.Fprintf(&b, "<div class=\"frame\" id=\"f%d\"><pre>%s</pre>%s</div>\n", k, html.EscapeString(caps[k]), svgs[k])
	}
	b.WriteString(`<script>
(function () {
  var n = document.querySelectorAll('.frame').length, cur = -1, timer = null;
  var slider = document.getElementById('step'), label = document.getElementById('label');
  function show(k) {
    k = Math.max(0, Math.min(n - 1, k));
    if (cur >= 0) document.getElementById('f' + cur).classList.remove('on');
    document.getElementById('f' + k).classList.add('on');
    cur = k; slider.value = k; label.textContent = 'step ' + k + ' of ' + (n - 1);
  }
  function play() {
    if (timer) { clearInterval(timer); timer = null; return; }
    if (cur === n - 1) show(0);
    timer = setInterval(function () { if (cur >= n - 1) { clearInterval(timer); timer = null; } else show(cur + 1); }, 900);
  }
  document.getElementById('first').onclick = function () { show(0); };
  document.getElementById('prev').onclick = function () { show(cur - 1); };
  document.getElementById('next').onclick = function () { show(cur + 1); };
  document.getElementById('last').onclick = function () { show(n - 1); };
  document.getElementById('play').onclick = play;
  slider.oninput = function () { show(+slider.value); };
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowRight') show(cur + 1); else if (e.key === 'ArrowLeft') show(cur - 1);
    else if (e.key === 'Home') show(0); else if (e.key === 'End') show(n - 1);
    else if (e.key === ' ') { e.preventDefault(); play(); }
  });
  // Step through every frame once (each must show), then open the step
  // the address names: #step=N or #step=last.
  for (var k = 0; k < n; k++) {
    show(k);
    if (!document.getElementById('f' + k).querySelector('svg')) console.error('step ' + k + ' has no picture');
  }
  var m = /step=(\d+|last)/.exec(location.hash);
  show(m ? (m[1] === 'last' ? n - 1 : +m[1]) : 0);
})();
</script></body></html>
`)
	return os.WriteFile(htmlFile, b.Bytes(), 0o644)
}
