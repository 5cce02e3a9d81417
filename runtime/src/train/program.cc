//===- program.cc - Program validation and the parameter blob ---*- C++ -*-===//
//
// The program descriptor is written by zeroc; validating it up front turns a
// compiler bug into one clear error instead of a crash in the middle of
// training. The blob file holds the initial parameter values (and constants)
// and lives next to the executable.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"
#include "train/loss_scaler.h"
#include "train/lr_schedule.h"
#include "zeroc_rt/checksum.h"
#include "zeroc_rt/contract.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace zeroc_rt::train {
namespace {

#define INVALID_PROGRAM(...)                                                   \
  ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,                                    \
                 "invalid program (recompile it with this runtime): "          \
                 __VA_ARGS__)

bool finiteAtLeast(double v, double lo) { return std::isfinite(v) && v >= lo; }

zeroc_rt_status_t validateOptimizer(const zeroc_rt_optimizer_config_t &opt) {
  if (opt.type != ZEROC_RT_OPTIMIZER_ADAM && opt.type != ZEROC_RT_OPTIMIZER_SGD)
    return INVALID_PROGRAM("unknown optimizer type %d",
                           static_cast<int>(opt.type));
  if (!finiteAtLeast(opt.lr, 0.0))
    return INVALID_PROGRAM("optimizer lr %g must be finite and >= 0", opt.lr);
  if (!finiteAtLeast(opt.weight_decay, 0.0))
    return INVALID_PROGRAM("optimizer weight_decay %g must be finite and >= 0",
                           opt.weight_decay);
  if (opt.type == ZEROC_RT_OPTIMIZER_ADAM) {
    if (!finiteAtLeast(opt.beta1, 0.0) || opt.beta1 >= 1.0 ||
        !finiteAtLeast(opt.beta2, 0.0) || opt.beta2 >= 1.0)
      return INVALID_PROGRAM("Adam betas (%g, %g) must be in [0, 1)",
                             opt.beta1, opt.beta2);
    if (!finiteAtLeast(opt.eps, 0.0))
      return INVALID_PROGRAM("Adam eps %g must be finite and >= 0", opt.eps);
  } else if (!finiteAtLeast(opt.momentum, 0.0) ||
             !std::isfinite(opt.dampening)) {
    return INVALID_PROGRAM("SGD momentum %g must be finite and >= 0, "
                           "dampening %g finite",
                           opt.momentum, opt.dampening);
  } else if (opt.nesterov && (opt.momentum <= 0.0 || opt.dampening != 0.0)) {
    return INVALID_PROGRAM("SGD with Nesterov momentum needs momentum > 0 and "
                           "dampening 0, got %g and %g",
                           opt.momentum, opt.dampening);
  }
  return nullptr;
}

/// The shape, numel and blob range of a parameter or buffer (`kind`).
zeroc_rt_status_t validateStorage(const zeroc_rt_program_t &p, const char *kind,
                                  const char *name, zeroc_rt_dtype_t dtype,
                                  int32_t rank, const int64_t *dims,
                                  int64_t numel, int64_t blobOffset) {
  if (rank < 0 || rank > ZEROC_RT_MAX_RANK)
    return INVALID_PROGRAM("%s '%s' has rank %d", kind, name, rank);
  int64_t n = elementCount(rank, dims);
  // Headroom for P = ceil(n / W) * W bytes of f64 without overflow.
  if (n < 0 || n > (INT64_MAX / 16))
    return INVALID_PROGRAM("%s '%s' has shape %s", kind, name,
                           shapeString(rank, dims).c_str());
  if (n != numel)
    return INVALID_PROGRAM("%s '%s' of shape %s has numel %lld", kind, name,
                           shapeString(rank, dims).c_str(),
                           static_cast<long long>(numel));
  int64_t bytes = n * static_cast<int64_t>(zeroc_rt_dtype_size(dtype));
  if (blobOffset < 0 || blobOffset > p.blob_bytes ||
      bytes > p.blob_bytes - blobOffset)
    return INVALID_PROGRAM("%s '%s' (%lld bytes at offset %lld) lies outside "
                           "the %lld-byte blob",
                           kind, name, static_cast<long long>(bytes),
                           static_cast<long long>(blobOffset),
                           static_cast<long long>(p.blob_bytes));
  return nullptr;
}

