// pto_host_reduce.h — axis reductions (TROWSUM/MAX/MIN, TCOLSUM/MAX/MIN) and expansions
// (TROWEXPAND*, TCOLEXPAND*).
//
// A per-row result or operand is an [R,1] tile (element (i, 0)) or a [1,R] tile (element
// (0, i)); per-column likewise. Row reductions keep 16 independent partial results per row so
// the loop vectorizes without reassociation flags, then combine them pairwise; sums of
// half/bfloat16 accumulate in float. Float max/min propagate NaN. The `tmp` operand the
// accelerator needs is accepted and unused.
#pragma once

#include "pto_host_elementwise.h"
#include "pto_host_map.h"

namespace pto {
namespace host {

constexpr int kReduceLanes = 16;

// combine(init, row[0], ..., row[n-1]) with kReduceLanes interleaved partial results.
template <typename E, typename C, typename Combine>
inline C reduce_contiguous(const E* row, int n, C init, Combine combine) {
  C part[kReduceLanes];
  for (int l = 0; l < kReduceLanes; ++l) part[l] = init;
  int j = 0;
  for (; j + kReduceLanes <= n; j += kReduceLanes)
    for (int l = 0; l < kReduceLanes; ++l) part[l] = combine(part[l], widen(row[j + l]));
  const int rest = n - j;
  for (int l = 0; l < rest && l < kReduceLanes; ++l)
    part[l] = combine(part[l], widen(row[j + l]));
  for (int w = kReduceLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) part[l] = combine(part[l], part[l + w]);
  return part[0];
}

template <typename V>
inline elem_t<V>& vector_slot(V& v, int i) {
  return V::Rows == 1 && V::Cols > 1 ? v.at(0, i) : v.at(i, 0);
}

template <typename D, typename S, typename Combine>
inline void reduce_rows(D& dst, const S& src, compute_t<elem_t<S>> init, Combine combine) {
  const int vr = src.GetValidRow(), vc = src.GetValidCol();
  for (int i = 0; i < vr; ++i) {
    compute_t<elem_t<S>> r;
    if constexpr (S::isRowMajor) {
      r = reduce_contiguous(src.data() + i * S::Cols, vc, init, combine);
    } else {
      r = init;
      for (int j = 0; j < vc; ++j) r = combine(r, widen(src.at(i, j)));
    }
    vector_slot(dst, i) = narrow<elem_t<D>>(r);
  }
}

template <typename D, typename S, typename Combine>
inline void reduce_cols(D& dst, const S& src, compute_t<elem_t<S>> init, Combine combine) {
  using C = compute_t<elem_t<S>>;
  const int vr = src.GetValidRow(), vc = src.GetValidCol();
  C acc[S::Cols];
  for (int j = 0; j < vc; ++j) acc[j] = init;
  for (int i = 0; i < vr; ++i) {
    PTO_HOST_IVDEP
    for (int j = 0; j < vc; ++j) acc[j] = combine(acc[j], widen(src.at(i, j)));
  }
  for (int j = 0; j < vc; ++j) vector_slot(dst, j) = narrow<elem_t<D>>(acc[j]);
}

template <typename C> constexpr C lowest() {
  if constexpr (std::is_floating_point<C>::value) return -__builtin_inff();
  else return std::numeric_limits<C>::lowest();
}
template <typename C> constexpr C highest() {
  if constexpr (std::is_floating_point<C>::value) return __builtin_inff();
  else return std::numeric_limits<C>::max();
}

template <typename S> using acc_t = compute_t<elem_t<S>>;

}  // namespace host

// --- row reductions: dst[i] = reduce_j src(i, j) --------------------------------------------
#define PTO_HOST_ROW_REDUCE(NAME, INIT, OP)                                               \
  template <typename D, typename S, typename Tmp>                                         \
  PTO_INST void NAME(D& dst, S& src, Tmp& tmp, int line = __builtin_LINE()) {             \
    (void)tmp;                                                                            \
    host::reduce_rows(dst, src, INIT, [](auto a, auto b) { return OP(a, b); });           \
    host::vector_access(line, #NAME, dst, src);                                           \
  }

PTO_HOST_ROW_REDUCE(TROWSUM, host::acc_t<S>(0), host::op_add)
PTO_HOST_ROW_REDUCE(TROWMAX, host::lowest<host::acc_t<S>>(), host::op_max)
PTO_HOST_ROW_REDUCE(TROWMIN, host::highest<host::acc_t<S>>(), host::op_min)
#undef PTO_HOST_ROW_REDUCE

// --- column reductions: dst[j] = reduce_i src(i, j) -----------------------------------------
template <typename D, typename S, typename Tmp>
PTO_INST void TCOLSUM(D& dst, S& src, Tmp& tmp, bool is_binary, int line = __builtin_LINE()) {
  (void)tmp;
  (void)is_binary;
  host::reduce_cols(dst, src, host::acc_t<S>(0), [](auto a, auto b) { return host::op_add(a, b); });
  host::vector_access(line, "TCOLSUM", dst, src);
}

template <typename D, typename S>
PTO_INST void TCOLMAX(D& dst, S& src, int line = __builtin_LINE()) {
  host::reduce_cols(dst, src, host::lowest<host::acc_t<S>>(),
                    [](auto a, auto b) { return host::op_max(a, b); });
  host::vector_access(line, "TCOLMAX", dst, src);
}

template <typename D, typename S>
PTO_INST void TCOLMIN(D& dst, S& src, int line = __builtin_LINE()) {
  host::reduce_cols(dst, src, host::highest<host::acc_t<S>>(),
                    [](auto a, auto b) { return host::op_min(a, b); });
  host::vector_access(line, "TCOLMIN", dst, src);
}

// --- expansions ------------------------------------------------------------------------------
// dst(i, j) = src[i]
template <typename D, typename S>
PTO_INST void TROWEXPAND(D& dst, S& src, int line = __builtin_LINE()) {
  host::map_rows(dst, dst, src, [](auto, auto r) { return r; });
  host::vector_access(line, "TROWEXPAND", dst, src);
}

// dst(i, j) = src[j]
template <typename D, typename S>
PTO_INST void TCOLEXPAND(D& dst, S& src, int line = __builtin_LINE()) {
  host::map_cols(dst, dst, src, [](auto, auto c) { return c; });
  host::vector_access(line, "TCOLEXPAND", dst, src);
}

// dst(i, j) = src0(i, j) op src1[i]   /   dst(i, j) = src0(i, j) op src1[j]
#define PTO_HOST_EXPAND_OP(NAME, MAP, OP)                                                 \
  template <typename D, typename S0, typename S1>                                         \
  PTO_INST void NAME(D& dst, S0& src0, S1& src1, int line = __builtin_LINE()) {           \
    host::MAP(dst, src0, src1, [](auto a, auto b) { return OP(a, b); });                  \
    host::vector_access(line, #NAME, dst, src0, src1);                                    \
  }

PTO_HOST_EXPAND_OP(TROWEXPANDADD, map_rows, host::op_add)
PTO_HOST_EXPAND_OP(TROWEXPANDSUB, map_rows, host::op_sub)
PTO_HOST_EXPAND_OP(TROWEXPANDMUL, map_rows, host::op_mul)
PTO_HOST_EXPAND_OP(TROWEXPANDDIV, map_rows, host::op_div)
PTO_HOST_EXPAND_OP(TROWEXPANDMAX, map_rows, host::op_max)
PTO_HOST_EXPAND_OP(TROWEXPANDMIN, map_rows, host::op_min)
PTO_HOST_EXPAND_OP(TROWEXPANDEXPDIF, map_rows, [](auto a, auto b) { return host::exp_f32(a - b); })
PTO_HOST_EXPAND_OP(TCOLEXPANDADD, map_cols, host::op_add)
PTO_HOST_EXPAND_OP(TCOLEXPANDSUB, map_cols, host::op_sub)
PTO_HOST_EXPAND_OP(TCOLEXPANDMUL, map_cols, host::op_mul)
PTO_HOST_EXPAND_OP(TCOLEXPANDDIV, map_cols, host::op_div)
PTO_HOST_EXPAND_OP(TCOLEXPANDMAX, map_cols, host::op_max)
PTO_HOST_EXPAND_OP(TCOLEXPANDMIN, map_cols, host::op_min)
PTO_HOST_EXPAND_OP(TCOLEXPANDEXPDIF, map_cols, [](auto a, auto b) { return host::exp_f32(a - b); })
#undef PTO_HOST_EXPAND_OP

}  // namespace pto
