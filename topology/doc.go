// Package topology describes machines as graphs: hosts (endpoints where
// ranks run), switches or routers, and directed links with bandwidth and
// latency. Builders make crossbars, k-ary n-trees (optionally tapered),
// dragonflies, tori and multi-node machines (devices on an intra-node fabric
// with NICs into any of the others), and each computes its routes
// arithmetically, without per-message graph searches.
//
// gonum's graph packages serve checks (connectivity), analysis and DOT
// export. topology knows nothing of time or messages: latencies are plain
// seconds here and become simulated time in package network.
package topology