/// `files` gets the file name each parameter saves to.
/// The planned layout (ABI 9): every rank's kept and updated ranges lie in
/// the padded buffer, the updated elements inside the kept ones, and the
/// accumulator holds at least the updated elements. The ranges are linear
/// in the rank, so ranks 0 and W-1 bound them.
zeroc_rt_status_t validateLayout(const zeroc_rt_program_t &p,
                                 const zeroc_rt_param_desc_t &d) {
  const int64_t w = p.world_size, padded = (d.numel + w - 1) / w * w;
  const int64_t last = w - 1;
  auto inside = [&](int64_t stride, int64_t count, int64_t limit) {
    return stride >= 0 && count >= 0 && count <= limit &&
           (last == 0 || stride <= (limit - count) / last);
  };
  bool ok = d.param_elements >= (d.numel > 0 ? 1 : 0) &&
            inside(d.param_stride, d.param_elements, padded);
  if (d.frozen)
    ok = ok && d.grad_elements == 0 && d.update_elements == 0 &&
         d.update_stride == 0;
  else
    ok = ok && d.update_elements >= (d.numel > 0 ? 1 : 0) &&
         inside(d.update_stride, d.update_elements, padded) &&
         d.update_stride >= d.param_stride &&
         last * (d.update_stride - d.param_stride) + d.update_elements <=
             d.param_elements &&
         d.update_elements <= d.param_elements &&
         d.grad_elements >= d.update_elements && d.grad_elements <= padded;
  if (!ok)
    return INVALID_PROGRAM("parameter '%s' (%lld elements, padded to %lld for "
                           "%d ranks) has an impossible state layout: param "
                           "%lld stride %lld, grad %lld, update %lld stride "
                           "%lld",
                           d.name, static_cast<long long>(d.numel),
                           static_cast<long long>(padded), p.world_size,
                           static_cast<long long>(d.param_elements),
                           static_cast<long long>(d.param_stride),
                           static_cast<long long>(d.grad_elements),
                           static_cast<long long>(d.update_elements),
                           static_cast<long long>(d.update_stride));
  return nullptr;
}

/// The accumulators in the gradient slab (ABI 14): each inside it at a
/// multiple of its element size, no two overlapping; a frozen parameter has
/// none (offset 0). The slab's size was checked >= 0.
zeroc_rt_status_t validateGradSlab(const zeroc_rt_program_t &p) {
  std::vector<std::pair<int64_t, int32_t>> starts; // (offset, parameter)
  auto bytesOf = [&](const zeroc_rt_param_desc_t &d) {
    return d.grad_elements * static_cast<int64_t>(zeroc_rt_dtype_size(d.grad_dtype));
  };
  for (int32_t i = 0; i < p.num_params; ++i) {
    const zeroc_rt_param_desc_t &d = p.params[i];
    const int64_t size = static_cast<int64_t>(zeroc_rt_dtype_size(d.grad_dtype));
    // grad_elements <= the padded numel, which the blob bounds: no overflow.
    const bool ok = d.frozen ? d.grad_offset == 0
                             : d.grad_offset >= 0 && d.grad_offset % size == 0 &&
                                   d.grad_offset <= p.grad_slab_bytes &&
                                   bytesOf(d) <= p.grad_slab_bytes - d.grad_offset;
    if (!ok)
      return INVALID_PROGRAM("parameter '%s' has its %lld-element gradient "
                             "accumulator at byte %lld of the gradient slab "
                             "of %lld bytes",
                             d.name, static_cast<long long>(d.grad_elements),
                             static_cast<long long>(d.grad_offset),
                             static_cast<long long>(p.grad_slab_bytes));
    if (!d.frozen && d.grad_elements > 0)
      starts.push_back({d.grad_offset, i});
  }
  std::sort(starts.begin(), starts.end());
  for (size_t k = 1; k < starts.size(); ++k) {
    const zeroc_rt_param_desc_t &a = p.params[starts[k - 1].second];
    const zeroc_rt_param_desc_t &b = p.params[starts[k].second];
    if (a.grad_offset + bytesOf(a) > b.grad_offset)
      return INVALID_PROGRAM("the gradient accumulators of parameters '%s' "
                             "and '%s' overlap in the gradient slab (bytes "
                             "%lld and %lld)",
                             a.name, b.name, static_cast<long long>(a.grad_offset),
                             static_cast<long long>(b.grad_offset));
  }
  return nullptr;
}

