package collectives

import (
	"slices"
	"sort"
)

// Options are the algorithm options an algorithm's schedule can depend
// on, named as collsim's flags that set them.
var Options = []string{"segment", "node-size", "group-size", "inner", "intra", "groups", "steps", "overlap", "root"}

// optionsOf lists, for each algorithm, the options its schedule depends
// on: a command refuses an option that none of the algorithms it runs
// takes, since a flag that changes nothing must say so. (Open MPI's HAN
// keeps its own 64 KiB segments, as Open MPI does; an allreduce has no
// root.) TestAlgorithmOptions checks the table against the schedules
// themselves: each option changes some schedule of exactly the
// algorithms listed with it.
var optionsOf = map[string][]string{
	"allreduce/allgather_reduce":       {"overlap"},
	"allreduce/double_binary_tree":     {"segment"},
	"allreduce/han":                    {"node-size", "overlap"},
	"allreduce/hierarchical":           {"inner", "intra", "node-size", "overlap", "segment"},
	"allreduce/linear":                 {},
	"allreduce/basic_linear":           {},
	"allreduce/linear_pipeline":        {"segment"},
	"allreduce/nonoverlapping":         {"overlap"},
	"allreduce/rabenseifner":           {"overlap"},
	"allreduce/recursive_doubling":     {"overlap"},
	"allreduce/reduce_bcast":           {},
	"allreduce/ring":                   {"overlap"},
	"allreduce/segmented_ring":         {"overlap", "segment"},
	"allreduce/smp":                    {"inner", "intra", "node-size", "overlap"},
	"allreduce/suara":                  {"groups", "inner", "overlap", "steps"},
	"bcast/adapt":                      {"root", "segment"},
	"bcast/binary":                     {"root"},
	"bcast/binomial":                   {"root"},
	"bcast/chain":                      {"root", "segment"},
	"bcast/han":                        {"node-size", "root"},
	"bcast/knomial":                    {"root"},
	"bcast/linear":                     {"root"},
	"bcast/scatter_allgather":          {"overlap", "root"},
	"bcast/scatter_allgather_rd":       {"overlap", "root"},
	"bcast/scatter_rd_allgather":       {"overlap", "root"},
	"bcast/scatter_ring_allgather":     {"overlap", "root"},
	"bcast/segmented_binary":           {"root", "segment"},
	"bcast/pipelined_binary":           {"root", "segment"},
	"bcast/smp":                        {"node-size", "overlap", "root"},
	"bcast/split_binary":               {"root", "segment"},
	"reduce/adapt":                     {"root", "segment"},
	"reduce/binomial":                  {"root"},
	"reduce/chain":                     {"root", "segment"},
	"reduce/han":                       {"node-size", "overlap", "root"},
	"reduce/in_order_binary":           {"root"},
	"reduce/linear":                    {"root"},
	"reduce/basic_linear":              {"root"},
	"reduce/rabenseifner":              {"overlap", "root"},
	"reduce/segmented_binary":          {"root", "segment"},
	"reduce/pipelined_binary":          {"root", "segment"},
	"reduce/segmented_binomial":        {"root", "segment"},
	"reduce/smp":                       {"node-size", "overlap", "root"},
	"allgather/bruck":                  {"overlap"},
	"allgather/linear":                 {},
	"allgather/neighbor_exchange":      {"overlap"},
	"allgather/recursive_doubling":     {"overlap"},
	"allgather/ring":                   {"overlap"},
	"reduce_scatter/butterfly":         {"overlap"},
	"reduce_scatter/non_overlapping":   {},
	"reduce_scatter/pairwise":          {"overlap"},
	"reduce_scatter/recursive_halving": {"overlap"},
	"reduce_scatter/ring":              {"overlap"},
	"gather/basic_linear":              {"root"},
	"gather/binomial":                  {"root"},
	"gather/linear":                    {"root"},
	"gather/linear_sync":               {"root", "segment"},
	"scatter/basic_linear":             {"root"},
	"scatter/binomial":                 {"root"},
	"scatter/linear":                   {"root"},
	"scatter/linear_nb":                {"root"},
	"alltoall/bruck":                   {"overlap"},
	"alltoall/group_aligned":           {"group-size", "overlap"},
	"alltoall/linear":                  {},
	"alltoall/linear_sync":             {},
	"alltoall/pairwise":                {"overlap"},
	"alltoall/scattered":               {},
	"alltoall/two_level":               {"group-size", "node-size"},
	"alltoall/two_procs":               {"overlap"},
	"barrier/dissemination":            {"overlap"},
	"barrier/han":                      {"node-size", "overlap"},
	"barrier/linear":                   {},
	"barrier/recursive_doubling":       {"overlap"},
	"barrier/smp":                      {"node-size", "overlap"},
	"barrier/tree":                     {},
}

// Rooted reports whether c's calls have a root (an allreduce has none:
// Call gives its algorithms root 0 whatever was asked).
func Rooted(c Collective) bool {
	return c == Bcast || c == Reduce || c == Gather || c == Scatter
}

// Reduces reports whether c's calls combine the ranks' data (and so pay
// a reduction rate).
func Reduces(c Collective) bool {
	return c == Allreduce || c == Reduce || c == ReduceScatter
}

// Takes reports whether a's schedule depends on option (one of Options).
func (a Algorithm) Takes(option string) bool {
	return slices.Contains(optionsOf[a.ID()], option)
}

// TakenOptions returns the options a takes, in the order of Options.
func (a Algorithm) TakenOptions() []string {
	var out []string
	for _, o := range Options {
		if a.Takes(o) {
			out = append(out, o)
		}
	}
	return out
}

// Takers returns the names of collective c's algorithms that take option.
func Takers(c Collective, option string) []string {
	var names []string
	for _, a := range sorted() {
		if a.Collective == c && a.Takes(option) {
			names = append(names, a.Name)
		}
	}
	sort.Strings(names)
	return names
}
