#!/usr/bin/python3
"""DeepSpeed's LR schedules and loss scaler in plain Python (no torch).

The one formula module both implementations are checked against:
  * tools/reference/onnx_torch_train.py (the PyTorch reference trainer)
    drives its lr, Adam betas and loss scale with these classes;
  * runtime/tests/lr_schedule_table.py and loss_scaler_table.py compare the
    engine's zeroc_rt_lr_at / zeroc_rt_loss_scaler_update with them, value
    for value (1,000 steps per schedule, relative 1e-12; scaler sequences,
    skip flags and log lines identical).

The classes follow DeepSpeed's deepspeed/runtime/lr_schedules.py and
runtime/fp16/loss_scaler.py as described by the team's reference notes
(/work/shared/reference/deepspeed-semantics.md §1.3, §1.4, §2): same
constructor defaults, same last_batch_iteration indexing, same float
operation order.  They act on a stand-in optimizer (`ParamGroups`) that only
holds the param-group dicts DeepSpeed's schedulers write ("lr", "betas").

Indexing (what the engine and the reference trainer do, as DeepSpeed's
engine does): the scheduler is built with last_batch_iteration = -1, which
writes its initial lr (and OneCycle's initial betas) into the optimizer; the
first optimizer step runs with those; scheduler.step() follows every
optimizer step that was not skipped for a gradient overflow.  `lr_table`
gives the values of the optimizer step taken after t scheduler steps.

Known DeepSpeed quirks kept on purpose:
  * WarmupCosineLR's lr before its first step() is 0.0 (get_lr() returns
    [0.0] while last_batch_iteration < 0), so the first update uses lr 0;
  * OneCycle writes betas = (momentum, 0.99): Adam's beta2 becomes 0.99, and
    the first update uses cycle_min_mom while step 1 of the cycle is already
    near cycle_max_mom;
  * OneCycle does not cycle SGD's momentum (torch's SGD has no "betas" in its
    defaults: DeepSpeed warns and turns cycle_momentum off);
  * WarmupCosineLR divides by total_num_steps - warmup_num_steps after the
    warmup (no clamp: past total_num_steps the cosine rises again);
  * the loss scaler logs int(scale) and raises at the minimum scale.
"""

import math

LR_SCHEDULES = ("WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle",
                "LRRangeTest")


class ParamGroups(object):
    """The part of a torch optimizer DeepSpeed's schedulers touch: one param
    group dict and the optimizer's `defaults` (Adam has "betas", SGD has
    not)."""

    def __init__(self, lr, betas=None, momentum=None):
        group = {"lr": lr}
        self.defaults = {"lr": lr}
        if betas is not None:
            group["betas"] = tuple(betas)
            self.defaults["betas"] = tuple(betas)
        if momentum is not None:
            group["momentum"] = momentum
            self.defaults["momentum"] = momentum
        self.param_groups = [group]


# ---------------------------------------------------------------------------
# LR schedules
# ---------------------------------------------------------------------------

def _set_lrs(optimizer, lrs):
    for group, lr in zip(optimizer.param_groups, lrs):
        group["lr"] = lr
    return [g["lr"] for g in optimizer.param_groups]


def _warmup_gamma(warmup_type, inverse_log, i, n):
    """gamma during warmup (0 <= i < n)."""
    if warmup_type == "log":
        return inverse_log * math.log(i + 1)
    return i / n


class _Schedule(object):
    """What the DeepSpeed schedulers share: step() advances
    last_batch_iteration and writes get_lr() into the param groups; only
    OneCycle has a momentum schedule."""

    def get_mom(self):
        return None

    def step(self, last_batch_iteration=None):
        if last_batch_iteration is None:
            last_batch_iteration = self.last_batch_iteration + 1
        self.last_batch_iteration = last_batch_iteration
        self._last_lr = _set_lrs(self.optimizer, self.get_lr())


