#!/usr/bin/env bash
# Makes the Python venv that bench/bench_peers.py runs its peers with
# (PyTorch DDP / FSDP2 and DeepSpeed on CPU) and exports the models with:
# torch, transformers, deepspeed, numpy, onnx, onnxscript, onnxruntime and
# safetensors from PyPI (about 3-5 GB). `make test` never needs it.
# Idempotent: an existing venv with every package is left alone.
#
# DeepSpeed is installed with DS_BUILD_OPS=0 (no C++/CUDA op is built at
# install time); the bench runs it with DS_ACCELERATOR=cpu and torch's AdamW
# ("torch_adam": true), so no op is JIT-compiled at run time either.
#
# BASE_VENV=DIR reuses the packages of an existing venv (e.g. the one of
# scripts/make-export-venv.sh, same Python version): the new venv gets a .pth
# file naming DIR's site-packages, and pip installs only what DIR lacks
# (usually just deepspeed and its small dependencies). DIR is not modified.
#
# Usage: [BASE_VENV=DIR] scripts/make-bench-venv.sh [VENV_DIR]   (default: .venv-bench)
set -euo pipefail
VENV=${1:-.venv-bench}
PY=${PYTHON:-python3}
PKGS=(torch transformers deepspeed numpy onnx onnxscript onnxruntime safetensors)
IMPORTS="import torch, transformers, deepspeed, numpy, onnx, onnxscript, onnxruntime, safetensors"
export DS_BUILD_OPS=0 DS_ACCELERATOR=cpu

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  echo "make-bench-venv: $VENV has ${PKGS[*]}"
  exit 0
fi
"$PY" -m venv "$VENV"
if [ -n "${BASE_VENV:-}" ]; then
  base_site=$("$BASE_VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  own_site=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  base_ver=$("$BASE_VENV/bin/python" -c "import sys; print('%d.%d' % sys.version_info[:2])")
  own_ver=$("$VENV/bin/python" -c "import sys; print('%d.%d' % sys.version_info[:2])")
  if [ "$base_ver" != "$own_ver" ]; then
    echo "make-bench-venv: error: BASE_VENV $BASE_VENV has Python $base_ver, $PY is $own_ver" >&2
    exit 1
  fi
  echo "$base_site" > "$own_site/zeroc-bench-base.pth"
  echo "make-bench-venv: reusing the packages of $BASE_VENV ($base_site)"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "${PKGS[@]}"
"$VENV/bin/python" -c "$IMPORTS; print('make-bench-venv: torch', torch.__version__, 'transformers', transformers.__version__, 'deepspeed', deepspeed.__version__, 'onnx', onnx.__version__)"
