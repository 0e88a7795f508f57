package root

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/topology"
)

// completeValues lets the shell complete the values of the flags every
// command shares by name (collsim completion bash|zsh|fish|powershell):
// machines (built-in names, else YAML files), algorithms (of the -c given
// on the line, with the libraries' choices), collectives, network models,
// routings, placements, --verify and --huge-pages.
func completeValues(cmd *cobra.Command) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		}
	}
	var collNames []string
	for _, a := range collectives.All() {
		if !slices.Contains(collNames, string(a.Collective)) {
			collNames = append(collNames, string(a.Collective))
		}
	}
	funcs := map[string]cobra.CompletionFunc{
		"machine": func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			// Built-in names; with none matching, the shell offers files.
			return configs.Builtins(), cobra.ShellCompDirectiveDefault
		},
		"algo":        completeAlgo,
		"collective":  fixed(collNames...),
		"collectives": fixed(collNames...),
		"network":     fixed("analytic", "flow", "loggops"),
		"routing":     fixed("minimal", "valiant", "ugal", "ecmp"),
		"placement":   fixed(topology.Placements...),
		"verify":      fixed("auto", "on", "off"),
		"huge-pages":  fixed("auto", "on", "off"),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if fn, ok := funcs[f.Name]; ok {
				c.RegisterFlagCompletionFunc(f.Name, fn)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
}

// completeAlgo offers the algorithms of the collective named on the line
// (allreduce's by default), then the libraries' choices.
func completeAlgo(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	coll := collectives.Allreduce
	if f := c.Flags().Lookup("collective"); f != nil && f.Value.String() != "" {
		coll = collectives.Collective(strings.Split(f.Value.String(), ",")[0])
	}
	var out []string
	for _, a := range collectives.All() {
		if a.Collective == coll {
			out = append(out, a.Name)
		}
	}
	return append(out, collectives.Selectors...), cobra.ShellCompDirectiveNoFileComp
}