class WarmupLR(_Schedule):
    """lr = min + (max - min) * gamma; gamma = ln(i+1)/ln(N) ("log") or i/N
    ("linear") for i < N = max(2, warmup_num_steps), then 1."""

    def __init__(self, optimizer, warmup_min_lr=0.0, warmup_max_lr=0.001,
                 warmup_num_steps=1000, warmup_type="log",
                 last_batch_iteration=-1):
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        self.min_lrs = [warmup_min_lr] * n
        self.max_lrs = [warmup_max_lr] * n
        self.delta_lrs = [hi - lo for hi, lo in zip(self.max_lrs,
                                                     self.min_lrs)]
        self.warmup_num_steps = max(2, warmup_num_steps)
        if warmup_type not in ("log", "linear"):
            warmup_type = "log"    # DeepSpeed warns and uses "log"
        self.warmup_type = warmup_type
        self.inverse_log_warm_up = 1.0 / math.log(self.warmup_num_steps)
        self.last_batch_iteration = last_batch_iteration
        if last_batch_iteration == -1:
            self._last_lr = _set_lrs(optimizer, self.get_lr())

    def _get_gamma(self):
        i = self.last_batch_iteration
        if i < self.warmup_num_steps:
            return _warmup_gamma(self.warmup_type, self.inverse_log_warm_up,
                                 i, self.warmup_num_steps)
        return 1.0

    def get_lr(self):
        if self.last_batch_iteration < 0:
            return list(self.min_lrs)
        gamma = self._get_gamma()
        return [lo + (d * gamma) for lo, d in zip(self.min_lrs,
                                                  self.delta_lrs)]

class WarmupDecayLR(WarmupLR):
    """WarmupLR, then gamma = max(0, (T - i) / max(1, T - N))."""

    def __init__(self, optimizer, total_num_steps, warmup_min_lr=0.0,
                 warmup_max_lr=0.001, warmup_num_steps=1000,
                 warmup_type="log", last_batch_iteration=-1):
        self.total_num_steps = total_num_steps
        super(WarmupDecayLR, self).__init__(
            optimizer, warmup_min_lr, warmup_max_lr, warmup_num_steps,
            warmup_type, last_batch_iteration)

    def _get_gamma(self):
        i = self.last_batch_iteration
        if i < self.warmup_num_steps:
            return _warmup_gamma(self.warmup_type, self.inverse_log_warm_up,
                                 i, self.warmup_num_steps)
        return max(0.0, float(self.total_num_steps - i) /
                   float(max(1.0, self.total_num_steps -
                             self.warmup_num_steps)))


class WarmupCosineLR(_Schedule):
    """lr = optimizer lr * ratio: warmup_min_ratio -> 1 over the warmup (log
    or linear), then c + (1 - c) * (1 + cos(pi * (i-N+1) / (T-N))) / 2,
    floored at 0 (c = cos_min_ratio).  Before the first step: 0."""

    def __init__(self, optimizer, total_num_steps, warmup_min_ratio=0.0,
                 warmup_num_steps=1000, cos_min_ratio=0.0001,
                 warmup_type="log", last_batch_iteration=-1):
        self.optimizer = optimizer
        self.total_num_steps = total_num_steps
        self.last_batch_iteration = last_batch_iteration
        self.cos_min_ratio = cos_min_ratio
        if warmup_type not in ("log", "linear"):
            warmup_type = "log"
        self.warmup_type = warmup_type
        self.warmup_min_ratio = warmup_min_ratio
        self.warmup_num_steps = max(2, warmup_num_steps)
        self.inverse_log_warm_up = 1.0 / math.log(self.warmup_num_steps)
        self.org_lrs = [g["lr"] for g in optimizer.param_groups]
        if last_batch_iteration == -1:
            self._last_lr = _set_lrs(optimizer, self.get_lr())

    def get_lr_ratio(self):
        i = self.last_batch_iteration
        if i < 0:
            return 0.0
        if i < self.warmup_num_steps:
            ratio = _warmup_gamma(self.warmup_type, self.inverse_log_warm_up,
                                  i, self.warmup_num_steps)
            delta = 1. - self.warmup_min_ratio
            return self.warmup_min_ratio + ratio * delta
        real_last = i - self.warmup_num_steps + 1
        real_total = self.total_num_steps - self.warmup_num_steps
        delta = 1. - self.cos_min_ratio
        ratio = (1 + math.cos(math.pi * real_last / real_total)) / 2
        return max(0.0, self.cos_min_ratio + delta * ratio)

    def get_lr(self):
        if self.last_batch_iteration < 0:
            return [0.0 for _ in self.org_lrs]
        ratio = self.get_lr_ratio()
        return [lr * ratio for lr in self.org_lrs]

