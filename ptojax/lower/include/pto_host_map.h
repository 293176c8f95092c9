// pto_host_map.h — the loops every vector instruction is built on.
//
// An instruction computes over the valid region of its destination, reading each operand at
// the same (i, j) (or at (i, 0) / (0, j) for a per-row / per-column operand). Operands are
// widened to the compute type (float for half/bfloat16), the function applied, and the result
// narrowed to the destination type. The loops are written for the vectorizer: contiguous
// inner rows, and `ivdep` because a destination may be one of its own operands (PTO allows
// dst == src; tiles never partially overlap).
#pragma once

#include "pto_host_sync.h"
#include "pto_host_tile.h"
#include "pto_host_types.h"

#if defined(__clang__)
#define PTO_HOST_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define PTO_HOST_IVDEP _Pragma("GCC ivdep")
#else
#define PTO_HOST_IVDEP
#endif

namespace pto {
namespace host {

template <typename T> using elem_t = typename T::DType;

template <typename D, typename... S>
constexpr bool all_row_major() {
  return D::isRowMajor && (S::isRowMajor && ... && true);
}

// dst(i, j) = f(src(i, j)...) over dst's valid region.
template <typename D, typename F, typename... S>
inline void map_tiles(D& dst, F f, const S&... src) {
  using TD = elem_t<D>;
  const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
  if constexpr (all_row_major<D, S...>()) {
    if (vc == D::Cols && ((S::Cols == D::Cols) && ... && true)) {
      TD* d = dst.data();
      const int n = vr * D::Cols;
      PTO_HOST_IVDEP
      for (int k = 0; k < n; ++k) d[k] = narrow<TD>(f(widen(src.data()[k])...));
      return;
    }
    for (int i = 0; i < vr; ++i) {
      TD* d = dst.data() + i * D::Cols;
      PTO_HOST_IVDEP
      for (int j = 0; j < vc; ++j) d[j] = narrow<TD>(f(widen(src.data()[i * S::Cols + j])...));
    }
  } else {
    for (int i = 0; i < vr; ++i)
      for (int j = 0; j < vc; ++j) dst.at(i, j) = narrow<TD>(f(widen(src.at(i, j))...));
  }
}

// The value a per-row operand ([R,1], or [1,R]) holds for row i; likewise per column.
template <typename V>
inline auto row_value(const V& v, int i) {
  return widen(V::Rows == 1 && V::Cols > 1 ? v.at(0, i) : v.at(i, 0));
}
template <typename V>
inline auto col_value(const V& v, int j) {
  return widen(V::Cols == 1 && V::Rows > 1 ? v.at(j, 0) : v.at(0, j));
}

// dst(i, j) = f(src(i, j), vec(i)) — vec holds one value per row.
template <typename D, typename S, typename V, typename F>
inline void map_rows(D& dst, const S& src, const V& vec, F f) {
  using TD = elem_t<D>;
  const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
  for (int i = 0; i < vr; ++i) {
    const auto r = row_value(vec, i);
    if constexpr (D::isRowMajor && S::isRowMajor) {
      TD* d = dst.data() + i * D::Cols;
      const elem_t<S>* s = src.data() + i * S::Cols;
      PTO_HOST_IVDEP
      for (int j = 0; j < vc; ++j) d[j] = narrow<TD>(f(widen(s[j]), r));
    } else {
      for (int j = 0; j < vc; ++j) dst.at(i, j) = narrow<TD>(f(widen(src.at(i, j)), r));
    }
  }
}

// dst(i, j) = f(src(i, j), vec(j)) — vec holds one value per column.
template <typename D, typename S, typename V, typename F>
inline void map_cols(D& dst, const S& src, const V& vec, F f) {
  using TD = elem_t<D>;
  const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
  if constexpr (D::isRowMajor && S::isRowMajor && V::isRowMajor && V::Rows == 1) {
    const elem_t<V>* v = vec.data();
    for (int i = 0; i < vr; ++i) {
      TD* d = dst.data() + i * D::Cols;
      const elem_t<S>* s = src.data() + i * S::Cols;
      PTO_HOST_IVDEP
      for (int j = 0; j < vc; ++j) d[j] = narrow<TD>(f(widen(s[j]), widen(v[j])));
    }
  } else {
    for (int i = 0; i < vr; ++i)
      for (int j = 0; j < vc; ++j)
        dst.at(i, j) = narrow<TD>(f(widen(src.at(i, j)), col_value(vec, j)));
  }
}

// Report a vector-pipe instruction that writes dst and reads the given tiles.
template <typename D, typename... S>
inline void vector_access(int line, const char* op, const D& dst, const S&... src) {
  if (kCheckSync) {
    sync_checker().access(PIPE_V, line, op, {contiguous(src.data(), sizeof(elem_t<S>) * S::Numel)...},
                          {contiguous(dst.data(), sizeof(elem_t<D>) * D::Numel)});
  }
}

}  // namespace host
}  // namespace pto
