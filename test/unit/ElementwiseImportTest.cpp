//===- ElementwiseImportTest.cpp - Gelu's conversion at opset 20 ----------===//
//
// Debian's ONNX 1.12 has no Gelu schema, and zeroc's loader accepts opsets
// 13-17, so a Gelu model cannot go through `zeroc import` yet. These tests
// hand a validated-looking ModelProto straight to the GraphBuilder (the step
// after onnx::checker) to check the conversion itself: graph.gelu with the
// approximation, host folding of a constant input, and the opset check in
// the converter.
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"

#include "zeroc/Dialect/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace zeroc::onnximport;

namespace {

void addTensor(onnx::ValueInfoProto *v, const std::string &name,
               std::vector<int64_t> dims) {
  v->set_name(name);
  auto *t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  auto *shape = t->mutable_shape();
  for (int64_t d : dims)
    shape->add_dim()->set_dim_value(d);
}

/// y = Gelu(x) (or Gelu(constant) with `constantInput`), at `opset`.
onnx::ModelProto geluModel(int64_t opset, const char *approximate,
                           bool constantInput = false) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  auto *imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  onnx::GraphProto *g = m.mutable_graph();
  g->set_name("gelu");
  std::string in = "x";
  if (constantInput) {
    onnx::NodeProto *c = g->add_node();
    c->set_op_type("Constant");
    c->set_name("c");
    c->add_output("c");
    auto *a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto *t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2);
    t->add_float_data(1.0f);
    t->add_float_data(-2.0f);
    in = "c";
  } else {
    addTensor(g->add_input(), "x", {2, 3});
  }
  onnx::NodeProto *n = g->add_node();
  n->set_op_type("Gelu");
  n->set_name("gelu0");
  n->add_input(in);
  n->add_output("y");
  if (approximate) {
    auto *a = n->add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(approximate);
  }
  addTensor(g->add_output(), "y",
            constantInput ? std::vector<int64_t>{2}
                          : std::vector<int64_t>{2, 3});
  return m;
}

std::string importToText(const onnx::ModelProto &m) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<zeroc::graph::GraphDialect, mlir::func::FuncDialect>();
  GraphBuilder gb(ctx, m, "gelu.onnx", /*allowNoLoss=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> module = gb.build();
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return os.str();
}

TEST(ElementwiseImport, GeluOpset20BothApproximations) {
  std::string exact = importToText(geluModel(20, nullptr));
  EXPECT_NE(
      exact.find("graph.gelu %arg0 {approximate = \"none\"} : tensor<2x3xf32>"),
      std::string::npos)
      << exact;
  std::string tanh = importToText(geluModel(20, "tanh"));
  EXPECT_NE(
      tanh.find("graph.gelu %arg0 {approximate = \"tanh\"} : tensor<2x3xf32>"),
      std::string::npos)
      << tanh;
}

TEST(ElementwiseImport, GeluOnAConstantFolds) {
  // Folded in double, then rounded to f32 (torch float64: gelu(1) =
  // 0.841344746, gelu(-2) = -0.0455002639; tanh form 0.841191991,
  // -0.0454023059).
  std::string exact = importToText(geluModel(20, "none", true));
  EXPECT_EQ(exact.find("graph.gelu"), std::string::npos) << exact;
  EXPECT_NE(exact.find("dense<[0.841344773, -0.0455002636]>"),
            std::string::npos)
      << exact;
  std::string tanh = importToText(geluModel(20, "tanh", true));
  EXPECT_NE(tanh.find("dense<[8.411920e-01, -0.0454023071]>"),
            std::string::npos)
      << tanh;
}

TEST(ElementwiseImport, GeluRejectsOldOpsetsAndUnknownApproximations) {
  try {
    importToText(geluModel(17, nullptr));
    ADD_FAILURE() << "Gelu at opset 17 imported";
  } catch (const ImportError &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "Gelu is an opset-20 op but the model imports opset 17"),
              std::string::npos)
        << e.what();
  }
  try {
    importToText(geluModel(20, "erf"));
    ADD_FAILURE() << "approximate=erf imported";
  } catch (const ImportError &e) {
    EXPECT_NE(std::string(e.what()).find("'approximate' must be"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
