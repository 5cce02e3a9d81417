"""Faithful ONNX training graphs from PyTorch modules, for zeroc.

    python3 -m zeroc_torch.export my_model.py:build -o model.onnx \
        [--example-inputs input_ids=int64[2,8]:61 ...] [--opset 17]

or from Python:

    from zeroc_torch import export
    export(module, {"input_ids": ids, "labels": ids}, "model.onnx")

The module's forward, called with the example inputs as keyword arguments,
must return the training loss: a scalar tensor, an object with a `.loss`
(Hugging Face ModelOutput), a dict with "loss", or a tuple whose first
element is the loss.

What "faithful" means here (docs/Models.md):
  * initializer names are the module's state_dict names;
  * parameters are never folded or merged: the TorchScript exporter runs
    with do_constant_folding=False, and the dynamo exporter (which folds
    and merges equal initializers in its optimizer) is not used;
  * tied weights are one initializer (PyTorch deduplicates shared
    parameters), under the first of their names; the others are recorded as
    aliases;
  * the metadata entry `zeroc.parameters` says which initializers are
    trainable parameters (requires_grad), frozen parameters
    (requires_grad=False) and buffers, and the padding_idx of every
    nn.Embedding that has one, so zeroc trains exactly what PyTorch trains.

Then it verifies the file: each requires_grad parameter that receives a
gradient in PyTorch is exactly one initializer, and the graph's forward loss
(onnxruntime when installed, otherwise zeroc's reference interpreter in
tools/reference) equals PyTorch's.
"""

import argparse
import importlib.util
import json
import os
import re
import sys
import warnings

import torch

MARKER_KEY = "zeroc.parameters"
MARKER_FORMAT = 1
DEFAULT_OPSET = 17
_PREFIX = "module."


class ExportError(Exception):
    """A module or example input the helper cannot export faithfully."""


def _loss_of(out):
    if torch.is_tensor(out):
        return out
    if isinstance(out, dict) and "loss" in out:
        return out["loss"]
    loss = getattr(out, "loss", None)
    if torch.is_tensor(loss):
        return loss
    if isinstance(out, (tuple, list)) and out and torch.is_tensor(out[0]):
        return out[0]
    raise ExportError("the module's forward returned %s; it must return the "
                      "loss (a scalar tensor, .loss, ['loss'] or a tuple "
                      "starting with it)" % type(out).__name__)


class _LossOf(torch.nn.Module):
    """Calls the user's module with keyword inputs and returns the loss."""

    def __init__(self, module, names, positional=False):
        super().__init__()
        self.module = module
        self.names = list(names)
        self.positional = positional

    def forward(self, *args):
        out = (self.module(*args) if self.positional
               else self.module(**dict(zip(self.names, args))))
        loss = _loss_of(out)
        if loss.numel() != 1 or not loss.is_floating_point():
            raise ExportError("the loss must be a float scalar, got %s%s"
                              % (loss.dtype, tuple(loss.shape)))
        return loss.reshape(())


def _aliases(module):
    """name -> canonical name for parameters and buffers shared under
    several names (tied weights); the canonical one is the first."""
    first, alias = {}, {}
    for prefix, mod in module.named_modules(remove_duplicate=False):
        for kind in (mod._parameters, mod._buffers):
            for n, t in kind.items():
                if t is None:
                    continue
                full = prefix + ("." if prefix else "") + n
                key = id(t)
                if key in first and first[key] != full:
                    alias[full] = first[key]
                else:
                    first.setdefault(key, full)
    return alias


def _padding_idx(module, canonical):
    out = {}
    for prefix, mod in module.named_modules():
        if isinstance(mod, torch.nn.Embedding) and mod.padding_idx is not None:
            name = (prefix + "." if prefix else "") + "weight"
            idx = int(mod.padding_idx)
            if idx < 0:
                idx += mod.num_embeddings
            out[canonical.get(name, name)] = idx
    return out


def _rename(graph, old, new):
    for t in graph.initializer:
        if t.name == old:
            t.name = new
    for vi in list(graph.input) + list(graph.value_info):
        if vi.name == old:
            vi.name = new
    for node in graph.node:
        for i, n in enumerate(node.input):
            if n == old:
                node.input[i] = new


def _used_params(wrapper, args):
    """Names (as the exporter sees them) of parameters that get a gradient."""
    wrapper.zero_grad(set_to_none=True)
    loss = wrapper(*args)
    loss.backward()
    used = {n for n, p in wrapper.named_parameters() if p.grad is not None}
    wrapper.zero_grad(set_to_none=True)
    return float(loss.detach()), used


