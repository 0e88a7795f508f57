// Package trace records a simulated run's ops and writes them as a Chrome
// trace (for Perfetto and chrome://tracing) or draws them as an SVG Gantt
// chart by rank.
package trace

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/collsim/collsim/sim"
)

// MaxOps bounds a recording: each op is held until the run ends (a trace
// of millions of ops is more than a viewer opens, and than memory should
// hold for it).
const MaxOps = 2_000_000

// Span is one op from its start to its completion.
type Span struct {
	Rank       int32
	Lane       int32 // the row of its rank's track it is drawn in (ops overlap)
	Kind       sim.OpKind
	Peer, Tag  int32
	Bytes      int64
	Start, End sim.Time
	// Reduce is a reducing receive's reduction, the last of its time (0
	// for any other op).
	Reduce sim.Time
}

// Recorder collects a run's spans from its trace events.
type Recorder struct {
	open  map[[2]int32]int // (rank, op index) -> span under way
	Spans []Span
	// Clock names the time its spans are in, under the timeline's axis
	// ("" is simulated time).
	Clock string
	err   error
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{open: map[[2]int32]int{}} }

// Event is the sim.Config.Trace hook.
func (r *Recorder) Event(ev sim.TraceEvent) {
	k := [2]int32{ev.Rank, ev.Index}
	if !ev.Completed {
		if len(r.Spans) >= MaxOps {
			if r.err == nil {
				r.err = fmt.Errorf("the run has more than %d ops, too many to trace; trace fewer ranks or a smaller size", MaxOps)
			}
			return
		}
		r.open[k] = len(r.Spans)
		r.Spans = append(r.Spans, Span{Rank: ev.Rank, Kind: ev.Op.Kind, Peer: ev.Op.Peer, Tag: ev.Op.Tag, Bytes: ev.Op.Bytes, Start: ev.At, End: -1})
		return
	}
	if i, ok := r.open[k]; ok {
		r.Spans[i].End = ev.At
		if ev.Op.Kind == sim.OpRecv && ev.Op.Reduce {
			r.Spans[i].Reduce = min(ev.Op.Dur, ev.At-r.Spans[i].Start)
		}
		delete(r.open, k)
	}
}

// Err says whether the recording is incomplete.
func (r *Recorder) Err() error { return r.err }

// lanes puts each rank's spans in rows where none overlap (the first row
// free at a span's start), and returns each rank's row count.
func (r *Recorder) lanes(ranks int) []int32 {
	order := make([]int, len(r.Spans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := &r.Spans[a], &r.Spans[b]
		return cmp.Or(cmp.Compare(sa.Rank, sb.Rank), cmp.Compare(sa.Start, sb.Start))
	})
	count := make([]int32, ranks)
	var ends []sim.Time // of the current rank's rows
	rank := int32(-1)
	for _, i := range order {
		s := &r.Spans[i]
		if s.Rank != rank {
			rank, ends = s.Rank, ends[:0]
		}
		lane := slices.IndexFunc(ends, func(e sim.Time) bool { return e <= s.Start })
		if lane < 0 {
			ends = append(ends, 0)
			lane = len(ends) - 1
		}
		ends[lane] = max(s.End, s.Start)
		s.Lane = int32(lane)
		count[rank] = max(count[rank], int32(lane+1))
	}
	return count
}

// messages pairs each receive with its send: the k-th send from a to b
// with tag t matches the k-th receive posted on b from a with tag t, as
// MPI's non-overtaking rule has it. Receives from any source or with any
// tag get no pair. It returns (send, recv) span indices.
func (r *Recorder) messages() [][2]int {
	type key struct{ src, dst, tag int32 }
	sends := map[key][]int{}
	order := make([]int, len(r.Spans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.Spans[a].Start, r.Spans[b].Start) })
	for _, i := range order {
		if s := r.Spans[i]; s.Kind == sim.OpSend {
			k := key{s.Rank, s.Peer, s.Tag}
			sends[k] = append(sends[k], i)
		}
	}
	var pairs [][2]int
	for _, i := range order {
		s := r.Spans[i]
		if s.Kind != sim.OpRecv || s.Peer == sim.AnySource || s.Tag == sim.AnyTag {
			continue
		}
		k := key{s.Peer, s.Rank, s.Tag}
		if q := sends[k]; len(q) > 0 {
			pairs = append(pairs, [2]int{q[0], i})
			sends[k] = q[1:]
		}
	}
	return pairs
}

