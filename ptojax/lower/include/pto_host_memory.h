// pto_host_memory.h — data movement: TLOAD, TSTORE (GM <-> tile), TMOV, TEXTRACT (tile <-> tile).
//
// A GlobalTensor window has five extents; the first four index tile rows (flattened, the
// fourth fastest) and the fifth indexes tile columns, so tile element (i, j) comes from
// ptr + (i decomposed over extents 0..3) . strides[0..3] + j * strides[4]. The copy covers the
// tile's valid region, which must equal the window's extents (checked at run time).
#pragma once

#include <cstring>
#include <mutex>
#include <type_traits>

#include "pto_host_convert.h"
#include "pto_host_sync.h"
#include "pto_host_tile.h"

namespace pto {

enum class AtomicType : int { AtomicNone = 0, AtomicAdd };

namespace host {

// *p += v, atomic across blocks (float and int32 natively, other types under a lock).
template <typename G, typename T>
inline void atomic_add(G* p, T v) {
  if constexpr (std::is_same<G, float>::value || std::is_same<G, int32_t>::value) {
    const G add = convert<G>(v);
#pragma omp atomic
    *p += add;
  } else {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    *p = convert<G>(widen(*p) + widen(v));
  }
}

template <typename TileT>
inline Region tile_region(const TileT& t) {
  return contiguous(t.data(), sizeof(typename TileT::DType) * TileT::Numel);
}

// The GM bytes a window covers: contiguous runs along whichever of its two innermost strides
// is 1 (the bounding range otherwise).
template <typename GT>
inline Region window_region(const GT& g) {
  const std::size_t sz = sizeof(typename GT::DType);
  std::size_t rows = 1;
  for (int d = 0; d < 4; ++d) rows *= static_cast<std::size_t>(g.GetShape(d));
  const std::size_t cols = static_cast<std::size_t>(g.GetShape(4));
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(g.data());
  if (g.GetStride(4) == 1 && g.GetShape(0) * g.GetShape(1) * g.GetShape(2) == 1)
    return Region{base, cols * sz, static_cast<std::size_t>(g.GetStride(3)) * sz, rows};
  std::size_t last = 0;
  for (int d = 0; d < 5; ++d)
    last += static_cast<std::size_t>(g.GetShape(d) - 1) * static_cast<std::size_t>(g.GetStride(d));
  return contiguous(g.data(), (last + 1) * sz);
}

template <typename TileT, typename GT>
inline bool window_matches(const TileT& t, const GT& g, int line, const char* op) {
  const long rows = static_cast<long>(g.GetShape(0)) * g.GetShape(1) * g.GetShape(2) *
                    g.GetShape(3);
  if (rows == t.GetValidRow() && g.GetShape(4) == t.GetValidCol()) return true;
  report_error(line, op, "the GM window is %ldx%d but the tile's valid region is %dx%d", rows,
               g.GetShape(4), t.GetValidRow(), t.GetValidCol());
  return false;
}

// Call f(gm_row_pointer, tile_row) for every row of the window, in tile-row order.
template <typename GT, typename F>
inline void for_window_rows(const GT& g, F f) {
  int row = 0;
  for (int a = 0; a < g.GetShape(0); ++a)
    for (int b = 0; b < g.GetShape(1); ++b)
      for (int c = 0; c < g.GetShape(2); ++c)
        for (int r = 0; r < g.GetShape(3); ++r)
          f(g.data() + a * g.GetStride(0) + b * g.GetStride(1) + c * g.GetStride(2) +
                r * g.GetStride(3),
            row++);
}

// Copy the valid region src -> dst element by element through `convert`.
template <typename D, typename S>
inline void copy_valid(D& dst, const S& src, int r0, int c0) {
  using TD = typename D::DType;
  const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
  for (int i = 0; i < vr; ++i)
    for (int j = 0; j < vc; ++j) dst.at(i, j) = convert<TD>(src.at(r0 + i, c0 + j));
}

constexpr int move_pipe(TileType to, TileType from) {
  return from == TileType::Acc ? PIPE_FIX
         : (to == TileType::Vec && from == TileType::Vec) ? PIPE_V
         : PIPE_MTE1;
}

}  // namespace host

template <typename TileT, typename GT,
          std::enable_if_t<is_tile<TileT>::value && is_global<GT>::value, int> = 0>
PTO_INST void TLOAD(TileT& dst, GT& src, int line = __builtin_LINE()) {
  using T = typename TileT::DType;
  static_assert(sizeof(T) == sizeof(typename GT::DType), "TLOAD does not convert element types");
  if (!host::window_matches(dst, src, line, "TLOAD")) return;
  const int vc = dst.GetValidCol();
  const std::ptrdiff_t col_stride = src.GetStride(4);
  host::for_window_rows(src, [&](const typename GT::DType* gm_row, int i) {
    if (TileT::isRowMajor && col_stride == 1) {
      std::memcpy(&dst.at(i, 0), gm_row, sizeof(T) * vc);
    } else {
      for (int j = 0; j < vc; ++j) std::memcpy(&dst.at(i, j), gm_row + j * col_stride, sizeof(T));
    }
  });
  host::access(PIPE_MTE2, line, "TLOAD", {host::window_region(src)}, {host::tile_region(dst)});
}

// GM window <- tile (an accumulator tile converts to the GM type); with AtomicAdd the tile is
// added into GM atomically (blocks may accumulate into the same window concurrently).
template <typename TileT, typename GT, AtomicType Atomic = AtomicType::AtomicNone,
          std::enable_if_t<is_tile<TileT>::value && is_global<GT>::value, int> = 0>
PTO_INST void TSTORE(GT& dst, TileT& src, int line = __builtin_LINE()) {
  using G = typename GT::DType;
  using T = typename TileT::DType;
  static_assert(TileT::Loc == TileType::Acc || std::is_same<G, T>::value,
                "only accumulator tiles convert on store");
  if (!host::window_matches(src, dst, line, "TSTORE")) return;
  const int vc = src.GetValidCol();
  const std::ptrdiff_t col_stride = dst.GetStride(4);
  host::for_window_rows(dst, [&](G* gm_row, int i) {
    if (Atomic == AtomicType::AtomicAdd) {
      for (int j = 0; j < vc; ++j) host::atomic_add(gm_row + j * col_stride, src.at(i, j));
    } else if (std::is_same<G, T>::value && TileT::isRowMajor && col_stride == 1) {
      std::memcpy(gm_row, &src.at(i, 0), sizeof(T) * vc);
    } else {
      for (int j = 0; j < vc; ++j) gm_row[j * col_stride] = host::convert<G>(src.at(i, j));
    }
  });
  constexpr int pipe = TileT::Loc == TileType::Acc ? PIPE_FIX : PIPE_MTE3;
  host::access(pipe, line, "TSTORE", {host::tile_region(src)}, {host::window_region(dst)});
}

// dst <- src (valid region of dst), converting the element type when they differ.
template <typename D, typename S,
          std::enable_if_t<is_tile<D>::value && is_tile<S>::value, int> = 0>
PTO_INST void TMOV(D& dst, S& src, int line = __builtin_LINE()) {
  host::copy_valid(dst, src, 0, 0);
  host::access(host::move_pipe(D::Loc, S::Loc), line, "TMOV", {host::tile_region(src)},
               {host::tile_region(dst)});
}

// dst <- the sub-tile of src starting at (index_row, index_col).
template <typename D, typename S>
PTO_INST void TEXTRACT(D& dst, S& src, int index_row, int index_col, int line = __builtin_LINE()) {
  host::copy_valid(dst, src, index_row, index_col);
  host::access(host::move_pipe(D::Loc, S::Loc), line, "TEXTRACT", {host::tile_region(src)},
               {host::tile_region(dst)});
}

}  // namespace pto
