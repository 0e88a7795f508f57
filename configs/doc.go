// Package configs reads machine configs: YAML files that describe a
// machine's network, its nodes and its hosts' costs, with units
// ("100Gbit/s", "12.5GB/s", "1.2us", "64KiB"). Decoding is strict (an
// unknown key is an error) and every problem is reported with file:line and
// how to fix it. The built-in machines are embedded, so collsim runs with no
// files at all.
//
// configs builds topology and network values from a config; it knows
// nothing of algorithms.
package configs
