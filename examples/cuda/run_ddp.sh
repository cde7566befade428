#!/usr/bin/env bash
# File: examples/cuda/run_ddp.sh
# Starts N ranks of ddp_train on this host, like torchrun: each gets RANK, WORLD_SIZE,
# LOCAL_RANK and the file through which rank 0 hands out the NCCL unique id.
# usage: run_ddp.sh N [--straggler RANK] [--straggler-ms MS] [--kill RANK] [--kill-step S]
#                     [--steps S] [--host-us US] [--params N] [--bin PATH]
# Whatever else the ranks need (LD_PRELOAD=libkairos.so, KINETO_USE_DAEMON=1, KAIROS_JOB_ID, the
# simulator's LD_LIBRARY_PATH) is inherited from the environment. Under the simulator each rank
# gets its own simulated device (KAIROS_SIM_DEVICES=h100:N unless set).
# Exit status: 0 when every rank succeeded, else the first failing rank's status.
set -u
n=${1:?usage: run_ddp.sh N [--straggler RANK] ...}
shift
straggler=-1 straggler_ms=20 kill_rank=-1 kill_step=3 steps=20 host_us=2000 params=0
bin="$(dirname "$0")/ddp_train"
while [ $# -gt 0 ]; do
  case "$1" in
    --straggler) straggler=$2; shift 2 ;;
    --straggler-ms) straggler_ms=$2; shift 2 ;;
    --kill) kill_rank=$2; shift 2 ;;
    --kill-step) kill_step=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --host-us) host_us=$2; shift 2 ;;
    --params) params=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "run_ddp.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
id_dir=$(mktemp -d)
trap 'rm -rf "$id_dir"' EXIT
export KAIROS_DDP_ID_FILE="$id_dir/nccl_id" WORLD_SIZE=$n
export KAIROS_SIM_DEVICES=${KAIROS_SIM_DEVICES:-h100:$n}
pids=()
for ((r = 0; r < n; r++)); do
  extra=0 kill_at=-1
  [ "$r" = "$straggler" ] && extra=$straggler_ms
  [ "$r" = "$kill_rank" ] && kill_at=$kill_step
  RANK=$r LOCAL_RANK=$r "$bin" "$steps" "$host_us" "$extra" "$kill_at" "$params" &
  pids+=($!)
done
status=0
for ((r = 0; r < n; r++)); do
  wait "${pids[$r]}"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "run_ddp.sh: rank $r exited with status $rc" >&2
    [ $status -eq 0 ] && status=$rc
  fi
done
exit $status
