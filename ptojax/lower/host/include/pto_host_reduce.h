// pto_host_reduce.h — axis reductions (TROWSUM/MAX/MIN, TCOLSUM) and expansions
// (TROWEXPAND*, TCOLEXPAND*).
//
// A per-row result or operand is an [R,1] tile (element (i, 0)) or a [1,R] tile (element
// (0, i)); per-column likewise. Row reductions keep 16 independent partial results per row so
// the loop vectorizes without reassociation flags, then combine them pairwise; sums of
// half/bfloat16 accumulate in float. Float max/min propagate NaN. The `tmp` operand the
// accelerator needs is accepted and unused.
#pragma once

#include <limits>
#include <vector>

#include "pto_host_elementwise.h"
#include "pto_host_map.h"

namespace pto {
namespace host {

constexpr int kReduceLanes = 16;

// A writable per-row / per-column vector: value k is p[k * step].
template <typename T>
struct OutVec {
  T* p;
  std::ptrdiff_t step;
};

template <typename V>
inline OutVec<elem_t<V>> out_vec(V& v) {
  return {v.data(), V::Rows == 1 && V::Cols > 1 ? V::kColStride : V::kRowStride};
}

// part[l] = op(part[l], part[l + W]) for l < W, then W/2 ... 1: the pairwise combine of the
// lanes, with constant trip counts (vectorized, no loop over a varying width).
template <int W, typename C, typename Op>
inline void combine_lanes(C* part, Op op) {
  if constexpr (W > 0) {
    for (int l = 0; l < W; ++l) part[l] = op(part[l], part[l + W]);
    combine_lanes<W / 2>(part, op);
  }
}

// combine(init, row[0], ..., row[n-1]) with kReduceLanes interleaved partial results.
template <typename E, typename C, typename Op>
inline C reduce_contiguous(const E* row, int n, C init, Op op) {
  C part[kReduceLanes];
  for (int l = 0; l < kReduceLanes; ++l) part[l] = init;
  int j = 0;
  for (; j + kReduceLanes <= n; j += kReduceLanes)
    for (int l = 0; l < kReduceLanes; ++l) part[l] = op(part[l], widen(row[j + l]));
  const int rest = n - j;
  for (int l = 0; l < rest && l < kReduceLanes; ++l) part[l] = op(part[l], widen(row[j + l]));
  combine_lanes<kReduceLanes / 2>(part, op);
  return part[0];
}

template <typename TD, typename TS, typename Op>
PTO_HOST_WORKER void reduce_rows_worker(OutVec<TD> d, View<TS> s, int vr, int vc,
                                        compute_t<TS> init, Op op) {
  for (int i = 0; i < vr; ++i) {
    compute_t<TS> r = init;
    if (s.cs == 1) {
      r = reduce_contiguous(s.p + i * s.rs, vc, init, op);
    } else {
      for (int j = 0; j < vc; ++j) r = op(r, widen(s(i, j)));
    }
    d.p[i * d.step] = narrow<TD>(r);
  }
}

template <typename TD, typename TS, typename Op>
PTO_HOST_WORKER void reduce_cols_worker(OutVec<TD> d, View<TS> s, int vr, int vc,
                                        compute_t<TS> init, Op op) {
  using C = compute_t<TS>;
  static thread_local std::vector<C> scratch;
  if (static_cast<int>(scratch.size()) < vc) scratch.resize(vc);
  C* const acc = scratch.data();
  for (int j = 0; j < vc; ++j) acc[j] = init;
  for (int i = 0; i < vr; ++i) {
    const TS* const si = s.p + i * s.rs;
    const std::ptrdiff_t cs = s.cs;
    PTO_HOST_IVDEP
    for (int j = 0; j < vc; ++j) acc[j] = op(acc[j], widen(si[j * cs]));
  }
  for (int j = 0; j < vc; ++j) d.p[j * d.step] = narrow<TD>(acc[j]);
}

template <typename C> constexpr C lowest() {
  if constexpr (std::is_floating_point<C>::value) return -__builtin_inff();
  else return std::numeric_limits<C>::lowest();
}
template <typename C> constexpr C highest() {
  if constexpr (std::is_floating_point<C>::value) return __builtin_inff();
  else return std::numeric_limits<C>::max();
}

template <typename D, typename S, typename Op>
inline void reduce_rows(D& dst, const S& src, compute_t<elem_t<S>> init, Op op) {
  reduce_rows_worker<elem_t<D>, elem_t<S>, Op>(out_vec(dst), view(src), src.GetValidRow(),
                                              src.GetValidCol(), init, op);
}

template <typename D, typename S, typename Op>
inline void reduce_cols(D& dst, const S& src, compute_t<elem_t<S>> init, Op op) {
  reduce_cols_worker<elem_t<D>, elem_t<S>, Op>(out_vec(dst), view(src), src.GetValidRow(),
                                              src.GetValidCol(), init, op);
}

template <typename S> using acc_t = compute_t<elem_t<S>>;

// The vector operand itself (for TROWEXPAND / TCOLEXPAND).
struct TakeVector {
  template <typename A, typename B>
  B operator()(A, B b) const { return b; }
};

}  // namespace host

// --- row reductions: dst[i] = reduce_j src(i, j) --------------------------------------------
#define PTO_HOST_ROW_REDUCE(NAME, INIT, OP)                                               \
  template <typename D, typename S, typename Tmp>                                         \
  PTO_INST void NAME(D& dst, S& src, Tmp& tmp, PTO_HOST_LINE) {             \
    (void)tmp;                                                                            \
    host::reduce_rows(dst, src, INIT, OP());                                              \
    host::vector_access(line, #NAME, dst, src);                                           \
  }
PTO_HOST_ROW_REDUCE(TROWSUM, host::acc_t<S>(0), host::Add)
PTO_HOST_ROW_REDUCE(TROWMAX, host::lowest<host::acc_t<S>>(), host::Max)
PTO_HOST_ROW_REDUCE(TROWMIN, host::highest<host::acc_t<S>>(), host::Min)
#undef PTO_HOST_ROW_REDUCE

// --- column reductions: dst[j] = reduce_i src(i, j) -----------------------------------------
// is_binary picks the accelerator's summation order (pairwise or sequential); the host sums
// sequentially down each column.
template <typename D, typename S, typename Tmp>
PTO_INST void TCOLSUM(D& dst, S& src, Tmp& tmp, bool is_binary, PTO_HOST_LINE) {
  (void)tmp;
  (void)is_binary;
  host::reduce_cols(dst, src, host::acc_t<S>(0), host::Add());
  host::vector_access(line, "TCOLSUM", dst, src);
}

// --- expansions ------------------------------------------------------------------------------
// dst(i, j) = src[i]
template <typename D, typename S>
PTO_INST void TROWEXPAND(D& dst, S& src, PTO_HOST_LINE) {
  host::map_rows(dst, dst, src, host::TakeVector());
  host::vector_access(line, "TROWEXPAND", dst, src);
}

// dst(i, j) = src[j]
template <typename D, typename S>
PTO_INST void TCOLEXPAND(D& dst, S& src, PTO_HOST_LINE) {
  host::map_cols(dst, dst, src, host::TakeVector());
  host::vector_access(line, "TCOLEXPAND", dst, src);
}

// dst(i, j) = src0(i, j) op src1[i]   /   dst(i, j) = src0(i, j) op src1[j]
#define PTO_HOST_EXPAND_OP(NAME, MAP, OP)                                                 \
  template <typename D, typename S0, typename S1>                                         \
  PTO_INST void NAME(D& dst, S0& src0, S1& src1, PTO_HOST_LINE) {           \
    host::MAP(dst, src0, src1, OP());                                                     \
    host::vector_access(line, #NAME, dst, src0, src1);                                    \
  }
PTO_HOST_EXPAND_OP(TROWEXPANDADD, map_rows, host::Add)
PTO_HOST_EXPAND_OP(TROWEXPANDSUB, map_rows, host::Sub)
PTO_HOST_EXPAND_OP(TROWEXPANDMUL, map_rows, host::Mul)
PTO_HOST_EXPAND_OP(TROWEXPANDDIV, map_rows, host::Div)
PTO_HOST_EXPAND_OP(TROWEXPANDMAX, map_rows, host::Max)
PTO_HOST_EXPAND_OP(TROWEXPANDMIN, map_rows, host::Min)
PTO_HOST_EXPAND_OP(TCOLEXPANDADD, map_cols, host::Add)
PTO_HOST_EXPAND_OP(TCOLEXPANDSUB, map_cols, host::Sub)
PTO_HOST_EXPAND_OP(TCOLEXPANDMUL, map_cols, host::Mul)
PTO_HOST_EXPAND_OP(TCOLEXPANDDIV, map_cols, host::Div)
PTO_HOST_EXPAND_OP(TCOLEXPANDMAX, map_cols, host::Max)
PTO_HOST_EXPAND_OP(TCOLEXPANDMIN, map_cols, host::Min)
#undef PTO_HOST_EXPAND_OP

}  // namespace pto