class OneCycle(_Schedule):
    """lr cycles linearly cycle_min_lr -> cycle_max_lr over
    cycle_first_step_size steps and back over cycle_second_step_size (None:
    the first size), momentum (Adam's beta1; beta2 becomes 0.99) inversely
    between cycle_max_mom and cycle_min_mom; afterwards
    lr = min / (1 + decay_lr_rate * k / decay_step_size) and
    mom = max_mom * (1 + decay_mom_rate * k / decay_step_size) (no decay when
    the size or the rate is 0)."""

    def __init__(self, optimizer, cycle_min_lr, cycle_max_lr,
                 decay_lr_rate=0., cycle_first_step_size=2000,
                 cycle_second_step_size=None, cycle_first_stair_count=0,
                 cycle_second_stair_count=None, decay_step_size=0,
                 cycle_momentum=True, cycle_min_mom=0.8, cycle_max_mom=0.9,
                 decay_mom_rate=0., last_batch_iteration=-1):
        self.optimizer = optimizer
        first = float(cycle_first_step_size)
        second = (float(cycle_second_step_size)
                  if cycle_second_step_size is not None else first)
        self.total_size = first + second
        self.step_ratio = first / self.total_size
        self.decay_step_size = decay_step_size
        self.skip_lr_decay = math.isclose(decay_step_size, 0)
        self.skip_mom_decay = self.skip_lr_decay
        n = len(optimizer.param_groups)
        self.min_lrs = [cycle_min_lr] * n
        self.max_lrs = [cycle_max_lr] * n
        self.decay_lr_rate = decay_lr_rate
        if last_batch_iteration == -1:
            _set_lrs(optimizer, self.min_lrs)
        if math.isclose(decay_lr_rate, 0):
            self.skip_lr_decay = True
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "betas" not in optimizer.defaults:
                self.cycle_momentum = False    # DeepSpeed warns (SGD)
            else:
                self.decay_mom_rate = decay_mom_rate
                self.min_moms = [(cycle_min_mom, 0.99)] * n
                self.max_moms = [(cycle_max_mom, 0.99)] * n
                if last_batch_iteration == -1:
                    for g, m in zip(optimizer.param_groups, self.min_moms):
                        g["betas"] = m
                if math.isclose(decay_mom_rate, 0):
                    self.skip_mom_decay = True
        self.last_batch_iteration = last_batch_iteration

    def _get_scale_factor(self):
        b = self.last_batch_iteration + 1
        cycle = math.floor(1 + b / self.total_size)
        x = 1. + b / self.total_size - cycle
        if x <= self.step_ratio:
            return x / self.step_ratio
        return (x - 1) / (self.step_ratio - 1)

    def get_lr(self):
        if self.last_batch_iteration < self.total_size:
            s = self._get_scale_factor()
            return [lo + (hi - lo) * s for lo, hi in zip(self.min_lrs,
                                                          self.max_lrs)]
        if self.skip_lr_decay:
            return list(self.min_lrs)
        k = self.last_batch_iteration - self.total_size + 1
        factor = 1 + self.decay_lr_rate * (k / self.decay_step_size)
        return [lo / factor for lo in self.min_lrs]

    def get_mom(self):
        if not self.cycle_momentum:
            return None
        if self.last_batch_iteration < self.total_size:
            s = self._get_scale_factor()
            return [(hi[0] - (hi[0] - lo[0]) * s, lo[1])
                    for lo, hi in zip(self.min_moms, self.max_moms)]
        if self.skip_mom_decay:
            return list(self.max_moms)
        k = self.last_batch_iteration - self.total_size + 1
        factor = 1 + self.decay_mom_rate * (k / self.decay_step_size)
        return [(b0 * factor, b1) for b0, b1 in self.max_moms]

    def step(self, batch_iteration=None):
        super(OneCycle, self).step(batch_iteration)
        if self.cycle_momentum:
            for g, m in zip(self.optimizer.param_groups, self.get_mom()):
                g["betas"] = m


class LRRangeTest(_Schedule):
    """lr = min_lr * (1 + step_rate * x) with x = (i + 1) / step_size
    (floor'ed with staircase), i = last_batch_iteration; the initial lr is
    min_lr.  The i + 1 is the newer DeepSpeed's (older versions used i)."""

    def __init__(self, optimizer, lr_range_test_min_lr=1e-3,
                 lr_range_test_step_size=2000, lr_range_test_step_rate=1.0,
                 lr_range_test_staircase=False, last_batch_iteration=-1):
        self.optimizer = optimizer
        self.min_lr = [lr_range_test_min_lr] * len(optimizer.param_groups)
        self.step_size = lr_range_test_step_size
        self.step_rate = lr_range_test_step_rate
        self.last_batch_iteration = last_batch_iteration
        self.staircase = lr_range_test_staircase
        if last_batch_iteration == -1:
            _set_lrs(optimizer, self.min_lr)

    def _interval(self):
        x = float(self.last_batch_iteration + 1) / self.step_size
        return math.floor(x) if self.staircase else x

    def get_lr(self):
        increase = 1 + self.step_rate * self._interval()
        return [m * increase for m in self.min_lr]


