// Package explain is `collsim explain`: an algorithm's schedule step by
// step on a few ranks, for teaching.
package explain

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
)

// maxRanks bounds explanations: beyond it the listing stops teaching.
const maxRanks = 16

// New returns the explain command.
func New(streams *cmdutil.IO) *cobra.Command {
	var machine, htmlFile, svgDir string
	var asJSON bool
	var q cmdutil.Request
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Show an algorithm's schedule step by step on a few ranks: who sends which elements to whom, and when",
		Example: `  collsim explain -a ring -n 4
  collsim explain -a rabenseifner -n 6 -s 96 --html rabenseifner.html
  collsim explain -c bcast -a binomial -n 8 -s 64
  collsim explain -a rabenseifner -n 5 -s 40`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if q.Ranks < 1 || q.Ranks > maxRanks {
				return cmdutil.Flagf("--ranks must be 1..%d for an explanation; for more, use collsim run or collsim schedule", maxRanks)
			}
			if err := cmdutil.OptionsApply(cmd.Flags(), collectives.Collective(q.Collective), q.Algorithm); err != nil {
				return err
			}
			if err := cmdutil.SizeApplies(cmd.Flags(), collectives.Collective(q.Collective)); err != nil {
				return err
			}
			if !cmd.Flags().Changed("size") {
				q.Size = defaultSize(collectives.Collective(q.Collective), q.Ranks, q.ElemSize)
			}
			m, err := configs.Resolve(machine)
			if err != nil {
				return err
			}
			a, chosenBy, params, err := q.Resolve(m)
			if err != nil {
				return err
			}
			if q.Note != "" { // as run says it (it was left out here; a new user's trial)
				fmt.Fprintln(streams.Err, "collsim: note:", q.Note)
			}
			var u *collectives.Unsupported
			if _, err := a.Build(params); errors.As(err, &u) && !cmd.Flags().Changed("ranks") {
				// Without --ranks, an algorithm that cannot run on 4
				// (two_procs) is shown on the fewest ranks it runs on,
				// saying so and why: the reason may be another flag's
				// (--node-size 3 on 4 ranks), which the user should see.
				if a2, by, p2, ok := fewestRanks(q, m); ok {
					fmt.Fprintf(streams.Err, "collsim: %v; shown on %d ranks instead (give --ranks to choose)\n", err, p2.Ranks)
					a, chosenBy, params = a2, by, p2
				}
			}
			if htmlFile != "" && !strings.HasSuffix(htmlFile, ".html") {
				return cmdutil.Flagf("--html %s: give a .html file", htmlFile)
			}
			if htmlFile != "" || svgDir != "" {
				if err := writePictures(m, a, params, htmlFile, svgDir); err != nil {
					return err
				}
			}
			return explain(streams, m, a, chosenBy, params, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&q.Collective, "collective", "c", "allreduce", "collective: "+cmdutil.CollectiveNames())
	f.StringVarP(&q.Algorithm, "algo", "a", "", "algorithm, or a library's choice: "+strings.Join(collectives.Selectors, ", "))
	f.IntVarP(&q.Ranks, "ranks", "n", 4, "number of ranks (at most 16; unset, the fewest an algorithm that cannot run on 4 runs on)")
	f.StringVarP(&q.Size, "size", "s", "32", "message size in bytes (nccl-tests sizes)")
	f.Int64Var(&q.ElemSize, "elem-size", collsim.DefaultElemSize, cmdutil.ElemSizeUsage)
	f.IntVar(&q.Root, "root", 0, "root rank of rooted collectives")
	f.StringVarP(&machine, "machine", "m", configs.DefaultMachine, cmdutil.MachineUsage)
	f.StringVar(&htmlFile, "html", "", "also write an animated step-through to this .html file (self-contained: open it in a browser; #step=N opens step N)")
	f.StringVar(&svgDir, "svg", "", "also write each step's picture as DIR/step-NNN.svg")
	f.BoolVar(&asJSON, "json", false, "print the steps as JSON: each send when it starts and each receive when it completes, with the elements")
	q.Shape.Register(f)
	return cmd
}

