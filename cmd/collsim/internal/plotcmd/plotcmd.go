// Package plotcmd is `collsim plot`: a line plot of a results table (a
// sweep's output, or run --csv).
package plotcmd

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/cmd/collsim/internal/sweep"
	"github.com/collsim/collsim/configs"
)

// Options are the flags of `collsim plot`.
type Options struct {
	X, Y, Series, Facet string
	// Where keeps only the rows whose column COL holds VALUE, for each
	// "COL=VALUE" (a line of one library, not a mean of two).
	Where         []string
	LogX, LogY    bool
	Output, Title string
	Heatmap       bool
}

// New returns the plot command.
func New(streams *cmdutil.IO) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "plot RESULTS.csv|RESULTS.jsonl --x COLUMN --y COLUMN",
		Short: "Draw a results table (a sweep's output, run --csv) as lines, PNG or SVG",
		Long: `Draw one line per value of --series (and one panel per value of --facet)
from a table with a header: a sweep's CSV or JSON Lines, or run --csv. Rows
without a y value (failed points) are left out and counted. Where several
rows of a line share an x (an axis not named, or replicas), the line goes
through their mean with an error bar from their least to their greatest
value, and collsim says which columns differ among them. Axes are labelled
with units taken from the column names (_s: seconds, _GBps: GB/s, size and
bytes: bytes, labelled 64KiB on a log axis) or from the values where they
carry their own (a swept link.bandwidth of 100Gbit/s is drawn in GB/s, a
latency in seconds); the legend stands beside the data, never over it.
--where COL=VALUE keeps the rows whose COL is VALUE (repeat it for more).`,
		Example: `  collsim sweep study.yaml -o results.csv
  collsim plot results.csv --x size --y time_s --series algo --facet machine --logx --logy -o time.svg
  collsim plot results.csv --x size --y busbw_GBps --series network.fat_tree.taper --where algo=ompi --logx
  collsim run -a ring,recursive_doubling -s 8..64MiB --csv > run.csv
  collsim plot run.csv --x size_bytes --y busbw_GBps --series algorithm --logx -o busbw.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(streams, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.X, "x", "", "column for the x axis (numbers)")
	f.StringVar(&o.Y, "y", "time_s", "column for the y axis (numbers)")
	f.StringVar(&o.Series, "series", "", "column whose values are the lines (default: one line)")
	f.StringVar(&o.Facet, "facet", "", "column whose values are separate panels")
	f.StringArrayVar(&o.Where, "where", nil, "COL=VALUE: keep only the rows whose column COL is VALUE (repeatable)")
	f.BoolVar(&o.LogX, "logx", false, "logarithmic x axis")
	f.BoolVar(&o.LogY, "logy", false, "logarithmic y axis")
	f.StringVarP(&o.Output, "output", "o", "plot.png", "the picture: a .png or .svg file")
	f.StringVar(&o.Title, "title", "", "the title (default: y against x)")
	f.BoolVar(&o.Heatmap, "heatmap", false, "draw a run's links over time (run --links N --links-csv FILE): a row per link, time across, colour the utilization")
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if !o.Heatmap && o.X == "" {
			return cmdutil.Flagf("give --x (the column for the x axis), or --heatmap for run --links-csv's table")
		}
		return nil
	}
	return cmd
}

// Table is a results table: a header and rows of text.
type Table struct {
	Name    string // the file, for errors
	Columns []string
	Rows    [][]string
}

// line is where row r of the table is in its file (a header first).
func (t *Table) line(r int) string { return fmt.Sprintf("%s:%d", t.Name, r+2) }

// number reads a cell as a number: plain, or with units as collsim writes
// them (a size in bytes, a bandwidth in bytes per second, a duration in
// seconds: a sweep's axis "100Gbit/s" is 1.25e10). Infinities and NaN are
// not numbers to draw.
func number(cell string) (float64, bool) {
	f, _, ok := withUnit(cell)
	return f, ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// withUnit reads a cell as number does, and names the unit its text
// carried: "" for a plain number, else bytes, B/s or s.
func withUnit(cell string) (v float64, unit string, ok bool) {
	if f, err := strconv.ParseFloat(cell, 64); err == nil {
		return f, "", true
	}
	if n, err := configs.ParseSize(cell); err == nil {
		return float64(n), "bytes", true
	}
	if b, err := configs.ParseBandwidth(cell); err == nil {
		return b, "B/s", true
	}
	if d, err := configs.ParseDuration(cell); err == nil {
		return d.Seconds(), "s", true
	}
	return 0, "", false
}

// Number reads a cell as plot reads it: a plain number, or one with the
// units collsim writes (see number).
func Number(cell string) (float64, bool) { return number(cell) }

// nonFinite reports whether cell is a number that is not finite (NaN,
// inf): a value of a column of numbers, not a column of words.
func nonFinite(cell string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
	return err == nil && (math.IsNaN(f) || math.IsInf(f, 0))
}

// LoadTable reads the table in file (see ReadTable), refusing one larger
// than configs.MaxTableBytes or with a line longer than
// configs.MaxLineBytes.
func LoadTable(file string) (*Table, error) {
	in, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return ReadTable(file, configs.BoundedTable(in, "a results table"))
}

// ReadTable reads CSV with a header, or JSON Lines (by the name, as
// sweep.FormatOf reads it: .jsonl or .ndjson in any case), whose objects'
// keys are the columns in first-seen order.
func ReadTable(name string, r io.Reader) (*Table, error) {
	if sweep.FormatOf(name) == sweep.JSONL { // (x.JSONL, which sweep and merge take, was read as CSV)
		t := &Table{Name: name}
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<24)
		for line := 1; sc.Scan(); line++ {
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			var row map[string]any
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.UseNumber()
			if err := dec.Decode(&row); err != nil {
				return nil, fmt.Errorf("%s:%d: not a JSON object: %v", name, line, err)
			}
			for _, k := range objectKeys(sc.Text()) {
				if !slices.Contains(t.Columns, k) {
					t.Columns = append(t.Columns, k)
				}
			}
			vals := make([]string, len(t.Columns))
			for i, c := range t.Columns {
				if v, ok := row[c]; ok && v != nil {
					vals[i] = fmt.Sprint(v)
				}
			}
			t.Rows = append(t.Rows, vals)
		}
		// A key first seen in a later object is a column of every row:
		// the earlier rows hold nothing there.
		for i, r := range t.Rows {
			if len(r) < len(t.Columns) {
				t.Rows[i] = append(r, make([]string, len(t.Columns)-len(r))...)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return t, nil
	}
	br := bufio.NewReader(r)
	head, _ := br.Peek(64)
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		// JSON read as CSV failed with "bare \" in non-quoted-field".
		return nil, fmt.Errorf("%s: JSON, not CSV (run --json's output?): give a CSV with a header (run --csv, a sweep's output), or JSON Lines named .jsonl", name)
	}
	cr := csv.NewReader(br)
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty; give a table with a header (a sweep's output, or run --csv)", name)
	}
	return &Table{Name: name, Columns: recs[0], Rows: recs[1:]}, nil
}

// objectKeys are a JSON object's keys in the order written.
func objectKeys(text string) []string {
	dec := json.NewDecoder(strings.NewReader(text))
	var keys []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// column is the index of a column, or a usage error naming the columns.
func (t *Table) column(flag, name string) (int, error) {
	i := slices.Index(t.Columns, name)
	if i < 0 {
		return 0, cmdutil.Flagf("--%s %s: no such column; columns: %s", flag, name, strings.Join(t.Columns, ", "))
	}
	return i, nil
}

// Run carries out `collsim plot`.
func Run(streams *cmdutil.IO, o *Options, file string) error {
	if !strings.HasSuffix(o.Output, ".png") && !strings.HasSuffix(o.Output, ".svg") {
		return cmdutil.Flagf("-o %s: give a .png or .svg file", o.Output)
	}
	t, err := LoadTable(file)
	if err != nil {
		return err
	}
	if o.Heatmap {
		h, err := linkHeat(t, o.Title)
		if err != nil {
			return err
		}
		if err := h.Save(o.Output); err != nil {
			return err
		}
		fmt.Fprintln(streams.Out, o.Output)
		return nil
	}
	fig, notes, err := o.Figure(t)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(streams.Err, "collsim: note:", n)
	}
	if err := fig.Save(o.Output); err != nil {
		return err
	}
	fmt.Fprintln(streams.Out, o.Output)
	return nil
}

// Figure builds the plot of t, and notes on what it left out or averaged.
func (o *Options) Figure(t *Table) (*plotutil.Figure, []string, error) {
	x, err := t.column("x", o.X)
	if err != nil {
		return nil, nil, err
	}
	y, err := t.column("y", o.Y)
	if err != nil {
		return nil, nil, err
	}
	series, facet := -1, -1
	if o.Series != "" {
		if series, err = t.column("series", o.Series); err != nil {
			return nil, nil, err
		}
	}
	if o.Facet != "" {
		if facet, err = t.column("facet", o.Facet); err != nil {
			return nil, nil, err
		}
	}
	type match struct {
		col   int
		value string
	}
	var where []match
	for _, w := range o.Where {
		name, value, ok := strings.Cut(w, "=")
		if !ok {
			return nil, nil, cmdutil.Flagf("--where %s: give COLUMN=VALUE, such as algo=ompi", w)
		}
		c, err := t.column("where", name)
		if err != nil {
			return nil, nil, err
		}
		where = append(where, match{c, value})
	}
	xUnit, xScale := t.unit(x)
	yUnit, yScale := t.unit(y)
	type point struct {
		x    float64
		ys   []float64
		rows []int
	}
	type line struct {
		name   string
		points []*point
	}
	var facets []string
	lines := map[string][]*line{} // by facet, in first-seen order
	skipped, bad, nonPositive, other := 0, 0, 0, 0
	for r, row := range t.Rows {
		if slices.ContainsFunc(where, func(m match) bool { return row[m.col] != m.value }) {
			other++
			continue
		}
		if row[y] == "" {
			skipped++
			continue
		}
		xv, okx := number(row[x])
		yv, oky := number(row[y])
		xv, yv = xv*xScale, yv*yScale
		if !okx || !oky {
			bad++
			// A first row that is not numbers at all names the wrong
			// column; NaN or inf there is a point like any other left
			// out (it refused the whole table; a new user's trial).
			if r == 0 && (!okx && !nonFinite(row[x]) || !oky && !nonFinite(row[y])) {
				return nil, nil, cmdutil.Flagf("%s: %s=%q, %s=%q: --x and --y need columns of numbers", t.line(r), o.X, row[x], o.Y, row[y])
			}
			continue
		}
		if o.LogX && xv <= 0 || o.LogY && yv <= 0 {
			nonPositive++
			continue
		}
		f, s := "", ""
		if facet >= 0 {
			f = strings.ToValidUTF8(row[facet], "\uFFFD") // labels of an SVG, which is UTF-8
		}
		if series >= 0 {
			s = strings.ToValidUTF8(row[series], "\uFFFD")
		}
		if _, ok := lines[f]; !ok {
			facets = append(facets, f)
		}
		i := slices.IndexFunc(lines[f], func(l *line) bool { return l.name == s })
		if i < 0 {
			lines[f] = append(lines[f], &line{name: s})
			i = len(lines[f]) - 1
		}
		l := lines[f][i]
		j := slices.IndexFunc(l.points, func(p *point) bool { return p.x == xv })
		if j < 0 {
			l.points = append(l.points, &point{x: xv})
			j = len(l.points) - 1
		}
		l.points[j].ys = append(l.points[j].ys, yv)
		l.points[j].rows = append(l.points[j].rows, r)
	}
	if len(facets) == 0 {
		if other == len(t.Rows) && len(t.Rows) > 0 {
			return nil, nil, cmdutil.Flagf("--where %s: no row matches", strings.Join(o.Where, " --where "))
		}
		return nil, nil, fmt.Errorf("no row has numbers in both %s and %s", o.X, o.Y)
	}
	var notes []string
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d rows without %s (failed points) left out", skipped, o.Y))
	}
	if bad > 0 {
		notes = append(notes, fmt.Sprintf("%d rows whose %s or %s is not a finite number left out", bad, o.X, o.Y))
	}
	if nonPositive > 0 {
		notes = append(notes, fmt.Sprintf("%d rows with a value of 0 or less on a log axis left out", nonPositive))
	}
	varying := map[int]bool{}
	fig := &plotutil.Figure{}
	for _, f := range facets {
		p := plotutil.Panel{XLabel: labelIn(o.X, xUnit), YLabel: labelIn(o.Y, yUnit), LogX: o.LogX, LogY: o.LogY, XBytes: o.LogX && (isBytes(o.X) || xUnit == "bytes")}
		p.Title = cmp.Or(o.Title, labelIn(o.Y, yUnit)+" against "+o.X)
		if facet >= 0 {
			p.Title = o.Facet + " " + f
			if b, err := strconv.ParseInt(f, 10, 64); err == nil && isBytes(o.Facet) {
				p.Title = o.Facet + " " + configs.FormatBytes(b) // "size 8MiB", not 8388608
			}
			if o.Title != "" {
				p.Title = o.Title + ", " + p.Title
			}
		}
		if len(o.Where) > 0 && o.Title == "" {
			// The rows kept say so (nothing in the plot said taper=2: a
			// new user's trial).
			p.Title += ", where " + strings.Join(o.Where, ", ")
		}
		for _, l := range lines[f] {
			slices.SortFunc(l.points, func(a, b *point) int { return cmp.Compare(a.x, b.x) })
			s := plotutil.Series{Name: l.name}
			if _, ok := number(l.name); ok {
				// "taper 2", not a bare "2"; "host.reduce_bandwidth
				// 10GB/s", not a bare "10GB/s"; "size 16MiB", not
				// 16777216 (a new user's trial).
				s.Name = o.Series + " " + l.name
				if b, err := strconv.ParseInt(l.name, 10, 64); err == nil && isBytes(o.Series) {
					s.Name = o.Series + " " + configs.FormatBytes(b)
				}
			}
			if series >= 0 && l.name == "" {
				s.Name = "(none)"
			}
			spread := false
			for _, pt := range l.points {
				lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
				for _, v := range pt.ys {
					lo, hi, sum = min(lo, v), max(hi, v), sum+v
				}
				s.X, s.Y = append(s.X, pt.x), append(s.Y, sum/float64(len(pt.ys)))
				s.YLow, s.YHigh = append(s.YLow, lo), append(s.YHigh, hi)
				if len(pt.rows) > 1 {
					spread = true
					for c := range t.Columns {
						for _, r := range pt.rows[1:] {
							if t.Rows[r][c] != t.Rows[pt.rows[0]][c] {
								varying[c] = true
							}
						}
					}
				}
			}
			if !spread {
				s.YLow, s.YHigh = nil, nil
			}
			p.Lines = append(p.Lines, s)
		}
		fig.Panels = append(fig.Panels, p)
	}
	if len(varying) > 0 {
		// A sweep's axes are what the user varied; the result columns
		// that differ follow from them.
		axes := sweep.AxisColumns(t.Columns)
		var cols []string
		for c := range t.Columns {
			if varying[c] && !slices.Contains([]string{o.Y, "point", "wall_s", "ops_per_s"}, t.Columns[c]) && (axes == nil || slices.Contains(axes, t.Columns[c])) {
				cols = append(cols, t.Columns[c])
			}
		}
		if len(cols) == 0 {
			// Rows that differ only in their y (replicas, or repeated
			// points) named no column (a new user's trial).
			notes = append(notes, "several rows share an x in a line, with nothing but their y apart (replicas, or the same point run twice); drawn as their mean with an error bar from least to greatest")
		} else {
			notes = append(notes, fmt.Sprintf("several rows share an x in a line; drawn as their mean with an error bar from least to greatest; the rows differ in: %s (name one with --series or --facet to tell them apart)", strings.Join(cols, ", ")))
		}
	}
	return fig, notes, nil
}

// isBytes says whether a column holds bytes, by its name.
func isBytes(col string) bool {
	return col == "size" || strings.Contains(col, "bytes")
}

// unit says how a column whose cells carry their own units (a swept
// link.bandwidth of 100Gbit/s, a latency of 500ns) is drawn: its first
// value decides (a plain number: none), and bandwidths are drawn in
// GB/s ("2e+10" ticks read as nothing: a new user's trial). "" and 1
// where the cells are plain numbers.
func (t *Table) unit(col int) (unit string, scale float64) {
	for _, row := range t.Rows {
		cell := strings.TrimSpace(row[col])
		if cell == "" {
			continue
		}
		switch _, u, _ := withUnit(cell); u {
		case "B/s":
			return "GB/s", 1e-9
		default:
			return u, 1
		}
	}
	return "", 1
}

// labelIn is label, or the column with the unit its values carry.
func labelIn(col, unit string) string {
	if l := label(col); l != col || unit == "" {
		return l
	}
	return col + " (" + unit + ")"
}

// label is a column's axis label with its unit, from the name's suffix.
func label(col string) string {
	switch {
	case strings.HasSuffix(col, "_GBps"):
		return strings.TrimSuffix(col, "_GBps") + " (GB/s)"
	case strings.HasSuffix(col, "_s"):
		return strings.TrimSuffix(col, "_s") + " (s)"
	case isBytes(col):
		return strings.TrimSuffix(strings.TrimSuffix(col, "_bytes"), "bytes") + " (bytes)"
	}
	return col
}

// linkHeat reads run --links-csv's table (link, start_s, end_s,
// utilization) into a heat map: a row per link in the table's order.
func linkHeat(t *Table, title string) (*plotutil.TimeHeat, error) {
	var cols [4]int
	for i, name := range []string{"link", "start_s", "end_s", "utilization"} {
		c := slices.Index(t.Columns, name)
		if c < 0 {
			return nil, cmdutil.Flagf("--heatmap draws run --links-csv's table; this one has no %s column (columns: %s)", name, strings.Join(t.Columns, ", "))
		}
		cols[i] = c
	}
	h := &plotutil.TimeHeat{Title: cmp.Or(title, "link utilization over time"), ValueLabel: "utilization (carried / bandwidth)", Max: 1}
	for r, row := range t.Rows {
		end, ok1 := number(row[cols[2]])
		u, ok2 := number(row[cols[3]])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s: end_s %q, utilization %q: not numbers", t.line(r), row[cols[2]], row[cols[3]])
		}
		link := row[cols[0]]
		if len(h.Rows) == 0 || h.Rows[len(h.Rows)-1] != link {
			if slices.Contains(h.Rows, link) {
				return nil, fmt.Errorf("%s: link %s again after other links; each link's spans come together, as run writes them", t.line(r), link)
			}
			h.Rows = append(h.Rows, link)
			h.Values = append(h.Values, nil)
		}
		h.Values[len(h.Values)-1] = append(h.Values[len(h.Values)-1], u)
		h.End = max(h.End, end)
	}
	if len(h.Rows) == 0 {
		return nil, errors.New("the table has no rows")
	}
	for i, v := range h.Values {
		if len(v) != len(h.Values[0]) {
			return nil, fmt.Errorf("link %s has %d spans, %s has %d; give one run's table", h.Rows[i], len(v), h.Rows[0], len(h.Values[0]))
		}
		for _, u := range v {
			h.Max = max(h.Max, u) // above 1 would be a defect; show it rather than clip it
		}
	}
	return h, nil
}
