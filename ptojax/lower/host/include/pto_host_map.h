// pto_host_map.h — the loops every vector instruction is built on.
//
// An instruction computes over the valid region of its destination, reading each operand at
// the same (i, j), or at (i) / (j) for a per-row / per-column vector operand. Operands are
// widened to the compute type (float for half/bfloat16), the op applied, and the result
// narrowed to the destination type.
//
// Instructions are thin inline wrappers; the loops live in out-of-line workers templated only
// on element types and the op (a functor type), with extents and strides as run-time values.
// So the many tile shapes and ragged-edge regions of a program share one compiled loop per
// (op, types): kernels compile fast, and the loops are written for the vectorizer —
// contiguous inner rows, and `ivdep` because a destination may be one of its own operands
// (PTO allows dst == src; tiles never partially overlap).
#pragma once

#include <cstddef>

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

#define PTO_HOST_WORKER __attribute__((noinline))

namespace pto {
namespace host {

template <typename T> using elem_t = typename T::DType;

// A strided 2-D view: element (i, j) is p[i * rs + j * cs].
template <typename T>
struct View {
  T* p;
  std::ptrdiff_t rs;
  std::ptrdiff_t cs;
  T& operator()(int i, int j) const { return p[i * rs + j * cs]; }
};

template <typename TileT>
inline View<elem_t<TileT>> view(const TileT& t) {
  return {t.data(), TileT::kRowStride, TileT::kColStride};
}

// A per-row or per-column vector operand: value k is p[k * step].
template <typename T>
struct Vec {
  const T* p;
  std::ptrdiff_t step;
  compute_t<T> operator[](int k) const { return widen(p[k * step]); }
};

// The vector a [R,1] / [1,R] tile holds (its single row or column, whichever is longer).
template <typename V>
inline Vec<elem_t<V>> vec(const V& v) {
  return {v.data(), V::Rows == 1 && V::Cols > 1 ? V::kColStride : V::kRowStride};
}

// d(i, j) = f(s(i, j)...) over vr x vc.
template <typename TD, typename F, typename... TS>
PTO_HOST_WORKER void map_worker(View<TD> d, int vr, int vc, F f, View<TS>... s) {
  if (d.cs != 1 || ((s.cs != 1) || ... || false)) {
    for (int i = 0; i < vr; ++i)
      for (int j = 0; j < vc; ++j) d(i, j) = narrow<TD>(f(widen(s(i, j))...));
    return;
  }
  if (d.rs == vc && ((s.rs == vc) && ... && true)) {   // rows back to back: one long row
    vc *= vr;
    vr = 1;
  }
  for (int i = 0; i < vr; ++i) {
    TD* const di = d.p + i * d.rs;
    PTO_HOST_IVDEP
    for (int j = 0; j < vc; ++j) di[j] = narrow<TD>(f(widen(s.p[i * s.rs + j])...));
  }
}

// dst(i, j) = f(src(i, j)...) over dst's valid region.
template <typename D, typename F, typename... S>
inline void map_tiles(D& dst, F f, const S&... src) {
  map_worker<elem_t<D>, F, elem_t<S>...>(view(dst), dst.GetValidRow(), dst.GetValidCol(), f,
                                         view(src)...);
}

// d(i, j) = f(s(i, j), v[i]) over vr x vc (per_row), or f(s(i, j), v[j]).
template <typename TD, typename TS, typename TV, typename F>
PTO_HOST_WORKER void map_vector_worker(View<TD> d, View<TS> s, Vec<TV> v, int vr, int vc,
                                       bool per_row, F f) {
  if (d.cs == 1 && s.cs == 1) {
    for (int i = 0; i < vr; ++i) {
      TD* const di = d.p + i * d.rs;
      const TS* const si = s.p + i * s.rs;
      if (per_row) {
        const auto r = v[i];
        PTO_HOST_IVDEP
        for (int j = 0; j < vc; ++j) di[j] = narrow<TD>(f(widen(si[j]), r));
      } else if (v.step == 1) {
        const TV* const vp = v.p;
        PTO_HOST_IVDEP
        for (int j = 0; j < vc; ++j) di[j] = narrow<TD>(f(widen(si[j]), widen(vp[j])));
      } else {
        for (int j = 0; j < vc; ++j) di[j] = narrow<TD>(f(widen(si[j]), v[j]));
      }
    }
    return;
  }
  for (int i = 0; i < vr; ++i)
    for (int j = 0; j < vc; ++j) d(i, j) = narrow<TD>(f(widen(s(i, j)), v[per_row ? i : j]));
}

// dst(i, j) = f(src(i, j), vec[i]) — vec holds one value per row.
template <typename D, typename S, typename V, typename F>
inline void map_rows(D& dst, const S& src, const V& vector, F f) {
  map_vector_worker<elem_t<D>, elem_t<S>, elem_t<V>, F>(
      view(dst), view(src), vec(vector), dst.GetValidRow(), dst.GetValidCol(), true, f);
}

// dst(i, j) = f(src(i, j), vec[j]) — vec holds one value per column.
template <typename D, typename S, typename V, typename F>
inline void map_cols(D& dst, const S& src, const V& vector, F f) {
  map_vector_worker<elem_t<D>, elem_t<S>, elem_t<V>, F>(
      view(dst), view(src), vec(vector), dst.GetValidRow(), dst.GetValidCol(), false, f);
}

template <typename T>
inline Region tile_region(const T& t) {
  return contiguous(t.data(), sizeof(elem_t<T>) * T::Numel);
}

template <typename T>
constexpr bool is_vector_tile() {
  return T::Rows == 1 || T::Cols == 1;
}

// dst may overlap an operand (PTO allows dst == src) only from the same base address, with
// elements and strides no wider in bytes — a narrowing result such as a compare mask written
// over its float operand — so that processing in order never overwrites an element before it
// is read. Anything else that overlaps is a planning error.
template <typename D, typename S>
inline void check_in_place(int line, const char* op, const D& dst, const S& src) {
  if (!tile_region(dst).overlaps(tile_region(src))) return;
  constexpr std::ptrdiff_t dsz = sizeof(elem_t<D>), ssz = sizeof(elem_t<S>);
  const bool same_base = static_cast<const void*>(dst.data()) == src.data();
  const bool vectors = is_vector_tile<D>() && is_vector_tile<S>() && dsz == ssz;
  const bool behind = dsz <= ssz && D::kRowStride * dsz <= S::kRowStride * ssz &&
                      D::kColStride * dsz <= S::kColStride * ssz;
  if (!same_base || !(vectors || behind))
    report_error(line, op, "the destination overlaps an operand it has not finished reading "
                 "(%zu-byte elements written over %zu-byte ones%s)", static_cast<size_t>(dsz),
                 static_cast<size_t>(ssz), same_base ? "" : " at another offset");
}

// Report a vector-pipe instruction that writes dst and reads the given tiles.
template <typename D, typename... S>
inline void vector_access(int line, const char* op, const D& dst, const S&... src) {
  if (kCheckSync) {
    (check_in_place(line, op, dst, src), ...);
    sync_checker().access(PIPE_V, line, op, {tile_region(src)...}, {tile_region(dst)});
  }
}

}  // namespace host
}  // namespace pto
