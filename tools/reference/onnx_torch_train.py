#!/usr/bin/python3
"""PyTorch training reference for zeroc: trains THE SAME model.onnx that
zeroc compiles, with DeepSpeed's batch, optimizer and clipping semantics.

Usage:
  /usr/bin/python3 tools/reference/onnx_torch_train.py MODEL.onnx \\
      --data DIR --steps N [--world-size W] [--micro-batch MB] \\
      [--grad-accum GAS] [--config ds_config.json] [--dtype float32|float64] \\
      [--log-jsonl OUT.jsonl] [--save-params DIR] [--no-dropout] \\
      [--make-data DIR --samples S --seed K]

See README.md next to this file for the data contract and the optimizer
semantics.  Everything here is importable (the tests use the functions).
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ds_schedules  # noqa: E402
from onnx_torch import OnnxTorchError, OnnxTorchModel  # noqa: E402


class ReferenceError(Exception):
    """A user error (bad config, bad data, ...): one line, exit code 1."""


# ---------------------------------------------------------------------------
# ds_config
# ---------------------------------------------------------------------------

ADAM_DEFAULTS = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                     bias_correction=True)
SGD_DEFAULTS = dict(lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                    nesterov=False)


def _get_int(cfg, key):
    v = cfg.get(key)
    if v is None:
        return None
    if v == "auto":
        raise ReferenceError(
            "ds_config: %s is \"auto\"; DeepSpeed itself does not resolve "
            "\"auto\" (the HF Trainer does): give a number" % key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ReferenceError("ds_config: %s must be an integer, got %r"
                             % (key, v))
    return v


def _get_num(d, key, default, where):
    v = d.get(key, default)
    if v == "auto":
        raise ReferenceError("ds_config: %s.%s is \"auto\"; give a number"
                             % (where, key))
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ReferenceError("ds_config: %s.%s must be a number, got %r"
                             % (where, key, v))
    return float(v)


def _merge(cli, cfg, what):
    if cli is not None and cfg is not None and cli != cfg:
        raise ReferenceError("%s: --%s %d disagrees with ds_config %d"
                             % (what, what, cli, cfg))
    return cli if cli is not None else cfg


def resolve_batch(world, model_mb, tb=None, mb=None, gas=None):
    """DeepSpeed's _set_batch_related_parameters + _batch_assertion
    (runtime/config.py).  model_mb is the model's static batch dim (or None
    when symbolic).  Returns (TB, MB, GAS).

    Difference from DeepSpeed: when neither train_batch_size nor
    train_micro_batch_size_per_gpu is given (DeepSpeed asserts), MB is the
    model's batch dim."""
    if world < 1:
        raise ReferenceError("world size must be >= 1, got %d" % world)
    if tb is None and mb is None:
        if model_mb is None:
            raise ReferenceError(
                "the model's batch dim is symbolic: give --micro-batch or "
                "train_micro_batch_size_per_gpu")
        mb = model_mb
    if tb is not None and mb is not None and gas is not None:
        pass
    elif tb is not None and mb is not None:
        gas = tb // mb // world
    elif tb is not None and gas is not None:
        mb = tb // world // gas
    elif mb is not None and gas is not None:
        tb = mb * gas * world
    elif tb is not None:
        gas = 1
        mb = tb // world
    else:
        gas = 1
        tb = mb * world
    if tb <= 0 or mb <= 0 or gas <= 0:
        raise ReferenceError(
            "Check batch related parameters: train_batch_size %d, "
            "micro_batch %d, gradient_accumulation_steps %d must all be > 0"
            % (tb, mb, gas))
    if tb != mb * gas * world:
        raise ReferenceError(
            "Check batch related parameters. train_batch_size is not equal "
            "to micro_batch_per_gpu * gradient_acc_step * world_size "
            "%d != %d * %d * %d" % (tb, mb, gas, world))
    if model_mb is not None and mb != model_mb:
        raise ReferenceError(
            "micro batch size %d differs from the model's static batch dim "
            "%d (the ONNX graph fixes it; re-export the model)"
            % (mb, model_mb))
    return tb, mb, gas


class OptimizerSpec(object):
    def __init__(self, kind, **kw):
        self.kind = kind          # "adam" (decoupled or L2) or "sgd"
        self.__dict__.update(kw)

    def describe(self):
        if self.kind == "adam":
            return ("%s(lr=%g, betas=(%g, %g), eps=%g, weight_decay=%g%s)"
                    % ("AdamW" if self.adam_w_mode else "Adam(L2)", self.lr,
                       self.betas[0], self.betas[1], self.eps,
                       self.weight_decay,
                       "" if self.bias_correction else
                       ", bias_correction=False"))
        return ("SGD(lr=%g, momentum=%g, dampening=%g, weight_decay=%g, "
                "nesterov=%s)" % (self.lr, self.momentum, self.dampening,
                                  self.weight_decay, self.nesterov))


