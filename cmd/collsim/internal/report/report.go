package report

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotcmd"
	"github.com/collsim/collsim/cmd/collsim/internal/sweep"
	"github.com/collsim/collsim/configs"
)

// Options are the flags of `collsim report`.
type Options struct {
	Output, Sweep string
	Plot          plotcmd.Options
	MaxRows       int
}

// New returns the report command.
func New(streams *cmdutil.IO) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "report RESULTS.csv|RESULTS.jsonl -o report.html",
		Short: "Write one self-contained HTML page of a results table: plots, tables, machines, commands",
		Long: `Write a results table (a sweep's output, or run --csv) as one HTML file that
opens anywhere offline: the plots (time and bus bandwidth against the axis
with the most values, a line per value of the next axis, a panel per value
of the one after, unless --x, --series and --facet say otherwise), the table
(click a header to sort), each machine's facts and picture (Graphviz where
installed, else a layered drawing), and the command lines that reproduce it:
with --sweep, the sweep and its file, and a collsim run line per point.`,
		Example: `  collsim sweep study.yaml -o results.csv
  collsim report results.csv --sweep study.yaml -o report.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(streams, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "report.html", "the HTML file to write")
	f.StringVar(&o.Sweep, "sweep", "", "the sweep file the results came from (checked against their hash): its text and the command lines go into the report")
	f.StringVar(&o.Plot.X, "x", "", "the plots' x column (default: the numeric axis with the most values)")
	f.StringVar(&o.Plot.Series, "series", "", "the plots' series column (default: the next axis)")
	f.StringVar(&o.Plot.Facet, "facet", "", "the plots' panel column (default: the axis after)")
	f.IntVar(&o.MaxRows, "max-rows", 2000, "rows of the table shown (the plots use every row)")
	return cmd
}

// Run carries out `collsim report`.
func Run(streams *cmdutil.IO, o *Options, file string) error {
	if o.MaxRows < 0 {
		return cmdutil.Flagf("--max-rows %d: give 0 or more", o.MaxRows)
	}
	if ext := filepath.Ext(o.Output); ext != ".html" && ext != ".htm" {
		return cmdutil.Flagf("-o %s: the report is HTML; give a .html file", o.Output)
	}
	t, err := plotcmd.LoadTable(file)
	if err != nil {
		return err
	}
	axes := sweep.AxisColumns(t.Columns)
	var spec *sweep.Spec
	if o.Sweep != "" {
		if spec, err = sweep.Load(o.Sweep); err != nil {
			return err
		}
		if col := slices.Index(t.Columns, "sweep"); col < 0 || len(t.Rows) == 0 || t.Rows[0][col] != spec.Hash {
			return cmdutil.Flagf("--sweep %s: these results are not of that sweep (its hash is %s); give the sweep file they came from", o.Sweep, spec.Hash)
		}
	}
	p := &Page{Title: "collsim report: " + filepath.Base(file)}
	if spec != nil {
		p.Commands = append(p.Commands, fmt.Sprintf("collsim sweep %s -o %s", o.Sweep, file))
	}
	p.Commands = append(p.Commands, "collsim "+strings.Join(reportArgs(o, file), " "))
	p.Sections = append(p.Sections, summary(t, axes, spec, o.Sweep))
	plots, err := o.plots(t, axes)
	if err != nil {
		return err
	}
	p.Sections = append(p.Sections, plots...)
	p.Sections = append(p.Sections, o.table(t, axes, spec))
	for _, m := range machines(t, spec) {
		p.Sections = append(p.Sections, m)
	}
	if err := p.WriteFile(o.Output); err != nil {
		return err
	}
	fmt.Fprintln(streams.Out, o.Output)
	return nil
}

// reportArgs are the report's own command line.
func reportArgs(o *Options, file string) []string {
	args := []string{"report", file}
	if o.Sweep != "" {
		args = append(args, "--sweep", o.Sweep)
	}
	for _, f := range [][2]string{{"--x", o.Plot.X}, {"--series", o.Plot.Series}, {"--facet", o.Plot.Facet}} {
		if f[1] != "" {
			args = append(args, f[0], f[1])
		}
	}
	return append(args, "-o", o.Output)
}

// summary is the results at a glance: rows, failures, axes and values.
func summary(t *plotcmd.Table, axes []string, spec *sweep.Spec, sweepFile string) Section {
	s := Section{Heading: "Summary"}
	failed := 0
	if col := slices.Index(t.Columns, "error"); col >= 0 {
		for _, r := range t.Rows {
			if r[col] != "" {
				failed++
			}
		}
	}
	rows := [][]string{{"rows", strconv.Itoa(len(t.Rows))}, {"failed", strconv.Itoa(failed)}}
	if col := slices.Index(t.Columns, "sweep"); col >= 0 && len(t.Rows) > 0 {
		rows = append(rows, []string{"sweep", t.Rows[0][col]})
	}
	for _, a := range axes {
		vals := distinct(t, slices.Index(t.Columns, a))
		rows = append(rows, []string{"axis " + a, strings.Join(vals, ", ")})
	}
	s.Body = Table([]string{"", ""}, rows, nil)
	if spec != nil {
		text, err := os.ReadFile(sweepFile)
		if err == nil {
			s.Body += template.HTML("<p>The sweep file, "+template.HTMLEscapeString(sweepFile)+":</p>") + Pre(string(text))
		}
	}
	if failed > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d rows failed; their error column says why (the table below).", failed))
	}
	return s
}

func distinct(t *plotcmd.Table, col int) []string {
	var vals []string
	if col < 0 {
		return nil
	}
	for _, r := range t.Rows {
		if !slices.Contains(vals, r[col]) {
			vals = append(vals, r[col])
		}
	}
	return vals
}

// numeric says whether every value is a number as plot reads it, units
// included (a swept link.bandwidth of 100Gbit/s was no axis to plot
// against: a new user's trial).
func numeric(vals []string) bool {
	for _, v := range vals {
		if _, ok := plotcmd.Number(v); !ok {
			return false
		}
	}
	return len(vals) > 0
}

// plots draws time and bus bandwidth against the x axis.
func (o *Options) plots(t *plotcmd.Table, axes []string) ([]Section, error) {
	po := o.Plot
	if y := slices.Index(t.Columns, "time_s"); y >= 0 && !slices.ContainsFunc(t.Rows, func(r []string) bool { return r[y] != "" }) {
		// Every point failed: the page still shows the errors, which is
		// when a report is wanted most (it was refused: a new user's
		// trial).
		return []Section{{Heading: "Plots", Notes: []string{"No point has a time to draw: every point failed (the results below give each one's error)."}}}, nil
	}
	candidates := axes
	if candidates == nil {
		// (A table of a user's own, with sweep-file names such as algo
		// and size, once lost its size axis to ranks.)
		for _, c := range []string{"collective", "algorithm", "algo", "machine", "ranks", "size_bytes", "size"} {
			if slices.Contains(t.Columns, c) {
				candidates = append(candidates, c)
			}
		}
	}
	if po.X == "" { // the numeric axis with the most values
		best := 0
		for _, a := range candidates {
			if vals := distinct(t, slices.Index(t.Columns, a)); numeric(vals) && len(vals) > best {
				po.X, best = a, len(vals)
			}
		}
		if po.X == "" {
			return []Section{{Heading: "Plots", Notes: []string{"No axis of numbers to plot against; give --x."}}}, nil
		}
	}
	rest := slices.DeleteFunc(slices.Clone(candidates), func(a string) bool { return a == po.X })
	// The algorithms compared are the series first: taken after another
	// axis, a sweep of algo: [ompi, mpich] over two collectives drew each
	// collective's line as the mean of the two libraries' times (a new
	// user's trial).
	compared := slices.DeleteFunc(slices.Clone(rest), func(a string) bool { return !comparedAxis(a) })
	rest = append(compared, slices.DeleteFunc(rest, comparedAxis)...)
	pick := func(limit int) string {
		for i, a := range rest {
			if n := len(distinct(t, slices.Index(t.Columns, a))); n > 1 && n <= limit {
				rest = slices.Delete(rest, i, i+1)
				return a
			}
		}
		return ""
	}
	if po.Series == "" {
		po.Series = pick(10)
	}
	if po.Facet == "" {
		po.Facet = pick(6)
	}
	xs := distinct(t, slices.Index(t.Columns, po.X))
	po.LogX = spread(xs) >= 16
	// Axes left over with several values get figures of their own, one
	// for each combination of their values (up to 8), rather than a line
	// through the mean of, say, two collectives' times (a new user's
	// trial: the README's taper sweep drew allreduce and alltoall as one
	// line with error bars from 1 to 12 GB/s).
	wheres := [][]string{nil}
	rest = slices.DeleteFunc(rest, func(a string) bool { return a == po.Series || a == po.Facet }) // given by flags
	if len(po.Where) == 0 {
		for _, a := range rest {
			vals := distinct(t, slices.Index(t.Columns, a))
			if len(vals) < 2 || len(wheres)*len(vals) > 8 {
				continue
			}
			var next [][]string
			for _, w := range wheres {
				for _, v := range vals {
					next = append(next, append(slices.Clone(w), a+"="+v))
				}
			}
			wheres = next
		}
	}
	var sections []Section
	for _, where := range wheres {
		po.Where = where
		for _, y := range []string{"time_s", "busbw_GBps"} {
			if !slices.Contains(t.Columns, y) {
				continue
			}
			po.Y = y
			po.LogY = y == "time_s" && spread(distinct(t, slices.Index(t.Columns, y))) >= 16
			fig, notes, err := po.Figure(t)
			if err != nil {
				return nil, err
			}
			body, err := Figure(fig)
			if err != nil {
				return nil, err
			}
			line := fmt.Sprintf("collsim plot %s --x %s --y %s", "RESULTS", po.X, y)
			heading := y + " against " + po.X
			if po.Series != "" {
				line += " --series " + po.Series
			}
			if po.Facet != "" {
				line += " --facet " + po.Facet
			}
			for _, w := range where {
				line += " --where " + w
			}
			if len(where) > 0 {
				heading += ", where " + strings.Join(where, ", ")
			}
			if po.LogX {
				line += " --logx"
			}
			if po.LogY {
				line += " --logy"
			}
			sections = append(sections, Section{Heading: heading, Notes: append(notes, "As "+line+" -o plot.svg draws it."), Body: body})
		}
	}
	return sections, nil
}

// spread is the ratio of the largest to the smallest positive value.
func spread(vals []string) float64 {
	lo, hi := 0.0, 0.0
	for _, v := range vals {
		f, ok := plotcmd.Number(v)
		if !ok || f <= 0 {
			continue
		}
		if lo == 0 || f < lo {
			lo = f
		}
		hi = max(hi, f)
	}
	if lo == 0 {
		return 1
	}
	return hi / lo
}

// tableColumns are the result columns the report's table shows after the
// axes (the CSV has them all).
var tableColumns = []string{"collective", "algorithm", "machine", "network", "ranks", "size_bytes", "time_s", "busbw_GBps", "data_verified", "model_s", "error"}

// table is the results table: the axes, the main result columns, and with
// a sweep each point's collsim run line.
func (o *Options) table(t *plotcmd.Table, axes []string, spec *sweep.Spec) Section {
	var cols []int
	for i, c := range t.Columns {
		if slices.Contains(axes, c) || slices.Contains(tableColumns, c) || axes == nil {
			cols = append(cols, i)
		}
	}
	var header []string
	for _, c := range cols {
		header = append(header, t.Columns[c])
	}
	point := slices.Index(t.Columns, "point")
	if spec != nil {
		header = append(header, "command")
	}
	var rows [][]string
	for _, r := range t.Rows[:min(len(t.Rows), o.MaxRows)] {
		var row []string
		for _, c := range cols {
			row = append(row, r[c])
		}
		if spec != nil {
			p, err := strconv.Atoi(r[point])
			cmd := ""
			if err == nil && p >= 0 && p < spec.Points() {
				cmd = spec.Command(p)
			}
			row = append(row, cmd)
		}
		rows = append(rows, row)
	}
	// A column is right-aligned when its first value is a number; decided
	// once per column, not per cell.
	right := make([]bool, len(header))
	for i, c := range cols {
		for _, r := range t.Rows {
			if r[c] != "" {
				right[i] = numeric([]string{r[c]})
				break
			}
		}
	}
	s := Section{Heading: "Results", Body: Table(header, rows, func(i int) bool { return right[i] })}
	if len(t.Rows) > o.MaxRows {
		s.Notes = append(s.Notes, fmt.Sprintf("The first %d of %d rows (--max-rows); the plots use them all.", o.MaxRows, len(t.Rows)))
	}
	return s
}

// machines are the sections of the machines the results ran on: with the
// sweep file, each machine as its points built it, their swept settings
// applied (at most maxMachines of them).
func machines(t *plotcmd.Table, spec *sweep.Spec) []Section {
	if spec != nil {
		return sweptMachines(t, spec)
	}
	col := slices.Index(t.Columns, "machine")
	if col < 0 {
		return nil
	}
	var out []Section
	for _, name := range distinct(t, col) {
		arg := name
		if !slices.Contains(configs.Builtins(), name) && !filepath.IsAbs(name) {
			// A sweep names its machine files relative to the sweep
			// file, which its results usually sit beside: looked for
			// there before the working directory (a report run from
			// elsewhere drew none: a new user's trial).
			if beside := filepath.Join(filepath.Dir(t.Name), name); fileExists(beside) {
				arg = beside
			}
		}
		m, err := configs.Resolve(arg)
		if err != nil {
			out = append(out, Section{Heading: "Machine " + name, Notes: []string{"Not drawn: " + err.Error()}})
			continue
		}
		out = append(out, Machine(m))
	}
	return out
}

// maxMachines bounds the machine sections of a report.
const maxMachines = 12

// sweptMachines are the sections of the machines the points of the table
// ran on, as the sweep file builds them.
func sweptMachines(t *plotcmd.Table, spec *sweep.Spec) []Section {
	col := slices.Index(t.Columns, "point")
	var out []Section
	seen := map[string]bool{}
	more := 0
	for _, r := range t.Rows {
		if col < 0 {
			break
		}
		p, err := strconv.Atoi(r[col])
		if err != nil || p < 0 || p >= spec.Points() {
			continue
		}
		name, build := spec.MachineOf(p)
		if seen[name] {
			continue
		}
		seen[name] = true
		if len(seen) > maxMachines {
			more++
			continue
		}
		m, err := build()
		if err != nil {
			out = append(out, Section{Heading: "Machine " + name, Notes: []string{"Not drawn: " + err.Error()}})
			continue
		}
		s := Machine(m)
		s.Heading = "Machine " + name
		if m.Description != "" && strings.Contains(name, ", ") {
			s.Notes = append(s.Notes, "Built with the settings in its heading; its description is its config's, written without them.")
		}
		out = append(out, s)
	}
	if more > 0 {
		out = append(out, Section{Heading: "Other machines", Notes: []string{fmt.Sprintf("%d more machines, as the points' settings build them, not described (at most %d are)", more, maxMachines)}})
	}
	return out
}

// fileExists reports whether path names a file that can be opened.
func fileExists(path string) bool {
	f, err := os.Open(path)
	if err == nil {
		f.Close()
	}
	return err == nil
}

// comparedAxis reports whether column a names the algorithms a table
// compares.
func comparedAxis(a string) bool { return a == "algo" || a == "algorithm" || a == "requested" }
