#!/usr/bin/env bash
# Runs a small sweep as a 4-task Slurm job array on a one-node Slurm cluster
# started here on localhost (Debian's slurmctld, slurmd and munge), merges
# the shards into WORK_DIR/merged.csv, and runs the sweep whole into
# WORK_DIR/whole.csv (TestSlurmSweepArray compares them).
#
#   sweep-array.sh COLLSIM_BINARY SWEEP_FILE WORK_DIR
#
# Needs root (Slurm's daemons, and installing them when missing). Exits 0
# when both files are written, 1 when a step fails, and 77 (with why on
# stderr) when Slurm cannot be had or started here: the Go test skips then.
set -euo pipefail
collsim=$1 sweep=$2 work=$3
skip() { echo "slurm: $*" >&2; exit 77; }
export PATH="/usr/sbin:/sbin:$PATH"

[ "$(id -u)" = 0 ] || skip "not root: starting slurmctld and slurmd needs root"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
	command -v apt-get >/dev/null || skip "slurmctld, slurmd, sbatch or munged missing and no apt-get to install them"
	echo "slurm: installing slurmctld slurmd slurm-client munge (Debian packages)" >&2
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge; } >"$work/apt.log" 2>&1 ||
		skip "could not install Slurm (see $work/apt.log)"
fi

# Everything of this cluster lives in $work: its config, state, logs, the
# munge socket, and free ports; nothing is written to /etc or /run.
mkdir -p "$work/state" "$work/spool" "$work/log"
chmod 700 "$work"
host=$(hostname -s)
cpus=$(nproc)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)); }
ctld_port=$(port) d_port=$(port)
key="$work/munge.key"
if [ -r /etc/munge/munge.key ]; then cp /etc/munge/munge.key "$key"; else dd if=/dev/urandom of="$key" bs=1024 count=1 status=none; fi
chmod 400 "$key"
munged --force --socket="$work/munge.sock" --key-file="$key" --pid-file="$work/munged.pid" \
	--log-file="$work/log/munged.log" --seed-file="$work/munged.seed" || skip "munged did not start (see $work/log/munged.log)"

cat >"$work/slurm.conf" <<EOF
ClusterName=collsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"

# Stop the daemons and wait until they are gone: slurmctld saves its state
# as it exits, and the test removes this folder after the script.
stop() {
	local pids=()
	for f in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munged.pid"; do
		[ -r "$f" ] && pids+=("$(cat "$f")")
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill "${pids[@]}" 2>/dev/null || true
	for _ in $(seq 100); do
		local alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 1 ] || return 0
		sleep 0.1
	done
	kill -9 "${pids[@]}" 2>/dev/null || true
}
trap stop EXIT
slurmctld -f "$SLURM_CONF" || skip "slurmctld did not start (see $work/log/slurmctld.log)"
slurmd -f "$SLURM_CONF" || skip "slurmd did not start (see $work/log/slurmd.log)"
for _ in $(seq 100); do
	sinfo -h -o %T 2>/dev/null | grep -q idle && break
	sleep 0.2
done
sinfo -h -o %T 2>/dev/null | grep -q idle || skip "the node never became idle: $(sinfo 2>&1 | tail -1) (see $work/log)"

# The job script the README gives: each task of the array runs its shard.
cat >"$work/sweep.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=collsim-sweep
#SBATCH --array=1-4
#SBATCH --cpus-per-task=1
#SBATCH --output=$work/slurm-%A_%a.out
"$collsim" sweep "$sweep" --shard "\$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT" -o "$work/part-\$SLURM_ARRAY_TASK_ID.csv" --jobs 1
EOF
cd "$work"
timeout 300 sbatch --wait "$work/sweep.sbatch" >"$work/sbatch.out" || {
	echo "slurm: the job array failed:" >&2
	cat "$work"/slurm-*.out "$work/sbatch.out" >&2 || true
	exit 1
}
"$collsim" merge "$work"/part-{1,2,3,4}.csv -o "$work/merged.csv"
"$collsim" sweep "$sweep" -q -o "$work/whole.csv"

echo "slurm: 4 array tasks done and merged into $work/merged.csv; the whole sweep is in $work/whole.csv"