zeroc_rt_status_t validateParams(const zeroc_rt_program_t &p,
                                 std::set<std::string> &files) {
  if (p.num_params < 0 || (p.num_params > 0 && !p.params))
    return INVALID_PROGRAM("num_params %d with params %p", p.num_params,
                           static_cast<const void *>(p.params));
  std::set<std::string> names;
  for (int32_t i = 0; i < p.num_params; ++i) {
    const zeroc_rt_param_desc_t &d = p.params[i];
    if (!d.name || !*d.name)
      return INVALID_PROGRAM("parameter %d has no name", i);
    if (!names.insert(d.name).second)
      return INVALID_PROGRAM("two parameters are named '%s'", d.name);
    if (!files.insert(paramFileName(d.name)).second)
      return INVALID_PROGRAM("parameter '%s' saves to the same file name as "
                             "another parameter",
                             d.name);
    const bool half = zeroc_rt_dtype_is_half(d.dtype);
    if (d.frozen != 0 && d.frozen != 1)
      return INVALID_PROGRAM("parameter '%s' has frozen %d", d.name, d.frozen);
    if (d.frozen) {
      if (!zeroc_rt_param_master_ok(d.dtype, half ? ZEROC_RT_DTYPE_F32 : d.dtype) ||
          d.master_dtype != d.dtype || d.grad_dtype != d.dtype)
        return INVALID_PROGRAM("frozen parameter '%s' has dtype %s with "
                               "master dtype %s and gradient dtype %s; a "
                               "frozen parameter is a float tensor with "
                               "neither",
                               d.name, zeroc_rt_dtype_name(d.dtype),
                               zeroc_rt_dtype_name(d.master_dtype),
                               zeroc_rt_dtype_name(d.grad_dtype));
    } else if (!zeroc_rt_param_master_ok(d.dtype, d.master_dtype))
      return INVALID_PROGRAM("parameter '%s' has dtype %s with master dtype "
                             "%s; the engine trains f32 and f64 parameters, "
                             "and f16 and bf16 ones with an f32 master",
                             d.name, zeroc_rt_dtype_name(d.dtype),
                             zeroc_rt_dtype_name(d.master_dtype));
    if (d.grad_dtype != d.dtype && !(half && d.grad_dtype == ZEROC_RT_DTYPE_F32))
      return INVALID_PROGRAM("parameter '%s' has dtype %s with gradient dtype "
                             "%s; the gradients accumulate in the parameter's "
                             "dtype, or in f32 for f16 and bf16 parameters",
                             d.name, zeroc_rt_dtype_name(d.dtype),
                             zeroc_rt_dtype_name(d.grad_dtype));
    ZEROC_RT_RETURN_IF_ERROR(validateStorage(p, "parameter", d.name, d.dtype,
                                             d.rank, d.dims, d.numel,
                                             d.blob_offset));
    ZEROC_RT_RETURN_IF_ERROR(validateLayout(p, d));
  }
  return validateGradSlab(p);
}

/// Buffers: named apart from every parameter (they save into the same
/// folder: `files` holds the parameters' file names), float, inside the
/// blob.
zeroc_rt_status_t validateBuffers(const zeroc_rt_program_t &p,
                                  std::set<std::string> &files) {
  if (p.num_buffers < 0 || (p.num_buffers > 0 && !p.buffers))
    return INVALID_PROGRAM("num_buffers %d with buffers %p", p.num_buffers,
                           static_cast<const void *>(p.buffers));
  for (int32_t i = 0; i < p.num_buffers; ++i) {
    const zeroc_rt_buffer_desc_t &d = p.buffers[i];
    if (!d.name || !*d.name)
      return INVALID_PROGRAM("buffer %d has no name", i);
    if (!files.insert(paramFileName(d.name)).second)
      return INVALID_PROGRAM("buffer '%s' saves to the same file name as a "
                             "parameter or another buffer",
                             d.name);
    if (d.dtype != ZEROC_RT_DTYPE_F32 && d.dtype != ZEROC_RT_DTYPE_F64 &&
        d.dtype != ZEROC_RT_DTYPE_F16 && d.dtype != ZEROC_RT_DTYPE_BF16)
      return INVALID_PROGRAM("buffer '%s' has dtype %s; buffers are float "
                             "tensors",
                             d.name, zeroc_rt_dtype_name(d.dtype));
    ZEROC_RT_RETURN_IF_ERROR(validateStorage(p, "buffer", d.name, d.dtype,
                                             d.rank, d.dims, d.numel,
                                             d.blob_offset));
  }
  return nullptr;
}

