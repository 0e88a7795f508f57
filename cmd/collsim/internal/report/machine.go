package report

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/topology"
)

// MaxDrawnVertices is the most hosts and switches a machine picture draws
// one by one; a larger machine is drawn as its layers, with counts.
const MaxDrawnVertices = 160

// Machine is a machine's section: its facts and its picture, drawn by
// Graphviz (dot) where it is installed and the machine small enough,
// else by collsim's own layered layout. The note says which.
func Machine(m *configs.Machine) Section {
	var rows [][]string
	for _, f := range m.Describe() {
		rows = append(rows, []string{f[0], f[1]})
	}
	if m.Description != "" {
		rows = append(rows, []string{"description", m.Description})
	}
	s := Section{Heading: "Machine " + m.Name, Body: Table([]string{"", ""}, rows, nil)}
	t := m.Topology
	if pic, ok := graphviz(t); ok {
		s.Notes = append(s.Notes, "Drawn by Graphviz (dot) from collsim topo --dot.")
		s.Body += pic
		return s
	}
	if t.Vertices() > MaxDrawnVertices {
		s.Notes = append(s.Notes, fmt.Sprintf("%d hosts and %d switches: drawn as layers (hosts at the bottom, each layer of switches the hops above them), with the links between layers counted.", t.Hosts(), t.Switches()))
	} else {
		why := "Graphviz (dot) is not installed"
		if _, err := exec.LookPath("dot"); err == nil {
			why = "Graphviz did not draw it"
		}
		s.Notes = append(s.Notes, why+": drawn by collsim's layered layout (hosts at the bottom, switches by hops above them).")
	}
	s.Body += template.HTML(layered(t))
	return s
}

// graphviz draws t with dot, if it is installed and t small enough.
func graphviz(t *topology.Topology) (template.HTML, bool) {
	dot, err := exec.LookPath("dot")
	if err != nil || t.Vertices() > MaxDrawnVertices {
		return "", false
	}
	src, err := t.DOT()
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, dot, "-Tsvg")
	cmd.Stdin = bytes.NewReader(src)
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return InlineSVG(out), true
}

// layers gives each vertex its hops from the nearest host (hosts 0).
func layers(t *topology.Topology) []int {
	layer := make([]int, t.Vertices())
	for i := range layer {
		layer[i] = -1
	}
	var queue []int32
	for h := range t.Hosts() {
		layer[h] = 0
		queue = append(queue, int32(h))
	}
	adj := make([][]int32, t.Vertices())
	for _, l := range t.Links() {
		adj[l.From] = append(adj[l.From], l.To)
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range adj[v] {
			if layer[w] < 0 {
				layer[w] = layer[v] + 1
				queue = append(queue, w)
			}
		}
	}
	return layer
}

// layered draws t as an SVG: a row per layer, the hosts at the bottom.
// Small machines show every vertex and link; large ones a box per layer
// and a line per pair of layers, labelled with counts.
func layered(t *topology.Topology) string {
	layer := layers(t)
	top := slices.Max(layer)
	byLayer := make([][]int32, top+1)
	for v, l := range layer {
		if l >= 0 {
			byLayer[l] = append(byLayer[l], int32(v))
		}
	}
	const width, rowH, margin = 1000.0, 90.0, 40.0
	height := float64(top+1)*rowH + margin
	y := func(l int) float64 { return height - margin/2 - float64(l)*rowH - 10 }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="10">`, width, height, width, height)
	if t.Vertices() <= MaxDrawnVertices {
		x := make([]float64, t.Vertices())
		for _, vs := range byLayer {
			for i, v := range vs {
				x[v] = margin + (width-2*margin)*(float64(i)+0.5)/float64(len(vs))
			}
		}
		seen := map[[2]int32]bool{}
		for _, l := range t.Links() {
			a, c := min(l.From, l.To), max(l.From, l.To)
			if seen[[2]int32{a, c}] || layer[a] < 0 || layer[c] < 0 {
				continue
			}
			seen[[2]int32{a, c}] = true
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-width="0.7"/>`, x[a], y(layer[a]), x[c], y(layer[c]))
		}
		for v := range t.Vertices() {
			if layer[v] < 0 {
				continue
			}
			fill := "#0072b2"
			if v >= t.Hosts() {
				fill = "#d55e00"
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s</title></circle>`, x[v], y(layer[v]), fill, template.HTMLEscapeString(t.Label(int32(v))))
		}
	} else {
		links := map[[2]int]int{}
		for _, l := range t.Links() {
			a, c := layer[l.From], layer[l.To]
			if a >= 0 && c >= 0 && a <= c {
				links[[2]int{a, c}]++
			}
		}
		for k, n := range links {
			if k[0] == k[1] {
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f">%d links within</text>`, width-margin-120, y(k[0])+4, n)
				continue
			}
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#999" stroke-width="2"/><text x="%.0f" y="%.1f">%d links</text>`,
				width/2, y(k[0]), width/2, y(k[1]), width/2+8, (y(k[0])+y(k[1]))/2, n)
		}
		for l, vs := range byLayer {
			what := fmt.Sprintf("%d switches, %d hop(s) above the hosts", len(vs), l)
			if l == 0 {
				what = fmt.Sprintf("%d hosts", len(vs))
			}
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="300" height="22" fill="white" stroke="#333"/><text x="%.0f" y="%.1f" text-anchor="middle">%s</text>`,
				width/2-150, y(l)-11, width/2, y(l)+4, what)
		}
	}
	b.WriteString("</svg>")
	return `<div class="figure">` + b.String() + `</div>`
}
