package workers

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

func TestWaitRaisesAWorkersPanic(t *testing.T) {
	var g Group
	var ran atomic.Int32
	for i := range 4 {
		g.Go(func() {
			ran.Add(1)
			if i == 2 {
				panic("worker 2 failed")
			}
		})
	}
	defer func() {
		v := recover()
		var p *Panic
		if err, ok := v.(error); !ok || !errors.As(err, &p) {
			t.Fatalf("Wait panicked with %#v, want a *Panic", v)
		}
		if p.Value != "worker 2 failed" || !strings.Contains(string(p.Stack), "workers_test.go") {
			t.Errorf("panic %v with stack %s: want the worker's value and its stack", p.Value, p.Stack)
		}
		if ran.Load() != 4 {
			t.Errorf("%d workers ran before Wait returned, want all 4", ran.Load())
		}
	}()
	g.Wait()
	t.Fatal("Wait returned after a worker panicked")
}

func TestWaitWithoutPanics(t *testing.T) {
	var g Group
	var sum atomic.Int64
	for i := range 10 {
		g.Go(func() { sum.Add(int64(i)) })
	}
	g.Wait()
	if sum.Load() != 45 {
		t.Errorf("sum %d, want 0+1+...+9 = 45", sum.Load())
	}
}
