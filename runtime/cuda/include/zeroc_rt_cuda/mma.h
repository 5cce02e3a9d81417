//===- zeroc_rt_cuda/mma.h - One warp's tensor-core product -*- C++ -*-===//
//
// mma16816: a warp multiplies a 16x16 matrix A (row-major) by a 16x8
// matrix B (column-major), both f16 or bf16, into a 16x8 f32 accumulator,
// as PTX's `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}` (sm_80 and
// later; built for an older GPU it traps, and the launch reports the
// error). Each lane holds a fragment of each matrix in registers, two
// 16-bit elements to a 32-bit word (the lower index in the lower half),
// laid out as the PTX ISA specifies for that instruction; with g = lane / 4
// and t = lane % 4:
//   A: word r holds row g + 8 * (r & 1), columns 2t + 8 * (r >> 1) + {0, 1};
//   B: word r holds rows 2t + 8 * r + {0, 1} of column g;
//   C: element i is row g + 8 * (i >> 1), column 2t + (i & 1).
// On the GPU this is the instruction. The emulation gathers every lane's
// words (emu::warpGather, a warp-wide rendezvous that fails the launch
// when a lane is missing) and computes each lane's elements from that
// layout, so a kernel's fragment index math is checked on the CPU; the
// sum over k is in float, in k's order (the tensor core's order and
// internal precision may differ in the last bits).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_MMA_H
#define ZEROC_RT_CUDA_MMA_H

#include "zeroc_rt_cuda/compat.h"

namespace zeroc_rt::cuda {

/// Two elements of storage type T (F16 or BF16) in one word, `lo` in the
/// lower half.
template <typename T> ZRT_HD uint32_t packPair(T lo, T hi) {
  return static_cast<uint32_t>(lo.bits) | (static_cast<uint32_t>(hi.bits) << 16);
}
/// Two floats rounded to T, in one word.
template <typename T> ZRT_HD uint32_t packFloats(float lo, float hi) {
  return packPair(fromFloat<T>(lo), fromFloat<T>(hi));
}

/// 16 bytes: 8 elements of a 16-bit type, two to a word.
struct Words4 {
  uint32_t w[4];
};
/// A 16-byte load from, and store to, 16-byte aligned memory.
ZRT_DEV Words4 load16(const void *p) {
#if ZEROC_RT_CUDA_DEVICE
  const uint4 v = *static_cast<const uint4 *>(p);
  return Words4{{v.x, v.y, v.z, v.w}};
#else
  emu::checkAligned(p, 16);
  Words4 v;
  std::memcpy(v.w, p, 16);
  return v;
#endif
}
ZRT_DEV void store16(void *p, const Words4 &v) {
#if ZEROC_RT_CUDA_DEVICE
  *static_cast<uint4 *>(p) = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
#else
  emu::checkAligned(p, 16);
  std::memcpy(p, v.w, 16);
#endif
}

/// An asynchronous 16-byte copy from global `src` to shared `dst`, both
/// 16-byte aligned (`cp.async.cg` on sm_80 and later): the attention
/// kernels load their next tile while they compute on this one. The copy
/// is complete for the issuing thread after its next waitCopies16; a
/// barrier after that shows it to the block. Before sm_80 it copies at
/// once (then commitCopies16 and waitCopies16 do nothing). The emulation
/// lands it at the thread's waitCopies16 (emu::copyAsync16), so that a
/// read before the wait is seen to read old bytes.
ZRT_DEV void copyAsync16(void *dst, const void *src) {
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(at), "l"(src) : "memory");
#elif ZEROC_RT_CUDA_DEVICE
  store16(dst, load16(src));
#else
  emu::copyAsync16(dst, src);
#endif
}
/// Closes the group of this thread's copyAsync16 issued since the last.
ZRT_DEV void commitCopies16() {
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
/// Waits until every copyAsync16 of this thread has arrived.
ZRT_DEV void waitCopies16() {
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#elif !ZEROC_RT_CUDA_DEVICE
  emu::waitCopies16();
#endif
}

/// The lane's A row offset (0..15) of word r, and column offset.
ZRT_HD int mmaRowA(int lane, int r) { return (lane >> 2) + 8 * (r & 1); }
ZRT_HD int mmaColA(int lane, int r) { return 2 * (lane & 3) + 8 * (r >> 1); }
/// The lane's accumulator row and column of element i (0..3).
ZRT_HD int mmaRowC(int lane, int i) { return (lane >> 2) + 8 * (i >> 1); }
ZRT_HD int mmaColC(int lane, int i) { return 2 * (lane & 3) + (i & 1); }

/// ldmatrix.x4: four 8x8 matrices of 16-bit elements from shared memory,
/// each row 16 bytes (4 words) at a 16-byte aligned address. Lane l gives
/// `row`, the address of row l % 8 of matrix l / 8; lane l receives in
/// r[j] word l % 4 of row l / 4 of matrix j: a B fragment's word (see
/// above) when matrix j holds 8 of B's columns as rows, in one instruction
/// where reading the words one by one takes four. loadMatrices4Trans is
/// ldmatrix.x4.trans: the same rows, each matrix transposed, so lane l
/// receives in r[j] elements (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4)
/// of matrix j (row, column; the first in the lower half): a B fragment's
/// word when matrix j holds 8 of B's rows as rows.
#if ZEROC_RT_CUDA_DEVICE
template <bool Trans> ZRT_DEV void ldmatrixX4(uint32_t (&r)[4], const uint32_t *row) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(row));
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at)
                 : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at)
                 : "memory");
