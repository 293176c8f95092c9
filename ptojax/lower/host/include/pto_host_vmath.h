// pto_host_vmath.h — branch-free float32 elementary functions for vectorized tile loops:
// exp log log1p expm1 tanh logistic erf erfc sin cos lgamma (all `<name>_f32`).
//
// libm's scalar calls stop the compiler from vectorizing a tile loop, and -ffast-math would
// change NaN/inf semantics, so each function here is straight-line float code: every lane
// computes all cases and selects with ternaries on its own values (no branches, no tables,
// no libm). A fused kernel inlines several of them into one loop over a tile; GCC vectorizes
// such loops without -ffast-math: with GCC 12 and -march=native (AVX-512; also with
// -march=x86-64-v3 or just -msse4.1), a loop applying any one of the eleven functions, and
// fused loops (tanh * erf + lgamma, the sum of all eleven, a select between log and
// erf + lgamma) are vectorized at -O3 and at -O2 -fvect-cost-model=cheap (the kernel flags;
// plain -O2's "very cheap" model vectorizes no loop with a remainder). On the x86-64
// baseline (SSE2, no vector rint/floor) only log and log1p loops vectorize. Functions are
// forced inline (PTO_VMATH_INLINE): a call left in a loop stops vectorization.
//
// IEEE semantics are those of numpy's float32 functions: NaN in -> NaN out, the limits at
// +-inf, overflow to inf, gradual underflow to correctly rounded subnormals, signed zeros of
// the odd functions kept. Polynomial coefficients are minimax fits (Lawson's algorithm, the
// coefficients rounded to float one at a time and the rest refitted). `fmadd` is one rounding
// where the target has FMA (x86 -march=native on FMA hardware, aarch64); without FMA it
// falls back to a*b + c, exact-residual tricks that need an fma are dropped, and sin/cos
// reduce with a 5-part pi/2 whose products are exact instead (see `reduce_pio2`).
//
// "Measured" errors are maxima over every 17th float32 bit pattern (all binades, both signs,
// subnormals), in units of the float32 ulp of the exact result (2^-149 for subnormal
// results), against float64 libm references; GCC 12 -O2 -march=native on an AVX-512 + FMA
// CPU. Without FMA (same sweep): exp 1.18, log 0.84, log1p 0.92, expm1 1.45, tanh 1.32,
// logistic 1.48, erf 1.86, erfc 3.69, lgamma (x > -0.5) 1.94, sin/cos 3.4 for |x| < 1e5.
// tests/host/test_vmath.py checks these bounds (rounded up) on a sample of every binade.
// With FMA, exp log log1p expm1 tanh logistic erf erfc are also monotonic across runs of
// consecutive floats around their formula switches (tested); without FMA logistic, and erf /
// erfc at |x| = 0.5, are not quite.
#pragma once

#include <cstdint>

#include "pto_host_types.h"

// Forced inlining: GCC -O2 does not inline functions of this size into a tile loop on its
// own, and a call left in the loop stops vectorization. (Some mixes of && / || conditions
// and selects feeding a function argument also defeat GCC 12's vectorizer; the code below
// avoids them, see lgamma_core / lgamma_f32.)
#if defined(__GNUC__) || defined(__clang__)
#define PTO_VMATH_INLINE __attribute__((always_inline))
#else
#define PTO_VMATH_INLINE
#endif