def parse_optimizer(cfg):
    """The ds_config "optimizer" section -> OptimizerSpec."""
    opt = cfg.get("optimizer")
    if opt is None:
        return OptimizerSpec("adam", adam_w_mode=True, **ADAM_DEFAULTS)
    if not isinstance(opt, dict) or "type" not in opt:
        raise ReferenceError("ds_config: optimizer needs a \"type\"")
    typ = str(opt["type"])
    params = dict(opt.get("params") or {})
    if "max_grad_norm" in params:
        raise ReferenceError(
            "ds_config: 'max_grad_norm' is not supported as an optimizer "
            "parameter, please switch to using the deepspeed parameter "
            "'gradient_clipping'")
    t = typ.lower()
    where = "optimizer.params"
    if t in ("adam", "adamw"):
        params.pop("torch_adam", None)   # same math either way
        adam_w_mode = params.pop("adam_w_mode", True)
        if not isinstance(adam_w_mode, bool):
            raise ReferenceError("ds_config: adam_w_mode must be a boolean")
        # engine._configure_basic_optimizer: "AdamW" is always decoupled;
        # "Adam" is decoupled unless adam_w_mode is false.
        decoupled = (t == "adamw") or adam_w_mode
        if params.pop("amsgrad", False):
            raise ReferenceError("ds_config: amsgrad is not supported "
                                 "(FusedAdam rejects it too)")
        known = {"lr", "betas", "eps", "weight_decay", "bias_correction"}
        extra = sorted(set(params) - known)
        if extra:
            raise ReferenceError("ds_config: unsupported %s key(s) for %s: %s"
                                 % (where, typ, ", ".join(extra)))
        betas = params.get("betas", ADAM_DEFAULTS["betas"])
        if (not isinstance(betas, (list, tuple)) or len(betas) != 2
                or not all(isinstance(b, (int, float)) for b in betas)):
            raise ReferenceError("ds_config: betas must be [b1, b2]")
        bc = params.get("bias_correction", True)
        if not isinstance(bc, bool):
            raise ReferenceError("ds_config: bias_correction must be a "
                                 "boolean")
        return OptimizerSpec(
            "adam", adam_w_mode=decoupled,
            lr=_get_num(params, "lr", ADAM_DEFAULTS["lr"], where),
            betas=(float(betas[0]), float(betas[1])),
            eps=_get_num(params, "eps", ADAM_DEFAULTS["eps"], where),
            weight_decay=_get_num(params, "weight_decay", 0.0, where),
            bias_correction=bc)
    if t == "sgd":
        known = {"lr", "momentum", "dampening", "weight_decay", "nesterov"}
        extra = sorted(set(params) - known)
        if extra:
            raise ReferenceError("ds_config: unsupported %s key(s) for SGD: "
                                 "%s" % (where, ", ".join(extra)))
        nesterov = params.get("nesterov", False)
        spec = OptimizerSpec(
            "sgd", lr=_get_num(params, "lr", SGD_DEFAULTS["lr"], where),
            momentum=_get_num(params, "momentum", 0.0, where),
            dampening=_get_num(params, "dampening", 0.0, where),
            weight_decay=_get_num(params, "weight_decay", 0.0, where),
            nesterov=bool(nesterov))
        if spec.nesterov and (spec.momentum <= 0 or spec.dampening != 0):
            raise ReferenceError("ds_config: Nesterov momentum requires a "
                                 "momentum and zero dampening")
        return spec
    raise ReferenceError("ds_config: optimizer type %r is not supported by "
                         "the reference (AdamW, Adam, SGD)" % typ)


class TrainConfig(object):
    def __init__(self, tb, mb, gas, world, optimizer, clip, scheduler=None,
                 fp16=None):
        self.train_batch_size = tb
        self.micro_batch = mb
        self.grad_accum = gas
        self.world_size = world
        self.optimizer = optimizer
        self.gradient_clipping = clip
        self.scheduler = scheduler   # the ds_config "scheduler" section
        self.fp16 = fp16             # {"fp16": section} when fp16.enabled

    def make_scheduler(self, group):
        """DeepSpeed's scheduler over `group` (a ds_schedules.ParamGroups),
        or None for a constant lr."""
        if self.scheduler is None:
            return None
        return ds_schedules.make_scheduler(self.scheduler, group)

    def make_loss_scaler(self):
        """DeepSpeed's loss scaler for the fp16 section, or None."""
        return ds_schedules.make_loss_scaler(self.fp16)


