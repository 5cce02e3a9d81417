"""Cases for the export helper (python/zeroc_torch): run with the test
suite's python (Debian's torch 1.13) and with any newer torch.

Prints one line per case and `export-helper: N passed, M failed`."""
import json
import os
import sys
import tempfile

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from zeroc_torch.export import ExportError, export, main, parse_input_spec  # noqa

torch.manual_seed(0)


class Tied(nn.Module):
    """Embedding with padding_idx, a tied head, a frozen projection and a
    float buffer."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 6, padding_idx=0)
        self.proj = nn.Linear(6, 6)
        self.proj.weight.requires_grad_(False)
        self.head = nn.Linear(6, 11, bias=False)
        self.head.weight = self.emb.weight
        self.register_buffer("scale", torch.tensor([0.5] * 6))

    def forward(self, ids, labels):
        h = torch.tanh(self.proj(self.emb(ids)) * self.scale)
        return F.cross_entropy(self.head(h).reshape(-1, 11), labels.reshape(-1))


class NoLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return {"logits": self.fc(x)}


def marker(path):
    m = onnx.load(path)
    return json.loads({p.key: p.value for p in m.metadata_props}["zeroc.parameters"]), m


def case_tied(tmp):
    ids = torch.tensor([[0, 3, 4, 5], [1, 2, 0, 7]])
    path = os.path.join(tmp, "tied.onnx")
    r = export(Tied(), {"ids": ids, "labels": ids}, path, quiet=True)
    mk, m = marker(path)
    inits = sorted(t.name for t in m.graph.initializer
                   if t.data_type == onnx.TensorProto.FLOAT)
    assert mk["trainable"] == ["emb.weight", "proj.bias"], mk
    assert mk["frozen"] == ["proj.weight"], mk
    assert mk["buffers"] == ["scale"], mk
    assert mk["padding_idx"] == {"emb.weight": 0}, mk
    assert mk["aliases"] == {"head.weight": "emb.weight"}, mk
    assert "head.weight" not in inits and "emb.weight" in inits, inits
    assert r["checked_by"], r


def case_positional(tmp):
    class P(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, x, t):
            return ((self.fc(x) - t) ** 2).mean()
    path = os.path.join(tmp, "pos.onnx")
    export(P(), (torch.randn(4, 3), torch.randn(4, 1)), path, quiet=True)
    mk, m = marker(path)
    assert mk["trainable"] == ["fc.weight", "fc.bias"], mk
    assert [i.name for i in m.graph.input][:2] == ["input0", "input1"]


def case_not_a_loss(tmp):
    try:
        export(NoLoss(), {"x": torch.randn(2, 3)}, os.path.join(tmp, "n.onnx"),
               quiet=True)
    except ExportError as e:
        assert "must return the loss" in str(e), e
        return
    raise AssertionError("no error")


def case_bad_spec(tmp):
    for spec in ["x=int64", "x=complex64[2]", "x=float32[0,2]", "=int64[2]"]:
        try:
            parse_input_spec(spec)
        except ExportError as e:
            assert "--example-inputs" in str(e), e
            continue
        raise AssertionError("accepted " + spec)
    name, t = parse_input_spec("ids=int64[2,3]:5")
    assert name == "ids" and t.shape == (2, 3) and int(t.max()) < 5


def case_cli_errors(tmp):
    assert main(["nofile.py:build", "-o", os.path.join(tmp, "c.onnx")]) == 1
    assert main(["justafile", "-o", os.path.join(tmp, "c.onnx")]) == 1


CASES = [case_tied, case_positional, case_not_a_loss, case_bad_spec,
         case_cli_errors]

if __name__ == "__main__":
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for c in CASES:
            try:
                c(tmp)
                print("PASS", c.__name__)
                passed += 1
            except Exception as e:  # noqa
                print("FAIL", c.__name__, type(e).__name__, e)
                failed += 1
    print("export-helper: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
