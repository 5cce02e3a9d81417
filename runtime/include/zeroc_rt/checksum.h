//===- zeroc_rt/checksum.h - The checksum of model.bin ------------*- C -*-===//
//
// zeroc records the checksum of the blob it writes in the program, and the
// trainer verifies it at start-up: a blob from another build, a truncated
// copy or a flipped bit is an error before training, not a silently wrong
// model. Header-only, so that the compiler and the runtime share the one
// definition.
//
// FNV-1a over 64-bit little-endian words, then the tail bytes, then the
// length. Each word passes through a bijection of the state (xor, then a
// multiply by an odd constant), so two blobs that differ in one word always
// differ in checksum. It guards against accidents, not against an attacker.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CHECKSUM_H
#define ZEROC_RT_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ZEROC_RT_CHECKSUM_SEED UINT64_C(0xcbf29ce484222325)
#define ZEROC_RT_CHECKSUM_PRIME UINT64_C(0x100000001b3)

/// Continues checksum `h` (start with ZEROC_RT_CHECKSUM_SEED) over `n`
/// bytes; the bytes must be fed in 8-byte multiples except for the last
/// call.
static inline uint64_t zeroc_rt_checksum_update(uint64_t h, const void *data,
                                                size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    for (int b = 0; b < 8; ++b)
      w |= (uint64_t)p[i + b] << (8 * b);
    h = (h ^ w) * ZEROC_RT_CHECKSUM_PRIME;
  }
  for (; i < n; ++i)
    h = (h ^ p[i]) * ZEROC_RT_CHECKSUM_PRIME;
  return h;
}

/// The checksum of `n` bytes at `data`.
static inline uint64_t zeroc_rt_checksum64(const void *data, size_t n) {
  uint64_t h = zeroc_rt_checksum_update(ZEROC_RT_CHECKSUM_SEED, data, n);
  return (h ^ (uint64_t)n) * ZEROC_RT_CHECKSUM_PRIME;
}

#endif // ZEROC_RT_CHECKSUM_H
