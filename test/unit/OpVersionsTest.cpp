//===- OpVersionsTest.cpp - the op version table ---------------------------===//
#include "OnnxModelLoader.h"
#include "OpVersions.h"
#include "HostTensor.h"

#include <gtest/gtest.h>

using namespace zeroc::onnximport;

namespace {

onnx::NodeProto makeNode(const std::string &op, int inputs, int outputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  for (int i = 0; i < inputs; ++i)
    n.add_input("in" + std::to_string(i));
  for (int i = 0; i < outputs; ++i)
    n.add_output("out" + std::to_string(i));
  return n;
}

TEST(OpVersions, ResolvesTheVersionInEffect) {
  EXPECT_EQ(resolveOpVersion("ReduceMean", 13).since, 13);
  EXPECT_EQ(resolveOpVersion("ReduceMean", 17).since, 13);
  EXPECT_EQ(resolveOpVersion("ReduceMean", 21).since, 18);
  EXPECT_EQ(resolveOpVersion("ReduceMax", 20).since, 20);
  EXPECT_EQ(resolveOpVersion("Split", 18).since, 18);
  EXPECT_EQ(resolveOpVersion("Cast", 20).since, 19);
  EXPECT_EQ(resolveOpVersion("Shape", 16).since, 15);
  EXPECT_EQ(resolveOpVersion("Where", 13).since, 9);
  EXPECT_EQ(resolveOpVersion("SequenceAt", 21).since, 11);
  EXPECT_THROW(resolveOpVersion("LayerNormalization", 16), ImportError);
  EXPECT_THROW(resolveOpVersion("Gelu", 19), ImportError);
  EXPECT_EQ(resolveOpVersion("Gelu", 20).since, 20);
  EXPECT_THROW(resolveOpVersion("NoSuchOp", 18), ImportError);
}

TEST(OpVersions, EverySupportedOpHasAnEntry) {
  for (const char *op :
       {"Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt",
        "Reciprocal", "Neg", "Relu", "Tanh", "Sigmoid", "Erf", "Exp", "Log",
        "ReduceMean", "ReduceSum", "ReduceMax", "Softmax", "LogSoftmax",
        "LayerNormalization", "Gather", "Reshape", "Transpose", "Unsqueeze",
        "Squeeze", "Split", "Concat", "Slice", "Trilu", "Equal", "Where",
        "Cast", "Constant", "ConstantOfShape", "Shape", "Expand", "Identity",
        "Dropout", "SoftmaxCrossEntropyLoss", "SplitToSequence", "SequenceAt",
        "SequenceConstruct", "ConcatFromSequence", "SequenceLength",
        "SequenceEmpty", "SequenceInsert", "SequenceErase"}) {
    ASSERT_TRUE(isSupportedOpType(op)) << op;
    const auto *versions = opVersions(op);
    ASSERT_NE(versions, nullptr) << op;
    // Every opset zeroc accepts from the op's first version on resolves
    // (LayerNormalization is new at 17, Trilu at 14), and the table is sorted.
    for (int64_t opset = kMinOpset; opset <= kMaxOpset; ++opset) {
      if (opset >= versions->front().since) {
        EXPECT_NO_THROW(resolveOpVersion(op, opset)) << op << " " << opset;
      }
    }
    for (size_t i = 1; i < versions->size(); ++i)
      EXPECT_LT((*versions)[i - 1].since, (*versions)[i].since) << op;
    for (const OpVersion &v : *versions) {
      if (v.since > kLibonnxMaxOpset) {
        EXPECT_GE(v.maxOutputs, 1) << op << "-" << v.since
                                   << " needs its own signature";
      }
    }
  }
}

TEST(OpVersions, OwnSignatureChecks) {
  const OpVersion &split = resolveOpVersion("Split", 18);
  onnx::NodeProto n = makeNode("Split", 1, 3);
  auto *a = n.add_attribute();
  a->set_name("num_outputs");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(3);
  EXPECT_NO_THROW(checkOwnSignature(n, split));
  a->set_type(onnx::AttributeProto::STRING);
  EXPECT_THROW(checkOwnSignature(n, split), ImportError);
  a->set_type(onnx::AttributeProto::INT);
  a->set_name("split"); // an attribute until Split-13
  EXPECT_THROW(checkOwnSignature(n, split), ImportError);

  const OpVersion &cast = resolveOpVersion("Cast", 19);
  onnx::NodeProto c = makeNode("Cast", 1, 1);
  EXPECT_THROW(checkOwnSignature(c, cast), ImportError); // 'to' is required
  auto *to = c.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(1);
  EXPECT_NO_THROW(checkOwnSignature(c, cast));
  c.add_input("extra");
  EXPECT_THROW(checkOwnSignature(c, cast), ImportError);

  // An omitted trailing optional input is not counted.
  onnx::NodeProto r = makeNode("ReduceMean", 1, 1);
  r.add_input("");
  EXPECT_NO_THROW(checkOwnSignature(r, resolveOpVersion("ReduceMean", 18)));
}

TEST(OpVersions, NamesNewerElementTypes) {
  EXPECT_EQ(onnxTypeName(17), "FLOAT8E4M3FN");
  EXPECT_EQ(onnxTypeName(22), "INT4");
  EXPECT_EQ(onnxTypeName(1), "FLOAT");
  EXPECT_EQ(onnxTypeName(99), "type #99");
  EXPECT_TRUE(isSubByteOrFloat8Type(19));
  EXPECT_FALSE(isSubByteOrFloat8Type(16));
}

} // namespace
