//===- allocation_meter.h - A device's allocations at their peak -*- C++ -*-===//
//
// The bytes a device's allocations hold now and at most so far: what
// torch.cuda.max_memory_allocated reports, not what the process holds (no
// CUDA context, nothing NCCL or cuBLASLt allocate themselves). The JSONL
// log's max_allocated_bytes, comparable with plan.json's allocated_bytes.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_ALLOCATION_METER_H
#define ZEROC_RT_SRC_TRAIN_ALLOCATION_METER_H

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <unordered_map>

namespace zeroc_rt::train {

class AllocationMeter {
public:
  void allocated(const void *p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    sizes[p] = bytes;
    current += bytes;
    max = std::max(max, current);
  }
  void released(const void *p) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = sizes.find(p);
    if (it == sizes.end())
      return;
    current -= it->second;
    sizes.erase(it);
  }
  size_t peak() const {
    std::lock_guard<std::mutex> lock(mutex);
    return max;
  }

private:
  mutable std::mutex mutex;
  std::unordered_map<const void *, size_t> sizes;
  size_t current = 0, max = 0;
};

} // namespace zeroc_rt::train

#endif // ZEROC_RT_SRC_TRAIN_ALLOCATION_METER_H
