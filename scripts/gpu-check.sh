#!/usr/bin/env bash
# Every check of the CUDA target that needs a GPU, in one run, as one table.
#
#   scripts/gpu-check.sh prepare [BUILD]   here (zeroc, nvcc; no GPU needed):
#                                          compiles the CUDA programs, their
#                                          data and CPU reference losses, the
#                                          GPU kernel tests and the GPT-2-124M
#                                          benchmark into gpu-check/bundle.tar.xz
#   scripts/gpu-check.sh run               on the GPU machine (the driver, the
#                                          CUDA libraries, python3 with torch;
#                                          no MLIR, maybe no MPI: the bundle
#                                          brings Open MPI): kernel tests,
#                                          parity at stages 0-3 (1 rank NCCL,
#                                          2 ranks --comm mpi), the benchmark
#                                          and the PyTorch peer; one table
#   scripts/gpu-check.sh dry-run [BUILD]   here: prepare's programs built with
#                                          --target cuda-emu and run's steps on
#                                          the host emulation (no benchmark);
#                                          checks the script, claims no GPU
#
# The device machine runs in a copy of the working tree and gets
# gpu-check/bundle.tar.xz carried with it (well under 64 MiB: the programs
# share most of their bytes and the benchmark's constant weights compress).
# docs/CudaTarget.md says what the table means.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/gpu-check
mode=${1:-}
build=${2:-$root/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# name | model | stage | world | config (in $dir/stage/configs) | steps
cases() {
  cat <<'EOF'
mlp-s0-w1|mlp|0|1|fp32|8
gpt2-s0-w1|gpt2|0|1|fp32|8
gpt2-s1-w1|gpt2|1|1|fp32|8
gpt2-s2-w1|gpt2|2|1|fp32|8
gpt2-s3-w1|gpt2|3|1|fp32|8
gpt2-s0-w2|gpt2|0|2|fp32|8
gpt2-s1-w2|gpt2|1|2|fp32|8
gpt2-s2-w2|gpt2|2|2|fp32|8
gpt2-s3-w2|gpt2|3|2|fp32|8
llama-s3-w1|llama|3|1|fp32|8
llama-s3-w2|llama|3|2|fp32|8
gpt2-bf16-s3-w1|gpt2|3|1|bf16|8
gpt2-fp16-s2-w2|gpt2|2|2|fp16|8
gpt2-s0-w1-unfused|gpt2|0|1|fp32-unfused|8
gpt2-bf16-s3-w1-unfused|gpt2|3|1|bf16-unfused|8
gpt2-bf16-s3-w1-matmul-attention|gpt2|3|1|bf16-matmul-attention|8
attn-bf16-s0-w1|gpt2_nodropout|0|1|bf16|8
attn-fp16-s3-w2|gpt2_nodropout|3|2|fp16|8
gpt2-bf16-sgd-s1-w2|gpt2|1|2|bf16-sgd|8
EOF
}

die() { echo "gpu-check: error: $*" >&2; exit 1; }

write_configs() {
  mkdir -p "$1"
  echo '{}' > "$1/fp32.json"
  echo '{"bf16": {"enabled": true}, "gradient_accumulation_steps": 2}' > "$1/bf16.json"
  echo '{"fp16": {"enabled": true, "initial_scale_power": 8}}' > "$1/fp16.json"
  echo '{"zeroc": {"fuse_elementwise": false}}' > "$1/fp32-unfused.json"
  echo '{"bf16": {"enabled": true}, "gradient_accumulation_steps": 2, "zeroc": {"fuse_elementwise": false}}' > "$1/bf16-unfused.json"
  echo '{"bf16": {"enabled": true}, "gradient_accumulation_steps": 2, "zeroc": {"fuse_attention": false}}' > "$1/bf16-matmul-attention.json"
  echo '{"bf16": {"enabled": true}, "optimizer": {"type": "SGD", "params": {"lr": 0.01, "momentum": 0.9}}, "gradient_clipping": 0.5, "zero_allow_untested_optimizer": true}' > "$1/bf16-sgd.json"
  echo '{"bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 8, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}' > "$1/bench.json"
  echo '{"bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 8, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "zeroc": {"fuse_elementwise": false}}' > "$1/bench-unfused.json"
  echo '{"bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 8, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "zeroc": {"fuse_attention": false}}' > "$1/bench-matmul-attention.json"
}

# Compiles every case with --target $1 into $dir/stage/progs and records the
# CPU target's losses next to each.
prepare() {
  local target=$1 zeroc=$build/bin/zeroc models=$build/test/models
  [ -x "$zeroc" ] || die "no $zeroc: build zeroc first (make build)"
  [ -f "$models/gpt2.onnx" ] || die "no test models in $models (ninja zeroc-test-models)"
  rm -rf "$dir/stage" && mkdir -p "$dir/stage/progs" "$dir/stage/data" "$dir/stage/lib"
  local stage=$dir/stage tmp
  tmp=$(mktemp -d)
  write_configs "$stage/configs"
  cases | while IFS='|' read -r name model s w cfg steps; do
    [ -d "$stage/data/$model" ] || /usr/bin/python3 "$root/tools/reference/onnx_torch_train.py" \
      "$models/$model.onnx" --make-data "$stage/data/$model" --samples 32 --seed 0 -q < /dev/null
    "$zeroc" compile "$models/$model.onnx" --stage "$s" --world-size "$w" \
      --config "$stage/configs/$cfg.json" --target "$target" -o "$stage/progs/$name" \
      < /dev/null > /dev/null 2> "$tmp/err" || die "$name: $(grep error "$tmp/err" | head -1)"
    "$zeroc" compile "$models/$model.onnx" --stage "$s" --world-size "$w" \
      --config "$stage/configs/$cfg.json" -o "$tmp/$name-cpu" < /dev/null > /dev/null 2>&1 || die "$name: CPU compile"
    mpirun -np "$w" --oversubscribe --bind-to none "$tmp/$name-cpu/train" --data "$stage/data/$model" \
      --steps "$steps" --log-jsonl "$stage/progs/$name/ref.jsonl" --quiet < /dev/null > /dev/null 2>&1 \
      || die "$name: the CPU reference run failed"
    echo "prepared $name"
  done || exit 1
  rm -rf "$tmp"
}

prepare_bench() {
  local stage=$dir/stage cache=$dir/cache
  mkdir -p "$cache"
  [ -f "$cache/gpt2_124m.onnx" ] || /usr/bin/python3 "$root/bench/gpt2_124m.py" export \
    "$cache/gpt2_124m.onnx" --batch 8 || die "exporting GPT-2-124M"
  [ -f "$cache/gpt2_124m_v50304.onnx" ] || /usr/bin/python3 "$root/bench/gpt2_124m.py" export \
    "$cache/gpt2_124m_v50304.onnx" --batch 8 --vocab 50304 || die "exporting GPT-2-124M (vocab 50304)"
  # bench-s0u: stage 0 with one kernel per elementwise op, the fusion's
  # peer; bench-s0a: stage 0 with attention as matmuls and a softmax, the
  # attention kernels' peer; bench-s0p: stage 0 of the same model with
  # nanoGPT's padded vocabulary of 50304, whose logits' rows (100,608
  # bytes, not 100,514) are 16-byte aligned for the GEMMs without the
  # compiler's row pitch: a diagnostic of that pitch (50,264 elements).
  local v s cfg onnx
  for v in 0 3 0u 0a 0p; do
    s=${v%[uap]} cfg=bench onnx=$cache/gpt2_124m.onnx
    [ "$v" = 0u ] && cfg=bench-unfused
    [ "$v" = 0a ] && cfg=bench-matmul-attention
    [ "$v" = 0p ] && onnx=$cache/gpt2_124m_v50304.onnx
    "$build/bin/zeroc" compile "$onnx" --stage $s --config "$stage/configs/$cfg.json" \
      --target cuda --max-constant-bytes 2G -o "$stage/progs/bench-s$v" --dump-ir "$dir/ir-bench-s$v" \
      > /dev/null 2>&1 || die "compiling GPT-2-124M ($cfg) at stage $s"
    rm -f "$stage/progs/bench-s$v/train.cu"
  done
  # The fused stage-0 step's roofline time (zero-print-compute-cost: the
  # bench's one micro-step and its optimizer step) at an H100's and an
  # H200's memory bandwidth, for the bench's row.
  # The whole listing by node (cost-$bw.txt) is the op tables' peer
  # (ops_row): per op kind and per op class.
  local bw
  for bw in 3350 4800; do
    "$build/bin/zeroc-opt" "$dir/ir-bench-s0/"*-plan-buffers.mlir -o /dev/null \
      -zero-print-compute-cost="memory-gb-per-s=$bw by-node=true" > "$stage/progs/bench-s0/cost-$bw.txt"
    awk '/^\/\/ @/ { fn = $2 }
         $2 == "total" && (fn == "@train_micro_step:" || fn == "@train_step:") { s += $NF }
         END { if (s > 0) printf "%.1f\n", s }' \
      "$stage/progs/bench-s0/cost-$bw.txt" > "$stage/progs/bench-s0/roofline-$bw.us"
    [ -s "$stage/progs/bench-s0/roofline-$bw.us" ] || die "the GPT-2-124M roofline (zero-print-compute-cost)"
  done
  rm -rf "$dir"/ir-bench-s*
  /usr/bin/python3 "$root/bench/gpt2_124m.py" data "$stage/data/gpt2_124m" --samples 32
  echo "prepared the GPT-2-124M benchmark (bf16, micro batch 8, sequence 1024)"
}

# The libraries the programs need that a bare GPU machine may lack (Open MPI
# and its plugins, OpenBLAS), but not the CUDA driver's or cuBLASLt/NCCL,
# which come from the machine's CUDA installation.
bundle_libraries() {
  local stage=$dir/stage exe
  exe=$(ls "$stage"/progs/*/train | head -1)
  ldd "$exe" | awk '/=> \//{print $3}' | grep -Ev 'libc\.so|libm\.so|libdl|libpthread|librt|ld-linux|libcuda|libcublas|libnccl|libstdc\+\+|libgcc_s' \
    | while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  mkdir -p "$stage/mpi"
  for pkg in openmpi-bin libopenmpi3 openmpi-common libhwloc15 libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7; do
    dpkg -L "$pkg" 2>/dev/null | while read -r f; do
      [ -f "$f" ] && [[ "$f" != /usr/share/doc/* && "$f" != /usr/share/man/* ]] && \
        mkdir -p "$stage/mpi$(dirname "$f")" && cp -P "$f" "$stage/mpi$f"
    done
  done
}

pack() {
  local kernels=$build/runtime/cuda/tests/$1
  [ -x "$kernels" ] || die "no $kernels (ninja $1)"
  cp "$kernels" "$dir/stage/kernel_tests"
  (cd "$dir" && tar -cf - stage | xz -6 -T0 > bundle.tar.xz)
  echo "gpu-check: wrote $dir/bundle.tar.xz ($(du -h "$dir/bundle.tar.xz" | cut -f1)); carry gpu-check/bundle.tar.xz and run: scripts/gpu-check.sh run"
}

# --- the GPU machine --------------------------------------------------------

find_cuda_libraries() {
  local d paths=""
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
           "$(dirname "$(command -v nvcc 2>/dev/null || echo /x/y)")/../lib64"; do
    [ -d "$d" ] && paths="$paths:$d"
  done
  # NCCL and cuBLAS from Python wheels (torch's), where the toolkit has none.
  d=$(python3 - <<'PY' 2>/dev/null
import importlib, os
out = []
for mod in ("nvidia.nccl", "nvidia.cublas", "nvidia.cu13", "nvidia.cuda_runtime"):
    try:
        m = importlib.import_module(mod)
        for p in m.__path__:
            if os.path.isdir(os.path.join(p, "lib")):
                out.append(os.path.join(p, "lib"))
    except Exception:
        pass
print(":".join(out))
PY
)
  echo "${paths#:}:$d"
}

# ok/FAIL of a case: its losses against the CPU reference's.
compare() {
  python3 - "$@" <<'PY'
import json, sys
run, ref, cfg = sys.argv[1], sys.argv[2], sys.argv[3]
tol = {"fp32": 1e-4, "fp16": 2e-2, "bf16": 5e-2}[cfg.split("-")[0]]
a = [json.loads(l) for l in open(ref)]
try:
    b = [json.loads(l) for l in open(run)]
except OSError:
    b = []
if len(a) != len(b) or not a:
    print("FAIL (%d of %d steps)" % (len(b), len(a)))
    sys.exit(1)
worst = max(abs(x["loss"] - y["loss"]) / max(abs(x["loss"]), 1e-12) for x, y in zip(a, b))
ms = sorted(y["time_ms"] for y in b[2:])[len(b[2:]) // 2] if len(b) > 2 else b[-1]["time_ms"]
print("%s %.1e %.2f" % ("ok" if worst <= tol else "FAIL", worst, ms))
sys.exit(0 if worst <= tol else 1)
PY
}

run_checks() {
  local emulated=$1 stage=$dir/stage failures=0
  if [ ! -d "$stage" ]; then
    [ -f "$dir/bundle.tar.xz" ] || die "no gpu-check/bundle.tar.xz: run scripts/gpu-check.sh prepare on a machine with zeroc first"
    (cd "$dir" && xz -dc bundle.tar.xz | tar -xf -) || die "unpacking the bundle"
  fi
  local gpu="host emulation (no GPU)"
  if [ "$emulated" = 0 ]; then
    gpu=$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1)
    [ -n "$gpu" ] || die "no GPU (nvidia-smi lists none)"
    export LD_LIBRARY_PATH="$stage/lib:$(find_cuda_libraries):${LD_LIBRARY_PATH:-}"
    if ! command -v mpirun > /dev/null; then
      export PATH="$stage/mpi/usr/bin:$PATH" OPAL_PREFIX="$stage/mpi/usr"
      export LD_LIBRARY_PATH="$stage/mpi/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH"
      echo "gpu-check: no MPI on this machine: using the bundled Open MPI"
    fi
  fi
  local log=$dir/log && rm -rf "$log" && mkdir -p "$log"
  local rows=()

  local kt
  timeout 300 "$stage/kernel_tests" > "$log/kernel_tests.log" 2>&1
  local krc=$?
  kt=$(tail -3 "$log/kernel_tests.log" | tr '\n' ' ')
  [ "$krc" = 0 ] || failures=$((failures + 1))
  rows+=("kernel tests|$([ "$krc" = 0 ] && echo ok || echo "FAIL rc=$krc")|${kt:0:70}")
  # Whether cuBLASLt had the bias and bias-gradient epilogues (the kernel
  # tests' last count; "apart": the GEMM, then a broadcast or a sum).
  local epi
  epi=$(grep -o 'gemm epilogues so far .*' "$log/kernel_tests.log" | tail -1)
  rows+=("cuBLASLt bias epilogues (kernel tests)|${epi#*: }|every dtype's Gemm and GemmBiasGrad calls; docs/CudaTarget.md, Bias gradients in the GEMM")
  # The attention gradient in one walk over the scores (what programs run
  # for heads up to 64) against two (heads of 128), GPT-2-124M's shape:
  # whether the one walk's atomic dq adds cost less than the products it
  # saves (docs/CudaTarget.md, "Attention in one kernel").
  local walks
  walks=$(grep -o 'attention gradient timing .*' "$log/kernel_tests.log" | tail -1)
  rows+=("attention grad, one walk vs two|$(echo "$walks" | python3 -c 'import re,sys; m=re.search(r"one walk ([0-9.]+) ms, two walks ([0-9.]+) ms", sys.stdin.read()); print("%.2fx" % (float(m.group(1)) / float(m.group(2))) if m else "n/a")')|${walks#*timing }")

  while IFS='|' read -r name model s w cfg steps; do
    local p=$stage/progs/$name cmd
    if [ "$w" = 1 ]; then
      cmd=("$p/train")
    else
      cmd=(mpirun -np "$w" --oversubscribe --bind-to none "$p/train" --comm mpi)
    fi
    timeout 300 "${cmd[@]}" --data "$stage/data/$model" --steps "$steps" \
      --log-jsonl "$log/$name.jsonl" --quiet < /dev/null > "$log/$name.out" 2>&1
    local res
    res=$(compare "$log/$name.jsonl" "$p/ref.jsonl" "$cfg") || failures=$((failures + 1))
    # One rank takes NCCL (on the dry run the emulated one: a rank alone
    # has its emulated GPU to itself); two share the GPU: --comm mpi.
    local comm=nccl
    [ "$w" = 2 ] && comm=mpi
    [ "$emulated" = 1 ] && [ "$comm" = nccl ] && comm="emulated nccl"
    local verdict=${res%% *} rest=${res#* }
    rows+=("$name ($cfg, $comm)|$verdict|loss rel diff ${rest% *}, ${rest##* } ms/step")
    [ "${res%% *}" = ok ] || rows[-1]+=" | $(grep -m1 error "$log/$name.out" | cut -c1-80)"
  done < <(cases)

  # The fused programs against their unfused twins (zeroc.fuse_elementwise
  # false): the same losses, bit for bit (docs/CudaTarget.md, "Elementwise
  # fusion"). GPT-2 in bf16 computes its attention in one kernel, which
  # rounds otherwise: its twin is the program with attention as matmuls.
  local pair fused
  for pair in gpt2-s0-w1 gpt2-bf16-s3-w1; do
    local same
    fused=$pair
    [ "$pair" = gpt2-bf16-s3-w1 ] && fused=$pair-matmul-attention
    same=$(python3 - "$log/$fused.jsonl" "$log/$pair-unfused.jsonl" <<'PY'
import json, sys
try:
    a, b = ([json.loads(l)["loss"] for l in open(f)] for f in sys.argv[1:3])
except OSError:
    a, b = [], [None]
print("ok|%d steps, equal losses" % len(a) if a and a == b else "FAIL|%s vs %s" % (a[:3], b[:3]))
PY
)
    [ "${same%%|*}" = ok ] || failures=$((failures + 1))
    rows+=("$pair fused = unfused|${same%%|*}|${same#*|}")
  done

  # The dry run checks the trace rows' plumbing on emulated programs (one
  # rank: its collectives in place run nothing, and the emulated NCCL's
  # others run when waited for, so nothing overlaps).
  if [ "$emulated" = 1 ]; then
    overlap_row rows "gpt2-s3-w1 comm/compute overlap" gpt2-s3-w1 gpt2
    ops_row rows "gpt2-s0-w1 device time by op" gpt2-s0-w1 gpt2
  fi
  if [ "$emulated" = 0 ]; then
    bench rows
    local peer
    peer=$(timeout 300 python3 "$root/bench/gpt2_124m.py" torch --batch 8 --steps 12 2>&1 | tail -1)
    rows+=("pytorch peer (same model)|$(echo "$peer" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("%.0f tok/s, MFU %.1f%%, max allocated %.1f GiB" % (d["tokens_per_s"], 100*d["mfu"], d["peak_gib"]))' 2>/dev/null || echo "FAIL: ${peer:0:80}")|")
  fi

  echo
  echo "== gpu-check on $gpu ($(date -u +%F), $(git -C "$root" rev-parse --short HEAD 2>/dev/null))"
  [ "$emulated" = 1 ] && echo "   DRY RUN: the CUDA programs on the host emulation; nothing ran on a GPU"
  printf '| %-34s | %-6s | %s |\n' check result detail
  printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "--------" "------"
  local r
  for r in "${rows[@]}"; do
    IFS='|' read -r a b c <<< "$r"
    printf '| %-34s | %-6s | %s |\n' "$a" "$b" "$c"
  done
  local ops
  for ops in "$log"/ops-*.md; do
    [ -f "$ops" ] || continue
    echo
    echo "== $(basename "$ops" .md | sed 's/^ops-//'): device time by op (scripts/trace_ops.py)"
    head -n -1 "$ops"
  done
  echo "gpu-check: $failures failure(s)"
  [ "$failures" = 0 ]
}

# GPT-2-124M, bf16, sequence 1024: tokens/s, MFU (6N + 6LCT), the peak of
# the runtime's device allocations (the JSONL's max_allocated_bytes) against
# plan.json and the process's peak (nvidia-smi), stage 3 over stage 0,
# stage 0 without elementwise fusion (0u) and with attention as matmuls
# and a softmax (0a).
# A row of the comm/compute overlap that program $3 (under stage/progs)
# shows in 4 traced steps on data $4, from the GPU's own timeline
# (scripts/trace_overlap.py), labelled $2, appended to array $1.
overlap_row() {
  local -n rows_=$1
  local label=$2 prog=$3 data=$4 trace=$dir/log/trace-$3 ov
  if traced_run "$prog" "$data"; then
    ov=$(python3 "$root/scripts/trace_overlap.py" "$trace/rank0.trace.json" 2>&1 | tail -1)
    [[ $ov == *"|"* ]] || ov="FAIL|trace_overlap.py: ${ov:0:80}"
  else
    ov="FAIL|the traced run failed: $(grep -m1 error "$trace.out" | cut -c1-80)"
  fi
  rows_+=("$label|${ov%%|*}|${ov#*|}")
}

# Program $1 (under stage/progs) on data $2 for 4 steps with --trace into
# $dir/log/trace-$1, once (overlap_row and ops_row may read the same run).
traced_run() {
  local trace=$dir/log/trace-$1
  [ -f "$trace/rank0.trace.json" ] && return 0
  timeout 300 "$dir/stage/progs/$1/train" --data "$dir/stage/data/$2" --steps 4 \
    --trace "$trace" --quiet < /dev/null > "$trace.out" 2>&1
}

# Where program $3's step time goes on the device, op kind by op kind, from
# a traced run on data $4 (scripts/trace_ops.py; the cost model's listing
# $5, when given, beside it): the tables into $dir/log/ops-$3.md, which the
# run prints after its table, and a row labelled $2 appended to array $1.
ops_row() {
  local -n rows_=$1
  local label=$2 prog=$3 data=$4 cost=${5:-} out=$dir/log/ops-$3.md ops
  if traced_run "$prog" "$data"; then
    python3 "$root/scripts/trace_ops.py" "$dir/log/trace-$prog/rank0.trace.json" \
      ${cost:+--cost "$cost"} > "$out" 2>&1
    ops=$(tail -1 "$out")
    [[ $ops == *"|"* ]] || ops="FAIL|trace_ops.py: ${ops:0:80}"
  else
    ops="FAIL|the traced run failed: $(grep -m1 error "$dir/log/trace-$prog.out" | cut -c1-80)"
  fi
  rows_+=("$label|${ops%%|*}|${ops#*|}")
}

# The memory bandwidth (GB/s) the cost model assumes for this GPU: an
# H100's, else an H200's (prepare_bench's two listings).
gpu_bandwidth() {
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
  [[ $gpu == *H100* ]] && echo 3350 || echo 4800
}

# The bench's roofline row: the fused stage-0 step's computed floor
# (prepare_bench; the H100's bandwidth on an H100, else the H200's) against
# $1, the measured stage-0 step in ms.
roofline_row() {
  local bw us
  bw=$(gpu_bandwidth)
  us=$(cat "$dir/stage/progs/bench-s0/roofline-$bw.us" 2> /dev/null)
  echo "stage 0 step roofline (computed)|$(python3 -c "import sys; r = float(sys.argv[1]) / 1000; print('%.1f ms, %.0f%% of the measured %.1f ms' % (r, 100 * r / float(sys.argv[2]), float(sys.argv[2])))" "$us" "$1" 2> /dev/null || echo n/a)|zero-print-compute-cost: 989 TFLOP/s, $bw GB/s; GEMMs and traffic only, the optimizer step's included"
}

bench() {
  local -n out=$1
  local stage=$dir/stage s t0 t3 t0u t0a t0p t0e
  for s in 0 3 0u 0a 0p 0e; do
    # 0e: stage 0's program with cuBLASLt's bias epilogues off.
    local p=$stage/progs/bench-s${s%e} peakfile=$dir/log/bench-s$s.mem epilogues=1
    [ "$s" = 0e ] && epilogues=0
    ( while sleep 0.2; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; done ) > "$peakfile" &
    local poll=$!
    local base
    base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
    ZEROC_RT_CUDA_GEMM_EPILOGUES=$epilogues timeout 300 "$p/train" --data "$stage/data/gpt2_124m" \
      --steps 12 --log-jsonl "$dir/log/bench-s$s.jsonl" --quiet > "$dir/log/bench-s$s.out" 2>&1
    kill $poll 2> /dev/null
    local line
    line=$(python3 - "$dir/log/bench-s$s.jsonl" "$p/plan.json" "$peakfile" "$base" <<'PY'
import json, sys
log, plan, memf, base = sys.argv[1:5]
try:
    steps = [json.loads(l) for l in open(log)]
except OSError:
    steps = []
if len(steps) < 4:
    print("FAIL|no steps (see gpu-check/log)")
    sys.exit()
ms = sorted(s["time_ms"] for s in steps[3:])[len(steps[3:]) // 2]
p = json.load(open(plan))
V, T, C, L, B = 50257, 1024, 768, 12, 8
n = 124439808 - T * C  # GPT-2 small without wpe (nanoGPT's count, tied head)
tps = B * T / (ms / 1000)
mfu = tps * (6 * n + 6 * L * C * T) / 989e12
# The runtime's own allocations at their peak (torch.cuda.max_memory_allocated's
# figure) against the plan; the process's peak (nvidia-smi: the CUDA context,
# NCCL's and cuBLASLt's own memory included) for reference.
process = max([int(x) for x in open(memf).read().split() if x.strip().isdigit()] or [0]) - int(base)
allocated = steps[-1].get("max_allocated_bytes", 0) / 2**20
planned = p.get("allocated_bytes", 0) / 2**20
print("ok|%.1f ms/step, %.0f tok/s, MFU %.1f%%, allocated %.0f MiB vs plan %.0f MiB (%+.1f%%), process %d MiB" % (
    ms, tps, 100 * mfu, allocated, planned, 100 * (allocated - planned) / max(planned, 1), process))
PY
)
    local label="stage $s"
    [ "$s" = 0u ] && label="stage 0, unfused"
    [ "$s" = 0a ] && label="stage 0, matmul attention"
    [ "$s" = 0p ] && label="stage 0, vocab 50304"
    [ "$s" = 0e ] && label="stage 0, GEMM epilogues off"
    out+=("gpt2-124m bf16 $label|${line%%|*}|${line#*|}")
    local ms
    ms=$(python3 -c "import json,sys; s=[json.loads(l)['time_ms'] for l in open(sys.argv[1])][3:]; print(sorted(s)[len(s)//2])" "$dir/log/bench-s$s.jsonl" 2>/dev/null || echo 0)
    case $s in 0) t0=$ms ;; 3) t3=$ms ;; 0u) t0u=$ms ;; 0a) t0a=$ms ;; 0p) t0p=$ms ;; 0e) t0e=$ms ;; esac
  done
  # The comm/compute overlap, from the GPU's own timeline (--trace; the
  # events cost time, so a run of its own, not the timed ones above).
  overlap_row out "stage 3 comm/compute overlap (trace)" bench-s3 gpt2_124m
  ops_row out "stage 0 device time by op (trace)" bench-s0 gpt2_124m \
    "$stage/progs/bench-s0/cost-$(gpu_bandwidth).txt"
  out+=("stage 3 / stage 0 step time|$(python3 -c "print('%.2f' % ($t3 / $t0))" 2>/dev/null || echo n/a)|goal <= 1.1")
  out+=("$(roofline_row "$t0")")
  out+=("unfused / fused step time (stage 0)|$(python3 -c "print('%.2f' % ($t0u / $t0))" 2>/dev/null || echo n/a)|the fusion passes' gain")
  out+=("matmul / fused attention step time|$(python3 -c "print('%.2f' % ($t0a / $t0))" 2>/dev/null || echo n/a)|zero-fuse-attention's gain (> 1: the kernels win)")
  out+=("epilogues off / on step time (stage 0)|$(python3 -c "print('%.2f' % ($t0e / $t0))" 2>/dev/null || echo n/a)|> 1: the bias and bias-gradient epilogues win")
  out+=("vocab 50257 / 50304 step time|$(python3 -c "print('%.2f' % ($t0 / $t0p))" 2>/dev/null || echo n/a)|about 1 (50257: rows at a pitch of 50264; above 1: they still slow the head's GEMMs)")
}

case "$mode" in
  prepare)
    prepare cuda && prepare_bench && bundle_libraries && pack zeroc_rt_cuda_gpu_kernel_tests ;;
  dry-run)
    prepare cuda-emu && pack zeroc_rt_cuda_emu_kernel_tests && rm -rf "$dir/stage" && run_checks 1 ;;
  run)
    run_checks 0 ;;
  *)
    sed -n '2,24p' "$0"; exit 2 ;;
esac
