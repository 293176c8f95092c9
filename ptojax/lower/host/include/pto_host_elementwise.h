// pto_host_elementwise.h — elementwise vector instructions: tile-tile (TADD ...), tile-scalar
// (TADDS ...), unary (TEXP ...), compare/select (TCMP, TCMPS, TSEL), fill (TEXPANDS), TCI and
// conversion (TCVT).
//
// Semantics follow ptojax's numpy impls, so a host kernel matches the interpreter: float
// max/min propagate NaN; integer arithmetic wraps; integer division truncates toward zero and
// x/0 is 0; comparisons write 1/0 bytes (the host's predicate-mask encoding: one byte per
// element, nonzero is true); TRSQRT is 1/sqrt(x). Each op is a functor type so that the loop
// workers of pto_host_map.h are shared by every tile shape.
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
    return b == 0 ? C(-1) : (b == C(-1) ? op_sub(C(0), a) : q);   // (XLA: x / 0 = -1)
  } else {
    return a / b;
  }
}
template <typename C> inline C op_neg(C a) { return op_sub(C(0), a); }
template <typename C> inline C op_abs(C a) {
  if constexpr (std::is_floating_point<C>::value) return __builtin_fabsf(a);
  else return a < C(0) ? op_neg(a) : a;
}
// bit not; a bool (one 0/1 byte) is negated logically
template <typename C> inline C op_not(C a) {
  if constexpr (std::is_same<C, bool>::value) return !a;
  else return static_cast<C>(~a);
}
template <typename C> inline C op_recip(C a) { return C(1) / a; }
inline float sqrt_f32(float a) { return __builtin_sqrtf(a); }
inline float rsqrt_f32(float a) { return 1.0f / __builtin_sqrtf(a); }
inline bool is_finite_f32(float a) { return __builtin_fabsf(a) < __builtin_inff(); }

// NaN-propagating: a NaN a is kept by `a != a`; a NaN b fails `a > b` and is selected. The
// conditions are or-ed bitwise, not with `||`: no short-circuit branch, so a loop the
// vectorizer leaves scalar (a row reduction's pairwise combine) selects without a
// data-dependent jump (mispredicted on random data: 14% of the host flash forward).
template <typename C> inline C op_max(C a, C b) {
  if constexpr (std::is_floating_point<C>::value) return ((a > b) | (a != a)) ? a : b;
  else return a > b ? a : b;
}
template <typename C> inline C op_min(C a, C b) {
  if constexpr (std::is_floating_point<C>::value) return ((a < b) | (a != a)) ? a : b;
  else return a < b ? a : b;
}

#define PTO_HOST_BINARY_OP(NAME, EXPR) \
  struct NAME {                        \
    template <typename C>              \
    C operator()(C a, C b) const {     \
      return EXPR;                     \
    }                                  \
  };
PTO_HOST_BINARY_OP(Add, op_add(a, b))
PTO_HOST_BINARY_OP(Sub, op_sub(a, b))
PTO_HOST_BINARY_OP(Mul, op_mul(a, b))
PTO_HOST_BINARY_OP(Div, op_div(a, b))
PTO_HOST_BINARY_OP(Max, op_max(a, b))
PTO_HOST_BINARY_OP(Min, op_min(a, b))
PTO_HOST_BINARY_OP(And, static_cast<C>(a & b))
PTO_HOST_BINARY_OP(Or, static_cast<C>(a | b))
#undef PTO_HOST_BINARY_OP

#define PTO_HOST_UNARY_OP(NAME, EXPR) \
  struct NAME {                       \
    template <typename C>             \
    C operator()(C a) const {         \
      return EXPR;                    \
    }                                 \
  };
PTO_HOST_UNARY_OP(Neg, op_neg(a))
PTO_HOST_UNARY_OP(Abs, op_abs(a))
PTO_HOST_UNARY_OP(Not, op_not(a))
PTO_HOST_UNARY_OP(Exp, exp_f32(a))
PTO_HOST_UNARY_OP(Log, log_f32(a))
PTO_HOST_UNARY_OP(Sqrt, sqrt_f32(a))
PTO_HOST_UNARY_OP(Rsqrt, rsqrt_f32(a))
PTO_HOST_UNARY_OP(Recip, op_recip(a))
#undef PTO_HOST_UNARY_OP

// op(x, s) and op(s, x) for a scalar s held in the compute type.
template <typename Op, typename C>
struct ScalarRight {
  C s;
  template <typename A>
  auto operator()(A a) const { return Op()(a, static_cast<A>(s)); }
};
template <typename Op, typename C>
struct ScalarLeft {
  C s;
  template <typename A>
  auto operator()(A a) const { return Op()(static_cast<A>(s), a); }
};

