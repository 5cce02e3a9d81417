#!/bin/sh
# Two "nodes" training together: network namespaces zc0 and zc1 joined by a
# veth pair (bench/netns.sh up), a DeepSpeed hostfile naming their
# addresses, and `zeroc launch --hostfile` run in zc0 with Open MPI starting
# rank 1's daemon in zc1 through bench/netns.sh's rsh agent (in place of
# ssh), the ranks talking TCP over the veth only. Checks that the traffic
# crossed the veth, that the losses equal a 2-rank run on one node bit for
# bit (2 ranks reduce the same pairs), and that the checkpoint the two nodes
# saved resumes on one rank.
#
#   launch_netns.sh ZEROC MODELS_DIR WORK
set -eu
ZEROC=$1 MODELS=$2 WORK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
NETNS=$HERE/../../bench/netns.sh
export ZEROC_NETNS_STATE="$WORK/netns-state"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The rsh agent starts the remote daemon from a bare environment, as ssh
# would: the remote ranks get only what zeroc launch exports.
export NETNS_RSH_ENV=bare
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
trap '"$NETNS" down >/dev/null 2>&1 || true' EXIT
"$NETNS" up --rate none --delay 0 >/dev/null
/usr/bin/python3 "$HERE/../../tools/reference/onnx_torch_train.py" "$MODELS/mlp.onnx" \
  --make-data data --samples 64 --seed 0 -q >/dev/null
"$ZEROC" compile "$MODELS/mlp.onnx" -o out --stage 3 --world-size 2 >/dev/null 2>&1
"$ZEROC" compile "$MODELS/mlp.onnx" -o out1 --stage 1 --world-size 1 >/dev/null 2>&1
printf '# two namespace hosts\n10.77.0.1 slots=1\n10.77.0.2 slots=1\n' > hostfile
tx() { ip netns exec zc1 cat /sys/class/net/zcv/statistics/tx_bytes; }
before=$(tx)
ip netns exec zc0 env OMPI_MCA_plm_rsh_agent="$NETNS _rsh" \
  OMPI_MCA_oob_tcp_if_include=zcv OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self \
  OMPI_MCA_btl_tcp_if_include=zcv \
  "$ZEROC" launch --hostfile hostfile --include '10.77.0.1@10.77.0.2' out/ \
  --data data --steps 6 --log-jsonl nodes.jsonl --save-dir ck --save-interval 3 \
  > launch.out 2>&1 || { cat launch.out; exit 1; }
sent=$(( $(tx) - before ))
sh "$HERE/../mpirun-isolated" -np 2 --oversubscribe --bind-to none out/train \
  --data data --steps 6 --log-jsonl local.jsonl --quiet < /dev/null
out1/train --data data --steps 9 --load-dir ck --log-jsonl resumed.jsonl --quiet
/usr/bin/python3 - "$sent" <<'PY'
import json, sys
rec = lambda f: [(d["step"], d["loss"], d["grad_norm"]) for d in map(json.loads, open(f))]
nodes, local, resumed = rec("nodes.jsonl"), rec("local.jsonl"), rec("resumed.jsonl")
sent = int(sys.argv[1])
assert sent > 4000, "rank 1 sent only %d bytes over the veth" % sent
assert nodes == local, (nodes, local)
assert [r[0] for r in resumed] == [7, 8, 9], resumed
print("netns: 2 namespace hosts trained 6 steps with the losses of one node, "
      "bitwise; rank 1 sent %d bytes over the veth; their checkpoint resumed "
      "on 1 rank at stage 1 (steps 7-9, loss %.6f)" % (sent, resumed[-1][1]))
PY
grep -c '^\[1,0\]<stdout>:saved checkpoint ck/global_step' launch.out
# A GPU program's ranks on two hosts with different slots: one mpirun
# application context per host, each exporting its slots as
# CUDA_VISIBLE_DEVICES, and every rank gets this environment's NCCL_*
# variables and .deepspeed_env's (a stand-in train prints them).
mkdir -p gpu && cp "$HERE/../Driver/Inputs/launch/print-gpus.sh" gpu/train
echo '{"world_size": 3, "target": "cuda"}' > gpu/plan.json
printf '10.77.0.1 slots=2\n10.77.0.2 slots=2\n' > gpu-hostfile
printf 'GREETING=from .deepspeed_env\n' > .deepspeed_env
ip netns exec zc0 env OMPI_MCA_plm_rsh_agent="$NETNS _rsh" HOME="$WORK/gpu" \
  NCCL_SOCKET_IFNAME=zcv \
  OMPI_MCA_oob_tcp_if_include=zcv "$ZEROC" launch --hostfile gpu-hostfile \
  --include '10.77.0.1:1@10.77.0.2' --threads_per_rank 1 gpu/ > gpu.out 2>&1 ||
  { cat gpu.out; exit 1; }
grep '<stdout>:rank' gpu.out | sort