namespace pto {
namespace host {

static inline PTO_VMATH_INLINE float fmadd(float a, float b, float c) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// NaN-passing clamps: the comparison is false for a NaN x, which is then returned.
static inline PTO_VMATH_INLINE float min_keep_nan(float x, float hi) { return hi < x ? hi : x; }
static inline PTO_VMATH_INLINE float max_keep_nan(float x, float lo) { return lo > x ? lo : x; }

static inline PTO_VMATH_INLINE float copy_sign(float magnitude, float sign) {
  return bits_as_float((float_as_bits(magnitude) & 0x7fffffffu) |
                       (float_as_bits(sign) & 0x80000000u));
}

// a + b = s + *err exactly (Knuth's 2Sum, any magnitudes).
static inline PTO_VMATH_INLINE float two_sum(float a, float b, float* err) {
  const float s = a + b;
  const float bb = s - a;
  *err = (a - (s - bb)) + (b - bb);
  return s;
}

// The int32 value of an integer-valued float, 0 for NaN (whose conversion is undefined; the
// lanes that convert a NaN n have a NaN result anyway).
static inline PTO_VMATH_INLINE int32_t to_int(float n) {
  return static_cast<int32_t>(n == n ? n : 0.0f);
}

// 2^k for an integer-valued float k in [-126, 127].
static inline PTO_VMATH_INLINE float pow2i(float k) {
  return bits_as_float(static_cast<uint32_t>(to_int(k) + 127) << 23);
}

// y * 2^n for integer-valued float n in [-252, 254]: two in-range powers applied one after the
// other, so the result overflows or underflows (to a correctly rounded subnormal) only when
// y * 2^n does.
static inline PTO_VMATH_INLINE float scale_by_pow2(float y, float n) {
  const int32_t k = to_int(n);
  const int32_t half = k >> 1;
  const float p = bits_as_float(static_cast<uint32_t>(half + 127) << 23);
  const float q = bits_as_float(static_cast<uint32_t>(k - half + 127) << 23);
  return (y * p) * q;
}

// 1.5 * 2^23: for |v| < 2^22, v + kRoundShifter rounds v to the nearest integer n (ties to
// even, as rint) and holds n in its low mantissa bits: bits = 0x4b400000 + n, so that
// bits << 23 = n << 23 (mod 2^32).
constexpr float kRoundShifter = 12582912.0f;

// y * 2^n (two-step, as scale_by_pow2) for t = n + kRoundShifter + 254 (n integer in
// [-254, 257]; bits(t) = 0x4b400000 + n + 254): the exponent fields n - floor(n/2) + 127 and
// floor(n/2) + 127 are taken from t's bits by shifts alone. A NaN t gives some finite power
// (the lanes with a NaN t have a NaN y).
constexpr float kRoundShifter254 = 12583166.0f;
static inline PTO_VMATH_INLINE float scale_by_pow2_bits(float y, float t) {
  const uint32_t half = float_as_bits(t) >> 1 << 23;  // floor((n + 254) / 2) in the exponent
  const uint32_t all = float_as_bits(t) << 23;        // n + 254 in the exponent (mod 2^9)
  return (y * bits_as_float(half)) * bits_as_float(all - half);
}

// ---------------------------------------------------------------------------------------
// exp, expm1
// ---------------------------------------------------------------------------------------

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693145751953125f;    // ln 2 to 16 bits: n * kLn2Hi is exact
constexpr float kLn2Lo = 1.42860682030941723e-6f;
constexpr float kLn2 = 0.693147182f;            // ln 2 rounded (1.9e-9 above)

// e^r - 1 for |r| <= ln2/2 (+1%): r + r^2 P(r), minimax P of degree 4 (rel. error 2^-27.8
// in e^r). exp_poly(r) is the same polynomial as e^r in Horner form.
static inline PTO_VMATH_INLINE float expm1_poly(float r) {
  float p = 0.0013861946f;
  p = fmadd(p, r, 0.008368770592f);
  p = fmadd(p, r, 0.041667293757f);
  p = fmadd(p, r, 0.16666524112f);
  p = fmadd(p, r, 0.5f);
  return fmadd(p * r, r, r);
}
static inline PTO_VMATH_INLINE float exp_poly(float r) {
  float p = 0.0013861946f;
  p = fmadd(p, r, 0.008368770592f);
  p = fmadd(p, r, 0.041667293757f);
  p = fmadd(p, r, 0.16666524112f);
  p = fmadd(p, r, 0.5f);
  p = fmadd(p, r, 1.0f);
  return fmadd(p, r, 1.0f);
}

// e^(2h) = exp_poly(2h) with the factors 2^k folded into the coefficients: the same roundings
// (scaling by powers of 2 commutes with them), one multiplication fewer for a caller that
// would double its argument.
static inline PTO_VMATH_INLINE float exp_poly_of_double(float h) {
  float p = 0.0013861946f * 64.0f;
  p = fmadd(p, h, 0.008368770592f * 32.0f);
  p = fmadd(p, h, 0.041667293757f * 16.0f);
  p = fmadd(p, h, 0.16666524112f * 8.0f);
  p = fmadd(p, h, 2.0f);
  p = fmadd(p, h, 2.0f);
  return fmadd(p, h, 1.0f);
}

// e^x: x = n ln2 + r, |r| <= ln2/2 (Cody-Waite with a 2-part ln 2), e^x = 2^n e^r, n rounded
// by the shifter and 2^n applied in two steps (scale_by_pow2_bits), so the result overflows to
// inf / underflows to a correctly rounded subnormal or 0 exactly where e^x does. Outside
// [-104, 88.73] the lanes' arithmetic is meaningless and two selects give 0 / inf (cheaper
// than clamping x first: GCC's vector code for a NaN-keeping two-sided clamp is 7
// instructions); a NaN passes the arithmetic and both selects.
// Measured: max 0.89 ulp (subnormal results 0.86).
static inline PTO_VMATH_INLINE float exp_f32(float x) {
  const float t = fmadd(x, kLog2e, kRoundShifter254);
  const float n = t - kRoundShifter254;
  const float r = fmadd(-n, kLn2Lo, fmadd(-n, kLn2Hi, x));
  float y = scale_by_pow2_bits(exp_poly(r), t);
  y = x < -104.0f ? 0.0f : y;
  return x > 88.73f ? __builtin_inff() : y;
}

// e^(-x^2) = 2^n (1 + p) for 0 <= x <= 10.2, returning p and n, without the rounding error of
// x*x (which alone would be x^2 * 2^-24 in the exponent, 80 ulp at x = 9): x = xh + xl with
// xh of 12 bits, so -xh^2 is exact and reduced exactly by n ln2hi; the small rest
// -xl (x + xh) is added to r.
static inline PTO_VMATH_INLINE float exp_neg_square(float x, float* n) {
  const float xh = bits_as_float(float_as_bits(x) & 0xfffff000u);
  const float a = -(xh * xh);
  const float b = -((x - xh) * (x + xh));
  *n = __builtin_rintf((a + b) * kLog2e);
  return expm1_poly(fmadd(-*n, kLn2Lo, fmadd(-*n, kLn2Hi, a)) + b);
}

// e^x - 1 = 2^n (p + 1) - 1 with p = e^r - 1 = r + r^2 E(r) (minimax E of degree 5, rel.
// error 2^-30.9). For n <= 24, 2^n - 1 is exact and one fma gives the result; for larger n
// the -1 is folded into p as -2^-n. n is rounded by the shifter and the powers built from its
// bits (as in exp_f32); x < -30 gives -1 (expm1 is -1 below -17.4) and x > 88.73 inf by
// selects (n = 128 at the top is applied as 2^127 * 2 so that overflow gives inf).
static inline PTO_VMATH_INLINE float expm1_core(float x) {
  const float sh = fmadd(x, kLog2e, kRoundShifter);
  const float n = sh - kRoundShifter;
  const float r = fmadd(-n, kLn2Lo, fmadd(-n, kLn2Hi, x));
  float e = 0.00019771309f;
  e = fmadd(e, r, 0.0013934127f);
  e = fmadd(e, r, 0.0083335377f);
  e = fmadd(e, r, 0.041666478f);
  e = fmadd(e, r, 0.16666666f);
  e = fmadd(e, r, 0.5f);
  const float p = fmadd(r * r, e, r);
  // n from the shifter's bits; 2^min(n, 127) and 2^-min(n, 126) by integer min (n >= -44 in
  // range; the lanes out of range or NaN are replaced or NaN below)
  const int32_t k = static_cast<int32_t>(float_as_bits(sh) - 0x4b400000u);
  const uint32_t hi = static_cast<uint32_t>(k < 127 ? k : 127);
  const uint32_t hi126 = static_cast<uint32_t>(k < 126 ? k : 126);
  const float t = bits_as_float((hi + 127u) << 23);
  const float small = fmadd(t, p, t - 1.0f);
  const float big = fmadd(t, p - bits_as_float((127u - hi126) << 23), t) *
                    (k > 127 ? 2.0f : 1.0f);
  float y = k < 25 ? small : big;
  y = x < -30.0f ? -1.0f : y;
  return x > 88.73f ? __builtin_inff() : y;
}

// Measured: max 1.31 ulp.
static inline PTO_VMATH_INLINE float expm1_f32(float x) {
  const float y = expm1_core(x);
  return x == 0.0f ? x : y;  // expm1(-0) = -0
}

// ---------------------------------------------------------------------------------------
// log, log1p
// ---------------------------------------------------------------------------------------

// ln(1+f) for f = m - 1, m in [sqrt(1/2), sqrt(2)): with s = f/(2+f), ln(1+f) = 2 atanh(s)
// = f - hfsq + s (hfsq + R), hfsq = f^2/2, R(z) ~ 2z/3 + 2z^2/5 + ..., z = s^2 (minimax R of
// 3 terms, abs. error 2^-29.2 in R, i.e. 2^-30 relative in ln(1+f)). The fdlibm arrangement
// keeps f, the leading term, exact; the returned tail is s (hfsq + R) - hfsq.
static inline PTO_VMATH_INLINE float log1p_tail(float f) {
  const float s = f / (2.0f + f);
  const float z = s * s;
  float R = 0.29871461f;
  R = fmadd(R, z, 0.39977568f);
  R = fmadd(R, z, 0.66666776f);
  R = R * z;
  const float hfsq = 0.5f * f * f;
  return fmadd(s, hfsq + R, -hfsq);
}

// v = 2^k m, m in [sqrt(1/2), sqrt(2)), for a positive normal v: k as float, f = m - 1 (exact).
static inline PTO_VMATH_INLINE float log_split(float v, float* f) {
  // bits - bits(sqrt(1/2)) splits into the exponent and a mantissa that, re-biased, is m
  const int32_t u = static_cast<int32_t>(float_as_bits(v) - 0x3f3504f3u);
  *f = bits_as_float((static_cast<uint32_t>(u) & 0x7fffffu) + 0x3f3504f3u) - 1.0f;
  return static_cast<float>(u >> 23);
}

// ln x = k ln2 + ln(1+f) (see log1p_tail). Subnormal x is scaled by 2^23 first.
// Measured: max 0.84 ulp.
static inline PTO_VMATH_INLINE float log_f32(float x) {
  const bool tiny = x < 1.17549435e-38f;
  float f;
  const float k = log_split(tiny ? x * 8388608.0f : x, &f) - (tiny ? 23.0f : 0.0f);
  float y = fmadd(k, kLn2Hi, fmadd(k, kLn2Lo, log1p_tail(f)) + f);
  y = x == __builtin_inff() ? x : y;
  y = x == 0.0f ? -__builtin_inff() : y;
  y = x < 0.0f ? __builtin_nanf("") : y;
  return x != x ? x : y;
}

// ln x as an unevaluated sum hi + lo (|lo| <= ulp(hi), relative error about 2^-29) for a
// positive finite x (no special values): the exact k ln2hi + f is split by Fast2Sum.
static inline PTO_VMATH_INLINE float log_hilo(float x, float* lo) {
  const bool tiny = x < 1.17549435e-38f;
  float f;
  const float k = log_split(tiny ? x * 8388608.0f : x, &f) - (tiny ? 23.0f : 0.0f);
  const float a = k * kLn2Hi;                  // exact; |a| > |f| unless a = 0
  const float s1 = a + f;
  const float e1 = f - (s1 - a);
  const float c = fmadd(k, kLn2Lo, log1p_tail(f));
  const float hi = s1 + c;                     // |s1| > |c|
  *lo = e1 + (c - (hi - s1));
  return hi;
}

// ln(1+x): u = 1 + x rounded, t = (1 + x) - u exactly (Fast2Sum with the larger operand
// first), ln(1+x) = ln u + ln(1 + t/u) ~ ln u + t/u; ln u as in log_f32.
// Measured: max 0.87 ulp.
static inline PTO_VMATH_INLINE float log1p_f32(float x) {
  const float u = 1.0f + x;
  const float t = __builtin_fabsf(x) < 1.0f ? x - (u - 1.0f) : 1.0f - (u - x);
  float f;
  const float k = log_split(u, &f);
  const float c = t / u;
  float y = fmadd(k, kLn2Hi, fmadd(k, kLn2Lo, log1p_tail(f) + c) + f);
  y = x == __builtin_inff() ? x : y;
  y = u == 0.0f ? -__builtin_inff() : y;
  y = x < -1.0f ? __builtin_nanf("") : y;
  y = x == 0.0f ? x : y;  // log1p(-0) = -0
  return x != x ? x : y;
}

// ---------------------------------------------------------------------------------------
// tanh, logistic
// ---------------------------------------------------------------------------------------

// tanh x for |x| < 0.625: x + x^3 T(x^2), minimax T of degree 4 (rel. error 2^-27.7).
// Beyond: tanh|x| = 1 - 2 / (E + 1) with E = e^(2|x|) (|x| clamped to 10, where tanh is 1
// in float): tanh >= 0.55 there, so the roundings of E, E + 1 and the quotient are damped,
// and each step is monotonic, so the result is too (exp rather than expm1: a third faster,
// 0.03 ulp less accurate). E = 2^n e^(2r), r = |x| - n ln2/2, without exp_f32's range handling
// (2|x| <= 20: n <= 29, so 2^n is added to the exponent field as an integer); with FMA, r is
// reduced against ln 2 rounded to float, whose error (1.9e-9 n) is damped by 1/sinh(2|x|)
// like E's own. The result is computed for |x| and x's sign applied last: tanh(-0) = -0.
// Measured: max 1.34 ulp (every float of 0.625 <= |x| <= 11: 1.36 ulp; 1.35 without FMA).
static inline PTO_VMATH_INLINE float tanh_f32(float x) {
  // |x| clamped to 10 on the bits (an integer min; a NaN, whose bits are above 10's, becomes
  // 10 there and takes `small` in the select below, which keeps it)
  const uint32_t abits = float_as_bits(x) & 0x7fffffffu;
  const float ax = bits_as_float(abits);
  const float h = bits_as_float(abits < 0x41200000u ? abits : 0x41200000u);
  const float z = ax * ax;
  float t = -0.0056922967f;
  t = fmadd(t, z, 0.020628167f);
  t = fmadd(t, z, -0.053736515f);
  t = fmadd(t, z, 0.13331406f);
  t = fmadd(t, z, -0.33333281f);
  const float small = fmadd(ax * z, t, ax);
  // e^(2h) = 2^n e^(2r), r = h - n ln2/2 (the halved constants are exact halves)
  const float sh = fmadd(h, 2.0f * kLog2e, kRoundShifter);
  const float n = sh - kRoundShifter;
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  const float p = exp_poly_of_double(fmadd(-n, 0.5f * kLn2, h));  // (n ln2's error is damped)
#else
  const float p = exp_poly_of_double(fmadd(-n, 0.5f * kLn2Lo, fmadd(-n, 0.5f * kLn2Hi, h)));
#endif
  const float e = bits_as_float(float_as_bits(p) + (float_as_bits(sh) << 23));  // p 2^n
  const float big = 1.0f - 2.0f / (e + 1.0f);
  return copy_sign(ax >= 0.625f ? big : small, x);
}

// 1 / (1 + e^-x) = num / (1 + e) with e = e^-|x| in (0, 1], num = 1 for x >= 0 and e for
// x < 0: no overflow, and for x < -80 (1 + e = 1) the result is e^x itself, subnormals
// correctly rounded. For the rest e = 2^n (1 + p) is kept unrounded as eh + el (exact up to
// the polynomial), 1 + eh = d + de exactly (Fast2Sum), and y = num/d is corrected by one
// Newton step with the exact residual num - y d (fma) and the low parts, so the result has
// one rounding plus the polynomial's error. Measured: max 1.00 ulp (subnormal results 0.75).
static inline PTO_VMATH_INLINE float logistic_f32(float x) {
  const float a = max_keep_nan(-__builtin_fabsf(x), -104.0f);
  const float sh = fmadd(a, kLog2e, kRoundShifter254);
  const float n = sh - kRoundShifter254;
  const float p = expm1_poly(fmadd(-n, kLn2Lo, fmadd(-n, kLn2Hi, a)));
  const float tail = scale_by_pow2_bits(1.0f + p, sh);
  // t = 2^max(n, -126): n + 127 from the shifter's bits, an integer max
  const int32_t biased = static_cast<int32_t>(float_as_bits(sh) - (0x4b400000u + 254u - 127u));
  const float t = bits_as_float(static_cast<uint32_t>(biased > 1 ? biased : 1) << 23);
  const float eh = fmadd(t, p, t);
  const float el = fmadd(t, p, t - eh);
  const float d = 1.0f + eh;
  const float dl = ((1.0f - d) + eh) + el;  // 1 + e = d + dl
  const bool neg = x < 0.0f;
  const float num = neg ? eh : 1.0f;
  const float inv = 1.0f / d;
  const float y = num * inv;
  const float res = fmadd(-y, d, num) + ((neg ? el : 0.0f) - y * dl);
  return x < -80.0f ? tail : fmadd(res, inv, y);
}

// ---------------------------------------------------------------------------------------
// erf, erfc
// ---------------------------------------------------------------------------------------

// erf x for |x| < 0.5: x + x Q(x^2), minimax Q of degree 4 (rel. error 2^-29.3).
static inline PTO_VMATH_INLINE float erf_small(float x) {
  const float z = x * x;
  float q = 0.00471916f;
  q = fmadd(q, z, -0.026758259f);
  q = fmadd(q, z, 0.112828508f);
  q = fmadd(q, z, -0.37612611f);
  q = fmadd(q, z, 0.12837917f);
  return fmadd(x, q, x);
}

// erfc x for 0.5 <= x <= 10.2 (Shepherd & Laframboise, Math. Comp. 36 (1981)): with
// q = (x - 2)/(x + 2) in [-0.6, 0.67], F = (x + 2) e^(x^2) erfc x is a smooth function of q,
// here a minimax polynomial of degree 8 (rel. error 2^-25.8). erfc x = e^(-x^2) F / (x + 2)
// with few roundings: F = fh + fl (the last Horner step's rounding error, by fma), x + 2 =
// s + sl (Fast2Sum), G = F/(x + 2) = g + gl (quotient g plus its exact residual, by fma;
// without FMA only sl is kept), and e^(-x^2) = 2^n (1 + p) applied as 2^n (g + (g p + gl)).
static inline PTO_VMATH_INLINE float erfc_large(float x) {
  const float s = x + 2.0f;
  const float sl = x < 2.0f ? (2.0f - s) + x : (x - s) + 2.0f;
  const float inv = 1.0f / s;
  const float q = (x - 2.0f) * inv;
  float f = -0.000453221175f;
  f = fmadd(f, q, -0.000808352313f);
  f = fmadd(f, q, 0.00298676034f);
  f = fmadd(f, q, 0.00647425791f);
  f = fmadd(f, q, -0.0214902777f);
  f = fmadd(f, q, -0.0364422202f);
  f = fmadd(f, q, 0.279470682f);
  f = fmadd(f, q, -0.687160671f);
  const float fh = fmadd(f, q, 1.02158272f);
  const float g = fh / s;
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  const float fl = __builtin_fmaf(f, q, 1.02158272f - fh);
  const float gl = (__builtin_fmaf(-g, s, fh) + (fl - g * sl)) * inv;
#else
  const float gl = -g * sl * inv;  // without fma the residuals are not exact
#endif
  float n;
  const float p = exp_neg_square(x, &n);
  return scale_by_pow2(g + fmadd(g, p, gl), n);
}

// erf x: erf_small for |x| < 0.5, else sign(x) (1 - erfc|x|) (|x| clamped to 10.2, where
// erfc is 0). Odd; erf(-0) = -0. Measured: max 1.34 ulp.
static inline PTO_VMATH_INLINE float erf_f32(float x) {
  const float ax = __builtin_fabsf(x);
  const float big = copy_sign(1.0f - erfc_large(min_keep_nan(ax, 10.2f)), x);
  return ax < 0.5f ? erf_small(x) : big;
}

// erfc x: 1 - erf_small(x) for |x| < 0.5, erfc_large(x) for x >= 0.5, 2 - erfc_large(-x) for
// x <= -0.5. Measured: max 2.61 ulp (relative where erfc x is a normal float, x < 9.19; the
// subnormal results up to x = 10.06 are within 1.04 * 2^-149).
static inline PTO_VMATH_INLINE float erfc_f32(float x) {
  const float ax = __builtin_fabsf(x);
  const float big = erfc_large(min_keep_nan(ax, 10.2f));
  return ax < 0.5f ? 1.0f - erf_small(x) : (x < 0.0f ? 2.0f - big : big);
}

// ---------------------------------------------------------------------------------------
// sin, cos
// ---------------------------------------------------------------------------------------

// sin r = r + r^3 S(r^2), cos r = 1 + r^2 (-1/2 + r^2 C(r^2)) on |r| <= pi/4 (+1%): minimax
// S, C of degree 2 (rel. errors 2^-27.8 and 2^-32.7).
static inline PTO_VMATH_INLINE float sin_poly(float r) {
  const float z = r * r;
  float s = -0.000195078828f;
  s = fmadd(s, z, 0.00833210628f);
  s = fmadd(s, z, -0.166666538f);
  return fmadd(r * z, s, r);
}
static inline PTO_VMATH_INLINE float cos_poly(float r) {
  const float z = r * r;
  float c = 2.44300863e-05f;
  c = fmadd(c, z, -0.00138872978f);
  c = fmadd(c, z, 0.0416666456f);
  c = fmadd(c, z, -0.5f);
  return fmadd(c, z, 1.0f);
}

// x = n pi/2 + r, |r| <= pi/4 (Cody-Waite). With FMA: n is the integer nearest x 2/pi, with
// the fraction of x 2/pi taken exactly from an fma against a 2-part 2/pi (x * 2/pi alone
// rounds to multiples of 1/2 and more from 2^22 on); pi/2 = P1 + P2 + P3 (each the float
// nearest the rest, 72 bits in all); t = x - n P1 is exact (a multiple of 2^-23 below 2 in
// magnitude) while n < 2^24, and r = t - n P2 - n P3 rounds only at its own magnitude, so r
// is accurate to about 2^-24 r + n 2^-73 for |x| < 2^24 pi/2 (2.6e7). Without FMA the parts
// of pi/2 have 8, 8, 8, 8 and 24 bits so that n Pi is exact for n < 2^16 (|x| < 1e5).
// Returns n mod 4 as a float in {0,1,2,3}. For |x| beyond the exact range r is meaningless;
// it is clamped to [-1, 1] so that sin/cos still return values in [-1, 1] (a finite x never
// gives NaN).
static inline PTO_VMATH_INLINE float reduce_pio2(float x, float* r) {
  const float kTwoOverPi = 0.63661975f;
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  const float n0 = __builtin_rintf(x * kTwoOverPi);
  const float frac = fmadd(x, 2.5682553e-08f, __builtin_fmaf(x, kTwoOverPi, -n0));
  const float n = n0 + __builtin_rintf(frac);
  float t = __builtin_fmaf(-n, 1.5707964f, x);
  t = __builtin_fmaf(-n, -4.371139e-08f, t);
  t = __builtin_fmaf(-n, -1.7151245e-15f, t);
#else
  const float n = __builtin_rintf(x * kTwoOverPi);
  float t = x - n * 1.5703125f;
  t = t - n * 0.0004825592f;
  t = t - n * 1.2665987e-06f;
  t = t - n * 9.895302e-10f;
  t = t - n * 2.563344e-12f;
#endif
  *r = max_keep_nan(min_keep_nan(t, 1.0f), -1.0f);
  return n - 4.0f * __builtin_floorf(n * 0.25f);
}

// sin x by quadrant: n mod 4 = 0, 1, 2, 3 -> sin r, cos r, -sin r, -cos r. NaN/inf give NaN
// (r is NaN). Measured: max 1.52 ulp for |x| < 2^16, 1.59 for |x| < 2^20, 2.35 for
// |x| < 2^24 pi/2 = 2.6e7 (the bound's range with FMA; without FMA 3.4 ulp for |x| < 1e5).
// Beyond that range the results are values in [-1, 1] unrelated to sin x (the reduction is
// Cody-Waite only; full Payne-Hanek reduction would need data-dependent table reads).
static inline PTO_VMATH_INLINE float sin_f32(float x) {
  float r;
  const float q = reduce_pio2(x, &r);
  const bool odd = q == 1.0f || q == 3.0f;
  float y = odd ? cos_poly(r) : sin_poly(r);
  y = q >= 2.0f ? -y : y;
  y = max_keep_nan(min_keep_nan(y, 1.0f), -1.0f);
  return x == 0.0f ? x : y;  // sin(-0) = -0
}

// cos x by quadrant: cos r, -sin r, -cos r, sin r. Same ranges as sin_f32; measured: max
// 1.51 ulp for |x| < 2^16, 1.57 for |x| < 2^20, 2.38 for |x| < 2.6e7.
static inline PTO_VMATH_INLINE float cos_f32(float x) {
  float r;
  const float q = reduce_pio2(x, &r);
  const bool odd = q == 1.0f || q == 3.0f;
  float y = odd ? sin_poly(r) : cos_poly(r);
  y = (q == 1.0f || q == 2.0f) ? -y : y;
  return max_keep_nan(min_keep_nan(y, 1.0f), -1.0f);
}

// ---------------------------------------------------------------------------------------
// lgamma
// ---------------------------------------------------------------------------------------

// |sin(pi x)| for finite x, with exact argument reduction: x - 2 rint(x/2) = r in [-1, 1] and
// r - n/2 = u in [-1/4, 1/4] (n = rint(2r)) are exact, then sin or cos of pi u, with pi u =
// t + tl (fma residual and the low part of pi) applied to first order.
static inline PTO_VMATH_INLINE float abs_sinpi(float x) {
  const float r = x - 2.0f * __builtin_rintf(0.5f * x);
  const float n = __builtin_rintf(2.0f * r);
  const float u = r - 0.5f * n;
  const float t = 3.14159274f * u;
  const float tl = fmadd(3.14159274f, u, -t) + -8.742278e-08f * u;
  const float s = sin_poly(t);
  const float c = cos_poly(t);
  const bool odd = n == 1.0f || n == -1.0f;
  return __builtin_fabsf(odd ? fmadd(-tl, s, c) : fmadd(tl, c, s));
}

// lgamma(2 + y) / y on |y| <= 0.502 (rel. error 2^-25.9, the rounding of its constant term
// 1 - gamma) or, for mid = true, (lgamma(tc + y) - lgamma(tc)) / y on y in [-0.212, 0.289]
// around the minimum tc = 1.4616321 (error 2^-31.6 relative to lgamma): minimax
// polynomials of degree 8, evaluated as one with per-lane coefficients.
static inline PTO_VMATH_INLINE float lgamma_poly(float y, bool mid) {
  float p = mid ? -0.004617452156f : -0.000438170129f;
  p = fmadd(p, y, mid ? 0.006930937991f : 0.000568780000f);
  p = fmadd(p, y, mid ? -0.010278544389f : -0.00109019666f);
  p = fmadd(p, y, mid ? 0.017906995490f : 0.00288019795f);
  p = fmadd(p, y, mid ? -0.032787717879f : -0.00740169454f);
  p = fmadd(p, y, mid ? 0.064626649022f : 0.0205813684f);
  p = fmadd(p, y, mid ? -0.147587761283f : -0.0673514754f);
  p = fmadd(p, y, mid ? 0.483836114407f : 0.322467029f);
  return fmadd(p, y, mid ? -1.188416299e-08f : 0.422784328f);
}

// lgamma v for v in (-0.5, 0.5) or v >= 0.5 (finite), from one polynomial (lgamma_poly) and
// one logarithm:
//   |v| < 0.5:        lgamma(2 + v) - ln|v (1 + v)|    (the rounding errors of 1 + v and,
//                                                       with FMA, of the product kept)
//   0.5 <= v < 1.25:  lgamma(2 + y) - ln v,  y = v - 1
//   1.25 <= v < 1.75: lgamma(tc) + y M(y),   y = v - tc (no cancellation near the minimum)
//   1.75 <= v < 6.5:  lgamma(2 + y) + ln((y+2)...(y+i-1)),  i = floor(v + 1/2), y = v - i
//   v >= 6.5:         Stirling: (v - 1/2)(ln v - 1) + W(1/v), W = ln(2 pi)/2 + 1/(12v) - ...
//                     (3-term minimax, abs. error 2^-31.8 relative to lgamma)
// y, v - 1, v - tc and the factors y + j are exact, so lgamma(1) = lgamma(2) = 0 exactly and
// the zeros at 1 and 2 keep relative accuracy; ln is computed as hi + lo (log_hilo).
static inline PTO_VMATH_INLINE float lgamma_core(float v, float* low) {
  const float i = __builtin_floorf(v + 0.5f);  // (only used for v < 6.5)
  const bool near0 = __builtin_fabsf(v) < 0.5f;
  const bool mid = v >= 1.25f && v < 1.75f;
  const float y = near0 ? v : (mid ? v - 1.4616321f : v - i);
  // the log argument and its rounding error: |v (1 + v)| = p + p_err, or the product of the
  // factors y + j = prod + prod_err (the fma residuals of the products; 0 without FMA)
  const float s1 = 1.0f + v;
  const float e1 = v - (s1 - 1.0f);
  const float av = __builtin_fabsf(v);
  const float as1 = __builtin_fabsf(s1);
  const float p = av * as1;
  const float p_err = fmadd(av, as1, -p) + av * (s1 < 0.0f ? -e1 : e1);
  const float f2 = i > 2.0f ? y + 2.0f : 1.0f;
  const float f3 = i > 3.0f ? y + 3.0f : 1.0f;
  const float f4 = i > 4.0f ? y + 4.0f : 1.0f;
  const float f5 = i > 5.0f ? y + 5.0f : 1.0f;
  const float p23 = f2 * f3;
  const float p234 = p23 * f4;
  const float prod = p234 * f5;
  const float prod_err = fmadd(fmadd(p23, f4, -p234), f5, fmadd(p234, f5, -prod)) +
                         fmadd(f2, f3, -p23) * (f4 * f5);
  // (single-condition selects: GCC 12 does not vectorize some mixes of && / || masks here)
  const float prod_or_v = i < 1.5f ? v : (v >= 6.5f ? v : prod);
  const float prod_err_or_0 = i < 1.5f ? 0.0f : (v >= 6.5f ? 0.0f : prod_err);
  const float arg = near0 ? p : (mid ? 1.0f : prod_or_v);
  const float arg_err = near0 ? p_err : (mid ? 0.0f : prod_err_or_0);
  float lo;
  const float hi = log_hilo(arg, &lo);
  lo += arg_err / arg;
  const float yp = y * lgamma_poly(y, mid);
  // small = a + b + c: the lgamma(2 + y) or lgamma(tc) part, -+ ln's hi, and the low parts
  const float sign = i < 1.5f ? -1.0f : 1.0f;
  const float a = mid ? -0.12148629f : yp;
  const float b = mid ? yp : sign * hi;
  float small_lo;
  const float small = two_sum(a, b, &small_lo);
  small_lo += mid ? 7.5348e-10f : sign * lo;
  // Stirling: (v - 1/2)(hi - 1) rounds once, its error kept by fma
  const float z = 1.0f / v;
  const float w = fmadd(z, fmadd(z * z, -0.00273705390f, 0.0833325312f), 0.418938577f);
  const float vh = v - 0.5f;
  const float prod_hi = vh * (hi - 1.0f);
  // (lgamma overflows for v > 4.08e36: prod_hi or big is inf, and the low parts are dropped)
  const float rest = prod_hi < __builtin_inff()
                         ? fmadd(vh, lo, w) + fmadd(vh, hi - 1.0f, -prod_hi) : 0.0f;
  const float big = prod_hi + rest;                 // |prod_hi| > |rest|: Fast2Sum
  const float big_lo = big < __builtin_inff() ? rest - (big - prod_hi) : 0.0f;
  *low = v >= 6.5f ? big_lo : small_lo;
  return v >= 6.5f ? big : small;
}

// ln|Gamma(x)|. x > -0.5: lgamma_core. x <= -0.5: reflection,
// lgamma x = ln(pi / |x sin(pi x)|) - lgamma|x|, with both terms as hi + lo pairs and the
// sum by 2Sum, so that the cancellation between them (lgamma has zeros between -2 and -7)
// leaves an absolute error of a few 2^-24 rather than an ulp of the terms. +inf at x = 0,
// -inf and the negative integers; +inf at +inf and where lgamma overflows (x > 4.08e36).
// Measured: x > -0.5: max 1.82 ulp, relative everywhere (the zeros at 1 and 2 included, so no
// absolute-error exception is needed there). x <= -0.5 (every 5th float in [-40, -0.5]):
// within max(4 ulp, 2^-22 absolute) everywhere, with max 4.7 ulp where |lgamma| >= 1/4 and
// absolute error <= 2^-22.7 where |lgamma| < 1 (near its zeros, which lie beside each pole
// -2, -3, ...); 0.72 ulp for x < -10. Without FMA (no exact product residuals): within
// max(8 ulp, 2^-20 absolute), 1.6 ulp for x < -10.
static inline PTO_VMATH_INLINE float lgamma_f32(float x) {
  const float ax = __builtin_fabsf(x);
  const bool reflect = x <= -0.5f;
  // v = reflect ? -x : x as arithmetic (x - 2x is exact): a select here lets GCC's jump
  // threading duplicate lgamma_core per case, which its vectorizer then rejects in fused loops
  const float v = fmadd(reflect ? -2.0f : 0.0f, x, x);
  float core_lo;
  const float core = lgamma_core(v, &core_lo);
  // reflection: ln(pi) - ln(t) - core, t = |x sin(pi x)| = t + t_lo
  const float sp = abs_sinpi(min_keep_nan(ax, 1e30f));
  const float t = ax * sp;
  float lo;
  const float hi = log_hilo(t, &lo);
  lo += fmadd(ax, sp, -t) / t;
  float e1, e2;
  const float d = two_sum(1.1447299f, -hi, &e1);
  const float refl_hi = two_sum(d, -core, &e2);
  const float refl = refl_hi + (((3.317301e-08f - lo) - core_lo) + (e1 + e2));
  float y = reflect ? refl : core + core_lo;
  y = (x <= 0.0f && x == __builtin_rintf(x)) || ax == __builtin_inff() ? __builtin_inff() : y;
  return x != x ? x : y;
}

}  // namespace host
}  // namespace pto