template <typename C>
struct Constant {
  C value;
  C operator()() const { return value; }
};

template <CmpMode M>
struct Compare {
  template <typename C>
  bool operator()(C a, C b) const {
    switch (M) {
      case CmpMode::EQ: return a == b;
      case CmpMode::NE: return a != b;
      case CmpMode::LT: return a < b;
      case CmpMode::GT: return a > b;
      case CmpMode::GE: return a >= b;
      default: return a <= b;
    }
  }
};

template <CmpMode M, typename C>
struct CompareScalar {
  C s;
  template <typename A>
  bool operator()(A a) const { return Compare<M>()(a, static_cast<A>(s)); }
};

struct Select {
  template <typename M, typename C>
  C operator()(M m, C a, C b) const { return m ? a : b; }
};

template <typename To, RoundMode Mode>
struct Convert {
  template <typename C>
  To operator()(C a) const { return convert<To>(a, Mode); }
};

// A scalar operand in the compute type of tile element E.
template <typename E, typename S>
inline compute_t<E> scalar_as(S s) {
  return static_cast<compute_t<E>>(widen(s));
}

template <CmpMode M> struct CmpTag { static constexpr CmpMode mode = M; };

// Call fn(CmpTag<mode>()), dispatching the run-time mode once, outside the loops.
template <typename Fn>
inline void with_cmp_mode(CmpMode mode, Fn fn) {
  switch (mode) {
    case CmpMode::EQ: fn(CmpTag<CmpMode::EQ>()); break;
    case CmpMode::NE: fn(CmpTag<CmpMode::NE>()); break;
    case CmpMode::LT: fn(CmpTag<CmpMode::LT>()); break;
    case CmpMode::GT: fn(CmpTag<CmpMode::GT>()); break;
    case CmpMode::GE: fn(CmpTag<CmpMode::GE>()); break;
    default: fn(CmpTag<CmpMode::LE>()); break;
  }
}

}  // namespace host

