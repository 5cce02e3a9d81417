//===- comm_self.cc - Single-process communicator ---------------*- C++ -*-===//
//
// World of size 1: every collective degenerates to a copy (or nothing when
// in place). Used by unit tests and world-size-1 runs without MPI.
//
//===----------------------------------------------------------------------===//

#include "comm_internal.h"
#include "status_internal.h"

#include <cstring>
#include <new>

namespace zeroc_rt {
namespace {

void copyUnlessSame(const void *src, void *dst, size_t count,
                    zeroc_rt_dtype_t dtype) {
  if (src != dst)
    std::memcpy(dst, src, count * zeroc_rt_dtype_size(dtype));
}

class SelfComm final : public zeroc_rt_comm {
public:
  SelfComm() : zeroc_rt_comm(/*rank=*/0, /*size=*/1) {}

  const char *backendName() const override { return "self"; }
  zeroc_rt_status_t barrier() override { return nullptr; }
  zeroc_rt_status_t allReduce(const void *send, void *recv, size_t count,
                              zeroc_rt_dtype_t dtype,
                              zeroc_rt_reduce_op_t) override {
    copyUnlessSame(send, recv, count, dtype);
    return nullptr;
  }
  zeroc_rt_status_t allGather(const void *send, void *recv, size_t countPerRank,
                              zeroc_rt_dtype_t dtype) override {
    copyUnlessSame(send, recv, countPerRank, dtype);
    return nullptr;
  }
  zeroc_rt_status_t reduceScatter(const void *send, void *recv,
                                  size_t countPerRank, zeroc_rt_dtype_t dtype,
                                  zeroc_rt_reduce_op_t) override {
    copyUnlessSame(send, recv, countPerRank, dtype);
    return nullptr;
  }
  zeroc_rt_status_t broadcast(void *, size_t, zeroc_rt_dtype_t, int) override {
    return nullptr;
  }
  zeroc_rt_status_t finalize() override { return nullptr; }
};

} // namespace
} // namespace zeroc_rt

extern "C" zeroc_rt_status_t zeroc_rt_comm_init_self(zeroc_rt_comm_t **out) {
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "comm_init_self: output pointer is NULL");
  *out = new (std::nothrow) zeroc_rt::SelfComm();
  if (!*out)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "comm_init_self: cannot allocate the communicator");
  return nullptr;
}