_CLASSES = {"WarmupLR": WarmupLR, "WarmupDecayLR": WarmupDecayLR,
            "WarmupCosineLR": WarmupCosineLR, "OneCycle": OneCycle,
            "LRRangeTest": LRRangeTest}

# Parameters each class accepts (DeepSpeed passes the config's "params"
# dict as keyword arguments: anything else is a TypeError there).
_PARAMS = {
    "WarmupLR": ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps",
                 "warmup_type", "last_batch_iteration"),
    "WarmupDecayLR": ("total_num_steps", "warmup_min_lr", "warmup_max_lr",
                      "warmup_num_steps", "warmup_type",
                      "last_batch_iteration"),
    "WarmupCosineLR": ("total_num_steps", "warmup_min_ratio",
                       "warmup_num_steps", "cos_min_ratio", "warmup_type",
                       "last_batch_iteration"),
    "LRRangeTest": ("lr_range_test_min_lr", "lr_range_test_step_size",
                    "lr_range_test_step_rate", "lr_range_test_staircase",
                    "last_batch_iteration"),
    "OneCycle": ("cycle_min_lr", "cycle_max_lr", "decay_lr_rate",
                 "cycle_first_step_size", "cycle_second_step_size",
                 "cycle_first_stair_count", "cycle_second_stair_count",
                 "decay_step_size", "cycle_momentum", "cycle_min_mom",
                 "cycle_max_mom", "decay_mom_rate", "last_batch_iteration"),
}
_REQUIRED = {"WarmupDecayLR": ("total_num_steps",),
             "WarmupCosineLR": ("total_num_steps",),
             "OneCycle": ("cycle_min_lr", "cycle_max_lr")}


class ScheduleError(Exception):
    pass


def check_scheduler(sched):
    """Validates a ds_config "scheduler" section ({"type", "params"});
    returns (type, params dict).  Raises ScheduleError."""
    if not isinstance(sched, dict) or "type" not in sched:
        raise ScheduleError("scheduler needs a \"type\"")
    typ = sched["type"]
    if typ not in _CLASSES:
        raise ScheduleError("scheduler type %r is not supported (%s)"
                            % (typ, ", ".join(LR_SCHEDULES)))
    params = sched.get("params") or {}
    if not isinstance(params, dict):
        raise ScheduleError("scheduler.params must be an object")
    extra = sorted(set(params) - set(_PARAMS[typ]))
    if extra:
        raise ScheduleError("unknown %s parameter(s): %s"
                            % (typ, ", ".join(extra)))
    missing = [k for k in _REQUIRED.get(typ, ()) if k not in params]
    if missing:
        raise ScheduleError("%s needs %s" % (typ, ", ".join(missing)))
    if params.get("last_batch_iteration", -1) != -1:
        raise ScheduleError("last_batch_iteration other than -1 (resuming) "
                            "is not supported")
    for k, v in params.items():
        if k == "warmup_type":
            if v not in ("log", "linear"):
                raise ScheduleError("warmup_type must be \"log\" or "
                                    "\"linear\", got %r" % (v,))
        elif k in ("cycle_momentum", "lr_range_test_staircase"):
            if not isinstance(v, bool):
                raise ScheduleError("%s must be a boolean" % k)
        elif v is not None and (isinstance(v, bool) or
                                not isinstance(v, (int, float))):
            raise ScheduleError("%s.%s must be a number, got %r"
                                % (typ, k, v))
    return typ, dict(params)


def make_scheduler(sched, optimizer):
    """DeepSpeed's scheduler for a ds_config "scheduler" section, acting on
    `optimizer` (a ParamGroups).  Constructing it writes the initial lr (and
    betas) into the param group, as in DeepSpeed."""
    typ, params = check_scheduler(sched)
    return _CLASSES[typ](optimizer, **params)


def lr_table(sched, base_lr, steps, betas=(0.9, 0.999), momentum=None):
    """[(lr, betas or None)] of the optimizer steps taken after t = 0..steps-1
    scheduler steps.  betas=None stands for SGD (no "betas" in its
    defaults); the returned betas are what the param group holds (None for
    SGD)."""
    opt = ParamGroups(base_lr, betas=betas, momentum=momentum)
    s = make_scheduler(sched, opt)
    out = []
    for _ in range(steps):
        g = opt.param_groups[0]
        out.append((g["lr"], g.get("betas")))
        s.step()
    return out


# ---------------------------------------------------------------------------
# loss scaler
# ---------------------------------------------------------------------------

class LossScaleAtMinimum(Exception):
    pass


MIN_SCALE_MESSAGE = ("Current loss scale already at minimum - cannot "
                     "decrease scale anymore. Exiting run.")