func bufferName(c collectives.Collective, b uint8) string {
	switch {
	case b == 0 && c == collectives.Alltoall:
		return "send buffer"
	case b == 0:
		return "buffer"
	case b == 1 && c == collectives.Alltoall:
		return "receive buffer"
	}
	return fmt.Sprintf("scratch %d", b)
}

func elements(c collectives.Collective, r sim.Region) string {
	if r.Count == 0 {
		return "no elements of the " + bufferName(c, r.Buf)
	}
	if r.Count == 1 {
		return fmt.Sprintf("element %d of the %s", r.Off, bufferName(c, r.Buf))
	}
	if n := r.Runs(); n > 1 && n <= 6 {
		// A short vector (Bruck's packed blocks, a reversed permutation),
		// its elements listed: "in 2 blocks of 1 from 1, every 2" was
		// hard to follow (a teacher's trial).
		var runs []string
		for i := range n {
			from, k := r.Run(i)
			if k == 1 {
				runs = append(runs, fmt.Sprint(from))
			} else {
				runs = append(runs, fmt.Sprintf("%d..%d", from, from+k-1))
			}
		}
		list := strings.Join(runs[:len(runs)-1], ", ") + " and " + runs[len(runs)-1]
		if r.Stride < 0 {
			list += ", in that order,"
		}
		return fmt.Sprintf("elements %s of the %s", list, bufferName(c, r.Buf))
	}
	if n := r.Runs(); n > 1 {
		// A vector (Bruck's packed blocks, a reversed permutation).
		dir := fmt.Sprintf("every %d", r.Stride)
		if r.Stride < 0 {
			dir = fmt.Sprintf("going back %d each time", -r.Stride)
		}
		blocks := fmt.Sprintf("%d blocks of %d", n, r.Block)
		if r.Count%r.Block != 0 {
			blocks = fmt.Sprintf("%d blocks of %d (the last of %d)", n, r.Block, r.Count%r.Block)
		}
		return fmt.Sprintf("%d elements of the %s in %s from %d, %s", r.Count, bufferName(c, r.Buf), blocks, r.Off, dir)
	}
	return fmt.Sprintf("elements %d..%d of the %s", r.Off, r.Off+r.Count-1, bufferName(c, r.Buf))
}

// Step is one line of an explanation (explain --json): a send as it
// starts, or a receive as it completes.
type Step struct {
	Time   float64 `json:"time_s"`
	Rank   int32   `json:"rank"`
	Kind   string  `json:"kind"` // send, recv, recv_reduce, copy, reduce_local (Buffer, First, Count: where it lands)
	Peer   int32   `json:"peer"`
	Bytes  int64   `json:"bytes"`
	Buffer string  `json:"buffer"`
	First  int64   `json:"first_element"`
	Count  int64   `json:"elements"`
	// Block and Stride describe a vector: Count elements in blocks of
	// Block, each Stride after the one before (absent: in a row).
	Block   int64  `json:"block,omitempty"`
	Stride  int64  `json:"stride,omitempty"`
	Summary string `json:"text"`
}

// fewestRanks resolves q on the fewest ranks, from 2 to maxRanks, whose
// schedule builds.
func fewestRanks(q cmdutil.Request, m *configs.Machine) (collectives.Algorithm, string, collectives.Params, bool) {
	for n := 2; n <= maxRanks; n++ {
		try := q
		try.Ranks = n
		if a, by, p, err := try.Resolve(m); err == nil {
			if _, err := a.Build(p); err == nil {
				return a, by, p, true
			}
		}
	}
	return collectives.Algorithm{}, "", collectives.Params{}, false
}