_FP16_KEYS = {"enabled", "auto_cast", "loss_scale", "initial_scale_power",
              "loss_scale_window", "hysteresis", "consecutive_hysteresis",
              "min_loss_scale", "fp16_master_weights_and_grads"}


def parse_fp16(cfg):
    """The fp16 section when enabled (validated), else None."""
    sect = cfg.get("fp16")
    if sect is None:
        return None
    if not isinstance(sect, dict):
        raise ReferenceError("ds_config: fp16 must be an object")
    extra = sorted(set(sect) - _FP16_KEYS)
    if extra:
        raise ReferenceError("ds_config: unsupported fp16 key(s): %s"
                             % ", ".join(extra))
    for k in ("enabled", "auto_cast", "consecutive_hysteresis",
              "fp16_master_weights_and_grads"):
        if k in sect and not isinstance(sect[k], bool):
            raise ReferenceError("ds_config: fp16.%s must be a boolean" % k)
    for k in ("loss_scale", "min_loss_scale"):
        if k in sect:
            v = _get_num(sect, k, 0.0, "fp16")
            if v < 0 or (k == "min_loss_scale" and v <= 0):
                raise ReferenceError("ds_config: fp16.%s must be %s 0"
                                     % (k, ">" if k == "min_loss_scale"
                                        else ">="))
    for k in ("initial_scale_power", "loss_scale_window", "hysteresis"):
        if k in sect:
            v = sect[k]
            if isinstance(v, bool) or not isinstance(v, int) or \
                    (v < 1 and k != "initial_scale_power") or v < 0:
                raise ReferenceError("ds_config: fp16.%s must be a "
                                     "positive integer, got %r" % (k, v))
    if not sect.get("enabled", False):
        return None
    bf16 = cfg.get("bf16")
    if isinstance(bf16, dict) and bf16.get("enabled"):
        raise ReferenceError("ds_config: fp16 and bf16 cannot both be "
                             "enabled")
    return {"fp16": dict(sect)}


def parse_config(cfg, world, model_mb, cli_mb=None, cli_gas=None,
                 warn=None):
    """ds_config dict (or None) + CLI -> TrainConfig."""
    cfg = cfg or {}
    if not isinstance(cfg, dict):
        raise ReferenceError("ds_config must be a JSON object")
    scheduler = cfg.get("scheduler")
    if scheduler is not None:
        try:
            ds_schedules.check_scheduler(scheduler)
        except ds_schedules.ScheduleError as e:
            raise ReferenceError("ds_config: %s" % e)
    fp16 = parse_fp16(cfg)
    if fp16 is not None and warn:
        warn("ds_config: fp16.enabled: the reference computes in full "
             "precision; it tracks DeepSpeed's loss scale (scaling is exact) "
             "and skips steps whose gradients overflow")
    sect = cfg.get("bf16")
    if isinstance(sect, dict) and sect.get("enabled") and warn:
        warn("ds_config: bf16.enabled is ignored; the reference computes in "
             "full precision (loss scale 1)")
    mb = _merge(cli_mb, _get_int(cfg, "train_micro_batch_size_per_gpu"),
                "micro-batch")
    gas = _merge(cli_gas, _get_int(cfg, "gradient_accumulation_steps"),
                 "grad-accum")
    tb = _get_int(cfg, "train_batch_size")
    tb, mb, gas = resolve_batch(world, model_mb, tb, mb, gas)
    # DeepSpeed 0.19.8's GRADIENT_CLIPPING_DEFAULT: an absent key clips at 1.0.
    clip = _get_num(cfg, "gradient_clipping", 1.0, "ds_config")
    if clip < 0:
        raise ReferenceError("ds_config: gradient_clipping must be >= 0")
    return TrainConfig(tb, mb, gas, world, parse_optimizer(cfg), clip,
                       scheduler, fp16)


# ---------------------------------------------------------------------------
# optimizers (by hand; the same code runs in float32 and float64)
# ---------------------------------------------------------------------------

