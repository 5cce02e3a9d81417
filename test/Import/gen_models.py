#!/usr/bin/python3
"""Generate the ONNX training-graph fixtures used by the zeroc import tests.

Usage: /usr/bin/python3 test/Import/gen_models.py OUTDIR

Needs torch (tested with 1.13) and onnx (tested with 1.12).  Everything is
deterministic (torch.manual_seed(0)) and tiny; the whole run takes a few
seconds.  Re-running overwrites every file.  See README.md next to this file.
"""

import os
import sys
import time
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch

OPSET = 17

# Ops the zeroc importer is expected to handle.  Anything else in a real
# export is reported (and is a bug in this script's model code).
SUPPORTED_OPS = {
    "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal",
    "Neg", "Relu", "Tanh", "Sigmoid", "Erf", "Exp", "Log", "ReduceMean",
    "ReduceSum", "ReduceMax", "Softmax", "LogSoftmax", "LayerNormalization",
    "Gather", "Reshape", "Transpose", "Unsqueeze", "Squeeze", "Split", "Concat",
    "Slice", "Trilu", "Equal", "Where", "Cast", "Constant", "ConstantOfShape",
    "Shape", "Expand", "Identity", "Dropout", "SoftmaxCrossEntropyLoss",
    # comparisons, logic, float math, Max/Min, Clip, Gelu, CastLike
    "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor",
    "Not", "IsNaN", "IsInf", "Cos", "Sin", "Abs", "Sign", "Floor", "Ceil",
    "Round", "Max", "Min", "Clip", "Gelu", "CastLike",
    # convolution, pooling, batch norm
    "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
    "BatchNormalization",
    # ConvertMovementOps.cpp, ConvertFoldOnlyOps.cpp
    "Pad", "Tile", "Flatten", "GatherElements", "GatherND", "ScatterND",
    "ScatterElements", "CumSum", "Range", "NonZero", "OneHot", "ReduceMin",
    "ReduceProd",
}


# ---------------------------------------------------------------------------
# Real models (defined in examples/models.py)
# ---------------------------------------------------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "examples"))
from models import (GPT, GPT_B, GPT_T, GPT_V, LL_B, LL_T, LL_V, MLP,  # noqa: E402
                    MLPMSE, Llama, without_dropout)


def export(model, args, path, input_names, dynamic_axes=None):
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, args, path,
            opset_version=OPSET,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False,
            input_names=list(input_names),
            output_names=["loss"],
            dynamic_axes=dynamic_axes)
    m = onnx.load(path)
    # full_check runs strict shape/type inference (catches e.g. ill-typed
    # Where inputs that the plain checker accepts).
    onnx.checker.check_model(m, full_check=True)
    # Float initializers must be exactly the trainable parameters (tied
    # weights appear once), so an importer may treat them as such.
    fl = [t for t in m.graph.initializer if t.data_type == TensorProto.FLOAT]
    n_init = sum(int(np.prod(t.dims)) for t in fl)
    n_par = sum(p.numel() for p in model.parameters())
    assert n_init == n_par, (path, n_init, n_par)
    ops = sorted({n.op_type for n in m.graph.node})
    print("%s: %d nodes, %d params, ops=%s"
          % (os.path.basename(path), len(m.graph.node), n_par, ops))
    extra = sorted(set(ops) - SUPPORTED_OPS)
    if extra:
        print("  WARNING: %s has ops outside the supported set: %s"
              % (os.path.basename(path), extra))
    return m


def gen_real_models(out):
    torch.manual_seed(0)

    mlp = MLP()
    nparams = sum(p.numel() for p in mlp.parameters())
    # Odd on purpose, so that vectorised/packed parameter buffers need tails.
    assert nparams % 2 != 0 and nparams % 4 != 0, nparams
    x = torch.randn(8, 10)
    y = torch.randint(0, 3, (8,), dtype=torch.int64)
    export(mlp, (x, y), os.path.join(out, "mlp.onnx"), ["x", "y"])

    mse = MLPMSE()
    export(mse, (torch.randn(4, 6), torch.randn(4, 2)),
           os.path.join(out, "mlp_mse.onnx"), ["x", "t"])

    gpt = GPT()
    idx = torch.randint(0, GPT_V, (GPT_B, GPT_T), dtype=torch.int64)
    tgt = torch.randint(0, GPT_V, (GPT_B, GPT_T), dtype=torch.int64)
    export(gpt, (idx, tgt), os.path.join(out, "gpt2.onnx"), ["idx", "targets"])
    gpt_nodropout = without_dropout(GPT())
    export(gpt_nodropout, (idx, tgt),
           os.path.join(out, "gpt2_nodropout.onnx"), ["idx", "targets"])
    gpt_nodropout_args = (idx, tgt)
    export(gpt, (idx, tgt), os.path.join(out, "gpt2_dynamic.onnx"),
           ["idx", "targets"],
           dynamic_axes={"idx": {0: "batch"}, "targets": {0: "batch"}})

    llama = Llama()
    idx = torch.randint(0, LL_V, (LL_B, LL_T), dtype=torch.int64)
    tgt = torch.randint(0, LL_V, (LL_B, LL_T), dtype=torch.int64)
    export(llama, (idx, tgt), os.path.join(out, "llama.onnx"),
           ["idx", "targets"])

    from gen_param_models import gen_param_models
    return ["mlp.onnx", "mlp_mse.onnx", "gpt2.onnx", "gpt2_nodropout.onnx",
            "gpt2_dynamic.onnx",
            "llama.onnx"] + gen_param_models(out, gpt_nodropout,
                                             gpt_nodropout_args)


