#!/usr/bin/env bash
# Writes cmd/collsim/default.pgo, the CPU profile that go build and go run
# use to optimize collsim (profile-guided optimization, -pgo=auto): the
# merged profiles of the main job, of GOAL runs in the LogGOPS model (a
# ring, a recursive doubling and a linear alltoall, as the README measures
# them), of the simulator's LogGOPS benchmarks, and of two flow-network
# runs the README measures (a pairwise alltoall on a fat-tree, Valiant
# routing on a dragonfly). It inlines the hot calls of the event loop and
# of the flow model's solver: the GOAL ring runs about 12% faster with it
# (README, "Speed on GOAL input"). Rerun it after large changes to the hot paths;
# a stale profile still builds, it only helps less.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/collsim" ./cmd/collsim
c=$tmp/collsim
$c schedule -c allreduce -a ring -n 1024 -s 1MiB -o "$tmp/ring.goal"
$c schedule -c allreduce -a recursive_doubling -n 16384 -s 8 --reduce-bandwidth 8GB/s -o "$tmp/rd.goal"
$c schedule -c alltoall -a linear -n 512 -s 4KiB -o "$tmp/alltoall.goal"
$c run --cpuprofile "$tmp/main.prof" >/dev/null
for g in ring rd alltoall; do
	GOMAXPROCS=1 $c run --goal "$tmp/$g.goal" --cpuprofile "$tmp/$g.prof" >/dev/null
done
$c run -m fattree-1024 --network flow -c alltoall -a pairwise -n 1024 -s 4MiB --verify off -q --cpuprofile "$tmp/pairwise.prof" >/dev/null
$c run -m configs/examples/dragonfly-576.yaml --network flow --routing valiant -c alltoall -n 512 -s 64MiB --verify off -q --cpuprofile "$tmp/valiant.prof" >/dev/null
go test ./sim -run '^$' -bench 'RunLogGOPS(Ring|RecursiveDoubling|LinearAlltoall)$' -benchtime 100x -cpu 1 -cpuprofile "$tmp/bench.prof" -o "$tmp/sim.test" >/dev/null
go tool pprof -proto "$tmp"/*.prof >cmd/collsim/default.pgo
echo "wrote cmd/collsim/default.pgo" >&2
