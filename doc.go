// Package collsim is the root of the collsim module: a deterministic
// discrete-event simulator of collective communication on modelled
// machines. The command is cmd/collsim; see README.md.
package collsim
