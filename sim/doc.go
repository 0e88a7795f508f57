// Package sim is collsim's discrete-event engine and program language.
//
// It owns simulated time (integer picoseconds), the event queue, seeded
// random streams, the per-rank program language (Send, Recv, Calc ops with
// dependencies and data regions), the per-rank interpreter with MPI matching
// semantics, and the simulated executor that drives programs over a Network.
// GOAL schedules (LogGOPSim's format) have a reader, a writer and an
// executor of their own in the LogGOPS model, which runs large schedules
// in parallel, one engine per partition of ranks, with the sequential
// result.
//
// sim knows no topology and no algorithm: collective algorithms write
// programs (package collectives) and network models implement the Network
// interface (package network). It imports nothing else of collsim.
package sim
