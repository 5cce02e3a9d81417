//===- zeroc_rt_cuda/compat.h - One kernel source, GPU and emulation -----===//
//
// The CUDA runtime's kernels, and the fused elementwise kernels a generated
// CUDA program defines (zeroc_rt_cuda/fused.h), are written once, against
// this header, and compiled two ways:
//  - by nvcc for the GPU (ZEROC_RT_CUDA_DEVICE): kernels are __global__,
//    launched on the compute stream with the grid and block they ask for;
//  - by the host C++ compiler for the host emulation (libzeroc_runtime_
//    cuda_emu): every block of the grid runs in turn. By default a block
//    has a single thread, so that the tests check the kernels' index math
//    and arithmetic against the CPU kernels quickly on machines without a
//    GPU. With ZEROC_RT_CUDA_EMU_SIMT set, a block has the threads the
//    launch asked for, as fibers (simt_emu.cc): __shared__ memory is shared
//    by them, syncBlock is a barrier, and the warp reductions below run
//    their shuffles lane by lane, so that the many-thread logic is checked
//    too (docs/CudaTarget.md, "The host emulation").
// Kernels therefore never assume a block size: they loop over their block's
// work with a stride of blockDim and reduce through blockSum/blockMax. What
// only a GPU can check (real concurrency, the CUDA API, cuBLASLt, NCCL) is
// checked by the kernel tests where a GPU exists.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_COMPAT_H
#define ZEROC_RT_CUDA_COMPAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define ZEROC_RT_CUDA_DEVICE 1
#include <cuda_runtime.h>
#define ZRT_HD __host__ __device__ __forceinline__
#define ZRT_DEV __device__ __forceinline__
#define ZRT_GLOBAL __global__
/// Unrolls the loop that follows, so that the register arrays it indexes
/// (a warp's fragments, zeroc_rt_cuda/attention.h) stay in registers.
#define ZRT_UNROLL _Pragma("unroll")
#else
#define ZRT_HD inline
#define ZRT_DEV inline
#define ZRT_GLOBAL static
#define ZRT_UNROLL
#endif

