package sweep

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/configs"
)

// machinePath is a machine argument of the sweep file: a built-in name as
// it is, a relative file relative to the sweep file's folder (so the file
// means the same from any working directory, as a batch job's may differ).
func machinePath(file, arg string) string {
	if arg == "" || slices.Contains(configs.Builtins(), arg) || filepath.IsAbs(arg) {
		return arg
	}
	return filepath.Join(filepath.Dir(file), arg)
}

// machines builds each machine (with its overrides) once for all the
// points and workers that use it; a Machine is never changed by a run.
type machines struct {
	mu    sync.Mutex
	built map[string]*machineEntry
}

type machineEntry struct {
	once sync.Once
	m    *configs.Machine
	err  error
}

// get returns the machine arg with overrides applied.
func (c *machines) get(arg string, overrides []configs.Override) (*configs.Machine, error) {
	key := arg
	for _, o := range overrides {
		key += "\x00" + o.Path + "=" + show(o.Value)
	}
	c.mu.Lock()
	if c.built == nil {
		c.built = map[string]*machineEntry{}
	}
	e := c.built[key]
	if e == nil {
		e = &machineEntry{}
		c.built[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		source, data, err := configs.Source(arg)
		if err != nil {
			e.err = err
			return
		}
		e.m, e.err = configs.WithOverrides(source, data, overrides)
	})
	return e.m, e.err
}

// MachineOf names point p's machine, its argument and the machine
// settings the point sets ("fattree-1024, network.fat_tree.taper=2"), and
// builds it as the point's run does, for a report to describe what each
// point ran on (it described the base machine alone, full bisection for
// a 2:1 taper: a new user's trial).
func (s *Spec) MachineOf(p int) (name string, build func() (*configs.Machine, error)) {
	machine := configs.DefaultMachine
	var overrides []configs.Override
	var set []string
	for _, v := range s.Point(p) {
		switch {
		case v.Key == "machine":
			machine = v.Node.Value
		case !run.IsFlag(v.Key):
			overrides = append(overrides, configs.Override{Path: v.Key, Value: v.Node, Where: fmt.Sprintf("%s:%d", s.File, v.Line)})
			set = append(set, v.Key+"="+show(v.Node))
		}
	}
	name = strings.Join(append([]string{machine}, set...), ", ")
	return name, func() (*configs.Machine, error) {
		var c machines
		return c.get(machinePath(s.File, machine), overrides)
	}
}

// experiment is point p's experiment.
func (s *Spec) experiment(p int, cache *machines, points *run.Points) (*collsim.Experiment, error) {
	vals := s.Point(p)
	machine := configs.DefaultMachine
	var overrides []configs.Override
	for _, v := range vals {
		switch {
		case v.Key == "machine":
			machine = machinePath(s.File, v.Node.Value)
		case !run.IsFlag(v.Key):
			overrides = append(overrides, configs.Override{Path: v.Key, Value: v.Node, Where: fmt.Sprintf("%s:%d", s.File, v.Line)})
		}
	}
	m, err := cache.get(machine, overrides)
	if err != nil {
		return nil, err
	}
	e, err := points.Point(settings(vals), m)
	if err == nil {
		// As run refuses them: the row is what run prints for the point,
		// and the report's command for it reproduces it.
		err = points.CheckOptions()
	}
	return e, err
}

// outcome is one point's result or error, and how long it took.
type outcome struct {
	point  int
	result *collsim.Result
	row    []any // the point's row, built by its worker
	err    error
	wall   time.Duration
}

// runPoint runs point p.
func (s *Spec) runPoint(p int, cache *machines, points *run.Points) (out outcome) {
	start := time.Now()
	out.point = p
	defer func() {
		if r := recover(); r != nil { // a defect of collsim's: the point's row says so, the sweep goes on
			out.result, out.err = nil, fmt.Errorf("internal error (please report it): %v", r)
		}
		out.wall = time.Since(start)
	}()
	e, err := s.experiment(p, cache, points)
	if err != nil {
		out.err = err
		return out
	}
	out.result, out.err = e.Run()
	return out
}

// describe is point p in one line, for progress and errors.
func (s *Spec) describe(p int) string {
	var parts []string
	for a, v := range s.AxisValues(p) {
		parts = append(parts, s.Axes[a].Key+"="+show(v))
	}
	return strings.Join(parts, " ")
}