class AdamOptimizer(object):
    """DeepSpeed FusedAdam / DeepSpeedCPUAdam math (csrc multi_tensor_adam,
    mode 1 = decoupled weight decay, mode 0 = L2):
        g' = g + wd*p                      (L2 mode only)
        m  = b1*m + (1-b1)*g'
        v  = b2*v + (1-b2)*g'^2
        bc1 = 1-b1^t, bc2 = 1-b2^t          (1 when bias_correction=False)
        u  = (m/bc1) / (sqrt(v/bc2) + eps)
        u += wd*p                          (decoupled mode only)
        p -= lr*u
    t counts optimizer steps from 1.  `lr` and `betas` override the spec's
    for one step (an LR scheduler's values); bias correction uses the
    step's betas, as FusedAdam does with its param group's."""

    def __init__(self, spec):
        self.spec = spec
        self.t = 0
        self.m = None
        self.v = None

    @property
    def lr(self):
        return self.spec.lr

    def param_group(self):
        """The param group DeepSpeed's schedulers write into."""
        return ds_schedules.ParamGroups(self.spec.lr, betas=self.spec.betas)

    @torch.no_grad()
    def step(self, params, grads, lr=None, betas=None):
        s = self.spec
        lr = s.lr if lr is None else lr
        if self.m is None:
            self.m = [torch.zeros_like(p) for p in params]
            self.v = [torch.zeros_like(p) for p in params]
        self.t += 1
        b1, b2 = s.betas if betas is None else betas
        if s.bias_correction:
            bc1 = 1.0 - b1 ** self.t
            bc2 = 1.0 - b2 ** self.t
        else:
            bc1 = bc2 = 1.0
        for p, g, m, v in zip(params, grads, self.m, self.v):
            if not s.adam_w_mode and s.weight_decay != 0.0:
                g = g.add(p, alpha=s.weight_decay)
            m.mul_(b1).add_(g, alpha=1.0 - b1)
            v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
            denom = (v / bc2).sqrt_().add_(s.eps)
            u = (m / bc1).div_(denom)
            if s.adam_w_mode and s.weight_decay != 0.0:
                u.add_(p, alpha=s.weight_decay)
            p.add_(u, alpha=-lr)


class SGDOptimizer(object):
    """torch.optim.SGD math (DeepSpeed builds torch.optim.SGD for "SGD"):
        g' = g + wd*p
        buf = g' (first step) | momentum*buf + (1-dampening)*g'
        d = g' + momentum*buf (nesterov) | buf   (momentum != 0) | g'
        p -= lr*d
    `lr` overrides the spec's for one step (an LR scheduler's value);
    DeepSpeed's OneCycle does not cycle SGD's momentum (no "betas")."""

    def __init__(self, spec):
        self.spec = spec
        self.buf = None

    @property
    def lr(self):
        return self.spec.lr

    def param_group(self):
        return ds_schedules.ParamGroups(self.spec.lr,
                                        momentum=self.spec.momentum)

    @torch.no_grad()
    def step(self, params, grads, lr=None, betas=None):
        s = self.spec
        lr = s.lr if lr is None else lr
        if self.buf is None:
            self.buf = [None] * len(params)
        for i, (p, g) in enumerate(zip(params, grads)):
            d = g
            if s.weight_decay != 0.0:
                d = d.add(p, alpha=s.weight_decay)
            if s.momentum != 0.0:
                if self.buf[i] is None:
                    self.buf[i] = d.clone().detach()
                else:
                    self.buf[i].mul_(s.momentum).add_(
                        d, alpha=1.0 - s.dampening)
                if s.nesterov:
                    d = d.add(self.buf[i], alpha=s.momentum)
                else:
                    d = self.buf[i]
            p.add_(d, alpha=-lr)


def make_optimizer(spec):
    return AdamOptimizer(spec) if spec.kind == "adam" else SGDOptimizer(spec)


def global_grad_norm(grads):
    """Global L2 norm over all gradients, accumulated in float64."""
    total = 0.0
    for g in grads:
        total += float(torch.sum(g.detach().to(torch.float64) ** 2))
    return math.sqrt(total)


@torch.no_grad()
def clip_gradients(grads, max_norm, norm=None):
    """DeepSpeed ZeRO's clipping (stage_1_and_2.unscale_and_clip_grads with
    loss scale 1): clip = (norm + 1e-6) / max_norm; if clip > 1 every grad
    is multiplied by 1/clip.  max_norm <= 0 disables clipping.  Returns the
    factor applied (1.0 when none)."""
    if norm is None:
        norm = global_grad_norm(grads)
    if max_norm <= 0 or not math.isfinite(norm):
        return 1.0
    clip = (norm + 1e-6) / max_norm
    if clip > 1.0:
        f = 1.0 / clip
        for g in grads:
            g.mul_(f)
        return f
    return 1.0