func explain(streams *cmdutil.IO, m *configs.Machine, a collectives.Algorithm, chosenBy string, params collectives.Params, asJSON bool) error {
	s, err := a.Build(params)
	if err != nil {
		return err
	}
	data, err := a.Data(params, 1)
	if err != nil {
		return err
	}
	place, err := m.Place(params.Ranks, "", 1)
	if err != nil {
		return err
	}
	net, err := m.Analytic(place)
	if err != nil {
		return err
	}
	var events []sim.TraceEvent
	res, err := sim.Execute(sim.New(1), s, sim.Config{Host: m.Host, Network: net, Data: data.Buffers,
		Trace: func(e sim.TraceEvent) { events = append(events, e) }})
	if err != nil {
		return collsim.ClockHint(err, params.SizeBytes(a.Collective), m.Inputs)
	}
	out := streams.Out
	c := a.Collective
	if asJSON {
		out = io.Discard // the header; the JSON goes to streams.Out below
	}
	elems := fmt.Sprintf("%s of %d B", cmdutil.Count(int(params.Count), "element", "elements"), max(params.ElemSize, 1))
	if c == collectives.Alltoall {
		// Count is a pair's block: "40B (1 element of 8 B)" read as the
		// whole buffer's (a teacher's trial).
		elems = fmt.Sprintf("%s of %d B, %d to each rank", cmdutil.Count(int(params.Count)*params.Ranks, "element", "elements"), max(params.ElemSize, 1), params.Count)
	}
	fmt.Fprintf(out, "%s on %s, %s (%s), on %s\n", a.ID(), collsim.RankCount(params.Ranks),
		configs.FormatBytes(params.SizeBytes(c)), elems, m.Name)
	if chosenBy != "" {
		fmt.Fprintf(out, "chosen by %s\n", chosenBy)
	}
	if a.Collective == collectives.Allreduce && a.Name == "suara" {
		fmt.Fprintf(out, "%s\n", collectives.SuaraLayout(params))
	}
	fmt.Fprintf(out, "\n%s\n\n", cmdutil.Wrap(a.Summary, 78, ""))
	// Sends and local copies at the moment they start, receives when they
	// complete: the order in which data moves.
	var shown []sim.TraceEvent
	for _, e := range events {
		if e.Op.Kind == sim.OpSend && !e.Completed || e.Op.Kind == sim.OpRecv && e.Completed || isCopy(e) {
			shown = append(shown, e)
		}
	}
	slices.SortStableFunc(shown, func(x, y sim.TraceEvent) int {
		if x.At != y.At {
			return int(x.At - y.At)
		}
		return int(x.Rank - y.Rank)
	})
	var rows [][]string
	var steps []Step
	last := sim.Time(-1)
	for _, e := range shown {
		at := ""
		if e.At != last {
			at, last = e.At.String(), e.At
		}
		var what, kind string
		switch {
		// A barrier's messages are empty; the check carries in them which
		// ranks each has heard from (as a max over its buffer).
		case c == collectives.Barrier && e.Op.Kind == sim.OpSend:
			what, kind = fmt.Sprintf("rank %d signals rank %d (an empty message)", e.Rank, e.Op.Peer), "send"
		case c == collectives.Barrier:
			what, kind = fmt.Sprintf("  rank %d has heard from rank %d", e.Rank, e.Op.Peer), "recv"
		case isCopy(e) && e.Op.Reduce:
			what, kind = fmt.Sprintf("rank %d adds its %s into %s", e.Rank, elements(c, e.Op.Src), elements(c, e.Op.Data)), "reduce_local"
		case isCopy(e):
			what, kind = fmt.Sprintf("rank %d copies its %s into %s", e.Rank, elements(c, e.Op.Src), elements(c, e.Op.Data)), "copy"
		case e.Op.Kind == sim.OpSend && e.Op.Bytes > m.Host.EagerLimit:
			what, kind = fmt.Sprintf("rank %d sends %s to rank %d (%d B, by rendezvous: the data leaves once a request and a reply have crossed)", e.Rank, elements(c, e.Op.Data), e.Op.Peer, e.Op.Bytes), "send"
		case e.Op.Kind == sim.OpSend:
			what, kind = fmt.Sprintf("rank %d sends %s to rank %d (%d B)", e.Rank, elements(c, e.Op.Data), e.Op.Peer, e.Op.Bytes), "send"
		case e.Op.Reduce:
			what, kind = fmt.Sprintf("  rank %d has received from rank %d and added into %s", e.Rank, e.Op.Peer, elements(c, e.Op.Data)), "recv_reduce"
		default:
			what, kind = fmt.Sprintf("  rank %d has received from rank %d into %s", e.Rank, e.Op.Peer, elements(c, e.Op.Data)), "recv"
		}
		rows = append(rows, []string{at, what})
		steps = append(steps, Step{Time: e.At.Seconds(), Rank: e.Rank, Kind: kind, Peer: e.Op.Peer, Bytes: e.Op.Bytes, Buffer: bufferName(c, e.Op.Data.Buf),
			First: e.Op.Data.Off, Count: e.Op.Data.Count, Summary: strings.TrimSpace(what)})
		if e.Op.Data.Runs() > 1 {
			steps[len(steps)-1].Block, steps[len(steps)-1].Stride = e.Op.Data.Block, e.Op.Data.Stride
		}
	}
	if err := data.Verify(); err != nil {
		return &cmdutil.ValidationError{Err: fmt.Errorf("%s moved the wrong data: %w", a.ID(), err)}
	}
	if asJSON {
		return cmdutil.JSON(streams.Out, struct {
			Algorithm string  `json:"algorithm"`
			ChosenBy  string  `json:"chosen_by,omitempty"`
			Machine   string  `json:"machine"`
			Ranks     int     `json:"ranks"`
			SizeBytes int64   `json:"size_bytes"`
			Steps     []Step  `json:"steps"`
			Time      float64 `json:"time_s"`
			Verified  bool    `json:"data_verified"`
		}{a.ID(), chosenBy, m.Name, params.Ranks, params.SizeBytes(c), steps, res.Makespan.Seconds(), true})
	}
	if err := cmdutil.Table(out, rows); err != nil {
		return err
	}
	msgs := 0
	for _, e := range shown {
		if e.Op.Kind == sim.OpSend {
			msgs++
		}
	}
	checked := "every rank's data checked: exact"
	if c == collectives.Barrier {
		checked = "checked: every rank heard, directly or through others, from every rank before leaving"
	}
	fmt.Fprintf(out, "\ndone at %v: %d messages%s; %s.\n", res.Makespan, msgs, rendezvousNote(res.Rendezvous, m.Host.EagerLimit), checked)
	cost := strings.TrimSpace(a.Cost)
	if res.Rendezvous > 0 {
		cost += "; each rendezvous message also pays its handshake, 2a where routes are alike"
	}
	fmt.Fprintf(out, "cost: %s (collsim algos: a the latency, b and g the seconds per byte moved and reduced).\n", cost)
	return nil
}

