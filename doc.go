// Package collsim is the public API of collsim, a deterministic
// discrete-event simulator of collective communication on modelled
// machines: an Experiment (a machine, a collective call or a GOAL
// schedule, a network model, routing, placement, noise, faults and a seed)
// runs to a Result, the same one `collsim run --json` prints. The command
// line (cmd/collsim) is a layer of flags and output over it; see README.md.
package collsim
