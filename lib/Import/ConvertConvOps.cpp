//===- ConvertConvOps.cpp - Conv, pooling and BatchNormalization -----------===//
//
// The window attributes are normalized here, once: defaults filled in
// (strides and dilations 1, pads 0), auto_pad resolved to explicit pads
// with ONNX's rule, each list checked against the input's spatial rank.
// Result shapes and the remaining checks come from the ops' own type
// inference (dialects/Graph/GraphConvOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "NodeConverter.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

using namespace mlir;

namespace zeroc::onnximport {

namespace {

struct WindowAttrs {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

std::vector<int64_t> listAttr(NodeConverter &c, const char *name, size_t n,
                              int64_t dflt) {
  std::optional<std::vector<int64_t>> v = c.attrInts(name);
  if (!v)
    return std::vector<int64_t>(n, dflt);
  if (v->size() != n)
    throw ImportError(std::string("attribute '") + name + "' has " +
                      std::to_string(v->size()) + " entries, expected " +
                      std::to_string(n) + " for the input's spatial dims");
  return *v;
}

/// Reads strides, dilations and pads (or auto_pad) for `kernel`.
WindowAttrs readWindow(NodeConverter &c, std::vector<int64_t> kernel) {
  RankedTensorType x = c.type(0);
  if (x.getRank() < 3 || x.getRank() > 5)
    throw ImportError("input must have rank 3 to 5 (N, C and 1 to 3 spatial "
                      "dims), got " + std::to_string(x.getRank()));
  size_t n = x.getRank() - 2;
  if (kernel.size() != n)
    throw ImportError("kernel_shape has " + std::to_string(kernel.size()) +
                      " entries, expected " + std::to_string(n));
  WindowAttrs w;
  w.kernel = kernel;
  w.strides = listAttr(c, "strides", n, 1);
  w.dilations = listAttr(c, "dilations", n, 1);
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    w.pads = listAttr(c, "pads", 2 * n, 0);
    return w;
  }
  if (c.attr("pads"))
    throw ImportError("attributes 'pads' and 'auto_pad' cannot both be set");
  w.pads.assign(2 * n, 0);
  if (autoPad == "VALID")
    return w;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    throw ImportError("auto_pad '" + autoPad +
                      "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x.getDimSize(2 + i), s = w.strides[i], d = w.dilations[i];
    if (s < 1 || d < 1 || w.kernel[i] < 1 || s > (int64_t(1) << 32) ||
        d > (int64_t(1) << 32) || w.kernel[i] > (int64_t(1) << 32))
      throw ImportError("auto_pad needs kernel, stride and dilation in [1, 2^32]");
    // Output ceil(in / s); the total padding makes the last window fit.
    int64_t out = (in + s - 1) / s;
    int64_t ek = (w.kernel[i] - 1) * d + 1;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
    int64_t small = total / 2, big = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : big;
    w.pads[i + n] = autoPad == "SAME_UPPER" ? big : small;
  }
  return w;
}

SmallVector<NamedAttribute> windowNamedAttrs(NodeConverter &c,
                                             const WindowAttrs &w, bool pool) {
  SmallVector<NamedAttribute> a{c.named("strides", c.i64Array(w.strides)),
                                c.named("pads", c.i64Array(w.pads)),
                                c.named("dilations", c.i64Array(w.dilations))};
  if (pool)
    a.push_back(c.named("kernel_shape", c.i64Array(w.kernel)));
  return a;
}

void convertConv(NodeConverter &c) {
  RankedTensorType wt = c.type(1);
  if (wt.getRank() != c.type(0).getRank())
    throw ImportError("weight rank " + std::to_string(wt.getRank()) +
                      " must equal the input rank " +
                      std::to_string(c.type(0).getRank()));
  std::vector<int64_t> kernel(wt.getShape().begin() + 2, wt.getShape().end());
  if (auto ks = c.attrInts("kernel_shape"); ks && *ks != kernel)
    throw ImportError("attribute 'kernel_shape' does not match the weight's "
                      "spatial dims");
  WindowAttrs w = readWindow(c, kernel);
  SmallVector<Value> operands{c.value(0), c.value(1)};
  if (c.hasInput(2))
    operands.push_back(c.value(2));
  SmallVector<NamedAttribute> attrs = windowNamedAttrs(c, w, false);
  attrs.push_back(
      c.named("group", c.gb.builder().getI64IntegerAttr(c.attrInt("group", 1))));
  c.setOutput(0, c.create(graph::ConvOp::getOperationName(), operands, attrs)
                     ->getResult(0));
}

void convertPool(NodeConverter &c, bool isMax) {
  std::optional<std::vector<int64_t>> kernel = c.attrInts("kernel_shape");
  if (!kernel)
    throw ImportError("attribute 'kernel_shape' is required");
  WindowAttrs w = readWindow(c, *kernel);
  OpBuilder &b = c.gb.builder();
  SmallVector<NamedAttribute> attrs = windowNamedAttrs(c, w, true);
  attrs.push_back(c.named("ceil_mode", b.getBoolAttr(c.attrInt("ceil_mode", 0) != 0)));
  StringRef opName;
  if (isMax) {
    c.unmodeledOutputs(1, "MaxPool's Indices output");
    opName = graph::MaxPoolOp::getOperationName();
  } else {
    attrs.push_back(c.named("count_include_pad",
                            b.getBoolAttr(c.attrInt("count_include_pad", 0) != 0)));
    opName = graph::AvgPoolOp::getOperationName();
  }
  c.setOutput(0, c.create(opName, {c.value(0)}, attrs)->getResult(0));
}

/// GlobalAveragePool / GlobalMaxPool: a reduction over the spatial dims.
void convertGlobalPool(NodeConverter &c, StringRef reduceOp) {
  int64_t rank = c.type(0).getRank();
  if (rank < 3)
    throw ImportError("input must have rank >= 3 (N, C and spatial dims)");
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  c.setOutput(0, c.create(reduceOp, {c.value(0)},
                          {c.named("axes", c.i64Array(axes)),
                           c.named("keepdims", c.gb.builder().getBoolAttr(true))})
                     ->getResult(0));
}

/// BatchNormalization's input `i` is one value per channel (C), of X's type.
void checkPerChannel(NodeConverter &c, int i) {
  RankedTensorType x = c.type(0), t = c.type(i);
  if (t.getRank() != 1 || t.getDimSize(0) != x.getDimSize(1) ||
      t.getElementType() != x.getElementType())
    throw ImportError("input #" + std::to_string(i) + " must have shape (" +
                      std::to_string(x.getDimSize(1)) +
                      "), the channels, and the input's element type");
}

/// Inference-mode batch norm: (x - mean) * (scale / sqrt(var + eps)) + bias,
/// per channel, as broadcasting graph ops.
Value inferenceBatchNorm(NodeConverter &c, double epsilon) {
  OpBuilder &b = c.gb.builder();
  RankedTensorType x = c.type(0);
  for (int i = 1; i < 5; ++i)
    checkPerChannel(c, i);
  SmallVector<int64_t> shape(x.getRank() - 1, 1);
  shape[0] = x.getDimSize(1);
  auto perChannel = RankedTensorType::get(shape, x.getElementType());
  auto reshaped = [&](int i) {
    return c.create(graph::ReshapeOp::getOperationName(), {c.value(i)}, {},
                    {perChannel})
        ->getResult(0);
  };
  auto binary = [&](StringRef op, Value l, Value r) {
    return c.create(op, {l, r}, {})->getResult(0);
  };
  auto epsType = RankedTensorType::get({}, x.getElementType());
  Value eps = b.create<graph::ConstantOp>(
      c.loc, DenseElementsAttr::get(epsType, b.getFloatAttr(x.getElementType(), epsilon)));
  Value var = binary(graph::AddOp::getOperationName(), reshaped(4), eps);
  Value stddev = c.create(graph::SqrtOp::getOperationName(), {var}, {}, {perChannel})
                     ->getResult(0);
  Value a = binary(graph::DivOp::getOperationName(), reshaped(1), stddev);
  Value centered = binary(graph::SubOp::getOperationName(), c.value(0), reshaped(3));
  return binary(graph::AddOp::getOperationName(),
                binary(graph::MulOp::getOperationName(), centered, a), reshaped(2));
}

/// Training mode's running statistics (outputs 1 and 2): ONNX's
///   running = input_stat * momentum + batch_stat * (1 - momentum)
/// with the batch mean and variance over every axis but the channels. The
/// ONNX operator uses the biased batch variance; PyTorch's BatchNorm (which
/// torch.onnx exports as this node) updates running_var with the unbiased
/// one, n / (n - 1) times larger, so a model that PyTorch wrote gets
/// PyTorch's. A statistic read from a buffer is that buffer's update.
void runningStatistics(NodeConverter &c, double momentum) {
  RankedTensorType x = c.type(0);
  int64_t channels = x.getDimSize(1), n = x.getNumElements() / channels;
  for (int i : {3, 4})
    checkPerChannel(c, i);
  bool unbiased = c.gb.producerName() == "pytorch";
  if (unbiased && n < 2)
    throw ImportError("normalizes " + std::to_string(n) +
                      " value per channel in training mode: PyTorch's "
                      "BatchNorm refuses that (its running variance would "
                      "divide by zero); train with a micro batch of 2 or more");
  OpBuilder &b = c.gb.builder();
  Type elem = x.getElementType();
  SmallVector<int64_t> axes{0};
  SmallVector<int64_t> kept(x.getRank(), 1);
  kept[1] = channels;
  for (int64_t i = 2; i < x.getRank(); ++i)
    axes.push_back(i);
  auto perChannel = RankedTensorType::get({channels}, elem);
  auto scalar = [&](double v) -> Value {
    return b.create<graph::ConstantOp>(
        c.loc, DenseElementsAttr::get(RankedTensorType::get({}, elem),
                                      b.getFloatAttr(elem, v)));
  };
  auto binary = [&](StringRef op, Value l, Value r) {
    return c.create(op, {l, r}, {})->getResult(0);
  };
  auto mean = [&](Value v, bool keep) {
    return c.create(graph::ReduceMeanOp::getOperationName(), {v},
                    {c.named("axes", c.i64Array(axes)),
                     c.named("keepdims", b.getBoolAttr(keep))},
                    {keep ? RankedTensorType::get(kept, elem) : perChannel})
        ->getResult(0);
  };
  Value batchMean = mean(c.value(0), true);
  Value centered = binary(graph::SubOp::getOperationName(), c.value(0), batchMean);
  Value batchVar = mean(binary(graph::MulOp::getOperationName(), centered, centered),
                        false);
  if (unbiased)
    batchVar = binary(graph::MulOp::getOperationName(), batchVar,
                      scalar(static_cast<double>(n) / static_cast<double>(n - 1)));
  Value batchStat[2] = {
      c.create(graph::ReshapeOp::getOperationName(), {batchMean}, {}, {perChannel})
          ->getResult(0),
      batchVar};
  for (int out : {1, 2}) {
    if (c.node.output_size() <= out || c.node.output(out).empty())
      continue;
    // One statement per op: the IR's order does not depend on the C++
    // compiler's argument evaluation order.
    Value kept = binary(graph::MulOp::getOperationName(), c.value(out + 2),
                        scalar(momentum));
    Value added = binary(graph::MulOp::getOperationName(), batchStat[out - 1],
                         scalar(1.0 - momentum));
    Value updated = binary(graph::AddOp::getOperationName(), kept, added);
    c.setOutput(out, updated);
    const std::string &stat = c.node.input(out + 2);
    if (c.gb.isBuffer(stat))
      c.gb.setBufferUpdate(stat, updated, c.node.name());
  }
}

void convertBatchNorm(NodeConverter &c) {
  bool training;
  if (c.gb.opsetVersion() >= 14)
    training = c.attrInt("training_mode", 0) != 0;
  else // opset 9-13: training mode exactly when the statistics are outputs
    training = c.node.output_size() > 1;
  double epsilon = shortestDouble(c.attrFloat("epsilon", 1e-5f));
  double momentum = shortestDouble(c.attrFloat("momentum", 0.9f));
  if (!training) {
    // Running statistics that would train as parameters: the graph is an
    // eval-mode export of a module that trains with batch statistics.
    // (PyTorch names them "<module>.running_mean" / ".running_var".)
    for (int i : {3, 4})
      if (c.gb.isTrainableParam(c.node.input(i)) &&
          llvm::StringRef(c.node.input(i)).ends_with(i == 3 ? "running_mean"
                                                            : "running_var"))
        throw ImportError(
            "normalizes with running statistics (inference mode), and its "
            "input '" + c.node.input(i) + "' would be trained as a parameter: "
            "the model was exported in eval mode; export it in training mode "
            "(python3 -m zeroc_torch.export, or torch.onnx.export(..., "
            "training=torch.onnx.TrainingMode.TRAINING)), or keep the "
            "statistics constant with --freeze");
    c.unmodeledOutputs(1, "BatchNormalization's running statistics outputs "
                          "in inference mode, which ONNX leaves undefined");
    c.setOutput(0, inferenceBatchNorm(c, epsilon));
    return;
  }
  OpBuilder &b = c.gb.builder();
  // input_mean and input_var only feed the running statistics.
  c.setOutput(0, c.create(graph::BatchNormOp::getOperationName(),
                          {c.value(0), c.value(1), c.value(2)},
                          {c.named("epsilon", b.getF64FloatAttr(epsilon))},
                          {c.type(0)})
                     ->getResult(0));
  // Opset 9-13's saved mean and inverse deviation (outputs 3 and 4).
  c.unmodeledOutputs(3, "BatchNormalization's saved mean and variance "
                        "outputs (opset 9-13): zeroc does not compute them");
  runningStatistics(c, momentum);
}

} // namespace

bool convertConvOp(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op == "Conv") convertConv(c);
  else if (op == "MaxPool") convertPool(c, true);
  else if (op == "AveragePool") convertPool(c, false);
  else if (op == "GlobalAveragePool") convertGlobalPool(c, graph::ReduceMeanOp::getOperationName());
  else if (op == "GlobalMaxPool") convertGlobalPool(c, graph::ReduceMaxOp::getOperationName());
  else if (op == "BatchNormalization") convertBatchNorm(c);
  else return false;
  return true;
}

} // namespace zeroc::onnximport