def _classify(module, wrapper, graph, used):
    """The marker's lists (under the module's own names); renames the
    initializers to them. Raises ExportError when a trained parameter is not
    exactly one initializer."""
    import onnx
    floats = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
              onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}
    inits = {t.name: t for t in graph.initializer}
    alias = _aliases(wrapper)            # wrapper name -> canonical name
    names_of = {}
    for a, c in alias.items():
        names_of.setdefault(c, [c]).append(a)
    short = lambda n: n[len(_PREFIX):] if n.startswith(_PREFIX) else n

    def initializer_of(name, what):
        found = [n for n in names_of.get(name, [name]) if n in inits]
        if len(found) > 1:
            raise ExportError("%s %s is tied but the graph holds it %d times "
                              "(%s)" % (what, short(name), len(found),
                                        ", ".join(map(short, found))))
        if found and found[0] != name:
            _rename(graph, found[0], name)
        return bool(found)

    trainable, frozen, buffers, problems = [], [], [], []
    for name, p in wrapper.named_parameters():
        if not initializer_of(name, "parameter"):
            if p.requires_grad and name in used:
                problems.append(short(name))
            continue
        if inits.get(name, p) is not p and name in inits and \
                inits[name].data_type not in floats:
            raise ExportError("parameter %s is not a float tensor"
                              % short(name))
        (trainable if p.requires_grad else frozen).append(short(name))
    if problems:
        raise ExportError(
            "parameters %s receive a gradient in PyTorch but are not "
            "initializers of the exported graph (the exporter folded or "
            "renamed them); report this model to zeroc"
            % ", ".join(problems[:5]))
    params = set(trainable) | set(frozen)
    for name, _ in wrapper.named_buffers():
        if initializer_of(name, "buffer") and short(name) not in params:
            buffers.append(short(name))
    return trainable, frozen, buffers


def _check_values(wrapper, graph, base_dir):
    """Every parameter and buffer initializer holds the module's value,
    bit for bit (an exporter that ran the forward may have captured
    updated running statistics)."""
    from onnx import numpy_helper
    inits = {t.name: t for t in graph.initializer}
    for name, t in list(wrapper.named_parameters()) + \
            list(wrapper.named_buffers()):
        short = name[len(_PREFIX):]
        if short not in inits:
            continue
        got = numpy_helper.to_array(inits[short], base_dir=base_dir)
        want = t.detach().cpu().numpy()
        if got.shape != want.shape or got.tobytes() != want.tobytes():
            raise ExportError("initializer %s does not hold the module's "
                              "value of it" % short)


def _restore_buffers(graph, saved):
    """Writes the module's original buffer values over initializers that an
    exporter captured after its tracing forward pass updated them."""
    from onnx import numpy_helper
    for t in graph.initializer:
        if t.name in saved:
            want = saved[t.name].cpu().numpy()
            got = numpy_helper.to_array(t) if not t.external_data else None
            if got is not None and got.tobytes() == want.tobytes():
                continue
            fresh = numpy_helper.from_array(want.astype(got.dtype) if got
                                            is not None else want, t.name)
            t.CopyFrom(fresh)


def _inference_batch_norms(graph, wrapper):
    """True when the module trains a BatchNorm but the graph normalizes
    with running statistics (what the dynamo exporter writes)."""
    trains = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and
                 m.training and m.track_running_stats
                 for m in wrapper.modules())
    for node in graph.node:
        if node.op_type == "BatchNormalization":
            mode = [a.i for a in node.attribute if a.name == "training_mode"]
            if trains and not (mode and mode[0]):
                return True
    return False


def _without_dropout(model):
    """A copy of the ONNX model whose Dropout nodes are Identity; None when
    it has none."""
    import onnx
    m = onnx.ModelProto()
    m.CopyFrom(model)
    found = False
    for node in m.graph.node:
        if node.op_type == "Dropout" and node.domain in ("", "ai.onnx"):
            found = True
            out = node.output[0]
            node.op_type = "Identity"
            del node.input[1:]
            del node.output[:]
            node.output.append(out)
            del node.attribute[:]
    return m if found else None


def _training_batch_norm(model):
    return any(n.op_type == "BatchNormalization" and
               any(a.name == "training_mode" and a.i for a in n.attribute)
               for n in model.graph.node)


def _onnx_loss(path, model, feeds, use_ort):
    """(loss, checker) from onnxruntime or zeroc's reference interpreter;
    (None, why) when neither can evaluate the graph."""
    try:
        import onnxruntime
    except ImportError:
        onnxruntime = None
    if onnxruntime is not None and use_ort:
        opts = onnxruntime.SessionOptions()
        opts.log_severity_level = 3
        sess = onnxruntime.InferenceSession(
            model.SerializeToString() if model is not None else path, opts,
            providers=["CPUExecutionProvider"])
        return float(sess.run(None, feeds)[0]), "onnxruntime " + \
            onnxruntime.__version__
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "tools", "reference"))
    import onnx_torch
    try:
        interp = onnx_torch.OnnxTorchModel(path, no_dropout=True)
    except onnx_torch.OnnxTorchError as e:
        return None, "zeroc's reference interpreter cannot run it (%s)" % e
    with torch.no_grad():
        got = float(interp.loss({n: torch.as_tensor(v)
                                 for n, v in feeds.items()}))
    return got, "zeroc's reference interpreter"


