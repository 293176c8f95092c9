// pto_host_convert.h — element conversion with a rounding mode (TCVT, and stores that convert).
//
// float -> integer rounds by the mode (CAST_TRUNC toward zero, CAST_RINT/CAST_NONE to nearest
// even, CAST_ROUND half away from zero, CAST_FLOOR, CAST_CEIL), saturates at the integer range
// and sends NaN to 0, as XLA and ptojax's numpy impl do. float -> float rounds to nearest even.
// integer -> integer wraps (as numpy's astype). Anything -> bool is "!= 0".
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "pto_host_types.h"

namespace pto {

enum class RoundMode : int {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_ROUND,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_TRUNC,
  CAST_ODD,
};

namespace host {

inline float round_float(float v, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_TRUNC: return __builtin_truncf(v);
    case RoundMode::CAST_FLOOR: return __builtin_floorf(v);
    case RoundMode::CAST_CEIL: return __builtin_ceilf(v);
    case RoundMode::CAST_ROUND: return __builtin_roundf(v);
    default: return __builtin_rintf(v);
  }
}

// float value (already rounded to an integer) -> integer type I, saturating, NaN -> 0.
template <typename I>
inline I saturate_to_int(float r) {
  static_assert(sizeof(I) <= 4, "tile integers are at most 32 bits wide");
  const double lo = static_cast<double>(std::numeric_limits<I>::min());
  const double hi = static_cast<double>(std::numeric_limits<I>::max());
  const double w = static_cast<double>(r);
  const double clamped = w < lo ? lo : (w > hi ? hi : w);
  return r != r ? I(0) : static_cast<I>(clamped);
}

template <typename To, typename From>
inline To convert(From v, RoundMode mode = RoundMode::CAST_RINT) {
  using C = compute_t<From>;
  const C x = widen(v);
  if constexpr (std::is_same<To, bool>::value) {
    return x != C(0);
  } else if constexpr (is_float_v<To> && std::is_same<C, bool>::value) {
    // through int: GCC 12 does not vectorize a loop converting bool to float directly
    return narrow<To>(static_cast<compute_t<To>>(static_cast<int>(x)));
  } else if constexpr (is_float_v<To>) {
    return narrow<To>(static_cast<compute_t<To>>(x));
  } else if constexpr (is_float_v<From>) {
    return saturate_to_int<To>(round_float(static_cast<float>(x), mode));
  } else {
    using U = std::make_unsigned_t<std::conditional_t<std::is_same<C, bool>::value, int, C>>;
    return static_cast<To>(static_cast<U>(x));
  }
}

}  // namespace host
}  // namespace pto
