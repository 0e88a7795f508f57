// Package collectives implements collective algorithms as programs in sim's
// program language: each algorithm is a function from Params to a
// sim.Schedule whose per-rank programs are generated step by step as the
// rank advances.
//
// Every algorithm is checked by data (Check): its schedule runs with real
// buffers under randomized message timing and every rank must end with
// exactly the right elements.
//
// collectives knows only sim's program language: no topology, no network
// model, no engine internals. Hierarchical and topology-aware algorithms
// (later) take a rank grouping from their caller.
package collectives
