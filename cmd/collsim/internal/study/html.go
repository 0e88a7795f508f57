package study

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/report"
	"github.com/collsim/collsim/configs"
)

// withOutputs gives every study --html FILE (one self-contained page with
// the study's command line, its printed tables, the plots it wrote (their
// SVG) and its machine) and --json (the tables as JSON).
func withOutputs(streams *cmdutil.IO, cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		var file string
		var asJSON bool
		c.Flags().StringVar(&file, "html", "", "also write the study as one self-contained HTML page (tables, plots, machine, command line) to this file")
		c.Flags().BoolVar(&asJSON, "json", false, "print the study's tables as JSON (each cell as printed and, where it reads as one, as a number: seconds, bytes), its printed text and its plots")
		run := c.RunE
		c.RunE = func(c *cobra.Command, args []string) error {
			if file == "" && !asJSON {
				return run(c, args)
			}
			if file != "" {
				if err := cmdutil.OutputFile("--html", file); err != nil {
					return err
				}
			}
			var text bytes.Buffer
			var tables [][][]string
			out := streams.Out
			streams.Out = io.MultiWriter(out, &text)
			if asJSON {
				streams.Out, streams.Tables = &text, &tables
			}
			start := time.Now()
			err := run(c, args)
			streams.Out, streams.Tables = out, nil
			if err != nil {
				return err
			}
			if file != "" {
				if err := writeHTML(streams, c, file, text.String(), start); err != nil {
					return err
				}
			}
			if asJSON {
				return cmdutil.JSON(streams.Out, studyJSON(c, tables, text.String(), start))
			}
			return nil
		}
	}
}

// commandLine is the study's command line as given.
func commandLine(c *cobra.Command) string {
	line := []string{"collsim", "study", c.Name()}
	c.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "html" && f.Name != "json" {
			line = append(line, "--"+f.Name, f.Value.String())
		}
	})
	return strings.Join(line, " ")
}

// Table is one of a study's tables in its --json.
type Table struct {
	Columns []string   `json:"columns"`
	Rows    [][]any    `json:"rows"`    // numbers where a cell reads as one
	Printed [][]string `json:"printed"` // the cells as printed
}

// studyJSON is a study's --json: its tables, the lines it printed besides
// them, and the plots it wrote.
func studyJSON(c *cobra.Command, tables [][][]string, text string, start time.Time) any {
	var ts []Table
	for _, rows := range tables {
		if len(rows) == 0 {
			continue
		}
		t := Table{Columns: rows[0], Printed: rows[1:]}
		for _, r := range rows[1:] {
			vals := make([]any, len(r))
			for i, cell := range r {
				vals[i] = number(cell)
			}
			t.Rows = append(t.Rows, vals)
		}
		ts = append(ts, t)
	}
	return struct {
		Study   string   `json:"study"`
		Command string   `json:"command"`
		Tables  []Table  `json:"tables"`
		Text    string   `json:"text"`
		Plots   []string `json:"plots"`
	}{c.Name(), commandLine(c), ts, text, newPlots(c, start, "")}
}

// number reads a printed cell as a number where it is one: plain, a
// duration (seconds) or a size (bytes); else the cell itself.
func number(cell string) any {
	if f, err := strconv.ParseFloat(cell, 64); err == nil {
		return f
	}
	if d, err := configs.ParseDuration(cell); err == nil && cell != "" && !strings.HasSuffix(cell, "B") {
		return d.Seconds()
	}
	if n, err := configs.ParseSize(cell); err == nil && strings.HasSuffix(cell, "B") {
		return n
	}
	return cell
}

// newPlots lists the plots (of extension ext, "" for all) the study wrote
// into its --out directory since start; none for a study that has no --out
// (the workload studies draw none).
func newPlots(c *cobra.Command, start time.Time, ext string) []string {
	out := c.Flags().Lookup("out")
	if out == nil {
		return nil
	}
	dir := out.Value.String()
	entries, _ := os.ReadDir(dir)
	var plots []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || info.ModTime().Before(start.Add(-time.Second)) || !strings.HasSuffix(e.Name(), ".png") && !strings.HasSuffix(e.Name(), ".svg") {
			continue
		}
		if ext == "" || strings.HasSuffix(e.Name(), ext) {
			plots = append(plots, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(plots)
	return plots
}

// writeHTML writes the page of study c, which printed text and wrote its
// plots (since start) into its --out directory.
func writeHTML(streams *cmdutil.IO, c *cobra.Command, file, text string, start time.Time) error {
	p := &report.Page{Title: "collsim study " + c.Name() + ": " + c.Short, Commands: []string{commandLine(c)}}
	p.Sections = append(p.Sections, report.Section{Heading: "Results", Body: report.Pre(text)})
	for _, path := range newPlots(c, start, ".svg") {
		svg, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, report.Section{Heading: "Plot " + filepath.Base(path), Body: report.InlineSVG(svg)})
	}
	if f := c.Flags().Lookup("machine"); f != nil {
		m, err := configs.Resolve(f.Value.String())
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, report.Machine(m))
	}
	if err := p.WriteFile(file); err != nil {
		return err
	}
	_, err := fmt.Fprintln(streams.Err, "collsim: wrote", file)
	return err
}
