// Package realrun executes schedules for real: one OS process (or
// goroutine) per rank, moving real bytes to its peers (through shared
// memory on one host, a large message copied once straight out of the
// sender's memory; over TCP otherwise) and really reducing them, with
// sim's per-rank interpreter (sim.Interp) deciding what runs when, so that
// dependencies and matching behave as in the simulator.
//
// It owns the wire format, the full mesh of channels between ranks, the
// rendezvous through which ranks find each other, the OSU-style timing loop
// and the fault handling (a peer that dies, stalls or sends garbage ends the
// run on every rank with an error naming it). It knows the program language
// only: which algorithm a schedule comes from, and how a machine is modelled,
// are the caller's business.
package realrun
