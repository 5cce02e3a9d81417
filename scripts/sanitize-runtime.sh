#!/usr/bin/env bash
# The runtimes under AddressSanitizer and UndefinedBehaviorSanitizer: the CPU
# runtime and the CUDA runtime's host emulation built standalone with
# -fsanitize=address,undefined (undefined behaviour fatal) into
# build-sanitize/, then
#   - the runtime's own tests (ctest: kernels, engine, MPI conformance);
#   - the emulated CUDA kernel tests with one thread per block and with many
#     (ZEROC_RT_CUDA_EMU_SIMT=forward and reverse), the emulator's tests and
#     comm_nccl.cu over the emulated NCCL;
#   - emulated GPT-2 and Llama programs (bf16, fp16, fp32; stages 0, 2, 3;
#     1 and 2 ranks; one with many threads per block, one over the
#     emulated NCCL), printed by the
#     compiler in $BUILD (make build first) and built against the sanitized
#     libraries.
# On the emulation "device memory" is host memory, one allocation per
# tensor in the kernel tests: a kernel that reads or writes past a tensor
# stops with AddressSanitizer's report, where the tests' comparison alone
# would miss a write into memory nobody checks.
# Not part of `make test` (23 minutes on 2 cores, half of it the
# build); docs/Testing.md.
#
# usage: scripts/sanitize-runtime.sh [BUILD]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
san=$root/build-sanitize
work=$san/programs
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[ -x "$build/bin/zeroc" ] || { echo "sanitize-runtime: no $build/bin/zeroc; run make build first" >&2; exit 2; }

# Open MPI's own allocations are never freed: leak reports would be its.
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

mkdir -p "$san"
cmake -S "$root/runtime" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" > "$san/configure.log"
cmake --build "$san" -j "$(nproc)"

failures=0
check() { # label, command...
  local label=$1 log
  shift
  log=$san/$(echo "$label" | tr ' /' '__').log
  if "$@" > "$log" 2>&1 && ! grep -q "runtime error\|ERROR: AddressSanitizer" "$log"; then
    echo "ok    $label"
  else
    echo "FAIL  $label (see $log)"
    failures=$((failures + 1))
  fi
}

check "runtime tests (ctest)" ctest --test-dir "$san" -j "$(nproc)" --output-on-failure
emu=$san/cuda/tests
if [ -x "$emu/zeroc_rt_cuda_emu_kernel_tests" ]; then
  for order in "" forward reverse; do
    check "emulated kernel tests ${order:-one thread per block}" \
      env ZEROC_RT_CUDA_EMU_SIMT=$order "$emu/zeroc_rt_cuda_emu_kernel_tests"
  done
  for order in forward reverse; do
    check "emulator tests $order" env ZEROC_RT_CUDA_EMU_SIMT=$order "$emu/zeroc_rt_cuda_simt_emu_tests"
  done
  check "emulated NCCL communicator, 3 ranks" \
    mpirun -np 3 --oversubscribe --bind-to none "$emu/zeroc_rt_cuda_comm_nccl_emu_test"
else
  echo "sanitize-runtime: no CUDA toolkit found: the emulated kernel tests were not built"
fi

# Emulated programs: name, model, stage, ranks, precision, steps, threads,
# communicator (nccl: the emulated NCCL, a GPU per rank).
rm -rf "$work" && mkdir -p "$work"
libs=$(sed -n 's/^#define ZEROC_RUNTIME_LINK_LIBRARIES "\(.*\)"$/\1/p' \
  "$build/include/zeroc/Driver/BuildPaths.h" | tr ';' ' ')
program() {
  local name=$1 model=$2 stage=$3 ranks=$4 precision=$5 steps=$6 simt=${7:-} comm=${8:-mpi}
  local out=$work/$name data=$work/data-$model config=$work/$precision.json
  [ -d "$data" ] || /usr/bin/python3 "$root/tools/reference/onnx_torch_train.py" \
    "$build/test/models/$model.onnx" --make-data "$data" --samples 64 --seed 0 -q
  case $precision in
    bf16) echo '{"bf16": {"enabled": true}, "gradient_accumulation_steps": 2,' ;;
    fp16) echo '{"fp16": {"enabled": true},' ;;
    *) echo '{"gradient_clipping": 1.0,' ;;
  esac > "$config"
  echo '"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}}}' >> "$config"
  "$build/bin/zeroc" compile "$build/test/models/$model.onnx" --target cuda-emu \
    --stage "$stage" --world-size "$ranks" --config "$config" -o "$out" > "$out.compile.log" 2>&1
  # shellcheck disable=SC2086 # $flags and $libs are lists
  c++ -std=c++17 -O0 -g -ffp-contract=off $flags -I "$root/runtime/include" \
    -I "$root/runtime/cuda/include" -x c++ "$out/train.cu" -x none -o "$out/train" \
    "$san/cuda/emu/libzeroc_runtime_cuda_emu.a" "$san/libzeroc_runtime.a" $libs -lm
  local gpus=1
  [ "$comm" = nccl ] && gpus=$ranks
  # (the emulation reads CUDA_VISIBLE_DEVICES when ZEROC_RT_CUDA_EMU_GPUS is set)
  env -u CUDA_VISIBLE_DEVICES ZEROC_RT_CUDA_EMU_SIMT=$simt ZEROC_RT_CUDA_EMU_GPUS=$gpus \
    mpirun -np "$ranks" --oversubscribe --bind-to none \
    "$out/train" --data "$data" --steps "$steps" --comm "$comm" --quiet
}
if [ -f "$san/cuda/emu/libzeroc_runtime_cuda_emu.a" ]; then
  check "gpt2 bf16 stage 0, 2 ranks" program gpt2-bf16-s0 gpt2 0 2 bf16 3
  check "gpt2 fp16 stage 3, 2 ranks" program gpt2-fp16-s3 gpt2 3 2 fp16 8
  check "gpt2 fp32 stage 2, 2 ranks" program gpt2-fp32-s2 gpt2 2 2 fp32 3
  check "llama bf16 stage 3, 2 ranks" program llama-bf16-s3 llama 3 2 bf16 3
  check "gpt2 fp16 stage 3, 2 ranks, NCCL" program gpt2-fp16-s3-nccl gpt2 3 2 fp16 4 "" nccl
  check "gpt2_nodropout bf16 stage 2, many threads" program gpt2nd-bf16-s2 gpt2_nodropout 2 2 bf16 3 forward
fi
echo "sanitize-runtime: $failures failure(s)"
[ "$failures" = 0 ]