def _forward_check(path, wrapper, args, names, tol):
    """Compares the exported graph's forward loss with PyTorch's, both
    without dropout (nn.Dropout modules in eval mode, Dropout nodes as
    Identity). Returns (checker, loss, warning or None)."""
    import onnx
    model = onnx.load(path)
    nodrop = _without_dropout(model)
    drops = [m for m in wrapper.modules()
             if isinstance(m, torch.nn.modules.dropout._DropoutNd)]
    for m in drops:
        m.eval()
    try:
        with torch.no_grad():
            want = float(wrapper(*args))
    finally:
        for m in drops:
            m.train()
    feeds = {n: a.detach().cpu().numpy() for n, a in zip(names, args)}
    # onnxruntime's inference build ignores BatchNormalization's
    # training_mode and normalizes with the running statistics.
    got, which = _onnx_loss(path, nodrop, feeds,
                            use_ort=not _training_batch_norm(model))
    if got is None:
        return which, None, "forward not checked: " + which
    if abs(got - want) <= tol * max(1.0, abs(want)):
        return which, got, None
    msg = ("the exported graph's loss %.9g (%s, dropout off) differs from "
           "PyTorch's %.9g" % (got, which, want))
    if nodrop is not None:
        return which, got, (msg + "; the module has dropout that is not an "
                            "nn.Dropout module, so the two cannot be "
                            "compared: set its dropout probabilities to 0 "
                            "to check the export")
    raise ExportError(msg)


