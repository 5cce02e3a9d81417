#!/usr/bin/python3
"""GPT-2-124M-shaped model for the GPU benchmark (scripts/gpu-check.sh).

  export OUT.onnx [--batch B] [--vocab V]
                                  the ONNX model (examples/models.py's GPT at
                                  GPT-2 small's sizes: V 50257, T 1024, C 768,
                                  12 heads, 12 layers, tied head, no dropout;
                                  --vocab 50304 is nanoGPT's and llm.c's
                                  padded vocabulary, whose rows of logits are
                                  16-byte aligned: gpu-check's diagnostic row)
  data DIR [--batch B]            idx.npy / targets.npy token samples
  torch [--batch B] [--steps N]   the PyTorch peer on the GPU: the same model
                                  in bf16 autocast with fused AdamW; prints
                                  one JSON line (tokens/s, MFU, peak memory)

Its weights are constants (0.02, layer norms 1): the benchmark measures
speed, which dense kernels do not take from the values, and the model's
blob then compresses to almost nothing for the trip to the GPU machine.
Its losses are not a quality measure.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

V, T, C, NH, NL = 50257, 1024, 768, 12, 12
H200_BF16_TFLOPS = 989.0  # dense


def flops_per_token(n_params):
    """The 6N + 6LCT training FLOPs per token (PaLM's appendix B; N without
    the position embedding, as nanoGPT counts it)."""
    return 6 * n_params + 6 * NL * C * T


def model(vocab=V):
    import torch
    import models
    torch.manual_seed(0)
    m = models.without_dropout(models.GPT(V=vocab, T=T, C=C, nh=NH, nl=NL))
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.fill_(1.0 if "ln" in name and name.endswith("weight") else 0.02)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["export", "data", "torch"])
    ap.add_argument("path", nargs="?")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=V)
    a = ap.parse_args()
    if a.vocab < V:
        ap.error("--vocab %d: the data's tokens go up to %d" % (a.vocab, V - 1))
    if a.what == "data":
        import numpy as np
        os.makedirs(a.path, exist_ok=True)
        rng = np.random.default_rng(0)
        np.save(os.path.join(a.path, "idx.npy"), rng.integers(0, V, (a.samples, T), dtype=np.int64))
        np.save(os.path.join(a.path, "targets.npy"), rng.integers(0, V, (a.samples, T), dtype=np.int64))
        return 0
    import torch
    m = model(a.vocab)
    if a.what == "export":
        from zeroc_torch.export import export
        idx = torch.zeros(a.batch, T, dtype=torch.int64)
        export(m, {"idx": idx, "targets": idx.clone()}, a.path, verify=False, quiet=True)
        return 0
    # The PyTorch peer on the GPU.
    dev = torch.device("cuda")
    m = m.to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cpu").manual_seed(0)
    idx = torch.randint(0, V, (a.batch, T), generator=g).to(dev)
    tgt = torch.randint(0, V, (a.batch, T), generator=g).to(dev)
    times = []
    torch.cuda.reset_peak_memory_stats()
    for _ in range(a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = m(idx, tgt)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    n = sum(p.numel() for n_, p in m.named_parameters() if n_ != "wpe.weight")
    step = sorted(times[3:])[len(times[3:]) // 2]
    tps = a.batch * T / step
    print(json.dumps({"peer": "pytorch %s eager, bf16 autocast, fused AdamW" % torch.__version__,
                      "step_s": step, "tokens_per_s": tps,
                      "mfu": tps * flops_per_token(n) / (H200_BF16_TFLOPS * 1e12),
                      "peak_gib": torch.cuda.max_memory_allocated() / 2**30}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