zeroc_rt_status_t validateInputs(const zeroc_rt_program_t &p) {
  if (p.num_inputs < 0 || (p.num_inputs > 0 && !p.inputs))
    return INVALID_PROGRAM("num_inputs %d with inputs %p", p.num_inputs,
                           static_cast<const void *>(p.inputs));
  std::set<std::string> names;
  for (int32_t i = 0; i < p.num_inputs; ++i) {
    const zeroc_rt_input_desc_t &d = p.inputs[i];
    if (!d.name || !*d.name)
      return INVALID_PROGRAM("input %d has no name", i);
    if (!names.insert(d.name).second)
      return INVALID_PROGRAM("two inputs are named '%s'", d.name);
    if (zeroc_rt_dtype_size(d.dtype) == 0 || d.dtype == ZEROC_RT_DTYPE_BF16)
      return INVALID_PROGRAM("input '%s' has dtype %s, which .npy cannot hold",
                             d.name, zeroc_rt_dtype_name(d.dtype));
    if (d.rank < 1 || d.rank > ZEROC_RT_MAX_RANK)
      return INVALID_PROGRAM("input '%s' has rank %d; inputs need a batch dim",
                             d.name, d.rank);
    if (elementCount(d.rank, d.dims) < 0)
      return INVALID_PROGRAM("input '%s' has shape %s", d.name,
                             shapeString(d.rank, d.dims).c_str());
    if (d.dims[0] != p.micro_batch)
      return INVALID_PROGRAM("input '%s' has batch dim %lld but the micro "
                             "batch is %d",
                             d.name, static_cast<long long>(d.dims[0]),
                             p.micro_batch);
  }
  return nullptr;
}

} // namespace

zeroc_rt_status_t validateProgram(const zeroc_rt_program_t *program) {
  if (!program)
    return INVALID_PROGRAM("the program is NULL");
  const zeroc_rt_program_t &p = *program;
  if (p.abi_version != ZEROC_RT_PROGRAM_ABI_VERSION)
    return INVALID_PROGRAM("program ABI version %d, this runtime implements %d",
                           p.abi_version, ZEROC_RT_PROGRAM_ABI_VERSION);
  if (p.stage < 0 || p.stage > 3)
    return INVALID_PROGRAM("ZeRO stage %d is not 0-3", p.stage);
  if (p.world_size < 1)
    return INVALID_PROGRAM("world size %d", p.world_size);
  if (p.micro_batch < 1 || p.grad_accum < 1)
    return INVALID_PROGRAM("micro batch %d and grad accum %d must be >= 1",
                           p.micro_batch, p.grad_accum);
  if (p.blob_bytes < 0 || p.arena_bytes < 0 || p.grad_slab_bytes < 0)
    return INVALID_PROGRAM("blob_bytes %lld, arena_bytes %lld and "
                           "grad_slab_bytes %lld must be >= 0",
                           static_cast<long long>(p.blob_bytes),
                           static_cast<long long>(p.arena_bytes),
                           static_cast<long long>(p.grad_slab_bytes));
  if (p.blob_constants_offset < 0 || p.blob_constants_offset > p.blob_bytes ||
      p.blob_constants_offset % 64 != 0)
    return INVALID_PROGRAM("blob_constants_offset %lld must be a multiple of 64 "
                           "in [0, blob_bytes %lld]",
                           static_cast<long long>(p.blob_constants_offset),
                           static_cast<long long>(p.blob_bytes));
  if (p.tf32 != 0 && p.tf32 != 1)
    return INVALID_PROGRAM("tf32 %d must be 0 or 1", p.tf32);
  if (p.checkpoint.tag_validation < 0 || p.checkpoint.tag_validation > 2 ||
      (p.checkpoint.masters_from_params != 0 &&
       p.checkpoint.masters_from_params != 1))
    return INVALID_PROGRAM("checkpoint tag_validation %d must be 0-2 and "
                           "masters_from_params %d 0 or 1",
                           p.checkpoint.tag_validation,
                           p.checkpoint.masters_from_params);
  if ((!p.blob_file || !*p.blob_file) && p.blob_bytes != 0)
    return INVALID_PROGRAM("a %lld-byte blob without a blob_file",
                           static_cast<long long>(p.blob_bytes));
  if (!p.micro_step || !p.train_step)
    return INVALID_PROGRAM("micro_step or train_step is NULL");
  if (!finiteAtLeast(p.gradient_clipping, 0.0))
    return INVALID_PROGRAM("gradient_clipping %g must be finite and >= 0",
                           p.gradient_clipping);
  // G = MB * GAS * W must fit comfortably in int64.
  if (static_cast<int64_t>(p.micro_batch) * p.grad_accum >
      (INT64_C(1) << 62) / p.world_size)
    return INVALID_PROGRAM("micro batch x grad accum x world size overflows");
  ZEROC_RT_RETURN_IF_ERROR(validateOptimizer(p.optimizer));
  ZEROC_RT_RETURN_IF_ERROR(ZEROC_RT_TRAIN_WRAP(
      checkLrSchedule(p.lr_schedule),
      "invalid program (recompile it with this runtime): "));
  ZEROC_RT_RETURN_IF_ERROR(ZEROC_RT_TRAIN_WRAP(
      checkLossScaler(p.loss_scaler),
      "invalid program (recompile it with this runtime): "));
  if (p.precision != ZEROC_RT_PRECISION_FP32 &&
      p.precision != ZEROC_RT_PRECISION_FP16 &&
      p.precision != ZEROC_RT_PRECISION_BF16)
    return INVALID_PROGRAM("unknown precision %d", static_cast<int>(p.precision));
  std::set<std::string> savedFiles;
  ZEROC_RT_RETURN_IF_ERROR(validateParams(p, savedFiles));
  ZEROC_RT_RETURN_IF_ERROR(validateBuffers(p, savedFiles));
  if (p.num_ops < 0 || (p.num_ops > 0 && !p.op_names))
    return INVALID_PROGRAM("num_ops %d with op_names %p", p.num_ops,
                           static_cast<const void *>(p.op_names));
  for (int32_t i = 0; i < p.num_ops; ++i)
    if (!p.op_names[i])
      return INVALID_PROGRAM("op %d has no name", i);
  return validateInputs(p);
}

