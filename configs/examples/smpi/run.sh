#!/bin/bash
# Reproduce every SMPI measurement for the collsim comparison.
#
# Usage: ./run.sh [RUNS] [CASES...]      (defaults: RUNS=3, cases 1 2 3 4;
#        baselines 1b..4b and variants 1n, 1r..4r on request)
# Outputs go to raw/case<N>_run<K>.{out,err,time,load}; summarize.py builds the table.
# FIRST=<k> starts numbering at run k (to add runs without redoing earlier ones).
#
# Before each run the script waits (up to MAXWAIT s) until the 1-minute load
# average is below LOADMAX, so runs are not disturbed by other work on this
# 2-core machine; the load seen at start is logged in raw/case<N>_run<K>.load.
# Each run is killed after 20 minutes (timeout 1200).
set -u
cd "$(dirname "$0")"
RUNS=${1:-3}
shift || true
CASES=${*:-1 2 3 4}
LOADMAX=${LOADMAX:-0.6}
MAXWAIT=${MAXWAIT:-14400}

smpicc -O2 -Wall -o coll_bench coll_bench.c
mkdir -p raw
for n in 256 1024; do seq 0 $((n - 1)) | sed 's/^/node-/' > hosts_$n.txt; done

# Settings shared by all cases (none of them touches the network model):
#  - computation between MPI calls is not simulated and its benchmark speed is
#    set to 1 Gflop/s (irrelevant once simulate-computation is off);
#  - MPI_Wtime injects no simulated delay (default 1e-8 s per call);
#  - the program has no globals, so privatization is off (-no-privatize).
# smpirun itself adds --cfg=surf/precision:1e-9 --cfg=network/model:SMPI.
RAW="--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --cfg=network/crosstraffic:0"
COMMON="--cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0 -no-privatize"

case_cmd() {
  case "$1" in
  1) echo "smpirun -np 256 -platform fattree_256.xml -hostfile hosts_256.txt $COMMON --cfg=smpi/allreduce:lr ./coll_bench allreduce 2097152" ;;
  2) echo "smpirun -np 256 -platform fattree_256.xml -hostfile hosts_256.txt $COMMON --cfg=smpi/alltoall:pair ./coll_bench alltoall 4096" ;;
  3) echo "smpirun -np 1024 -platform dragonfly_1024.xml -hostfile hosts_1024.txt $COMMON --cfg=smpi/alltoall:bruck ./coll_bench alltoall 8" ;;
  4) echo "smpirun -np 1024 -platform fattree_1024.xml -hostfile hosts_1024.txt $COMMON --cfg=smpi/bcast:binomial_tree ./coll_bench bcast 1048576" ;;
  # Baselines (not part of the brief): the same command with a near-empty
  # message, to show how much of the wall time is fixed cost (process start,
  # platform build, actor creation, MPI_Init, barrier, result reduction).
  # Variant of case 1 (not part of the brief): a user-defined no-op reduction
  # instead of MPI_SUM, so the host does no real arithmetic on the buffers.
  1n) echo "smpirun -np 256 -platform fattree_256.xml -hostfile hosts_256.txt $COMMON --cfg=smpi/allreduce:lr ./coll_bench allreduce_noop 2097152" ;;
  1b) echo "smpirun -np 256 -platform fattree_256.xml -hostfile hosts_256.txt $COMMON --cfg=smpi/allreduce:lr ./coll_bench allreduce 256" ;;
  2b) echo "smpirun -np 256 -platform fattree_256.xml -hostfile hosts_256.txt $COMMON --cfg=smpi/alltoall:pair ./coll_bench alltoall 1" ;;
  3b) echo "smpirun -np 1024 -platform dragonfly_1024.xml -hostfile hosts_1024.txt $COMMON --cfg=smpi/alltoall:bruck ./coll_bench alltoall 1" ;;
  4b) echo "smpirun -np 1024 -platform fattree_1024.xml -hostfile hosts_1024.txt $COMMON --cfg=smpi/bcast:binomial_tree ./coll_bench bcast 1" ;;
  # Variants (not part of the brief) with SMPI's calibration switched off:
  # latency and bandwidth factors 1 for every message size and no reverse
  # cross-traffic, so each flow sees the platform's raw 300 ns / 12.5 GB/s links.
  1r|2r|3r|4r) case_cmd "${1%r}" | sed "s| ./coll_bench| $RAW ./coll_bench|" ;;
  *) echo "run.sh: unknown case '$1' (want 1, 2, 3, 4 or 1b..4b, 1n, 1r..4r)" >&2; exit 2 ;;
  esac
}

wait_quiet() {
  local waited=0
  while :; do
    local l
    l=$(cut -d' ' -f1 /proc/loadavg)
    if awk -v l="$l" -v m="$LOADMAX" 'BEGIN{exit !(l<m)}'; then echo "$l"; return; fi
    if [ "$waited" -ge "$MAXWAIT" ]; then echo "$l (gave up waiting after ${MAXWAIT}s)"; return; fi
    sleep 15; waited=$((waited + 15))
  done
}

for c in $CASES; do
  cmd=$(case_cmd "$c")
  for k in $(seq "${FIRST:-1}" "$RUNS"); do
    base=raw/case${c}_run${k}
    load=$(wait_quiet)
    echo "$(date -Is) load1=$load cmd: $cmd" > "$base.load"
    echo "case $c run $k (load1 $load)"
    /usr/bin/time -v -o "$base.time" timeout 1200 $cmd > "$base.out" 2> "$base.err"
    rc=$?
    echo "$(date -Is) load1_after=$(cut -d' ' -f1 /proc/loadavg) exit=$rc" >> "$base.load"
    echo "  exit $rc : $(grep RESULT "$base.out")"
    grep -E "Elapsed|Maximum resident" "$base.time" | sed 's/^/  /'
  done
done
