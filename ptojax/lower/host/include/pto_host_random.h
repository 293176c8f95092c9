// Threefry-2x32 (20 rounds) over arrays: the counter-based hash behind ptojax.random, for the
// host programs' `threefry2x32` equations (lower/host/random_bits.py). The same algorithm, bit
// for bit, as the primitive's numpy impl (ptojax/ops/random_bits.py): rotations (13, 15, 26,
// 6) and (17, 29, 16, 24), a key injection every four rounds with the parity 0x1BD11BDA.
// Keys are scalars; a counter word is read at stride 0 (a scalar) or 1 (an array of n).
#pragma once

#include <cstdint>

namespace pto {
namespace host {

inline uint32_t rotate_left(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

inline void threefry2x32_block(uint32_t k1, uint32_t k2, uint32_t x1, uint32_t x2,
                               uint32_t* y1_out, uint32_t* y2_out) {
  const uint32_t keys[3] = {k1, k2, k1 ^ k2 ^ 0x1BD11BDAu};
  static const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t y1 = x1 + k1, y2 = x2 + k2;
  for (int i = 0; i < 5; ++i) {
    for (int r = 0; r < 4; ++r) {
      y1 += y2;
      y2 = rotate_left(y2, rotations[i % 2][r]) ^ y1;
    }
    y1 += keys[(i + 1) % 3];
    y2 += keys[(i + 2) % 3] + uint32_t(i + 1);
  }
  *y1_out = y1;
  *y2_out = y2;
}

}  // namespace host
}  // namespace pto

PTO_HOST_EXPORT void ptojax_threefry2x32(uint32_t k1, uint32_t k2, const uint32_t* x1,
                                         long long x1_stride, const uint32_t* x2,
                                         long long x2_stride, uint32_t* y1, uint32_t* y2,
                                         long long n) {
  for (long long j = 0; j < n; ++j)
    pto::host::threefry2x32_block(k1, k2, x1[j * x1_stride], x2[j * x2_stride], y1 + j, y2 + j);
}