// --- tile op tile ----------------------------------------------------------------------------
#define PTO_HOST_BINARY(NAME, OP)                                               \
  template <typename D, typename S0, typename S1>                               \
  PTO_INST void NAME(D& dst, S0& src0, S1& src1, PTO_HOST_LINE) { \
    host::map_tiles(dst, OP(), src0, src1);                                     \
    host::vector_access(line, #NAME, dst, src0, src1);                          \
  }
PTO_HOST_BINARY(TADD, host::Add)
PTO_HOST_BINARY(TSUB, host::Sub)
PTO_HOST_BINARY(TMUL, host::Mul)
PTO_HOST_BINARY(TDIV, host::Div)
PTO_HOST_BINARY(TMAX, host::Max)
PTO_HOST_BINARY(TMIN, host::Min)
PTO_HOST_BINARY(TAND, host::And)
PTO_HOST_BINARY(TOR, host::Or)
#undef PTO_HOST_BINARY

// --- tile op scalar --------------------------------------------------------------------------
#define PTO_HOST_SCALAR(NAME, OP)                                                      \
  template <typename D, typename S, typename V,                                        \
            std::enable_if_t<is_tile<S>::value && !is_tile<V>::value, int> = 0>        \
  PTO_INST void NAME(D& dst, S& src, V scalar, PTO_HOST_LINE) {          \
    using C = host::compute_t<typename S::DType>;                                            \
    host::map_tiles(dst, host::ScalarRight<OP, C>{host::scalar_as<typename S::DType>(scalar)}, \
                    src);                                                              \
    host::vector_access(line, #NAME, dst, src);                                        \
  }
PTO_HOST_SCALAR(TADDS, host::Add)
PTO_HOST_SCALAR(TSUBS, host::Sub)
PTO_HOST_SCALAR(TMULS, host::Mul)
PTO_HOST_SCALAR(TDIVS, host::Div)
PTO_HOST_SCALAR(TMAXS, host::Max)
PTO_HOST_SCALAR(TMINS, host::Min)
#undef PTO_HOST_SCALAR

// scalar / tile
template <typename D, typename V, typename S,
          std::enable_if_t<!is_tile<V>::value && is_tile<S>::value, int> = 0>
PTO_INST void TDIVS(D& dst, V scalar, S& src, PTO_HOST_LINE) {
  using C = host::compute_t<typename S::DType>;
  host::map_tiles(dst, host::ScalarLeft<host::Div, C>{host::scalar_as<typename S::DType>(scalar)},
                  src);
  host::vector_access(line, "TDIVS", dst, src);
}

// Broadcast a scalar over the destination's valid region.
template <typename D, typename V>
PTO_INST void TEXPANDS(D& dst, V scalar, PTO_HOST_LINE) {
  using C = host::compute_t<typename D::DType>;
  host::map_tiles(dst, host::Constant<C>{host::scalar_as<typename D::DType>(scalar)});
  host::vector_access(line, "TEXPANDS", dst);
}

// start, start + 1, ... over the destination's valid elements in row-major order (a [1,C]
// tile, or the [1,R] row view of a row vector); int32/int16 only, as on A2/A3.
template <typename D, typename T, int descending = 0>
PTO_INST void TCI(D& dst, T start, PTO_HOST_LINE) {
  static_assert(std::is_same<typename D::DType, T>::value, "TCI: tile and start types differ");
  const host::View<typename D::DType> d = host::view(dst);
  const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
  for (int i = 0; i < vr; ++i)
    for (int j = 0; j < vc; ++j) {
      const T k = static_cast<T>(i * vc + j);
      d(i, j) = descending ? static_cast<T>(start - k) : static_cast<T>(start + k);
    }
  host::vector_access(line, "TCI", dst);
}

// --- unary -----------------------------------------------------------------------------------
#define PTO_HOST_UNARY(NAME, OP)                                          \
  template <typename D, typename S>                                       \
  PTO_INST void NAME(D& dst, S& src, PTO_HOST_LINE) {       \
    host::map_tiles(dst, OP(), src);                                      \
    host::vector_access(line, #NAME, dst, src);                           \
  }
PTO_HOST_UNARY(TABS, host::Abs)
PTO_HOST_UNARY(TNEG, host::Neg)
PTO_HOST_UNARY(TNOT, host::Not)
PTO_HOST_UNARY(TEXP, host::Exp)
PTO_HOST_UNARY(TLOG, host::Log)
PTO_HOST_UNARY(TSQRT, host::Sqrt)
PTO_HOST_UNARY(TRSQRT, host::Rsqrt)
PTO_HOST_UNARY(TRECIP, host::Recip)
#undef PTO_HOST_UNARY

// --- compare and select ----------------------------------------------------------------------
template <typename D, typename S0, typename S1, std::enable_if_t<is_tile<S1>::value, int> = 0>
PTO_INST void TCMP(D& dst, S0& src0, S1& src1, CmpMode mode, PTO_HOST_LINE) {
  host::with_cmp_mode(mode, [&](auto tag) {
    host::map_tiles(dst, host::Compare<decltype(tag)::mode>(), src0, src1);
  });
  host::vector_access(line, "TCMP", dst, src0, src1);
}

template <typename D, typename S, typename V, std::enable_if_t<!is_tile<V>::value, int> = 0>
PTO_INST void TCMPS(D& dst, S& src, V scalar, CmpMode mode, PTO_HOST_LINE) {
  using C = host::compute_t<typename S::DType>;
  const C s = host::scalar_as<typename S::DType>(scalar);
  host::with_cmp_mode(mode, [&](auto tag) {
    host::map_tiles(dst, host::CompareScalar<decltype(tag)::mode, C>{s}, src);
  });
  host::vector_access(line, "TCMPS", dst, src);
}

// dst = mask ? src0 : src1
template <typename D, typename M, typename S0, typename S1>
PTO_INST void TSEL(D& dst, M& mask, S0& src0, S1& src1, PTO_HOST_LINE) {
  host::map_tiles(dst, host::Select(), mask, src0, src1);
  host::vector_access(line, "TSEL", dst, mask, src0, src1);
}

// --- conversion ------------------------------------------------------------------------------
template <typename D, typename S>
PTO_INST void TCVT(D& dst, S& src, RoundMode mode, PTO_HOST_LINE) {
  using TD = typename D::DType;
  switch (mode) {
    case RoundMode::CAST_TRUNC:
      host::map_tiles(dst, host::Convert<TD, RoundMode::CAST_TRUNC>(), src); break;
    case RoundMode::CAST_FLOOR:
      host::map_tiles(dst, host::Convert<TD, RoundMode::CAST_FLOOR>(), src); break;
    case RoundMode::CAST_CEIL:
      host::map_tiles(dst, host::Convert<TD, RoundMode::CAST_CEIL>(), src); break;
    case RoundMode::CAST_ROUND:
      host::map_tiles(dst, host::Convert<TD, RoundMode::CAST_ROUND>(), src); break;
    default:
      host::map_tiles(dst, host::Convert<TD, RoundMode::CAST_RINT>(), src); break;
  }
  host::vector_access(line, "TCVT", dst, src);
}

}  // namespace pto
