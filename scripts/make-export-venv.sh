#!/usr/bin/env bash
# Makes the Python venv that the fixture generator and the export helper's
# tests use with *current* PyTorch: torch, transformers, onnx, onnxscript and
# onnxruntime from PyPI (about 3 GB). `make test` never needs it: the fixtures
# it writes are committed. Idempotent: an existing venv with every package is
# left alone.
#
# Usage: scripts/make-export-venv.sh [VENV_DIR]   (default: .venv-export)
set -euo pipefail
VENV=${1:-.venv-export}
PY=${PYTHON:-python3}
PKGS=(torch transformers onnx onnxscript onnxruntime numpy safetensors)

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c \
    "import torch, transformers, onnx, onnxscript, onnxruntime, numpy, safetensors" 2>/dev/null; then
  echo "make-export-venv: $VENV has ${PKGS[*]}"
  exit 0
fi
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "${PKGS[@]}"
"$VENV/bin/python" -c "import torch, transformers, onnx; print('make-export-venv: torch', torch.__version__, 'transformers', transformers.__version__, 'onnx', onnx.__version__)"