// isCopy reports whether e is the start of a local copy (or reduction):
// a computation with a source.
func isCopy(e sim.TraceEvent) bool {
	return e.Op.Kind == sim.OpCalc && !e.Completed && e.Op.Src.Count > 0
}

// rendezvousNote says how many of the messages went by rendezvous, if any.
func rendezvousNote(n uint64, eagerLimit int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d above the %s eager limit, by rendezvous)", n, configs.FormatBytes(eagerLimit))
}

// defaultSize is the size an explanation shows when -s is not given: 32
// bytes, or where a collective that splits each rank's data over the
// ranks would send nothing of 32 (an alltoall on 5 ranks), the smallest
// multiple of one element for each rank above it (the explanation had
// refused its own default).
func defaultSize(c collectives.Collective, ranks int, elem int64) string {
	const size = 32
	if p, err := collsim.Call(c, ranks, size, elem, 0); err == nil {
		if _, err := collsim.Shortfall(c, p, size); err == nil {
			return strconv.Itoa(size)
		}
	}
	if elem < 1 || elem > size { // one element is the size already: let the call say what is wrong
		return strconv.Itoa(size)
	}
	unit := elem * int64(ranks) // at most 32 x maxRanks
	return strconv.FormatInt((size+unit-1)/unit*unit, 10)
}
