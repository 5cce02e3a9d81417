"""The example models of zeroc, written in plain PyTorch.

`make demo` and the import tests export these with torch.onnx (opset 17,
training mode); their forward returns the scalar training loss, so the ONNX
graph holds everything zeroc needs to train them. Only ops that zeroc's
importer supports appear in their exports (see docs/Import.md); the comments
say which PyTorch idioms were chosen for that reason.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 7)
        self.fc2 = nn.Linear(7, 5)
        self.fc3 = nn.Linear(5, 3)

    def forward(self, x, y):
        h = torch.relu(self.fc1(x))
        h = torch.tanh(self.fc2(h))
        logits = self.fc3(h)
        return F.cross_entropy(logits, y)


class MLPMSE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, x, t):
        pred = self.fc2(torch.sigmoid(self.fc1(x)))
        return ((pred - t) ** 2).mean()


# -- tiny GPT-2 (nanoGPT style) ---------------------------------------------

GPT_V, GPT_T, GPT_C, GPT_NH, GPT_NL, GPT_B = 61, 8, 32, 2, 2, 2


class CausalSelfAttention(nn.Module):
    def __init__(self, C, nh, T):
        super().__init__()
        self.n_head = nh
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.register_buffer(
            "bias", torch.tril(torch.ones(T, T)).bool().view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        # Scale is a Python float so the export has a constant Mul, not
        # Sqrt(Shape(...)).
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        # `mask == 0` rather than `~mask`: `~` exports as Not, and
        # torch.where(mask, att, float("-inf")) exports a DOUBLE -inf
        # constant that makes Where ill-typed.  This form exports as
        # Cast(bool->int64), Equal, Cast(->bool), Where(cond, -inf f32, att).
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class GPTBlock(nn.Module):
    def __init__(self, C, nh, T):
        super().__init__()
        self.ln_1 = nn.LayerNorm(C)
        self.attn = CausalSelfAttention(C, nh, T)
        self.ln_2 = nn.LayerNorm(C)
        self.mlp = nn.Sequential(
            nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, V=GPT_V, T=GPT_T, C=GPT_C, nh=GPT_NH, nl=GPT_NL):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(T, C)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([GPTBlock(C, nh, T) for _ in range(nl)])
        self.ln_f = nn.LayerNorm(C)
        # Positions as an int64 buffer (exported as an initializer) instead of
        # torch.arange, which would export as Range.
        self.register_buffer("pos", torch.arange(T, dtype=torch.int64))

    def forward(self, idx, targets):
        b, t = idx.size()
        tok = self.wte(idx)
        pos = self.wpe(self.pos[:t])
        x = self.drop(tok + pos)
        for blk in self.h:
            x = blk(x)
        x = self.ln_f(x)
        logits = x @ self.wte.weight.t()  # lm_head tied to wte
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1))


# -- tiny Llama ---------------------------------------------------------------

LL_V, LL_T, LL_C, LL_NH, LL_HID, LL_B = 53, 8, 32, 2, 48, 2


class RMSNorm(nn.Module):
    def __init__(self, C, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(C))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) \
            * self.weight


class LlamaAttention(nn.Module):
    def __init__(self, C, nh, T):
        super().__init__()
        self.nh = nh
        self.wq = nn.Linear(C, C, bias=False)
        self.wk = nn.Linear(C, C, bias=False)
        self.wv = nn.Linear(C, C, bias=False)
        self.wo = nn.Linear(C, C, bias=False)

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.nh
        q = self.wq(x).view(B, T, self.nh, hs).transpose(1, 2)
        k = self.wk(x).view(B, T, self.nh, hs).transpose(1, 2)
        v = self.wv(x).view(B, T, self.nh, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        # Computed in forward (not a buffer) so that the export has no float
        # initializer that is not a trainable parameter.
        mask = torch.triu(torch.full((T, T), float("-inf")), 1)
        att = att + mask
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.wo(y)


class LlamaMLP(nn.Module):
    def __init__(self, C, hidden):
        super().__init__()
        self.w1 = nn.Linear(C, hidden, bias=False)
        self.w2 = nn.Linear(hidden, C, bias=False)
        self.w3 = nn.Linear(C, hidden, bias=False)

    def forward(self, x):
        a = self.w1(x)
        return self.w2(a * torch.sigmoid(a) * self.w3(x))


class Llama(nn.Module):
    def __init__(self, V=LL_V, T=LL_T, C=LL_C, nh=LL_NH, hidden=LL_HID):
        super().__init__()
        self.tok = nn.Embedding(V, C)
        self.attn_norm = RMSNorm(C)
        self.attn = LlamaAttention(C, nh, T)
        self.ffn_norm = RMSNorm(C)
        self.mlp = LlamaMLP(C, hidden)
        self.norm = RMSNorm(C)
        self.lm_head = nn.Linear(C, V, bias=False)  # untied

    def forward(self, idx, targets):
        x = self.tok(idx)
        x = x + self.attn(self.attn_norm(x))
        x = x + self.mlp(self.ffn_norm(x))
        logits = self.lm_head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1))




def without_dropout(model):
    """Sets every nn.Dropout of `model` to p=0, so a training-mode export
    has Dropout nodes with ratio 0 (zeroc removes them) and training is
    deterministic: the end-to-end tests compare zeroc with PyTorch."""
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    return model