# ---------------------------------------------------------------------------
# Bad / edge-case inputs, built with onnx.helper
# ---------------------------------------------------------------------------

def _model(nodes, inputs, outputs, initializers=(), extra_opsets=(),
           name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    opsets = [helper.make_opsetid("", OPSET)]
    opsets += [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="zeroc-gen_models")
    # Pin the IR version to what torch 1.13 emits so that the files do not
    # depend on the onnx package version.
    m.ir_version = 8
    return m


def _save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def _fvi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _external_model(location, nbytes_declared, offset=0):
    """X(2,3) @ W(3,4) -> ReduceMean -> scalar loss, W stored externally."""
    W = TensorProto()
    W.name = "W"
    W.data_type = TensorProto.FLOAT
    W.dims.extend([3, 4])
    W.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(nbytes_declared))):
        e = W.external_data.add()
        e.key = k
        e.value = v
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["Y"], name="matmul0"),
        helper.make_node("ReduceMean", ["Y"], ["loss"], name="mean0",
                         keepdims=0),
    ]
    return _model(nodes, [_fvi("X", [2, 3])], [_fvi("loss", [])],
                  initializers=[W])


W_BYTES = np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0


def gen_bad_inputs(out):
    files = []

    # not_onnx.onnx: 200 bytes of text.
    txt = (b"this is not an onnx model... " * 10)[:200]
    with open(os.path.join(out, "not_onnx.onnx"), "wb") as f:
        f.write(txt)
    files.append("not_onnx.onnx")

    # truncated.onnx: first 60% of mlp.onnx.
    with open(os.path.join(out, "mlp.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[:int(len(data) * 0.6)])
    files.append("truncated.onnx")

    # unknown_ops.onnx: FooBar (com.example), ConvTranspose, Hardmax.
    Wc = numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "Wc")
    nodes = [
        helper.make_node("FooBar", ["X"], ["a"], name="mystery1",
                         domain="com.example"),
        helper.make_node("Reshape", ["a", "shape4"], ["a4"], name="reshape0"),
        helper.make_node("ConvTranspose", ["a4", "Wc"], ["c"], name="convt0"),
        helper.make_node("Hardmax", ["c"], ["nz"], name="hardmax0"),
        helper.make_node("Cast", ["nz"], ["nzf"], name="cast0",
                         to=TensorProto.FLOAT),
        helper.make_node("ReduceMean", ["nzf"], ["loss"], name="mean0",
                         keepdims=0),
    ]
    shape4 = numpy_helper.from_array(np.array([1, 1, 2, 3], np.int64),
                                     "shape4")
    _save(_model(nodes, [_fvi("X", [2, 3])], [_fvi("loss", [])],
                 initializers=[Wc, shape4],
                 extra_opsets=[("com.example", 1)]),
          os.path.join(out, "unknown_ops.onnx"))
    files.append("unknown_ops.onnx")

    # symbolic_dim.onnx: X["N",3] -> Relu -> ReduceMean -> scalar.
    nodes = [
        helper.make_node("Relu", ["X"], ["r"], name="relu0"),
        helper.make_node("ReduceMean", ["r"], ["loss"], name="mean0",
                         keepdims=0),
    ]
    _save(_model(nodes, [_fvi("X", ["N", 3])], [_fvi("loss", [])]),
          os.path.join(out, "symbolic_dim.onnx"))
    files.append("symbolic_dim.onnx")

    # unsorted.onnx: consumer listed before producer.
    nodes = [
        helper.make_node("ReduceMean", ["r"], ["loss"], name="second",
                         keepdims=0),
        helper.make_node("Relu", ["X"], ["r"], name="first"),
    ]
    _save(_model(nodes, [_fvi("X", [2, 3])], [_fvi("loss", [])]),
          os.path.join(out, "unsorted.onnx"))
    files.append("unsorted.onnx")

    # cyclic.onnx: a = X + b ; b = Relu(a) ; loss = mean(b)
    nodes = [
        helper.make_node("Add", ["X", "b"], ["a"], name="cyc_add"),
        helper.make_node("Relu", ["a"], ["b"], name="cyc_relu"),
        helper.make_node("ReduceMean", ["b"], ["loss"], name="mean0",
                         keepdims=0),
    ]
    _save(_model(nodes, [_fvi("X", [2, 3])], [_fvi("loss", [])]),
          os.path.join(out, "cyclic.onnx"))
    files.append("cyclic.onnx")

    # missing_input.onnx: consumes "ghost".
    nodes = [
        helper.make_node("Add", ["X", "ghost"], ["a"], name="add_ghost"),
        helper.make_node("ReduceMean", ["a"], ["loss"], name="mean0",
                         keepdims=0),
    ]
    _save(_model(nodes, [_fvi("X", [2, 3])], [_fvi("loss", [])]),
          os.path.join(out, "missing_input.onnx"))
    files.append("missing_input.onnx")

    # bad_dtype.onnx: complex64 input feeding an op.
    nodes = [
        helper.make_node("Cast", ["Z"], ["zf"], name="cast_complex",
                         to=TensorProto.FLOAT),
        helper.make_node("ReduceMean", ["zf"], ["loss"], name="mean0",
                         keepdims=0),
    ]
    _save(_model(nodes, [_fvi("Z", [2, 3], TensorProto.COMPLEX64)],
                 [_fvi("loss", [])]),
          os.path.join(out, "bad_dtype.onnx"))
    files.append("bad_dtype.onnx")

    # no_scalar_output.onnx: output is (2,3).
    nodes = [helper.make_node("Relu", ["X"], ["Y"], name="relu0")]
    _save(_model(nodes, [_fvi("X", [2, 3])], [_fvi("Y", [2, 3])]),
          os.path.join(out, "no_scalar_output.onnx"))
    files.append("no_scalar_output.onnx")

    # int_output.onnx: scalar int64 output.
    nodes = [helper.make_node("ReduceSum", ["I"], ["loss"], name="sum0",
                              keepdims=0)]
    _save(_model(nodes, [_fvi("I", [2, 3], TensorProto.INT64)],
                 [_fvi("loss", [], TensorProto.INT64)]),
          os.path.join(out, "int_output.onnx"))
    files.append("int_output.onnx")

    # External data variants.
    wbytes = W_BYTES.tobytes()  # little-endian float32, 48 bytes
    for sub, loc, payload in (
            ("external_ok", "weights.bin", wbytes),
            ("external_escape", "../secret.bin", None),
            ("external_short", "weights.bin", wbytes[:20])):
        d = os.path.join(out, sub)
        os.makedirs(d, exist_ok=True)
        # Remove stale files from earlier runs so the directory is exact.
        for fn in os.listdir(d):
            os.remove(os.path.join(d, fn))
        _save(_external_model(loc, len(wbytes)), os.path.join(d, "model.onnx"))
        files.append(sub + "/model.onnx")
        if payload is not None:
            with open(os.path.join(d, "weights.bin"), "wb") as f:
                f.write(payload)
            files.append(sub + "/weights.bin")
    with open(os.path.join(out, "secret.bin"), "wb") as f:
        f.write(wbytes)
    files.append("secret.bin")

    # Sanity: the exact ones pass the checker.  external_ok is checked by
    # path so the checker resolves the external file.  (Never pass a path
    # together with full_check=True: onnx 1.12 then runs infer_shapes_path,
    # which rewrites the file in place with inferred value_info.)
    for fn in ("symbolic_dim.onnx", "no_scalar_output.onnx",
               "int_output.onnx"):
        onnx.checker.check_model(onnx.load(os.path.join(out, fn)))
    onnx.checker.check_model(os.path.join(out, "external_ok", "model.onnx"))
    ext = onnx.load(os.path.join(out, "external_ok", "model.onnx"))
    got = numpy_helper.to_array(ext.graph.initializer[0])
    assert np.array_equal(got, W_BYTES), got
    return files


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s OUTDIR\n" % argv[0])
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    torch.set_num_threads(1)
    files = gen_real_models(out)
    files += gen_bad_inputs(out)
    files.append("MANIFEST.txt")
    with open(os.path.join(out, "MANIFEST.txt"), "w") as f:
        for fn in files:
            f.write(fn + "\n")
    for fn in files:
        assert os.path.isfile(os.path.join(out, fn)), fn
    print("generated %d files in %.2f s" % (len(files), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
