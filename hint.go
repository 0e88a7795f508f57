package collsim

import (
	"errors"
	"fmt"

	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
)

// ClockHint adds to an error of a run that passed the clock's limit the
// input that costs one message of n bytes the most, and where it is
// written: the likely cause, and the value to change.
func ClockHint(err error, n int64, inputs []configs.Input) error {
	if !errors.Is(err, sim.ErrClockLimit) || len(inputs) == 0 {
		return err
	}
	best, most := inputs[0], -1.0
	for _, in := range inputs {
		if c := in.Cost(float64(n)); c > most {
			best, most = in, c
		}
	}
	return fmt.Errorf("%w; the costliest input is %s %s (%s): %s for one message of the run's size, %s (-s/--size)", err, best.Key, best.Value, best.Where,
		ClockCost(most), configs.FormatBytes(n))
}

// ClockCost writes a cost in seconds as simulated time, or as "more than
// the whole clock" when it alone passes the clock's limit.
func ClockCost(seconds float64) string {
	if t := sim.FromSeconds(seconds); t != sim.MaxTime {
		return t.String()
	}
	return "more than the whole clock"
}