# ---------------------------------------------------------------------------
# data contract
# ---------------------------------------------------------------------------

def micro_batch_indices(step, m, mb, gas, world, samples):
    """Sample indices of global micro-batch m (0 <= m < GAS*W) of optimizer
    step `step` (0-based): (step*G + m*MB + j) mod S, j in [0, MB), with
    G = MB*GAS*W."""
    G = mb * gas * world
    base = step * G + m * mb
    return [(base + j) % samples for j in range(mb)]


def step_schedule(step, mb, gas, world, samples):
    """All micro-batches of a step: dicts {m, rank, accum_step, indices}.
    Micro-batch m runs on rank m % W at accumulation step m // W."""
    return [dict(m=m, rank=m % world, accum_step=m // world,
                 indices=micro_batch_indices(step, m, mb, gas, world,
                                             samples))
            for m in range(gas * world)]


def model_batch_dim(model):
    """The static batch dim (dim 0 of the first data input), or None if
    symbolic.  Raises if data inputs disagree or have no batch dim."""
    if not model.inputs:
        raise ReferenceError("the model has no data inputs")
    dims = []
    for spec in model.inputs:
        if not spec.shape:
            raise ReferenceError("data input '%s' is a scalar; every data "
                                 "input needs a batch dim" % spec.name)
        dims.append(spec.shape[0])
    first = dims[0]
    for spec, d in zip(model.inputs, dims):
        if isinstance(d, int) and isinstance(first, int) and d != first:
            raise ReferenceError(
                "data input '%s' has batch dim %d but '%s' has %d"
                % (spec.name, d, model.inputs[0].name, first))
    return first if isinstance(first, int) else None


def load_data(model, data_dir, mb):
    """Reads <input>.npy for every data input; checks dtype and shape."""
    data = {}
    S = None
    for spec in model.inputs:
        path = os.path.join(data_dir, spec.name + ".npy")
        if not os.path.isfile(path):
            raise ReferenceError("missing data file %s for input '%s'"
                                 % (path, spec.name))
        arr = np.load(path, allow_pickle=False)
        if arr.dtype != spec.np_dtype:
            raise ReferenceError("%s: dtype %s, the model input '%s' is %s"
                                 % (path, arr.dtype, spec.name,
                                    spec.np_dtype))
        if arr.ndim != len(spec.shape):
            raise ReferenceError("%s: rank %d, expected %d (samples + the "
                                 "input's dims %s without the batch dim)"
                                 % (path, arr.ndim, len(spec.shape),
                                    spec.shape))
        for i in range(1, arr.ndim):
            d = spec.shape[i]
            if isinstance(d, int) and arr.shape[i] != d:
                raise ReferenceError("%s: shape %s, expected (S, %s)"
                                     % (path, arr.shape, ", ".join(
                                         str(x) for x in spec.shape[1:])))
        if arr.shape[0] < 1:
            raise ReferenceError("%s: no samples" % path)
        if S is None:
            S = arr.shape[0]
        elif arr.shape[0] != S:
            raise ReferenceError("%s: %d samples, but other inputs have %d"
                                 % (path, arr.shape[0], S))
        data[spec.name] = arr
    return data, S


_PASS_OPS = {"Reshape": (0,), "Identity": (0,), "Squeeze": (0,),
             "Unsqueeze": (0,), "Flatten": (0,), "Transpose": (0,),
             "Expand": (0,), "Slice": (0,), "Cast": (0,), "Gather": (0,),
             "Concat": None}


