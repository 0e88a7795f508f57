// Package cost holds closed-form cost models of collective algorithms and
// checks them against simulation. The Hockney alpha-beta-gamma model prices
// a message of n bytes at alpha + n*beta and a reduction of n bytes at
// n*gamma (Hockney 1994; Thakur, Rabenseifner, Gropp 2005).
//
// cost knows collectives (which algorithm, what Params mean) and nothing
// of topology or network models: callers derive alpha, beta and gamma from
// a machine.
package cost
