package collectives

import (
	"fmt"
	"strings"
)

// Selection is what a library's selector chose for a call.
type Selection struct {
	Algorithm Algorithm
	Params    Params // p with the library's segment and parts, where it sets them
	Rule      string // the rule that fired and the run-time fallbacks that ran, for the output
}

// library is one MPI library version whose choices collsim reproduces.
type library struct {
	name    string // the selector's name, as -a takes it
	version string // the library and the exact release followed
	choose  func(c Collective, p Params) (choice, error)
}

// choice is what a library runs: collsim's algorithm, its parameters and
// the rule (table pick plus every run-time fallback taken) that led there.
type choice struct {
	name   string
	params Params
	rule   string
}

// libraries are the selectors, in the order Selectors lists them.
var libraries = []library{
	{"ompi", "Open MPI 4.1.8", ompi41Choice},
	{"ompi40", "Open MPI 4.0.7", ompi40Choice},
	{"ompi5", "Open MPI 5.0.10", ompi50Choice},
	{"mpich", "MPICH 3.3.2", mpich33Choice},
	{"mpich4", "MPICH 4.3.2", mpich4Choice},
}

// Selectors lists the MPI libraries whose choices collsim reproduces, as
// -a takes them: ompi (Open MPI 4.1.8), ompi40 (Open MPI 4.0.7, the last
// release line with hand-written fixed rules), ompi5 (Open MPI 5.0.10),
// mpich (MPICH 3.3.2) and mpich4 (MPICH 4.3.2).
var Selectors = []string{"ompi", "ompi40", "ompi5", "mpich", "mpich4"}

// SelectorVersion names the library release a selector follows ("" for a
// name that is no selector).
func SelectorVersion(name string) string {
	for _, l := range libraries {
		if l.name == name {
			return l.version
		}
	}
	return ""
}

// IsSelector reports whether name is a library selector rather than an
// algorithm.
func IsSelector(name string) bool { return SelectorVersion(name) != "" }

// Select returns the algorithm library would run for collective c with
// parameters p: its decision table's pick, then every run-time fallback
// the library's own code takes for those parameters (a ring that becomes
// recursive doubling for fewer elements than ranks, say). A choice collsim
// cannot run is an error naming it, never a silent substitute.
func Select(name string, c Collective, p Params) (Selection, error) {
	var lib *library
	for i := range libraries {
		if libraries[i].name == name {
			lib = &libraries[i]
		}
	}
	if lib == nil {
		return Selection{}, fmt.Errorf("unknown selector %q; valid: %s", name, strings.Join(Selectors, ", "))
	}
	ch, err := lib.choose(c, p)
	if err != nil {
		return Selection{}, err
	}
	if strings.HasPrefix(name, "ompi") && p.Ranks == 1 && !strings.Contains(ch.rule, "coll/self") {
		// Open MPI's coll/self outranks coll/tuned on a communicator of
		// one rank, where tuned offers no module (the rule read as if tuned
		// chose; a new user's trial). The tables' pick is left out: their
		// rows for 2 ranks test for exactly 2, so the row collsim's tables
		// give 1 rank is not the one tuned's code would reach (an audit).
		ch.rule = fmt.Sprintf("on 1 rank Open MPI's coll/self module runs the call, not coll/tuned's rules (tuned offers no module below 2 ranks): it sends nothing (a local copy at most), as %s on 1 rank does", ch.name)
	}
	if SendsNothing(c, ch.params) {
		// The rule read as if it ran (a new user's trial).
		ch.rule = fmt.Sprintf("a call of no elements returns at once in %s, before any algorithm runs: nothing is sent (with elements: %s)", lib.version, ch.rule)
	}
	a, err := Lookup(c, ch.name)
	if err != nil {
		return Selection{}, fmt.Errorf("%s chooses %s/%s (%s), which collsim does not have yet", name, c, ch.name, ch.rule)
	}
	return Selection{Algorithm: a, Params: ch.params, Rule: ch.rule}, nil
}

// NotTranscribed is Select's error for a collective whose decision rules
// collsim has not transcribed from the library (Open MPI's gather, say).
type NotTranscribed struct {
	Library    string // as it names itself ("Open MPI 4.0")
	Collective Collective
}

func (e *NotTranscribed) Error() string {
	return fmt.Sprintf("%s's fixed rules for %s are not transcribed; name an algorithm instead", e.Library, e.Collective)
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// unsegmented sets p's segment to the whole vector: the libraries' trees
// and chains called with a segment size of 0 send the vector in one piece.
func unsegmented(p Params) Params {
	p.Segment = max(p.Count, 1)
	return p
}

// multiNode reports whether p spans several nodes with ranks per node
// known (Params.NodeSize), and some node holds two or more: where the
// libraries switch to their hierarchical algorithms. A machine without
// nodes is one node; one rank on each node is no hierarchy (Open MPI
// 5.0's coll/han steps aside there, coll_han_subcomms.c; it ran han: an
// audit).
func multiNode(p Params) bool { return p.NodeSize >= 2 && p.NodeSize < p.Ranks }

// GroupsNodes reports whether a's schedule groups the ranks by node
// (Params.NodeSize: ranks r..r+NodeSize-1 share one): the hierarchical
// algorithms, and the libraries' node-aware ones.
func GroupsNodes(a Algorithm) bool {
	switch a.Name {
	case "han", "smp", "hierarchical", "two_level":
		return true
	}
	return false
}