def index_bounds(model, mb):
    """name of each integer data input -> exclusive upper bound for its
    values, from the Gather tables (rows along the axis) and
    SoftmaxCrossEntropyLoss scores (classes) it feeds, directly or through
    value-preserving ops (Reshape, Squeeze, Unsqueeze, Transpose, ...)."""
    sizes = {}   # (node id, input position) -> bound

    def trace(node, ins, outs):
        if node.op_type == "Gather" and len(ins) > 1:
            axis = dict((a.name, a.i) for a in node.attribute).get("axis", 0)
            sizes[(id(node), 1)] = int(ins[0].shape[axis])
        elif node.op_type == "SoftmaxCrossEntropyLoss":
            sizes[(id(node), 1)] = int(ins[0].shape[1])

    feeds = {}
    for spec in model.inputs:
        shape = [mb if i == 0 else d for i, d in enumerate(spec.shape)]
        if not all(isinstance(d, int) for d in shape):
            raise ReferenceError("input '%s' has symbolic dims %s"
                                 % (spec.name, spec.shape))
        feeds[spec.name] = np.zeros(shape, spec.np_dtype)
    with torch.no_grad():
        model.run(feeds, trace=trace)

    consumers = {}
    for node in model.model.graph.node:
        for pos, name in enumerate(node.input):
            if name:
                consumers.setdefault(name, []).append((node, pos))
    bounds = {}
    for spec in model.inputs:
        if spec.is_float:
            continue
        best = None
        seen = set()
        todo = [spec.name]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for node, pos in consumers.get(name, []):
                b = sizes.get((id(node), pos))
                if b is not None:
                    best = b if best is None else min(best, b)
                    continue
                ok = _PASS_OPS.get(node.op_type, ())
                if ok is None or pos in ok:
                    todo.extend(o for o in node.output[:1] if o)
        if best is not None:
            bounds[spec.name] = best
    return bounds


def make_data(model, out_dir, samples, seed, mb):
    """Writes deterministic random <input>.npy files (see README.md)."""
    if samples < 1:
        raise ReferenceError("--samples must be >= 1")
    bounds = index_bounds(model, mb)
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for spec in model.inputs:
        shape = (samples,) + tuple(spec.shape[1:])
        dt = spec.np_dtype
        if spec.is_float:
            arr = rng.standard_normal(shape).astype(dt)
        elif dt == np.bool_:
            arr = rng.integers(0, 2, size=shape, dtype=np.int64).astype(dt)
        else:
            hi = bounds.get(spec.name, 4)
            arr = rng.integers(0, hi, size=shape, dtype=np.int64).astype(dt)
        path = os.path.join(out_dir, spec.name + ".npy")
        np.save(path, arr)
        written.append((path, arr.shape, arr.dtype,
                        bounds.get(spec.name)))
    return written


# ---------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------

def train(model, data, samples, steps, cfg, on_step=None, on_log=None):
    """Runs `steps` optimizer steps; returns the list of step records
    {"step", "loss", "lr", "grad_norm", "loss_scale", "skipped"}.

    DeepSpeed's engine loop: the LR scheduler (ds_schedules) sets the lr (and
    OneCycle's Adam betas) before the first step and steps after every step
    that was not skipped; with fp16, DeepSpeed's loss scaler is updated every
    step and a step whose gradients hold an inf/NaN is skipped (no update, no
    scheduler step).  The loss scale is only tracked: scaling the loss and
    unscaling the gradients is exact in float32/float64 (powers of two)
    unless it overflows.  `on_log(line)` receives the scaler's log lines
    ("[deepspeed] OVERFLOW! ...").  A loss scale already at its minimum
    raises ReferenceError with DeepSpeed's message."""
    params = model.parameters()
    opt = make_optimizer(cfg.optimizer)
    group = opt.param_group()
    scheduler = cfg.make_scheduler(group)
    scaler = cfg.make_loss_scaler()
    mb, gas, world = cfg.micro_batch, cfg.grad_accum, cfg.world_size
    n = gas * world
    records = []
    for s in range(steps):
        for p in params:
            p.grad = None
        losses = []
        for m in range(n):
            idx = micro_batch_indices(s, m, mb, gas, world, samples)
            feeds = {k: v[idx] for k, v in data.items()}
            loss = model.loss(feeds)
            (loss / n).backward()
            losses.append(float(loss.detach()))
        grads = [p.grad if p.grad is not None else torch.zeros_like(p)
                 for p in params]
        lr = group.param_groups[0]["lr"]
        betas = group.param_groups[0].get("betas")
        scale = 1.0
        overflow = False
        if scaler is not None:
            scale = float(scaler.cur_scale)
            overflow = not all(bool(torch.isfinite(g).all()) for g in grads)
            try:
                line = scaler.update_scale(overflow)
            except ds_schedules.LossScaleAtMinimum as e:
                raise ReferenceError("step %d: %s" % (s + 1, e))
            if line and on_log is not None:
                on_log(line)
        if overflow:
            norm = math.inf  # DeepSpeed 0.19 logs an overflow step's norm as inf
        else:
            norm = global_grad_norm(grads)
            clip_gradients(grads, cfg.gradient_clipping, norm)
            opt.step(params, grads, lr=lr,
                     betas=betas if cfg.optimizer.kind == "adam" else None)
            if scheduler is not None:
                scheduler.step()
        rec = {"step": s + 1, "loss": sum(losses) / n, "lr": float(lr),
               "grad_norm": norm if math.isfinite(norm) or overflow else -1.0,
               "loss_scale": scale, "skipped": overflow}
        records.append(rec)
        if on_step is not None:
            on_step(rec)
    return records


