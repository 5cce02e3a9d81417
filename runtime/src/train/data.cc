//===- data.cc - Training data and micro-batch assembly ---------*- C++ -*-===//
//
// DIR/<input>.npy holds S samples of every input, shape (S, d1, ...) where
// the model input is (MB, d1, ...), same dtype. Global micro-batch m of
// optimizer step s covers samples (s*G + m*MB + j) mod S, j in [0, MB), with
// G = MB*GAS*W (tools/reference/README.md, "Data contract"). Every rank loads
// the same files and checks them the same way, so data errors are reported
// identically by all ranks.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"

#include <algorithm>
#include <cstring>

namespace zeroc_rt::train {

zeroc_rt_status_t Dataset::load(const zeroc_rt_program_t &prog,
                                const std::string &dir, Device &dev) {
  device = &dev;
  program = &prog;
  globalBatch = static_cast<int64_t>(prog.micro_batch) * prog.grad_accum *
                prog.world_size;
  std::string names;
  for (int32_t i = 0; i < prog.num_inputs; ++i)
    names += std::string(i ? ", " : "") + prog.inputs[i].name;

  std::string firstPath;
  for (int32_t i = 0; i < prog.num_inputs; ++i) {
    const zeroc_rt_input_desc_t &d = prog.inputs[i];
    std::string path = dir + (dir.back() == '/' ? "" : "/") + d.name + ".npy";
    zeroc_rt_npy_t *raw = nullptr;
    zeroc_rt_status_t status = zeroc_rt_npy_load(path.c_str(), &raw);
    if (status)
      return ZEROC_RT_TRAIN_WRAP(
          status, format("data: input '%s': ", d.name),
          format("; --data needs one <input>.npy per model input (%s), "
                 "shaped (S, ...) like the input with S samples",
                 names.c_str()));
    arrays.emplace_back(raw);
    zeroc_rt_dtype_t dtype = zeroc_rt_npy_dtype(raw);
    int32_t rank = zeroc_rt_npy_rank(raw);
    const int64_t *dims = zeroc_rt_npy_dims(raw);
    std::string have = shapeString(rank, dims);
    std::string want = shapeString(d.rank, d.dims, /*sampleDim=*/true);
    if (dtype != d.dtype)
      return ZEROC_RT_ERROR(
          ZEROC_RT_SHAPE_MISMATCH,
          "data: '%s' holds %s values but the model input '%s' is %s; save "
          "it as %s (e.g. numpy's .astype)",
          path.c_str(), zeroc_rt_dtype_name(dtype), d.name,
          zeroc_rt_dtype_name(d.dtype), zeroc_rt_dtype_name(d.dtype));
    bool shapeOk = rank == d.rank;
    for (int32_t k = 1; shapeOk && k < rank; ++k)
      shapeOk = dims[k] == d.dims[k];
    if (!shapeOk)
      return ZEROC_RT_ERROR(
          ZEROC_RT_SHAPE_MISMATCH,
          "data: '%s' has shape %s but the model input '%s' has shape %s, so "
          "the file needs shape %s: S samples of %s",
          path.c_str(), have.c_str(), d.name,
          shapeString(d.rank, d.dims).c_str(), want.c_str(),
          shapeString(d.rank - 1, d.dims + 1).c_str());
    if (dims[0] < 1)
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "data: '%s' has shape %s: no samples; it needs "
                            "shape %s with S >= 1",
                            path.c_str(), have.c_str(), want.c_str());
    if (i == 0) {
      numSamples = dims[0];
      firstPath = path;
    } else if (dims[0] != numSamples) {
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "data: '%s' has %lld samples but '%s' has %lld; "
                            "every input file needs the same number of "
                            "samples (dim 0)",
                            path.c_str(), static_cast<long long>(dims[0]),
                            firstPath.c_str(),
                            static_cast<long long>(numSamples));
    }
    size_t bytes = zeroc_rt_npy_nbytes(raw) / static_cast<size_t>(dims[0]);
    sampleBytes.push_back(bytes);
    batches.emplace_back();
    ZEROC_RT_RETURN_IF_ERROR(batches.back().allocate(
        bytes * static_cast<size_t>(prog.micro_batch), "a micro-batch buffer"));
  }
  for (AlignedBuffer &b : batches) {
    if (device->hostMemory()) {
      pointers.push_back(b.data());
      continue;
    }
    deviceBatches.emplace_back();
    ZEROC_RT_RETURN_IF_ERROR(deviceBatches.back().allocate(
        *device, b.size(), "a micro-batch buffer"));
    pointers.push_back(deviceBatches.back().data());
  }
  if (pointers.empty())
    pointers.push_back(nullptr); // inputs() stays a valid pointer
  return nullptr;
}

void Dataset::setOrigin(int64_t samplesConsumed) {
  origin = numSamples > 0 ? samplesConsumed % numSamples : 0;
}

int64_t Dataset::firstSample(int64_t step, int64_t microBatch) const {
  if (numSamples <= 0)
    return 0;
  using u128 = unsigned __int128;
  u128 s = static_cast<u128>(numSamples);
  u128 base = (static_cast<u128>(step) % s) *
                  (static_cast<u128>(globalBatch) % s) % s +
              static_cast<u128>(origin);
  u128 offset = static_cast<u128>(microBatch) *
                static_cast<u128>(program->micro_batch) % s;
  return static_cast<int64_t>((base + offset) % s);
}

zeroc_rt_status_t Dataset::fillMicroBatch(int64_t first) {
  const int64_t mb = program->micro_batch;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const char *src = static_cast<const char *>(zeroc_rt_npy_data(arrays[i].get()));
    char *dst = batches[i].bytes();
    const size_t sb = sampleBytes[i];
    // Consecutive samples, wrapping around at S: at most a few runs.
    int64_t j = 0, index = first;
    while (j < mb) {
      int64_t run = std::min<int64_t>(mb - j, numSamples - index);
      std::memcpy(dst + static_cast<size_t>(j) * sb,
                  src + static_cast<size_t>(index) * sb,
                  static_cast<size_t>(run) * sb);
      j += run;
      index = (index + run) % numSamples;
    }
    if (!device->hostMemory())
      ZEROC_RT_RETURN_IF_ERROR(
          device->upload(deviceBatches[i].data(), dst, batches[i].size()));
  }
  return nullptr;
}

} // namespace zeroc_rt::train