namespace zeroc_rt::cuda {

/// The stream kernels are launched on (cudaStream_t; unused when emulated).
void *computeStream();

#if ZEROC_RT_CUDA_DEVICE
ZRT_DEV int64_t blockIndex() { return blockIdx.x; }
ZRT_DEV int64_t gridBlocks() { return gridDim.x; }
ZRT_DEV int threadIndex() { return threadIdx.x; }
ZRT_DEV int blockThreads() { return blockDim.x; }
ZRT_DEV void syncBlock() { __syncthreads(); }
/// `v` of the lane `laneMask` apart (xor) in the warp; every lane of a
/// full warp takes part.
template <typename T> ZRT_DEV T shuffleXor(T v, int laneMask) {
  return __shfl_xor_sync(0xffffffffu, v, laneMask);
}
ZRT_DEV void atomicOr(unsigned *flag, unsigned bits) { ::atomicOr(flag, bits); }
ZRT_DEV void atomicAddDouble(double *to, double v) { ::atomicAdd(to, v); }
ZRT_DEV void atomicAddFloat(float *to, float v) { ::atomicAdd(to, v); }
#else
/// __shared__ memory: one object for all of a block's (fiber) threads.
/// Blocks run one after the other, so they may share it too.
#define __shared__ static thread_local
namespace emu {
/// The emulated block of the running kernel, and its thread.
/// (`__thread`: constant-initialized, so that reading one is a plain
/// thread-local load, not a call to C++'s `thread_local` wrapper, in every
/// threadIndex() of every emulated thread.)
extern __thread int64_t currentBlock, currentGrid;
extern __thread int currentThread, currentThreads;
/// Whether blocks run as threads (ZEROC_RT_CUDA_EMU_SIMT); else one thread
/// per block, which has no warps: the block reductions are the identity.
bool simt();
/// Whether the running block's threads are fibers: simt(), or a kernel
/// launched with launchWarps.
bool threadsRun();
/// Runs body(context) as each thread of the current block, launched with
/// `block` threads: those threads as fibers when simt() or `warps`, else
/// one. 0, or 1 when the block broke a rule of the GPU's (violation() says
/// which).
int runBlock(int block, void (*body)(void *), void *context, bool warps = false);
/// What the last failed runBlock found.
const char *violation();
/// Records a `bytes`-byte access at `p` that is not `bytes`-byte aligned,
/// which a GPU faults on: the running block then fails (violation() says
/// where) when it ends.
void misalignedAccess(const void *p, int bytes);
/// Checks that a `bytes`-byte access at `p` is aligned to `bytes`.
inline void checkAligned(const void *p, int bytes) {
  if (reinterpret_cast<uintptr_t>(p) % static_cast<unsigned>(bytes) != 0)
    misalignedAccess(p, bytes);
}
/// __syncthreads: the thread waits until every thread of the block is here.
void barrier();
/// cp.async's 16 bytes from `src` to `dst` (both 16-byte aligned), for
/// zeroc_rt_cuda/mma.h's copyAsync16: in a block of fibers the copy lands
/// at the thread's next waitCopies16, the latest a GPU may land it, so that
/// a read of `dst` before that wait sees the old bytes; with one thread, at
/// once.
void copyAsync16(void *dst, const void *src);
/// Lands this thread's copies (copyAsync16) in the order they were issued.
void waitCopies16();
/// __shfl_xor_sync over the full warp, for values of up to 8 bytes.
uint64_t shuffleXor(uint64_t bits, int laneMask);
/// Every lane's `words` words (`mine`) into `all` (lane l's at l * words),
/// in every lane of the full warp: what a warp-wide operation such as a
/// tensor-core product (zeroc_rt_cuda/mma.h) sees of the other lanes.
void warpGather(const uint32_t *mine, int words, uint32_t *all);
} // namespace emu
inline int64_t blockIndex() { return emu::currentBlock; }
inline int64_t gridBlocks() { return emu::currentGrid; }
inline int threadIndex() { return emu::currentThread; }
inline int blockThreads() { return emu::currentThreads; }
inline void syncBlock() { emu::barrier(); }
template <typename T> inline T shuffleXor(T v, int laneMask) {
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = emu::shuffleXor(bits, laneMask);
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
inline void atomicOr(unsigned *flag, unsigned bits) { *flag |= bits; }
inline void atomicAddDouble(double *to, double v) { *to += v; }
inline void atomicAddFloat(float *to, float v) { *to += v; }
#endif

/// Whether the block reduces across threads: always on a GPU; with one
/// thread per block on the default emulation there is nothing to reduce.
ZRT_DEV bool blockReduces() {
#if ZEROC_RT_CUDA_DEVICE
  return true;
#else
  return emu::threadsRun();
#endif
}

/// The sum (max) of `v` over the block's threads, in every thread;
/// `scratch` is 32 elements of shared memory (blockDim is a multiple of 32,
/// at most 1024).
template <typename T> ZRT_DEV T warpSum(T v) {
  for (int o = 16; o > 0; o >>= 1)
    v += shuffleXor(v, o);
  return v;
}
/// The larger of a and b; NaN wins.
template <typename T> ZRT_HD T maxNaN(T a, T b) { return (b > a || b != b) ? b : a; }
template <typename T> ZRT_DEV T warpMax(T v) {
  for (int o = 16; o > 0; o >>= 1)
    v = maxNaN(v, shuffleXor(v, o));
  return v;
}
template <typename T> ZRT_DEV T blockSum(T v, T *scratch) {
  if (!blockReduces())
    return v;
  v = warpSum(v);
  const int lane = threadIndex() & 31, warp = threadIndex() >> 5;
  syncBlock(); // scratch may still be read by a previous reduction
  if (lane == 0)
    scratch[warp] = v;
  syncBlock();
  const int warps = (blockThreads() + 31) >> 5;
  return warpSum(lane < warps ? scratch[lane] : T(0));
}
template <typename T> ZRT_DEV T blockMax(T v, T *scratch) {
  if (!blockReduces())
    return v;
  v = warpMax(v);
  const int lane = threadIndex() & 31, warp = threadIndex() >> 5;
  syncBlock();
  if (lane == 0)
    scratch[warp] = v;
  syncBlock();
  const int warps = (blockThreads() + 31) >> 5;
  return warpMax(lane < warps ? scratch[lane] : T(-INFINITY));
}

/// log(), for kernels with a parameter named `log`.
template <typename T> ZRT_HD T log_(T v) { return log(v); }

/// Threads per block of the launches below.
constexpr int kBlock = 256;

/// The most threads a block has (CUDA's limit; the emulation's too).
constexpr int kMaxBlockThreads = 1024;

/// Before a kernel's name: the most threads per block it is launched with,
/// so that nvcc keeps its registers within what a block that size may have
/// (CUDA's __launch_bounds__; a launch of more would fail on the GPU
/// alone). Nothing on the emulation.
#if ZEROC_RT_CUDA_DEVICE
#define ZRT_MAX_THREADS(threads) __launch_bounds__(threads)
#else
#define ZRT_MAX_THREADS(threads)
#endif

/// The most blocks the grid-stride launches below take.
constexpr int64_t kMaxGridBlocks = 65535;

/// `blocks` blocks, at least one and at most kMaxGridBlocks: each block
/// loops over its work with the grid's stride.
inline int64_t cappedBlocks(int64_t blocks) {
  return blocks < 1 ? 1 : (blocks > kMaxGridBlocks ? kMaxGridBlocks : blocks);
}

/// Blocks for `n` independent elements at kBlock threads, capped: each
/// thread loops over the elements with the grid's stride.
inline int64_t blocksFor(int64_t n) { return cappedBlocks((n + kBlock - 1) / kBlock); }

/// Launches `kernel(args...)` on the compute stream with `grid` blocks of
/// `block` threads (ZEROC_RT_INTERNAL status when the launch fails).
/// launchWarps is for a kernel whose warps work together (mma.h): on the
/// emulation its blocks always have the threads they ask for.
#if ZEROC_RT_CUDA_DEVICE
template <typename... K, typename... A>
inline cudaError_t launch(void (*kernel)(K...), int64_t grid, int block,
                          A &&...args) {
  kernel<<<static_cast<unsigned>(grid), static_cast<unsigned>(block), 0,
           static_cast<cudaStream_t>(computeStream())>>>(
      static_cast<K>(args)...);
  return cudaGetLastError();
}
template <typename... K, typename... A>
inline cudaError_t launchWarps(void (*kernel)(K...), int64_t grid, int block,
                               A &&...args) {
  return launch(kernel, grid, block, static_cast<A &&>(args)...);
}
#else
template <typename... K, typename... A>
inline int launchBlocks(bool warps, void (*kernel)(K...), int64_t grid, int block,
                        A &&...args) {
  auto run = [&] { kernel(static_cast<K>(args)...); };
  emu::currentGrid = grid;
  for (int64_t b = 0; b < grid; ++b) {
    emu::currentBlock = b;
    if (int error = emu::runBlock(
            block, [](void *c) { (*static_cast<decltype(run) *>(c))(); }, &run, warps))
      return error;
  }
  return 0;
}
template <typename... K, typename... A>
inline int launch(void (*kernel)(K...), int64_t grid, int block, A &&...args) {
  return launchBlocks(false, kernel, grid, block, static_cast<A &&>(args)...);
}
template <typename... K, typename... A>
inline int launchWarps(void (*kernel)(K...), int64_t grid, int block, A &&...args) {
  return launchBlocks(true, kernel, grid, block, static_cast<A &&>(args)...);
}
#endif

/// Element i of a grid-stride loop: for (i = first(); i < n; i += stride()).
ZRT_DEV int64_t gridFirst() {
  return blockIndex() * blockThreads() + threadIndex();
}
ZRT_DEV int64_t gridStride() { return gridBlocks() * blockThreads(); }

//===----------------------------------------------------------------------===//
// Element types: f16 and bf16 are storage, computed on in float
//===----------------------------------------------------------------------===//

struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};

ZRT_HD uint32_t bitsOf(float f) {
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
ZRT_HD float floatOf(uint32_t u) {
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

ZRT_HD float toFloat(float v) { return v; }
ZRT_HD float toFloat(double v) { return static_cast<float>(v); }
ZRT_HD float toFloat(BF16 v) { return floatOf(static_cast<uint32_t>(v.bits) << 16); }
ZRT_HD float toFloat(F16 v) {
  const uint32_t h = v.bits, sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) // inf or NaN
    return floatOf(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return floatOf(sign);
    // A subnormal: mant * 2^-24, exact in float.
    float f = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  return floatOf(sign | ((exp + 112u) << 23) | (mant << 13));
}

/// The GPU's own conversion, cvt.rn: round to nearest even, overflow to
/// inf, subnormals kept; the bits of the arithmetic below for every value
/// but NaN, whose payload the functions below keep themselves.
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define ZEROC_RT_CVT_16 1
#endif

/// Round to nearest even, overflow to inf, NaN stays a (quiet) NaN.
ZRT_HD BF16 toBF16(float f) {
  uint32_t u = bitsOf(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return BF16{static_cast<uint16_t>((u >> 16) | 0x40u)};
#ifdef ZEROC_RT_CVT_16
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return BF16{h};
#else
  u += 0x7fffu + ((u >> 16) & 1u);
  return BF16{static_cast<uint16_t>(u >> 16)};
#endif
}
ZRT_HD F16 toF16(float f) {
  const uint32_t u = bitsOf(f), sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return F16{static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu))};
#ifdef ZEROC_RT_CVT_16
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return F16{h};
#else
  if (a >= 0x477ff000u) // rounds to >= 65520: inf
    return F16{static_cast<uint16_t>(sign | 0x7c00u)};
  if (a < 0x38800000u) { // below the smallest normal: a subnormal or 0
    // value * 2^24 rounded to an integer, ties to even.
    const int e = static_cast<int>(a >> 23); // biased float exponent
    if (e < 102) // below 2^-25: rounds to 0
      return F16{static_cast<uint16_t>(sign)};
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const int shift = 126 - e; // m * 2^(e - 150) * 2^24 = m >> (126 - e)
    const uint32_t half = 1u << (shift - 1);
    const uint32_t r = (m + half - 1 + ((m >> shift) & 1u)) >> shift;
    return F16{static_cast<uint16_t>(sign | r)};
  }
  uint32_t r = a - 0x38000000u; // rebias 127 -> 15
  r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
  return F16{static_cast<uint16_t>(sign | r)};
#endif
}
#undef ZEROC_RT_CVT_16

template <typename S> ZRT_HD S fromFloat(float v);
template <> ZRT_HD float fromFloat<float>(float v) { return v; }
template <> ZRT_HD double fromFloat<double>(float v) { return v; }
template <> ZRT_HD F16 fromFloat<F16>(float v) { return toF16(v); }
template <> ZRT_HD BF16 fromFloat<BF16>(float v) { return toBF16(v); }

/// The compute type of a storage type: double for double, else float.
template <typename S> struct Compute {
  using type = float;
};
template <> struct Compute<double> {
  using type = double;
};
template <typename S> ZRT_HD typename Compute<S>::type load(S v) {
  return toFloat(v);
}
template <> ZRT_HD double load<double>(double v) { return v; }
template <typename S> ZRT_HD S store(float v) { return fromFloat<S>(v); }
template <typename S> ZRT_HD S storeD(double v);
template <> ZRT_HD double storeD<double>(double v) { return v; }
template <> ZRT_HD float storeD<float>(double v) { return static_cast<float>(v); }
template <> ZRT_HD F16 storeD<F16>(double v) { return toF16(static_cast<float>(v)); }
template <> ZRT_HD BF16 storeD<BF16>(double v) { return toBF16(static_cast<float>(v)); }

/// `v` rounded to storage type S and read back in S's compute type: the
/// value the next op reads when an op's kernel stores its result as S.
template <typename S> ZRT_HD typename Compute<S>::type roundTo(typename Compute<S>::type v) {
  return load(storeD<S>(v));
}

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_COMPAT_H