def save_params(model, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    entries = []
    total = 0
    for name, p in model.params.items():
        fn = name.replace(os.sep, "_").replace("\0", "_")
        if fn in (".", ".."):
            fn = "_" + fn
        fn += ".npy"
        arr = p.detach().cpu().numpy()
        np.save(os.path.join(out_dir, fn), arr)
        entries.append({"name": name, "file": fn, "shape": list(arr.shape),
                        "numel": int(arr.size), "dtype": str(arr.dtype)})
        if name not in model.frozen:  # psi: the trainable elements
            total += int(arr.size)
    with open(os.path.join(out_dir, "params.json"), "w") as f:
        f.write("{\"psi\": %d, \"num_params\": %d, \"params\": [\n"
                % (total, len(entries)))
        f.write(",\n".join("  " + json.dumps(e) for e in entries))
        f.write("\n]}\n")
    return total


def self_test(out=sys.stdout):
    """The hand-written optimizers and clipping against torch.optim and
    torch.nn.utils.clip_grad_norm_ for 5 steps, float64 and float32.
    Returns the number of failures."""
    cases = [
        ({"type": "AdamW", "params": {"lr": 1e-2, "betas": [0.9, 0.95],
                                      "eps": 1e-6, "weight_decay": 0.1}},
         lambda ps: torch.optim.AdamW(ps, lr=1e-2, betas=(0.9, 0.95),
                                      eps=1e-6, weight_decay=0.1)),
        ({"type": "Adam", "params": {"lr": 5e-3, "weight_decay": 0.2,
                                     "adam_w_mode": False}},
         lambda ps: torch.optim.Adam(ps, lr=5e-3, weight_decay=0.2)),
        ({"type": "SGD", "params": {"lr": 0.05, "momentum": 0.9,
                                    "weight_decay": 0.01}},
         lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9,
                                    weight_decay=0.01)),
    ]
    fails = 0
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 2e-6)):
        for cfg, mk in cases:
            g = torch.Generator().manual_seed(1)
            shapes = [(5, 7), (7,), (3, 1, 4)]
            init = [torch.randn(sh, generator=g, dtype=torch.float64)
                    .to(dtype) for sh in shapes]
            mine = [p.clone() for p in init]
            ref = [torch.nn.Parameter(p.clone()) for p in init]
            opt = make_optimizer(parse_optimizer({"optimizer": cfg}))
            topt = mk(ref)
            err = 0.0
            for _ in range(5):
                grads = [torch.randn(sh, generator=g, dtype=torch.float64)
                         .to(dtype) for sh in shapes]
                # clip both ways first (max_norm below the norm)
                tg = [x.clone() for x in grads]
                for p, x in zip(ref, tg):
                    p.grad = x
                torch.nn.utils.clip_grad_norm_(ref, 1.0)
                clip_gradients(grads, 1.0)
                opt.step(mine, grads)
                topt.step()
                for a, b in zip(mine, ref):
                    err = max(err, float((a - b.detach()).abs().max()))
            ok = err <= tol
            fails += 0 if ok else 1
            out.write("%s %s %s: max |diff| after 5 steps %.3g\n"
                      % ("PASS" if ok else "FAIL", cfg["type"],
                         str(dtype).replace("torch.", ""), err))
    return fails


