#!/usr/bin/env bash
# The example behind `make demo`: export the example models (examples/models.py)
# with torch.onnx, import the tiny GPT with zeroc, show its graph-dialect IR and
# the per-phase dumps.
set -euo pipefail
build=${1:-build}
out=$build/demo
mkdir -p "$out"
echo "== exporting examples/models.py with torch.onnx (opset 17, training mode)"
/usr/bin/python3 test/Import/gen_models.py "$out/models" | grep '^gpt2.onnx'
cp "$out/models/gpt2.onnx" "$out/gpt2.onnx"
echo "== zeroc import $out/gpt2.onnx --dump-ir $out/ir"
"$build/bin/zeroc" import "$out/gpt2.onnx" --dump-ir "$out/ir" --elide-constants \
  -o "$out/gpt2.mlir"
sed -n '/func.func/,+24p' "$out/gpt2.mlir"
echo "  ..."
grep -c '= graph\.' "$out/gpt2.mlir" | xargs echo "graph ops:"
echo "== per-phase IR in $out/ir:"
ls "$out/ir"
echo "== trainable parameters and the loss:"
grep -c 'graph.param trainable' "$out/gpt2.mlir" | xargs echo "trainable parameters:"
grep -o 'graph.softmax_cross_entropy_loss .*' "$out/gpt2.mlir"
