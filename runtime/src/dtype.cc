//===- dtype.cc - Element type properties -----------------------*- C++ -*-===//

#include "zeroc_rt/dtype.h"

extern "C" {

size_t zeroc_rt_dtype_size(zeroc_rt_dtype_t dtype) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F64:
  case ZEROC_RT_DTYPE_I64:
    return 8;
  case ZEROC_RT_DTYPE_F32:
  case ZEROC_RT_DTYPE_I32:
    return 4;
  case ZEROC_RT_DTYPE_F16:
  case ZEROC_RT_DTYPE_BF16:
    return 2;
  case ZEROC_RT_DTYPE_U8:
  case ZEROC_RT_DTYPE_BOOL:
    return 1;
  }
  return 0;
}

const char *zeroc_rt_dtype_name(zeroc_rt_dtype_t dtype) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32:
    return "f32";
  case ZEROC_RT_DTYPE_F64:
    return "f64";
  case ZEROC_RT_DTYPE_F16:
    return "f16";
  case ZEROC_RT_DTYPE_BF16:
    return "bf16";
  case ZEROC_RT_DTYPE_I64:
    return "i64";
  case ZEROC_RT_DTYPE_I32:
    return "i32";
  case ZEROC_RT_DTYPE_U8:
    return "u8";
  case ZEROC_RT_DTYPE_BOOL:
    return "bool";
  }
  return "invalid";
}

} // extern "C"