def _json_num(x):
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def build_parser():
    ap = argparse.ArgumentParser(
        prog="onnx_torch_train.py",
        description="Train an ONNX training graph in PyTorch with DeepSpeed "
                    "semantics (the reference for zeroc's end-to-end tests).")
    ap.add_argument("model", metavar="MODEL.onnx", nargs="?")
    ap.add_argument("--data", metavar="DIR",
                    help="directory with <input>.npy per data input "
                         "(default: the --make-data directory)")
    ap.add_argument("--steps", type=int, default=0,
                    help="optimizer steps to run (default 0)")
    ap.add_argument("--world-size", type=int, default=1, metavar="W",
                    help="data-parallel ranks to emulate (default 1)")
    ap.add_argument("--micro-batch", type=int, metavar="MB",
                    help="micro batch per rank (default: the model's batch "
                         "dim; must equal it)")
    ap.add_argument("--grad-accum", type=int, metavar="GAS",
                    help="gradient accumulation steps")
    ap.add_argument("--config", metavar="ds_config.json")
    ap.add_argument("--dtype", choices=("float32", "float64"),
                    default="float32")
    ap.add_argument("--log-jsonl", metavar="OUT.jsonl")
    ap.add_argument("--save-params", metavar="DIR")
    ap.add_argument("--no-dropout", action="store_true",
                    help="treat every Dropout as identity (whatever its "
                         "ratio and training_mode)")
    ap.add_argument("--dropout-seed", type=int, default=0,
                    help="torch seed for Dropout masks with ratio > 0")
    ap.add_argument("--make-data", metavar="DIR",
                    help="write deterministic random data for the model's "
                         "inputs to DIR first")
    ap.add_argument("--samples", type=int, default=64, metavar="S",
                    help="samples for --make-data (default 64)")
    ap.add_argument("--seed", type=int, default=0, metavar="K",
                    help="numpy default_rng seed for --make-data (default 0)")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="no per-step lines on stdout")
    ap.add_argument("--self-test", action="store_true",
                    help="check the optimizers and clipping against "
                         "torch.optim for 5 steps, then exit")
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    dtype = torch.float64 if args.dtype == "float64" else torch.float32

    def warn(msg):
        sys.stderr.write("onnx_torch_train: warning: %s\n" % msg)

    if args.self_test:
        return 1 if self_test() else 0
    try:
        if args.model is None:
            raise ReferenceError("give MODEL.onnx")
        if args.steps < 0:
            raise ReferenceError("--steps must be >= 0")
        if args.data is None and args.make_data is None:
            raise ReferenceError("give --data DIR (or --make-data DIR)")
        model = OnnxTorchModel(args.model, dtype=dtype,
                               no_dropout=args.no_dropout,
                               dropout_seed=args.dropout_seed)
        cfg_json = None
        if args.config:
            try:
                with open(args.config) as f:
                    cfg_json = json.load(f)
            except (OSError, ValueError) as e:
                raise ReferenceError("%s: %s" % (args.config, e))
        model_mb = model_batch_dim(model)
        cfg = parse_config(cfg_json, args.world_size, model_mb,
                           args.micro_batch, args.grad_accum, warn)
        if args.make_data:
            for path, shape, dt, hi in make_data(model, args.make_data,
                                                 args.samples, args.seed,
                                                 cfg.micro_batch):
                print("wrote %s %s %s%s" % (path, dt, shape,
                                            "" if hi is None else
                                            " values in [0, %d)" % hi))
        data_dir = args.data or args.make_data
        if args.steps == 0 and args.save_params is None:
            return 0
        data, S = load_data(model, data_dir, cfg.micro_batch)
        psi = sum(p.numel() for p in model.parameters())
        if not args.quiet:
            print("reference: %s  params=%d (%d tensors)  dtype=%s  "
                  "MB=%d GAS=%d W=%d (G=%d)  S=%d  %s  clip=%g%s"
                  % (os.path.basename(args.model), psi, len(model.params),
                     args.dtype, cfg.micro_batch, cfg.grad_accum,
                     cfg.world_size, cfg.train_batch_size, S,
                     cfg.optimizer.describe(), cfg.gradient_clipping,
                     "  scheduler=%s" % cfg.scheduler["type"]
                     if cfg.scheduler else ""))
        logf = open(args.log_jsonl, "w") if args.log_jsonl else None
        t0 = time.time()

        def on_step(rec):
            if logf:
                logf.write(json.dumps({k: (_json_num(v)
                                           if isinstance(v, float) else v)
                                       for k, v in rec.items()}) + "\n")
                logf.flush()
            if not args.quiet:
                print("step %d loss %.9g lr %.6g grad_norm %.9g%s"
                      % (rec["step"], rec["loss"], rec["lr"],
                         rec["grad_norm"],
                         " loss_scale %s%s" % (rec["loss_scale"],
                                               " skipped" if rec["skipped"]
                                               else "")
                         if cfg.fp16 is not None else ""))

        def on_log(line):
            if not args.quiet:
                print(line)
        try:
            train(model, data, S, args.steps, cfg, on_step, on_log)
        finally:
            if logf:
                logf.close()
        if not args.quiet:
            print("trained %d steps in %.2f s" % (args.steps,
                                                  time.time() - t0))
        if args.save_params:
            save_params(model, args.save_params)
        return 0
    except (ReferenceError, OnnxTorchError) as e:
        sys.stderr.write("onnx_torch_train: error: %s\n" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