#elif defined(__CUDA_ARCH__)
  __trap(); // before sm_75 there is no such instruction: the launch fails
#endif
}
ZRT_DEV void loadMatrices4(uint32_t (&r)[4], const uint32_t *row) { ldmatrixX4<false>(r, row); }
ZRT_DEV void loadMatrices4Trans(uint32_t (&r)[4], const uint32_t *row) {
  ldmatrixX4<true>(r, row);
}
#else
/// The emulation: every lane's row address, gathered from the warp.
inline void gatherRows(const uint32_t *row, const uint32_t *(&rows)[32]) {
  const uint64_t address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(row));
  const uint32_t mine[2] = {static_cast<uint32_t>(address), static_cast<uint32_t>(address >> 32)};
  uint32_t all[32 * 2];
  emu::warpGather(mine, 2, all);
  for (int l = 0; l < 32; ++l)
    rows[l] = reinterpret_cast<const uint32_t *>(
        static_cast<uintptr_t>(all[2 * l] | (static_cast<uint64_t>(all[2 * l + 1]) << 32)));
}
/// Element `e` (16-bit) of a row.
inline uint32_t halfOf(const uint32_t *row, int e) {
  return (row[e >> 1] >> (16 * (e & 1))) & 0xffffu;
}
inline void loadMatrices4(uint32_t (&r)[4], const uint32_t *row) {
  const uint32_t *rows[32];
  gatherRows(row, rows);
  const int lane = threadIndex() & 31;
  for (int j = 0; j < 4; ++j)
    r[j] = rows[8 * j + (lane >> 2)][lane & 3];
}
inline void loadMatrices4Trans(uint32_t (&r)[4], const uint32_t *row) {
  const uint32_t *rows[32];
  gatherRows(row, rows);
  const int lane = threadIndex() & 31;
  for (int j = 0; j < 4; ++j) {
    const int first = 8 * j + 2 * (lane & 3), column = lane >> 2;
    r[j] = halfOf(rows[first], column) | (halfOf(rows[first + 1], column) << 16);
  }
}
#endif

#if ZEROC_RT_CUDA_DEVICE
template <typename T> ZRT_DEV void mma16816(float c[4], const uint32_t a[4], const uint32_t b[2]);
template <> ZRT_DEV void mma16816<BF16>(float c[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(__CUDA_ARCH__)
  __trap(); // before sm_80 there is no such instruction: the launch fails
#endif
}
template <> ZRT_DEV void mma16816<F16>(float c[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(__CUDA_ARCH__)
  __trap(); // before sm_80 there is no such instruction: the launch fails
#endif
}
#else
/// Element `half` (0 or 1) of a word, as float.
template <typename T> inline float unpackHalf(uint32_t word, int half) {
  return toFloat(T{static_cast<uint16_t>(half ? word >> 16 : word & 0xffffu)});
}
template <typename T>
inline void mma16816(float c[4], const uint32_t a[4], const uint32_t b[2]) {
  constexpr int kWords = 6; // a lane's A (4) and B (2) words
  uint32_t mine[kWords] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  uint32_t all[32 * kWords];
  emu::warpGather(mine, kWords, all);
  const int lane = threadIndex() & 31;
  for (int i = 0; i < 4; ++i) {
    const int row = mmaRowC(lane, i), col = mmaColC(lane, i);
    float sum = c[i];
    for (int k = 0; k < 16; ++k) {
      // A(row, k): lane (row % 8) * 4 + (k % 8) / 2, word (row / 8) + 2 * (k / 8).
      const int la = (row & 7) * 4 + ((k & 7) >> 1), ra = (row >> 3) + 2 * (k >> 3);
      // B(k, col): lane col * 4 + (k % 8) / 2, word k / 8.
      const int lb = col * 4 + ((k & 7) >> 1), rb = k >> 3;
      sum += unpackHalf<T>(all[la * kWords + ra], k & 1) *
             unpackHalf<T>(all[lb * kWords + 4 + rb], k & 1);
    }
    c[i] = sum;
  }
}
#endif

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_MMA_H
