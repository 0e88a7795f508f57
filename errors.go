package collsim

import "fmt"

// OptionError is an Experiment option out of range, or options that do
// not go together: the command line's usage error (exit status 2; its own
// flag errors are OptionErrors too). Its message names the option as
// collsim run's flag that sets it, or, for a name that is not one of the
// choices (a collective, an algorithm, a network model), the name and the
// valid ones.
type OptionError struct{ Err error }

// Error returns the wrapped error's message.
func (e *OptionError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *OptionError) Unwrap() error { return e.Err }

func optionf(format string, args ...any) error {
	return &OptionError{Err: fmt.Errorf(format, args...)}
}

// CheckError is a run that finished wrongly: a deadlock, or data that
// arrived wrong (exit status 3 on the command line).
type CheckError struct{ Err error }

// Error returns the wrapped error's message.
func (e *CheckError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *CheckError) Unwrap() error { return e.Err }
