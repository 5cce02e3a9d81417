//===- PrintComputeCost.cpp - What each kind of op costs, as a table ------===//
//
// docs/CudaTarget.md, "What the step moves": the compute cost model's FLOPs
// and bytes (ComputeCostModel) summed per op name for each function, and
// the roofline time at a peak rate and bandwidth, printed to stdout (with
// by-node, per op name and ONNX node, as the trainer's trace names ops).
// The numbers the fusion passes' notes call "computed" come from here.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Passes/ComputeCostModel.h"
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>

namespace zeroc {
#define GEN_PASS_DEF_PRINTCOMPUTECOST
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;

namespace {

struct Cost {
  int64_t count = 0;
  double flops = 0, bytes = 0, us = 0;
  void add(const Cost &c) {
    count += c.count;
    flops += c.flops;
    bytes += c.bytes;
    us += c.us;
  }
};

void printRow(llvm::raw_ostream &os, StringRef name, const Cost &c) {
  os << llvm::formatv("//   {0,-40} {1,6} {2,12:F1} {3,10:F3} {4,10:F1}\n", name, c.count,
                      c.flops / 1e9, c.bytes / 1e9, c.us);
}

struct PrintComputeCostPass : zeroc::impl::PrintComputeCostBase<PrintComputeCostPass> {
  using PrintComputeCostBase::PrintComputeCostBase;

  void runOnOperation() override {
    const zeroc::ComputeCostModel model{gflops, memoryGBPerS,
                                        zeroc::TrainingStateCost::of(getOperation())};
    llvm::raw_ostream &os = llvm::outs();
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      llvm::MapVector<std::string, Cost, std::map<std::string, unsigned>> byName;
      fn.walk([&](Operation *op) {
        if (op == fn || op->hasTrait<OpTrait::IsTerminator>() || zeroc::graph::isInFusedBody(op))
          return;
        // By node: the name the trainer's trace gives the op (ProgramPrinter).
        std::string key = op->getName().getStringRef().str();
        if (std::string node = zeroc::graph::onnxNameOf(op->getLoc()); byNode && !node.empty())
          key += " " + node;
        Cost &c = byName[key];
        c.count += 1;
        c.flops += zeroc::ComputeCostModel::flops(op);
        c.bytes += model.bytes(op);
        c.us += model.opUs(op);
      });
      SmallVector<std::pair<std::string, Cost>> rows(byName.begin(), byName.end());
      llvm::stable_sort(rows,
                        [](const auto &a, const auto &b) { return a.second.us > b.second.us; });
      os << llvm::formatv("// @{0}: each op's FLOPs and bytes (operands and results), its time "
                          "at {1} GFLOP/s or {2} GB/s, whichever is longer\n",
                          fn.getSymName(), llvm::formatv("{0:F0}", gflops.getValue()),
                          llvm::formatv("{0:F0}", memoryGBPerS.getValue()));
      os << llvm::formatv("//   {0,-40} {1,6} {2,12} {3,10} {4,10}\n", "op", "count", "GFLOP", "GB",
                          "us");
      Cost total;
      for (const auto &[name, cost] : rows) {
        if (cost.flops == 0 && cost.bytes == 0)
          continue;
        printRow(os, name, cost);
        total.add(cost);
      }
      printRow(os, "total", total);
    }
  }
};

} // namespace
