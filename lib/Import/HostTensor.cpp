//===- HostTensor.cpp - small host tensors for import-time folding --------===//
#include "HostTensor.h"

#include "llvm/ADT/APFloat.h"
#include "mlir/IR/BuiltinTypes.h"
#include "onnx/onnx_pb.h"

#include <cmath>

using namespace mlir;

namespace zeroc::onnximport {

int64_t checkedNumElements(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0)
      throw ImportError("negative dimension " + std::to_string(d));
    if (d != 0 && n > kMaxTensorElements / d)
      throw ImportError("tensor has more than " +
                        std::to_string(kMaxTensorElements) + " elements");
    n *= d;
  }
  return n;
}

bool isFloatDType(int32_t dtype) {
  using TP = onnx::TensorProto;
  return dtype == TP::FLOAT || dtype == TP::DOUBLE || dtype == TP::FLOAT16 ||
         dtype == TP::BFLOAT16;
}

bool HostTensor::isFloat() const { return isFloatDType(dtype); }

int64_t HostTensor::numElements() const {
  return isFloat() ? static_cast<int64_t>(floats.size())
                   : static_cast<int64_t>(ints.size());
}

double HostTensor::getAsDouble(int64_t i) const {
  return isFloat() ? floats[i] : static_cast<double>(ints[i]);
}

int64_t HostTensor::getAsInt(int64_t i) const {
  if (!isFloat())
    return ints[i];
  double v = floats[i];
  if (!std::isfinite(v) || std::fabs(v) > 9.2e18)
    return 0;
  return static_cast<int64_t>(v);
}

void HostTensor::resize(int64_t n) {
  if (isFloat())
    floats.assign(n, 0.0);
  else
    ints.assign(n, 0);
}

void HostTensor::set(int64_t i, double v) {
  if (isFloat()) {
    floats[i] = v;
    return;
  }
  if (dtype == onnx::TensorProto::BOOL) {
    ints[i] = v != 0.0;
    return;
  }
  ints[i] = narrowInt((!std::isfinite(v) || std::fabs(v) > 9.2e18)
                           ? 0
                           : static_cast<int64_t>(v),
                       dtype);
}

int64_t narrowInt(int64_t v, int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::INT32: return static_cast<int32_t>(static_cast<uint32_t>(v));
  case onnx::TensorProto::INT8: return static_cast<int8_t>(static_cast<uint8_t>(v));
  case onnx::TensorProto::BOOL: return v != 0;
  default: return v;
  }
}

DenseElementsAttr HostTensor::toAttr(RankedTensorType type) const {
  Type elem = type.getElementType();
  if (auto ft = llvm::dyn_cast<FloatType>(elem)) {
    SmallVector<APFloat> values;
    values.reserve(floats.size());
    for (double v : floats) {
      APFloat f(v);
      bool lost = false;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  auto it = llvm::cast<IntegerType>(elem);
  if (it.getWidth() == 1) {
    SmallVector<bool> values(ints.begin(), ints.end());
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  SmallVector<APInt> values;
  values.reserve(ints.size());
  for (int64_t v : ints)
    values.push_back(APInt(it.getWidth(), v, /*isSigned=*/true));
  return DenseElementsAttr::get(type, values);
}

} // namespace zeroc::onnximport
