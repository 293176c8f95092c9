// pto_host_elementwise.h — elementwise vector instructions: tile-tile (TADD ...), tile-scalar
// (TADDS ...), unary (TEXP ...), compare/select (TCMP, TCMPS, TSEL), fill (TEXPANDS) and
// conversion (TCVT).
//
// Semantics follow ptojax's numpy impls, so a host kernel matches the interpreter: float
// max/min propagate NaN; integer arithmetic wraps; integer division truncates toward zero and
// x/0 is 0; comparisons write 1/0 bytes (the host's predicate-mask encoding: one byte per
// element, nonzero is true); TRSQRT is 1/sqrt(x).
#pragma once

#include <type_traits>

#include "pto_host_convert.h"
#include "pto_host_map.h"
#include "pto_host_math.h"

namespace pto {

enum class CmpMode : int { EQ = 0, NE, LT, GT, GE, LE };

namespace host {

template <typename C> using unsigned_of = std::make_unsigned_t<C>;

template <typename C> inline C op_add(C a, C b) {
  if constexpr (std::is_integral<C>::value)
    return static_cast<C>(static_cast<unsigned_of<C>>(a) + static_cast<unsigned_of<C>>(b));
  else
    return a + b;
}
template <typename C> inline C op_sub(C a, C b) {
  if constexpr (std::is_integral<C>::value)
    return static_cast<C>(static_cast<unsigned_of<C>>(a) - static_cast<unsigned_of<C>>(b));
  else
    return a - b;
}
template <typename C> inline C op_mul(C a, C b) {
  if constexpr (std::is_integral<C>::value)
    return static_cast<C>(static_cast<unsigned_of<C>>(a) * static_cast<unsigned_of<C>>(b));
  else
    return a * b;
}
template <typename C> inline C op_div(C a, C b) {
  if constexpr (std::is_integral<C>::value) {
    const C safe = (b == 0 || b == C(-1)) ? C(1) : b;
    const C q = a / safe;
    return b == 0 ? C(0) : (b == C(-1) ? op_sub(C(0), a) : q);
  } else {
    return a / b;
  }
}
template <typename C> inline C op_max(C a, C b) {
  C r = a > b ? a : b;
  if constexpr (std::is_floating_point<C>::value) {
    r = b != b ? b : r;
    r = a != a ? a : r;
  }
  return r;
}
template <typename C> inline C op_min(C a, C b) {
  C r = a < b ? a : b;
  if constexpr (std::is_floating_point<C>::value) {
    r = b != b ? b : r;
    r = a != a ? a : r;
  }
  return r;
}
template <typename C> inline C op_neg(C a) { return op_sub(C(0), a); }
template <typename C> inline C op_abs(C a) {
  if constexpr (std::is_floating_point<C>::value)
    return __builtin_fabsf(a);
  else
    return a < 0 ? op_neg(a) : a;
}
template <typename C> inline C op_not(C a) {
  if constexpr (std::is_same<C, bool>::value)
    return !a;
  else
    return static_cast<C>(~a);
}
template <typename C> inline bool op_cmp(C a, C b, CmpMode mode) {
  switch (mode) {
    case CmpMode::EQ: return a == b;
    case CmpMode::NE: return a != b;
    case CmpMode::LT: return a < b;
    case CmpMode::GT: return a > b;
    case CmpMode::GE: return a >= b;
    default: return a <= b;
  }
}

// A scalar operand in the compute type of tile element E.
template <typename E, typename S>
inline compute_t<E> scalar_as(S s) {
  return static_cast<compute_t<E>>(widen(s));
}

}  // namespace host

// --- tile op tile ----------------------------------------------------------------------------
#define PTO_HOST_BINARY(NAME, OP)                                                         \
  template <typename D, typename S0, typename S1>                                         \
  PTO_INST void NAME(D& dst, S0& src0, S1& src1, int line = __builtin_LINE()) {           \
    host::map_tiles(dst, [](auto a, auto b) { return OP(a, b); }, src0, src1);            \
    host::vector_access(line, #NAME, dst, src0, src1);                                    \
  }

PTO_HOST_BINARY(TADD, host::op_add)
PTO_HOST_BINARY(TSUB, host::op_sub)
PTO_HOST_BINARY(TMUL, host::op_mul)
PTO_HOST_BINARY(TDIV, host::op_div)
PTO_HOST_BINARY(TMAX, host::op_max)
PTO_HOST_BINARY(TMIN, host::op_min)
PTO_HOST_BINARY(TAND, [](auto a, auto b) { return a & b; })
PTO_HOST_BINARY(TOR, [](auto a, auto b) { return a | b; })
PTO_HOST_BINARY(TXOR, [](auto a, auto b) { return a ^ b; })
#undef PTO_HOST_BINARY

// --- tile op scalar --------------------------------------------------------------------------
#define PTO_HOST_SCALAR(NAME, OP)                                                         \
  template <typename D, typename S, typename V,                                           \
            std::enable_if_t<is_tile<S>::value && !is_tile<V>::value, int> = 0>           \
  PTO_INST void NAME(D& dst, S& src, V scalar, int line = __builtin_LINE()) {             \
    const auto s = host::scalar_as<typename S::DType>(scalar);                            \
    host::map_tiles(dst, [s](auto a) { return OP(a, s); }, src);                          \
    host::vector_access(line, #NAME, dst, src);                                           \
  }

PTO_HOST_SCALAR(TADDS, host::op_add)
PTO_HOST_SCALAR(TSUBS, host::op_sub)
PTO_HOST_SCALAR(TMULS, host::op_mul)
PTO_HOST_SCALAR(TDIVS, host::op_div)
PTO_HOST_SCALAR(TMAXS, host::op_max)
PTO_HOST_SCALAR(TMINS, host::op_min)
PTO_HOST_SCALAR(TANDS, [](auto a, auto b) { return a & b; })
PTO_HOST_SCALAR(TORS, [](auto a, auto b) { return a | b; })
PTO_HOST_SCALAR(TXORS, [](auto a, auto b) { return a ^ b; })
PTO_HOST_SCALAR(TLRELU, [](auto a, auto slope) { return a > 0 ? a : a * slope; })
#undef PTO_HOST_SCALAR

// scalar / tile
template <typename D, typename V, typename S,
          std::enable_if_t<!is_tile<V>::value && is_tile<S>::value, int> = 0>
PTO_INST void TDIVS(D& dst, V scalar, S& src, int line = __builtin_LINE()) {
  const auto s = host::scalar_as<typename S::DType>(scalar);
  host::map_tiles(dst, [s](auto a) { return host::op_div(s, a); }, src);
  host::vector_access(line, "TDIVS", dst, src);
}

// Broadcast a scalar over the destination's valid region.
template <typename D, typename V>
PTO_INST void TEXPANDS(D& dst, V scalar, int line = __builtin_LINE()) {
  const auto s = host::scalar_as<typename D::DType>(scalar);
  host::map_tiles(dst, [s]() { return s; });
  host::vector_access(line, "TEXPANDS", dst);
}

// --- unary -----------------------------------------------------------------------------------
#define PTO_HOST_UNARY(NAME, OP)                                                          \
  template <typename D, typename S>                                                       \
  PTO_INST void NAME(D& dst, S& src, int line = __builtin_LINE()) {                       \
    host::map_tiles(dst, [](auto a) { return OP(a); }, src);                              \
    host::vector_access(line, #NAME, dst, src);                                           \
  }

PTO_HOST_UNARY(TABS, host::op_abs)
PTO_HOST_UNARY(TNEG, host::op_neg)
PTO_HOST_UNARY(TNOT, host::op_not)
PTO_HOST_UNARY(TEXP, host::exp_f32)
PTO_HOST_UNARY(TLOG, host::log_f32)
PTO_HOST_UNARY(TSQRT, __builtin_sqrtf)
PTO_HOST_UNARY(TRSQRT, [](float a) { return 1.0f / __builtin_sqrtf(a); })
PTO_HOST_UNARY(TRECIP, [](auto a) { return decltype(a)(1) / a; })
PTO_HOST_UNARY(TRELU, [](auto a) { return host::op_max(a, decltype(a)(0)); })
#undef PTO_HOST_UNARY

// --- compare and select ----------------------------------------------------------------------
template <typename D, typename S0, typename S1,
          std::enable_if_t<is_tile<S1>::value, int> = 0>
PTO_INST void TCMP(D& dst, S0& src0, S1& src1, CmpMode mode, int line = __builtin_LINE()) {
  host::map_tiles(dst, [mode](auto a, auto b) { return host::op_cmp(a, b, mode); }, src0, src1);
  host::vector_access(line, "TCMP", dst, src0, src1);
}

template <typename D, typename S, typename V, std::enable_if_t<!is_tile<V>::value, int> = 0>
PTO_INST void TCMPS(D& dst, S& src, V scalar, CmpMode mode, int line = __builtin_LINE()) {
  const auto s = host::scalar_as<typename S::DType>(scalar);
  host::map_tiles(dst, [s, mode](auto a) { return host::op_cmp(a, s, mode); }, src);
  host::vector_access(line, "TCMPS", dst, src);
}

// dst = mask ? src0 : src1
template <typename D, typename M, typename S0, typename S1>
PTO_INST void TSEL(D& dst, M& mask, S0& src0, S1& src1, int line = __builtin_LINE()) {
  host::map_tiles(dst, [](auto m, auto a, auto b) { return m ? a : b; }, mask, src0, src1);
  host::vector_access(line, "TSEL", dst, mask, src0, src1);
}

// --- conversion ------------------------------------------------------------------------------
template <typename D, typename S>
PTO_INST void TCVT(D& dst, S& src, RoundMode mode, int line = __builtin_LINE()) {
  using TD = typename D::DType;
  host::map_tiles(dst, [mode](auto a) { return host::convert<TD>(a, mode); }, src);
  host::vector_access(line, "TCVT", dst, src);
}

}  // namespace pto
