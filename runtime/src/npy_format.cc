//===- npy_format.cc - .npy dtype mapping, sizes and formatting -*- C++ -*-===//

#include "npy_format.h"
#include "status_internal.h"

#include <limits>
#include <string>

namespace zeroc_rt {

const char *npyDescrOf(zeroc_rt_dtype_t dtype) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32:
    return "<f4";
  case ZEROC_RT_DTYPE_F64:
    return "<f8";
  case ZEROC_RT_DTYPE_F16:
    return "<f2";
  case ZEROC_RT_DTYPE_I64:
    return "<i8";
  case ZEROC_RT_DTYPE_I32:
    return "<i4";
  case ZEROC_RT_DTYPE_U8:
    return "|u1";
  case ZEROC_RT_DTYPE_BOOL:
    return "|b1";
  case ZEROC_RT_DTYPE_BF16:
    return nullptr;
  }
  return nullptr;
}

std::string formatNpyHeaderDict(zeroc_rt_dtype_t dtype, int32_t rank,
                                const int64_t *dims) {
  std::string text = "{'descr': '";
  text += npyDescrOf(dtype);
  text += "', 'fortran_order': False, 'shape': (";
  for (int32_t i = 0; i < rank; ++i) {
    if (i > 0)
      text += ", ";
    text += std::to_string(dims[i]);
  }
  if (rank == 1)
    text += ",";
  text += "), }";
  return text;
}

zeroc_rt_status_t computeNpyByteSize(zeroc_rt_dtype_t dtype, int32_t rank,
                                     const int64_t *dims, const char *path,
                                     zeroc_rt_status_code_t overflowCode,
                                     size_t &nbytes) {
  constexpr uint64_t kLimit =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t elementSize = zeroc_rt_dtype_size(dtype);
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "'%s': negative dimension %lld at index %d", path,
                            static_cast<long long>(dims[i]), i);
    if (dims[i] == 0) {
      nbytes = 0;
      return nullptr;
    }
  }
  uint64_t total = elementSize;
  for (int32_t i = 0; i < rank; ++i) {
    uint64_t dim = static_cast<uint64_t>(dims[i]);
    if (total > kLimit / dim)
      return ZEROC_RT_ERROR(overflowCode,
                            "'%s': size overflow: %s does not fit in int64 "
                            "bytes",
                            path, formatTypedShape(dtype, rank, dims).c_str());
    total *= dim;
  }
  if (total > std::numeric_limits<size_t>::max())
    return ZEROC_RT_ERROR(overflowCode,
                          "'%s': size overflow: %s does not fit in size_t",
                          path, formatTypedShape(dtype, rank, dims).c_str());
  nbytes = static_cast<size_t>(total);
  return nullptr;
}

std::string formatTypedShape(zeroc_rt_dtype_t dtype, int32_t rank,
                             const int64_t *dims) {
  std::string text = zeroc_rt_dtype_name(dtype);
  text += "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i > 0)
      text += ",";
    text += std::to_string(dims[i]);
  }
  text += "]";
  return text;
}

} // namespace zeroc_rt