std::string recompileHint(const zeroc_rt_program_t &program, int worldSize) {
  std::string hint = program.recompile_hint ? program.recompile_hint : "";
  if (hint.empty())
    return hint;
  return hint + " --world-size " + std::to_string(worldSize);
}

zeroc_rt_status_t loadBlob(const zeroc_rt_program_t &program,
                           AlignedBuffer &blob) {
  if (!program.blob_file || !*program.blob_file)
    return blob.allocate(0, "the empty blob");
  std::string path = program.blob_file;
  if (path[0] != '/') {
    std::string dir;
    ZEROC_RT_RETURN_IF_ERROR(executableDirectory(dir));
    path = dir + (dir == "/" ? "" : "/") + path;
  }
  const char *advice = "; zeroc writes it next to the executable: keep the "
                       "two together (or recompile)";
  // Non-blocking, so that a FIFO in its place is an error, not a hang.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  std::FILE *file = fd < 0 ? nullptr : ::fdopen(fd, "rb");
  if (fd >= 0 && !file)
    ::close(fd);
  if (!file)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                          "parameters: cannot open the blob '%s': %s%s",
                          path.c_str(), std::strerror(errno), advice);
  struct stat st;
  if (::fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(file);
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                          "parameters: the blob '%s' is not a regular file%s",
                          path.c_str(), advice);
  }
  if (static_cast<int64_t>(st.st_size) != program.blob_bytes) {
    std::fclose(file);
    return ZEROC_RT_ERROR(
        ZEROC_RT_FORMAT_ERROR,
        "parameters: the blob '%s' has %lld bytes but this program expects "
        "%lld; it belongs to another build: copy the matching blob next to "
        "the executable (or recompile)",
        path.c_str(), static_cast<long long>(st.st_size),
        static_cast<long long>(program.blob_bytes));
  }
  zeroc_rt_status_t status =
      blob.allocate(static_cast<size_t>(program.blob_bytes), "the blob");
  if (status) {
    std::fclose(file);
    return status;
  }
  size_t want = static_cast<size_t>(program.blob_bytes);
  size_t got = want ? std::fread(blob.data(), 1, want, file) : 0;
  bool readError = std::ferror(file) != 0;
  std::fclose(file);
  if (got != want || readError)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                          "parameters: reading the blob '%s' failed after "
                          "%zu of %zu bytes",
                          path.c_str(), got, want);
  const uint64_t checksum = zeroc_rt_checksum64(blob.data(), want);
  if (checksum != program.blob_checksum)
    return ZEROC_RT_ERROR(
        ZEROC_RT_FORMAT_ERROR,
        "parameters: the blob '%s' does not match this program (checksum "
        "%016llx, expected %016llx): it was modified or belongs to another "
        "build; copy the matching model.bin next to the executable (or "
        "recompile)",
        path.c_str(), static_cast<unsigned long long>(checksum),
        static_cast<unsigned long long>(program.blob_checksum));
  return nullptr;
}

} // namespace zeroc_rt::train
