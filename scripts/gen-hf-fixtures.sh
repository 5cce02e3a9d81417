#!/usr/bin/env bash
# Regenerates the Hugging Face model-suite fixtures (test/models/hf) from
# scratch: current torch + transformers from PyPI (scripts/make-export-venv.sh,
# ~3 GB, .venv-export) and Debian's torch 1.13 with transformers 4.40
# (.venv-debtorch, system site packages + transformers from PyPI). Then
# record what zeroc does with each export:
#   build/bin/zeroc must exist; test/e2e/hf_suite.py --record rewrites
#   test/models/hf/status.json (review its diff: a 'wrong:' entry is a bug).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=test/models/hf
scripts/make-export-venv.sh .venv-export
if ! .venv-debtorch/bin/python -c "import torch, transformers" 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages .venv-debtorch
  .venv-debtorch/bin/python -m pip install -q "transformers==4.40.2"
fi
rm -rf "$OUT.new" && mkdir -p "$OUT.new"
.venv-export/bin/python test/models/gen_hf_suite.py "$OUT.new"
.venv-debtorch/bin/python test/models/gen_hf_suite.py "$OUT.new"
[ -f "$OUT/status.json" ] && cp "$OUT/status.json" "$OUT.new/"
rm -rf "$OUT" && mv "$OUT.new" "$OUT"
python3 - "$OUT" <<'PY'
import json, os, sys
root = sys.argv[1]
path = os.path.join(root, "status.json")
st = json.load(open(path)) if os.path.exists(path) else {}
for a in sorted(os.listdir(root)):
    d = os.path.join(root, a)
    if os.path.isdir(d):
        for v in sorted(os.listdir(d)):
            if os.path.exists(os.path.join(d, v, "model.onnx")):
                st.setdefault(a + "/" + v, "train")
json.dump(st, open(path, "w"), indent=1, sort_keys=True)
PY
/usr/bin/python3 test/e2e/hf_suite.py --zeroc build/bin/zeroc --work build/hf-suite --record
