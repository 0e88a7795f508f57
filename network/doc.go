// Package network holds the transfer models that implement sim.Network
// over a topology.Topology: how long a message takes, given the links of
// its route and whatever else is in flight.
//
// The analytic model (LogGP-style, no link sharing) is here; the flow model
// (max-min fair sharing) and noise come with the network-fidelity work.
// Every model must pass networktest.Conformance. network knows topology and
// sim, never algorithms.
package network