// us is a time in microseconds, the trace format's unit, written exactly
// enough to keep picoseconds.
func us(t sim.Time) string { return strconv.FormatFloat(float64(t)/1e6, 'f', -1, 64) }

// Counter is a value over time in equal spans (a link's utilization),
// drawn as a counter track.
type Counter struct {
	Name   string
	Span   sim.Time
	Values []float64
}

// WriteChrome writes the spans as Chrome trace-event JSON: a process for
// the run, a thread per rank (and per extra row where its ops overlap),
// every op a complete ("X") event with its bytes, peer and tag, and every
// message a flow arrow from its send's start to its receive's end, and a
// counter track for each of counters.
func (r *Recorder) WriteChrome(w io.Writer, ranks int, title string, counters []Counter) error {
	if r.err != nil {
		return r.err
	}
	lanes := r.lanes(ranks)
	tid := make([]int32, ranks+1) // first thread id of each rank
	for i, n := range lanes {
		tid[i+1] = tid[i] + max(n, 1)
	}
	b := bufio.NewWriterSize(w, 1<<16)
	name, _ := json.Marshal(title)
	fmt.Fprintf(b, `{"displayTimeUnit":"ns","traceEvents":[`+"\n"+`{"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":%s}}`, name)
	for rank, n := range lanes {
		for l := range max(n, 1) {
			label := fmt.Sprintf("rank %d", rank)
			if l > 0 {
				label = fmt.Sprintf("rank %d (+%d)", rank, l)
			}
			t := tid[rank] + l
			fmt.Fprintf(b, ",\n"+`{"ph":"M","pid":0,"tid":%d,"name":"thread_name","args":{"name":"%s"}},{"ph":"M","pid":0,"tid":%d,"name":"thread_sort_index","args":{"sort_index":%d}}`, t, label, t, t)
		}
	}
	for _, s := range r.Spans {
		peer := ""
		if s.Kind != sim.OpCalc {
			peer = fmt.Sprintf(`,"peer":%d,"tag":%d`, s.Peer, s.Tag)
		}
		fmt.Fprintf(b, ",\n"+`{"ph":"X","pid":0,"tid":%d,"name":"%s","cat":"op","ts":%s,"dur":%s,"args":{"bytes":%d%s}}`,
			tid[s.Rank]+s.Lane, s.Kind, us(s.Start), us(max(s.End-s.Start, 0)), s.Bytes, peer)
		if s.Reduce > 0 {
			// The reduction, nested at the end of its receive.
			fmt.Fprintf(b, ",\n"+`{"ph":"X","pid":0,"tid":%d,"name":"reduce","cat":"op","ts":%s,"dur":%s,"args":{"bytes":%d}}`,
				tid[s.Rank]+s.Lane, us(s.End-s.Reduce), us(s.Reduce), s.Bytes)
		}
	}
	for id, m := range r.messages() {
		s, v := r.Spans[m[0]], r.Spans[m[1]]
		fmt.Fprintf(b, ",\n"+`{"ph":"s","pid":0,"tid":%d,"name":"message","cat":"message","id":%d,"ts":%s},{"ph":"f","bp":"e","pid":0,"tid":%d,"name":"message","cat":"message","id":%d,"ts":%s}`,
			tid[s.Rank]+s.Lane, id, us(s.Start), tid[v.Rank]+v.Lane, id, us(v.End))
	}
	for _, c := range counters {
		name, _ := json.Marshal(c.Name)
		for i, v := range c.Values {
			fmt.Fprintf(b, ",\n"+`{"ph":"C","pid":0,"name":%s,"ts":%s,"args":{"utilization":%s}}`, name, us(sim.Time(i)*c.Span), strconv.FormatFloat(v, 'g', 6, 64))
		}
	}
	b.WriteString("\n]}\n")
	return b.Flush()
}