class StaticLossScaler(object):
    """fp16.loss_scale > 0 (or no fp16: scale 1): never changes.  DeepSpeed's
    ZeRO optimizers log nothing for its overflows; zeroc (and so this
    reference) logs the OVERFLOW line with the unchanged scale."""
    dynamic = False

    def __init__(self, scale=1.0):
        self.cur_scale = scale

    def update_scale(self, overflow):
        if not overflow:
            return None
        return ("[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                "Attempted loss scale: %d, reducing to %d"
                % (int(self.cur_scale), int(self.cur_scale)))


class DynamicLossScaler(object):
    """DynamicLossScaler.update_scale; returns the line rank 0 logs (or
    None) instead of logging it, and raises LossScaleAtMinimum."""
    dynamic = True

    def __init__(self, init_scale=2 ** 32, scale_window=1000, min_scale=1,
                 delayed_shift=1, consecutive_hysteresis=False,
                 raise_error_at_min_scale=True):
        self.cur_scale = init_scale
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = 2.0
        self.scale_window = scale_window
        self.min_scale = min_scale
        self.delayed_shift = delayed_shift
        self.cur_hysteresis = delayed_shift
        self.consecutive_hysteresis = consecutive_hysteresis
        self.raise_error_at_min_scale = raise_error_at_min_scale

    def update_scale(self, overflow):
        log = None
        if overflow:
            if self.delayed_shift == 1 or self.cur_hysteresis == 1:
                if (self.cur_scale == self.min_scale and
                        self.raise_error_at_min_scale):
                    raise LossScaleAtMinimum(MIN_SCALE_MESSAGE)
                nxt = max(self.cur_scale / self.scale_factor, self.min_scale)
                log = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                       "Attempted loss scale: %d, reducing to %d"
                       % (int(self.cur_scale), int(nxt)))
                self.cur_scale = nxt
            else:
                log = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                       "Attempted loss scale: %d, but hysteresis is %d. "
                       "Reducing hysteresis to %d"
                       % (int(self.cur_scale), self.cur_hysteresis,
                          self.cur_hysteresis - 1))
                self.cur_hysteresis -= 1
            self.last_overflow_iter = self.cur_iter
        else:
            if self.consecutive_hysteresis:
                log = ("Consecutive hysteresis is enabled. Restoring "
                       "hysteresis to %d" % self.delayed_shift)
                self.cur_hysteresis = self.delayed_shift
            # DeepSpeed >= 0.17.1 (PR #6976): a window of stable steps
            # *after* the last overflow.
            stable_interval = self.cur_iter - self.last_overflow_iter - 1
            if stable_interval > 0 and \
                    stable_interval % self.scale_window == 0:
                if not self.consecutive_hysteresis:
                    self.cur_hysteresis = self.delayed_shift
                self.cur_scale *= self.scale_factor
        self.cur_iter += 1
        return log


def make_loss_scaler(cfg):
    """The scaler DeepSpeed 0.19.8's ZeRO optimizers build for a ds_config
    dict: None without fp16 (bf16 and fp32 use scale 1); fp16.loss_scale > 0:
    a static scaler; otherwise a dynamic one from the fp16 keys with the
    documented defaults (2**16, hysteresis 2), which DeepSpeed 0.19.x's
    pydantic config always supplies -- also when the fp16 section names none
    of the dynamic keys (older releases gave that case DynamicLossScaler()'s
    class defaults, 2**32 and hysteresis 1; §1.3)."""
    fp16 = (cfg or {}).get("fp16")
    if not isinstance(fp16, dict) or not fp16.get("enabled", False):
        return None
    static = fp16.get("loss_scale", 0)
    if static:
        return StaticLossScaler(static)
    return DynamicLossScaler(
        init_scale=2 ** fp16.get("initial_scale_power", 16),
        scale_window=fp16.get("loss_scale_window", 1000),
        min_scale=fp16.get("min_loss_scale", 1),
        delayed_shift=fp16.get("hysteresis", 2),
        consecutive_hysteresis=fp16.get("consecutive_hysteresis", False))


def scaler_table(scaler, overflows):
    """Runs `scaler` over a sequence of overflow flags.  Returns
    [(scale used, overflow, skipped, log or None)] and, when the minimum
    scale stopped it, (scale used by the failing step, message), else None.
    Every overflow skips its step (static scalers too)."""
    rows = []
    for o in overflows:
        used = scaler.cur_scale
        try:
            log = scaler.update_scale(bool(o))
        except LossScaleAtMinimum as e:
            return rows, (used, str(e))
        rows.append((used, bool(o), bool(o), log))
    return rows, None
