#!/usr/bin/env bash
# A real single-node Slurm cluster on localhost for the Slurm tests: munged, slurmctld and slurmd from
# Debian's slurm-wlm and munge, each with its own state, sockets, ports and logs under DIR, so tests
# and other clusters on the machine do not see each other.
#
#   local_cluster.sh start DIR   prints "export SLURM_CONF=DIR/slurm.conf" once the node is idle
#   local_cluster.sh stop DIR    stops the daemons started by `start DIR`
#
# Exit status 77 (ctest's "skipped") when slurm-wlm or munge is not installed or we are not root
# (slurmd must run jobs); any other failure prints the daemons' logs and exits 1.
set -euo pipefail

command_name=${1:-}
dir=${2:-}
if [[ -z "$command_name" || -z "$dir" ]]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi

stop_cluster() {
  for pid_file in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [[ -f "$pid_file" ]] || continue
    pid=$(cat "$pid_file")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pid_file"
  done
}

if [[ "$command_name" == stop ]]; then
  stop_cluster
  exit 0
fi
[[ "$command_name" == start ]] || { echo "unknown command '$command_name' (expected start or stop)" >&2; exit 2; }

for tool in munged slurmctld slurmd sbatch; do
  if ! command -v "$tool" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$tool ]]; then
    echo "SKIP: $tool is not installed (apt-get install slurm-wlm munge)" >&2
    exit 77
  fi
done
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: a local Slurm node needs root (slurmd launches the jobs)" >&2
  exit 77
fi
export PATH=$PATH:/usr/sbin

dir=$(realpath -m "$dir")
mkdir -p "$dir"/spool "$dir"/state "$dir"/munge
chmod 700 "$dir"/munge
trap 'echo "local Slurm cluster failed to start; logs:" >&2; tail -n 40 "$dir"/*.log >&2 || true; stop_cluster; exit 1' ERR

# munge: a private key, socket and daemon (the system one may not run, or use another key).
dd if=/dev/urandom bs=1 count=1024 of="$dir"/munge/munge.key status=none
chmod 400 "$dir"/munge/munge.key
munged --force --key-file="$dir"/munge/munge.key --socket="$dir"/munge/munge.socket \
  --pid-file="$dir"/munged.pid --log-file="$dir"/munged.log --seed-file="$dir"/munge/seed

# Two free TCP ports, for slurmctld and slurmd.
read -r controller_port node_port < <(python3 - <<'PY'
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))
PY
)
node=$(hostname -s)
cpus=$(nproc)
memory_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
cat > "$dir"/slurm.conf <<CONF
ClusterName=benchmatrix-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$controller_port
SlurmdPort=$node_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF=$dir/slurm.conf

slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF" -N "$node"
for _ in $(seq 100); do
  state=$(sinfo -h -N -o '%t' 2>/dev/null | head -n1 || true)
  if [[ "$state" == idle* ]]; then
    trap - ERR
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "node did not become idle (state '${state:-none}')" >&2
false
