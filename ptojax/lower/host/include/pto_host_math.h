// pto_host_math.h — float exp and log written so that loops over tiles vectorize.
//
// libm's scalar calls stop the compiler from vectorizing a tile loop, and -ffast-math would
// change NaN/inf semantics, so these are branch-free polynomial implementations: every lane
// computes all cases and selects. Accuracy is within 2 ulp of the correctly rounded
// result over the whole float range (subnormal results included), with IEEE special values
// (NaN in -> NaN out, exp(-inf) = 0, exp(+large) = inf, log(0) = -inf, log(x<0) = NaN).
#pragma once

#include <cstdint>

#include "pto_host_types.h"

namespace pto {
namespace host {

inline float fmadd(float a, float b, float c) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// y * 2^n for integer-valued float n in [-252, 254]: two in-range powers applied one after the
// other, so the result overflows or underflows (to a correctly rounded subnormal) only when
// y * 2^n does.
inline float scale_by_pow2(float y, float n) {
  const int32_t k = static_cast<int32_t>(n);
  const int32_t half = k >> 1;
  const float p = bits_as_float(static_cast<uint32_t>(half + 127) << 23);
  const float q = bits_as_float(static_cast<uint32_t>(k - half + 127) << 23);
  return (y * p) * q;
}

// e^x: x = n ln2 + r with |r| <= ln2/2, e^r by its degree-7 Taylor polynomial. Clamping x to
// [-104, 88.73] makes the two-step scaling overflow to inf / underflow to 0 exactly where e^x
// does, and a NaN stays NaN through the arithmetic, so no special-case selects are needed.
inline float exp_f32(float x) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0.693145751953125f;    // ln 2 rounded to 16 bits: n*kLn2Hi is exact
  const float kLn2Lo = 1.42860682030941723e-6f;
  // written as min/max whose NaN operand is x, so a NaN passes through the clamp
  const float upper = 88.73f < x ? 88.73f : x;
  const float xc = -104.0f > upper ? -104.0f : upper;
  const float n = __builtin_rintf(xc * kLog2e);
  const float r = fmadd(-n, kLn2Lo, fmadd(-n, kLn2Hi, xc));
  float p = 1.0f / 5040.0f;
  p = fmadd(p, r, 1.0f / 720.0f);
  p = fmadd(p, r, 1.0f / 120.0f);
  p = fmadd(p, r, 1.0f / 24.0f);
  p = fmadd(p, r, 1.0f / 6.0f);
  p = fmadd(p, r, 0.5f);
  p = fmadd(p, r, 1.0f);
  p = fmadd(p, r, 1.0f);
  return scale_by_pow2(p, n);
}

// ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m-1)/(m+1).
inline float log_f32(float x) {
  const float kLn2Hi = 0.693145751953125f;
  const float kLn2Lo = 1.42860682030941723e-6f;
  const bool tiny = x < 1.17549435e-38f;                 // subnormal: scale into normal range
  const float xs = tiny ? x * 8388608.0f : x;            // * 2^23
  // bits - bits(sqrt(1/2)) splits into the exponent ex and a mantissa that, re-biased,
  // is m in [sqrt(1/2), sqrt(2))
  const int32_t u = static_cast<int32_t>(float_as_bits(xs) - 0x3f3504f3u);
  const int32_t ex = (u >> 23) - (tiny ? 23 : 0);
  const float m = bits_as_float((static_cast<uint32_t>(u) & 0x7fffffu) + 0x3f3504f3u);
  const float s = (m - 1.0f) / (m + 1.0f);
  const float z = s * s;
  float p = 2.0f / 9.0f;
  p = fmadd(p, z, 2.0f / 7.0f);
  p = fmadd(p, z, 2.0f / 5.0f);
  p = fmadd(p, z, 2.0f / 3.0f);
  const float lnm = fmadd(s * z, p, 2.0f * s);
  const float fe = static_cast<float>(ex);
  float y = fmadd(fe, kLn2Hi, fmadd(fe, kLn2Lo, lnm));
  y = x == __builtin_inff() ? x : y;
  y = x == 0.0f ? -__builtin_inff() : y;
  y = x < 0.0f ? __builtin_nanf("") : y;
  return x != x ? x : y;
}

}  // namespace host
}  // namespace pto
