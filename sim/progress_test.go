package sim_test

import (
	"reflect"
	"testing"

	"github.com/collsim/collsim/collectives"
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

// A GOAL run in LogGOPS mode, serial or in two partitions, gives the same
// result told of its progress or not; its reports never go back, never
// pass the end, and know the schedule's op total.
func TestGOALProgressOnlyObserves(t *testing.T) {
	g := goalOf(t, collectives.Allreduce, "ring", collectives.Params{Ranks: 64, Count: 1 << 14})
	runs := map[string]func(func(sim.Progress)) *sim.Result{
		"serial": func(progress func(sim.Progress)) *sim.Result {
			res, err := g.RunLogGOPSProgress(sim.DefaultLogGOPS, nil, 1, progress)
			if err != nil {
				t.Fatal(err)
			}
			return res
		},
		"parallel": func(progress func(sim.Progress)) *sim.Result {
			res, ok := g.RunParallelProgress(sim.DefaultLogGOPS, 1, 2, progress)
			if !ok {
				t.Fatal("the ring did not run in parallel")
			}
			return res
		},
	}
	for name, run := range runs {
		var reports []sim.Progress
		with := run(func(pr sim.Progress) { reports = append(reports, pr) })
		without := run(nil)
		if !reflect.DeepEqual(with, without) {
			t.Fatalf("%s: progress changed the result:\n%+v\n%+v", name, with, without)
		}
		if len(reports) < 2 {
			t.Fatalf("%s: %d reports over %d events", name, len(reports), with.Events)
		}
		var last sim.Progress
		for i, pr := range reports {
			if pr.Events < last.Events+sim.ProgressEvents || pr.Now < last.Now || pr.Ops < last.Ops || pr.Messages < last.Messages {
				t.Errorf("%s: report %d came too soon or went back: %+v after %+v", name, i, pr, last)
			}
			if pr.Now > with.Makespan || pr.Ops > with.Ops || pr.Messages > with.Messages || pr.Events > with.Events {
				t.Errorf("%s: report %d is past the end: %+v, result %+v", name, i, pr, with)
			}
			if pr.OpsTotal != uint64(g.Ops()) {
				t.Errorf("%s: report %d: %d ops in all, the schedule has %d", name, i, pr.OpsTotal, g.Ops())
			}
			last = pr
		}
	}
}
