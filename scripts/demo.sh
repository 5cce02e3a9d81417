#!/usr/bin/env bash
# The example behind `make demo`: export the example GPT (examples/models.py)
# with torch.onnx, compile it with zeroc for ZeRO stage 3 on 2 ranks
# (examples/ds_config_demo.json), and train it with Open MPI.
set -euo pipefail
build=${1:-build}
out=$build/demo
rm -rf "$out"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

echo "== exporting the example models with torch.onnx (opset 17, training mode)"
/usr/bin/python3 test/Import/gen_models.py "$out/models" | grep '^gpt2.onnx'
model=$out/models/gpt2.onnx

echo "== making a token data set: $out/data"
/usr/bin/python3 tools/reference/onnx_torch_train.py "$model" --make-data "$out/data" \
  --samples 64 --seed 0

echo "== zeroc compile $model --config examples/ds_config_demo.json --world-size 2 -o $out/train"
"$build/bin/zeroc" compile "$model" --config examples/ds_config_demo.json \
  --world-size 2 -o "$out/train" --dump-ir "$out/ir"
echo "   phases dumped in $out/ir: $(ls "$out/ir" | tr '\n' ' ')"
python3 - "$out/train/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
b = p["model_state_bytes"]
print("   plan: Ψ = %d parameters; per rank: params %d B, grads %d B, "
      "optimizer state %d B (total %d B = 16Ψ/W up to padding); "
      "%d elements communicated per step"
      % (p["parameters"], b["params"], b["grads"], b["optimizer_state"],
         b["total"], p["communication_elements_per_step"]["total"]))
PY

echo "== mpirun -np 2 $out/train/train --data $out/data --steps 60"
mpirun -np 2 --oversubscribe --bind-to none "$out/train/train" --data "$out/data" \
  --steps 60 --log-jsonl "$out/log.jsonl"
python3 - "$out/log.jsonl" <<'PY'
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
first, last = log[0]["loss"], log[-1]["loss"]
print("== loss %.4f -> %.4f over %d steps on 2 ranks at ZeRO stage 3%s"
      % (first, last, len(log), "" if last < first else "  (NOT falling!)"))
sys.exit(0 if last < first else 1)
PY