def _run_exporter(wrapper, args, path, names, opset, exporter):
    kwargs = dict(opset_version=opset, input_names=names,
                  output_names=["loss"], export_params=True)
    has_dynamo = "dynamo" in torch.onnx.export.__code__.co_varnames
    if exporter == "dynamo":
        if not has_dynamo:
            raise ExportError("torch %s has no dynamo exporter; use "
                              "exporter='torchscript'" % torch.__version__)
        # optimize=False: the exporter's optimizer folds constants into
        # float initializers and merges initializers that hold equal
        # values (every LayerNorm weight of a fresh model), which would
        # train a different model.
        kwargs.update(dynamo=True, optimize=False, external_data=True)
    elif exporter == "torchscript":
        kwargs.update(do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
        if has_dynamo:
            kwargs["dynamo"] = False
    else:
        raise ExportError("exporter must be 'torchscript' or 'dynamo', not %r"
                          % (exporter,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(wrapper, args, path, **kwargs)


def export(module, example_inputs, path, opset=DEFAULT_OPSET, verify=True,
           tol=1e-5, quiet=False, exporter="torchscript"):
    """Exports `module` (in training mode) to `path` and returns a report.

    example_inputs: a dict name -> tensor (the forward's keyword arguments,
    in order; these become the graph inputs), or a tuple of tensors for a
    forward taking positional arguments (named input0, input1, ...).
    """
    import onnx
    positional = not isinstance(example_inputs, dict)
    if positional:
        args = tuple(example_inputs)
        names = ["input%d" % i for i in range(len(args))]
    else:
        names, args = list(example_inputs), tuple(example_inputs.values())
    for n, a in zip(names, args):
        if not torch.is_tensor(a):
            raise ExportError("example input %r is not a tensor" % n)
    module.train()
    wrapper = _LossOf(module, names, positional)
    # Forward passes in training mode update buffers (BatchNorm's running
    # statistics): every one starts from, and is exported with, the
    # module's original values.
    saved = {n: b.detach().clone() for n, b in wrapper.named_buffers()}

    def restore():
        with torch.no_grad():
            for n, b in wrapper.named_buffers():
                b.copy_(saved[n])
    torch_loss, used = _used_params(wrapper, args)
    restore()
    _run_exporter(wrapper, args, path, names, opset, exporter)
    restore()

    model = onnx.load(path, load_external_data=False)
    g = model.graph
    if _inference_batch_norms(g, wrapper):
        raise ExportError("the %s exporter wrote BatchNormalization in "
                          "inference mode (running statistics) for a module "
                          "that trains with batch statistics; use "
                          "exporter='torchscript'" % exporter)
    _restore_buffers(g, saved)
    trainable, frozen, buffers = _classify(module, wrapper, g, used)
    for t in list(g.initializer):
        if t.name.startswith(_PREFIX):
            _rename(g, t.name, t.name[len(_PREFIX):])
    canonical = _aliases(module)
    marker = {"format": MARKER_FORMAT, "trainable": trainable,
              "frozen": frozen, "buffers": buffers,
              "padding_idx": _padding_idx(module, canonical),
              "aliases": {a: c for a, c in canonical.items()}}
    for i in reversed(range(len(model.metadata_props))):
        if model.metadata_props[i].key == MARKER_KEY:
            del model.metadata_props[i]
    entry = model.metadata_props.add()
    entry.key, entry.value = MARKER_KEY, json.dumps(marker, sort_keys=True)
    onnx.save(model, path)
    _check_values(wrapper, g, os.path.dirname(os.path.abspath(path)))

    report = {"path": path, "loss": torch_loss, "trainable": len(trainable),
              "frozen": len(frozen), "buffers": len(buffers),
              "aliases": len(marker["aliases"]), "opset": opset,
              "exporter": exporter}
    warning = None
    if verify:
        report["checked_by"], report["onnx_loss"], warning = _forward_check(
            path, wrapper, args, names, tol)
        restore()
    if not quiet:
        print("zeroc_torch: wrote %s: %d trainable, %d frozen, %d buffers, "
              "%d tied aliases; loss %.6g%s"
              % (path, len(trainable), len(frozen), len(buffers),
                 len(marker["aliases"]), torch_loss,
                 "; forward matches (%s)" % report["checked_by"]
                 if verify and not warning else ""), file=sys.stderr)
        if warning:
            print("zeroc_torch: warning: " + warning, file=sys.stderr)
    return report



# -- command line -------------------------------------------------------------

_SPEC = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)=(float32|float64|int64|int32|"
                   r"bool)\[([0-9,\s]*)\](?::([0-9]+))?$")


def parse_input_spec(spec, seed=0):
    """NAME=DTYPE[D0,D1,...][:HIGH]: random ints in [0, HIGH) (zeros without
    HIGH), random normal floats, zero bools."""
    m = _SPEC.match(spec)
    if not m:
        raise ExportError("--example-inputs %r: expected NAME=DTYPE[D0,D1,...]"
                          "[:HIGH], DTYPE one of float32, float64, int64, "
                          "int32, bool" % spec)
    name, dtype, dims, high = m.groups()
    shape = [int(d) for d in dims.replace(" ", "").split(",") if d]
    if any(d <= 0 for d in shape) or len(shape) > 8:
        raise ExportError("--example-inputs %r: dims must be positive, at "
                          "most 8 of them" % spec)
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    if dtype.startswith("float"):
        return name, torch.randn(shape, generator=g, dtype=dt)
    if dtype == "bool":
        return name, torch.zeros(shape, dtype=torch.bool)
    if high:
        return name, torch.randint(0, int(high), shape, generator=g, dtype=dt)
    return name, torch.zeros(shape, dtype=dt)


def _load_builder(target):
    path, sep, func = target.rpartition(":")
    if not sep or not path or not func:
        raise ExportError("%r: expected FILE.py:FUNCTION" % target)
    if not os.path.isfile(path):
        raise ExportError("%s: no such file" % path)
    spec = importlib.util.spec_from_file_location("_zeroc_user_model", path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    fn = getattr(mod, func, None)
    if not callable(fn):
        raise ExportError("%s has no function %r" % (path, func))
    return fn


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m zeroc_torch.export",
        description="Export a PyTorch module's training loss to ONNX for "
                    "zeroc, with its parameters marked.")
    ap.add_argument("builder", help="FILE.py:FUNCTION returning a module, "
                    "or (module, {name: example tensor})")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--example-inputs", action="append", default=[],
                    metavar="NAME=DTYPE[D0,...][:HIGH]")
    ap.add_argument("--opset", type=int, default=DEFAULT_OPSET)
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"],
                    default="torchscript",
                    help="torch.onnx's TorchScript exporter (default; torch "
                    "1.13 and 2.x) or its dynamo exporter (torch 2.x; "
                    "opset 18+, run without its optimizer)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-verify", action="store_true")
    a = ap.parse_args(argv)
    try:
        torch.manual_seed(a.seed)
        built = _load_builder(a.builder)()
        module, inputs = (built if isinstance(built, tuple) else (built, None))
        if a.example_inputs:
            inputs = dict(parse_input_spec(s, a.seed + i)
                          for i, s in enumerate(a.example_inputs))
        if not inputs:
            raise ExportError("no example inputs: return (module, inputs) "
                              "from the builder or give --example-inputs")
        export(module, inputs, a.output, opset=a.opset,
               verify=not a.no_verify, exporter=a.exporter)
    except ExportError as e:
        print("zeroc_torch: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
