#!/usr/bin/env python3
"""Prints, from a current onnx package's schema registry, every since-version
of the ops zeroc's version table (lib/Import/OpVersions.cpp) lists, in 1..21,
and the arity and attributes of the versions from 18 on, which zeroc checks
itself (Debian's libonnx 1.12 has schemas only up to opset 17).  A tool for
reviewing the table against ONNX, not part of `make test`:

  /work/venv-export/bin/python test/Import/op_versions_from_onnx.py [OP...]
"""
import sys

import onnx.defs

OPS = """Add Sub Mul Div Pow Neg Sqrt Reciprocal Relu Tanh Sigmoid Erf Exp Log
Equal Where Cast Gemm MatMul ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd
ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare Softmax LogSoftmax
LayerNormalization Gather Reshape Unsqueeze Squeeze Transpose Expand Slice Split
Concat Trilu Dropout SoftmaxCrossEntropyLoss Constant ConstantOfShape Shape
Identity Less LessOrEqual Greater GreaterOrEqual And Or Xor Not IsNaN IsInf Cos
Sin Abs Sign Max Min Clip Gelu CastLike Pad Tile Range Flatten GatherElements
ScatterND ScatterElements CumSum SplitToSequence SequenceAt SequenceConstruct
ConcatFromSequence SequenceLength SequenceEmpty SequenceInsert
SequenceErase""".split()

ATTR = {v: k for k, v in onnx.defs.OpSchema.AttrType.__members__.items()}


def main():
    ops = sys.argv[1:] or OPS
    hist = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "" and s.name in ops and s.since_version <= 21:
            hist.setdefault(s.name, []).append(s)
    for op in ops:
        schemas = sorted(hist.get(op, []), key=lambda s: s.since_version)
        print(op, [s.since_version for s in schemas])
        for s in schemas:
            if s.since_version < 18:
                continue
            attrs = ", ".join(
                f"{a.name}:{ATTR[a.type]}{'!' if a.required else ''}"
                for a in sorted(s.attributes.values(), key=lambda a: a.name))
            print(f"  {s.since_version}: in {s.min_input}..{s.max_input} "
                  f"out {s.min_output}..{s.max_output} [{attrs}]")


if __name__ == "__main__":
    main()
