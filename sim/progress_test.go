package sim_test

import (
	"reflect"
	"testing"

	"github.com/collsim/collsim/sim"
)

// A run told of its progress gives the same result as one that is not, and
// the reports grow in step: simulated time, events, ops and messages never
// go back, the events come ProgressEvents at a time, and none reports more
// than the run ends with.
func TestProgressOnlyObserves(t *testing.T) {
	const p, rounds = 16, 400 // 12,800 messages: several reports
	progs := make([]sim.Program, p)
	for r := range int32(p) {
		for k := range int32(rounds) {
			progs[r] = append(progs[r],
				sim.Op{Kind: sim.OpSend, Peer: (r + 1) % p, Tag: k, Bytes: 1 << 10},
				sim.Op{Kind: sim.OpRecv, Peer: (r + p - 1) % p, Tag: k, Bytes: 1 << 10})
		}
	}
	run := func(progress func(sim.Progress)) *sim.Result {
		s := sim.FromPrograms("ring", progs, 1<<30)
		res, err := sim.Execute(sim.New(1), s, sim.Config{LogGOPS: &sim.DefaultLogGOPS, Progress: progress})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var reports []sim.Progress
	with := run(func(pr sim.Progress) { reports = append(reports, pr) })
	without := run(nil)
	if !reflect.DeepEqual(with, without) {
		t.Fatalf("progress changed the result:\n%+v\n%+v", with, without)
	}
	if want := int(with.Events / sim.ProgressEvents); len(reports) < want-1 || len(reports) > want {
		t.Fatalf("%d reports over %d events, want about %d", len(reports), with.Events, want)
	}
	var last sim.Progress
	for i, pr := range reports {
		if pr.Events != uint64(i+1)*sim.ProgressEvents {
			t.Errorf("report %d at %d events, want %d", i, pr.Events, uint64(i+1)*sim.ProgressEvents)
		}
		if pr.Now < last.Now || pr.Ops < last.Ops || pr.Messages < last.Messages {
			t.Errorf("report %d went back: %+v after %+v", i, pr, last)
		}
		if pr.Now > with.Makespan || pr.Ops > with.Ops || pr.Messages > with.Messages {
			t.Errorf("report %d is past the end: %+v, result %+v", i, pr, with)
		}
		last = pr
	}
}
