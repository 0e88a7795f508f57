package study

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/report"
	"github.com/collsim/collsim/configs"
)

// withHTML gives every study --html FILE: one self-contained page with the
// study's command line, its printed tables, the plots it wrote (their SVG)
// and its machine.
func withHTML(streams *cmdutil.IO, cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		var file string
		c.Flags().StringVar(&file, "html", "", "also write the study as one self-contained HTML page (tables, plots, machine, command line) to this file")
		run := c.RunE
		c.RunE = func(c *cobra.Command, args []string) error {
			if file == "" {
				return run(c, args)
			}
			var text bytes.Buffer
			out := streams.Out
			streams.Out = io.MultiWriter(out, &text)
			start := time.Now()
			err := run(c, args)
			streams.Out = out
			if err != nil {
				return err
			}
			return writeHTML(streams, c, file, text.String(), start)
		}
	}
}

// writeHTML writes the page of study c, which printed text and wrote its
// plots (since start) into its --out directory.
func writeHTML(streams *cmdutil.IO, c *cobra.Command, file, text string, start time.Time) error {
	line := []string{"collsim", "study", c.Name()}
	c.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "html" {
			line = append(line, "--"+f.Name, f.Value.String())
		}
	})
	p := &report.Page{Title: "collsim study " + c.Name() + ": " + c.Short, Commands: []string{strings.Join(line, " ")}}
	p.Sections = append(p.Sections, report.Section{Heading: "Results", Body: report.Pre(text)})
	dir := c.Flags().Lookup("out").Value.String()
	entries, _ := os.ReadDir(dir)
	var plots []string
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".svg") && !info.ModTime().Before(start.Add(-time.Second)) {
			plots = append(plots, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(plots)
	for _, path := range plots {
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
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := p.Write(out); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(streams.Err, "collsim: wrote", file)
	return err
}
