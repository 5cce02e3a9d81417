#!/usr/bin/python3
"""Exports `elementwise_mlp.onnx` into OUTDIR with Debian's torch 1.13
(opset 17, training mode): an MLP whose forward uses the elementwise ops of
issue 9 the way Hugging Face models do (rotary-style cos/sin, clamp,
maximum/minimum against constants and tensors, comparison masks combined
with logic into where, isnan guards, abs/sign, GELU), so that
elementwise-train.test can train it against the PyTorch reference."""
import os
import sys
import warnings

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F


class ElementwiseMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 3)
        self.floor = nn.Parameter(torch.full((8,), -0.5))

    def forward(self, x, y):
        h = self.fc1(x)
        h = h * torch.cos(h) + torch.sin(h)                 # Cos, Sin
        h = torch.clamp(h, -1.5, 2.0)                       # Clip (constants)
        h = torch.maximum(h, self.floor)                    # Max (tensors)
        h = torch.minimum(h, torch.tensor(1.75))            # Min (constant)
        g = F.gelu(self.fc2(h))                             # Erf form
        mask = (g > 0.1) & ~(g < -0.2) | torch.isnan(g)     # Greater, Less, Not, And, IsNaN, Or
        g = torch.where(mask, g, 0.5 * g)
        g = g + 0.1 * torch.abs(g) * torch.sign(h)          # Abs, Sign
        logits = self.fc3(g)
        return F.cross_entropy(logits, y)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = ElementwiseMLP()
    model.train()
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    path = os.path.join(out, "elementwise_mlp.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x, y), path, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["x", "y"],
                          output_names=["loss"])
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    print("elementwise_mlp.onnx: ops=%s"
          % sorted({n.op_type for n in m.graph.node}))


if __name__ == "__main__":
    main(sys.argv[1])
