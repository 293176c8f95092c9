// pto_host_types.h — element types of the host build of PTO kernels.
//
// `half` (IEEE binary16) and `bfloat16_t` are 16-bit storage types, `float8_e4m3_t` (no
// infinities; 0x7f/0xff are NaN; largest 448) and `float8_e5m2_t` (the top byte of a half) 8-bit
// ones, as ml_dtypes' float8_e4m3fn / float8_e5m2. Arithmetic on them happens in float: every tile instruction widens its operands to float, computes, and rounds the
// result back to nearest-even, once per instruction (as numpy and ml_dtypes do per operation).
// The conversions are branch-free integer code so that loops over tiles vectorize.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace pto {
namespace host {

// The kernel line an instruction is called from (for error messages): the last parameter of
// every instruction, defaulted at the call site. Nothing converts to it implicitly, so an
// argument too many is a compile error rather than a silently wrong line.
// (With an explicit constructor call as the default, GCC and clang evaluate __builtin_LINE()
// at the call site; as an aggregate initializer it would give this header's line.)
struct SourceLine {
  explicit SourceLine(int line) : value(line) {}
  operator int() const { return value; }
  int value;
};
#define PTO_HOST_LINE ::pto::host::SourceLine line = ::pto::host::SourceLine(__builtin_LINE())

inline float bits_as_float(uint32_t u) {
#if defined(__has_builtin) && __has_builtin(__builtin_bit_cast)
  return __builtin_bit_cast(float, u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

inline uint32_t float_as_bits(float f) {
#if defined(__has_builtin) && __has_builtin(__builtin_bit_cast)
  return __builtin_bit_cast(uint32_t, f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

// binary16 -> binary32 (exact). The exponent/mantissa field shifted into float position is
// the value scaled by 2^-112 for normal and subnormal halfs alike; inf/NaN get the float
// all-ones exponent with their mantissa (payload) kept.
inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t body = h & 0x7fffu;
  uint32_t mag = float_as_bits(bits_as_float(body << 13) * 0x1p112f);
  mag = body >= 0x7c00u ? (mag | 0x7f800000u) : mag;
  return bits_as_float(mag | sign);
}

// binary32 -> binary16, round to nearest even; overflow gives inf, NaN stays a (quiet) NaN.
inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_as_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  // normal halfs: rebias the exponent and round the 13 dropped mantissa bits to even
  uint32_t normal = (ax - (112u << 23) + 0xfffu + ((ax >> 13) & 1u)) >> 13;
  normal = normal > 0x7c00u ? 0x7c00u : normal;
  // subnormal halfs: adding 0.5 leaves the value rounded to multiples of 2^-24 in the low bits
  const uint32_t subnormal = float_as_bits(bits_as_float(ax) + 0.5f) - 0x3f000000u;
  const uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu);
  uint32_t h = ax < 0x38800000u ? subnormal : normal;
  h = ax > 0x7f800000u ? nan : h;
  return static_cast<uint16_t>(h | sign);
}

inline float bf16_bits_to_float(uint16_t b) { return bits_as_float(static_cast<uint32_t>(b) << 16); }

// binary32 -> bfloat16, round to nearest even; NaN stays a quiet NaN.
inline uint16_t float_to_bf16_bits(float f) {
  const uint32_t x = float_as_bits(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

inline float e5m2_bits_to_float(uint8_t b) {
  return half_bits_to_float(static_cast<uint16_t>(b) << 8);
}

// float8_e4m3fn -> binary32 (exact): the exponent/mantissa field shifted into float position
// is the value scaled by 2^-120, for normal and subnormal values alike.
inline float e4m3_bits_to_float(uint8_t b) {
  const uint32_t body = b & 0x7fu;
  const float mag = bits_as_float(body << 20) * 0x1p120f;
  const float value = body == 0x7fu ? __builtin_nanf("") : mag;
  return (b & 0x80u) ? -value : value;
}

// binary32 -> an 8-bit float with kMant mantissa bits and exponent bias kBias, rounded to
// nearest even (subnormals included). A value rounding past the largest finite encoding takes
// the next encoding up, `overflow` (NaN 0x7f for e4m3fn, inf 0x7c for e5m2), as ml_dtypes.
template <int kMant, int kBias>
inline uint8_t float_to_fp8_bits(float f, uint32_t largest, uint32_t overflow,
                                 uint32_t nan) {
  const uint32_t sign = (float_as_bits(f) >> 24) & 0x80u;
  const float a = __builtin_fabsf(f);
  if (a != a) return static_cast<uint8_t>(nan | sign);
  const float quantum = __builtin_ldexpf(1.0f, 1 - kBias - kMant);   // subnormal spacing
  uint32_t bits;
  if (a < __builtin_ldexpf(1.0f, 1 - kBias)) {
    bits = static_cast<uint32_t>(__builtin_rintf(a / quantum));      // may round up to normal
  } else if (a > __builtin_ldexpf(1.0f, 2 + kBias)) {
    bits = largest + 1;                                              // far beyond the range
  } else {
    int e;
    (void)__builtin_frexpf(a, &e);                                   // a = m * 2^e, m in [.5, 1)
    const float r = __builtin_rintf(__builtin_ldexpf(a, kMant + 1 - e));   // in [2^k, 2^(k+1)]
    bits = (static_cast<uint32_t>(e - 1 + kBias) << kMant) +
           static_cast<uint32_t>(r) - (1u << kMant);                 // a carry bumps e
  }
  bits = bits > largest ? overflow : bits;
  return static_cast<uint8_t>(bits | sign);
}

inline uint8_t float_to_e4m3_bits(float f) {
  return float_to_fp8_bits<3, 7>(f, 0x7eu, 0x7fu, 0x7fu);
}
inline uint8_t float_to_e5m2_bits(float f) {
  return float_to_fp8_bits<2, 15>(f, 0x7bu, 0x7cu, 0x7eu);
}

}  // namespace host

// IEEE binary16 storage; converts to and from float.
struct half {
  uint16_t bits;
  half() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic<T>::value>>
  half(T v) : bits(host::float_to_half_bits(static_cast<float>(v))) {}
  operator float() const { return host::half_bits_to_float(bits); }
};

// bfloat16 storage; converts to and from float.
struct bfloat16_t {
  uint16_t bits;
  bfloat16_t() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic<T>::value>>
  bfloat16_t(T v) : bits(host::float_to_bf16_bits(static_cast<float>(v))) {}
  operator float() const { return host::bf16_bits_to_float(bits); }
};

// 8-bit float storage (ml_dtypes float8_e4m3fn / float8_e5m2); converts to and from float.
struct float8_e4m3_t {
  uint8_t bits;
  float8_e4m3_t() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic<T>::value>>
  float8_e4m3_t(T v) : bits(host::float_to_e4m3_bits(static_cast<float>(v))) {}
  operator float() const { return host::e4m3_bits_to_float(bits); }
};

struct float8_e5m2_t {
  uint8_t bits;
  float8_e5m2_t() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic<T>::value>>
  float8_e5m2_t(T v) : bits(host::float_to_e5m2_bits(static_cast<float>(v))) {}
  operator float() const { return host::e5m2_bits_to_float(bits); }
};

using float16_t = half;
using float32_t = float;

namespace host {

template <typename T> struct is_low_float : std::false_type {};
template <> struct is_low_float<half> : std::true_type {};
template <> struct is_low_float<bfloat16_t> : std::true_type {};
template <> struct is_low_float<float8_e4m3_t> : std::true_type {};
template <> struct is_low_float<float8_e5m2_t> : std::true_type {};

// The type a tile instruction computes in for elements of type T.
template <typename T>
using compute_t = std::conditional_t<is_low_float<T>::value, float, T>;

template <typename T> inline compute_t<T> widen(T v) { return v; }
template <> inline float widen<half>(half v) { return half_bits_to_float(v.bits); }
template <> inline float widen<bfloat16_t>(bfloat16_t v) { return bf16_bits_to_float(v.bits); }
template <> inline float widen<float8_e4m3_t>(float8_e4m3_t v) {
  return e4m3_bits_to_float(v.bits);
}
template <> inline float widen<float8_e5m2_t>(float8_e5m2_t v) {
  return e5m2_bits_to_float(v.bits);
}

// Narrow a computed value to the element type (low floats round to nearest even).
template <typename T, typename C> inline T narrow(C v) { return static_cast<T>(v); }
template <> inline half narrow<half, float>(float v) {
  half h;
  h.bits = float_to_half_bits(v);
  return h;
}
template <> inline bfloat16_t narrow<bfloat16_t, float>(float v) {
  bfloat16_t b;
  b.bits = float_to_bf16_bits(v);
  return b;
}

template <> inline float8_e4m3_t narrow<float8_e4m3_t, float>(float v) {
  float8_e4m3_t b;
  b.bits = float_to_e4m3_bits(v);
  return b;
}
template <> inline float8_e5m2_t narrow<float8_e5m2_t, float>(float v) {
  float8_e5m2_t b;
  b.bits = float_to_e5m2_bits(v);
  return b;
}

template <typename T>
constexpr bool is_float_v = std::is_floating_point<T>::value || is_low_float<T>::value;

}  // namespace host
}  // namespace pto
