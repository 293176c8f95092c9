// pto_host_memory.h — data movement: TLOAD, TSTORE (GM <-> tile), TMOV, TEXTRACT (tile <-> tile).
//
// A GlobalTensor window has five extents; the first four index tile rows (flattened, the
// fourth fastest) and the fifth indexes tile columns, so tile element (i, j) comes from
// ptr + (i decomposed over extents 0..3) . strides[0..3] + j * strides[4]. The copy covers the
// tile's valid region, which must equal the window's extents (checked at run time).
#pragma once

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>
#include <type_traits>
#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "pto_host_convert.h"
#include "pto_host_map.h"
#include "pto_host_sync.h"
#include "pto_host_tile.h"

namespace pto {

enum class AtomicType : int { AtomicNone = 0, AtomicAdd };

namespace host {

// The order in which blocks running at once on the OpenMP threads add into GM. A fused
// kernel's column sums (fused.py) are kept per tile in the block's buffers and added into the
// output when the block ends, tile by tile, in block order: the additions of blocks run one
// after another on the calling thread, so the same bits on any number of threads, every run.
// A block waits for its turn until every earlier block has ended (run_blocks,
// pto_host_launch.h, hands blocks out in order and marks each as it ends); it adds last, so
// the blocks' work still overlaps. (Atomic additions in the threads' order differed in the
// last bits from run to run.) The PTO build's atomic TSTORE and a kernel's atomic_add, which
// may come in the middle of a block's work, where waiting would serialize the blocks, add
// atomically while the blocks run at once.
class BlockOrder {
 public:
  explicit BlockOrder(int64_t blocks) : ended_(new std::atomic<bool>[blocks]()) {}

  void end(int64_t block) { ended_[block].store(true, std::memory_order_release); }

  // Returns once blocks 0 .. block - 1 have all ended.
  void await_earlier(int64_t block) {
    int64_t b = all_ended_before_.load(std::memory_order_acquire);
    while (b < block) {
      if (ended_[b].load(std::memory_order_acquire)) {
        ++b;
      } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
    int64_t known = all_ended_before_.load(std::memory_order_relaxed);
    while (known < block && !all_ended_before_.compare_exchange_weak(
                                known, block, std::memory_order_release,
                                std::memory_order_relaxed)) {
    }
  }

 private:
  std::unique_ptr<std::atomic<bool>[]> ended_;
  std::atomic<int64_t> all_ended_before_{0};   // blocks below it have all ended
};

struct AddTurn {
  BlockOrder* order = nullptr;   // null: the blocks run one after another
  int64_t block = 0;
};

// The running block's place in the order (set per block by run_blocks).
inline AddTurn& add_turn() {
  static thread_local AddTurn turn;
  return turn;
}

// Whether the running kernel's blocks run at once, on several threads.
inline bool blocks_concurrent() { return add_turn().order != nullptr; }

// Before a block's additions in block order: waits for its turn when blocks run at once.
inline void take_add_turn() {
  const AddTurn& turn = add_turn();
  if (turn.order != nullptr) turn.order->await_earlier(turn.block);
}

// *p += v, not atomic (float and int32 in G, other types computed widened and rounded once).
template <typename G, typename T>
inline void plain_add(G* p, T v) {
  if constexpr (std::is_same<G, float>::value || std::is_same<G, int32_t>::value) {
    *p += convert<G>(v);
  } else {
    *p = convert<G>(widen(*p) + widen(v));
  }
}

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

// A GM window with run-time extents: tile row i is GM row i decomposed over extents 0..3.
template <typename G>
struct Window {
  G* p;
  int shape[4];
  std::ptrdiff_t stride[5];

  template <typename GT>
  static Window of(const GT& g) {
    return {g.data(), {g.GetShape(0), g.GetShape(1), g.GetShape(2), g.GetShape(3)},
            {g.GetStride(0), g.GetStride(1), g.GetStride(2), g.GetStride(3), g.GetStride(4)}};
  }

  // f(pointer to the window row, tile row index) for every row, in tile-row order.
  template <typename F>
  void rows(F f) const {
    int row = 0;
    for (int a = 0; a < shape[0]; ++a)
      for (int b = 0; b < shape[1]; ++b)
        for (int c = 0; c < shape[2]; ++c)
          for (int r = 0; r < shape[3]; ++r, ++row)
            f(p + a * stride[0] + b * stride[1] + c * stride[2] + r * stride[3], row);
  }
};

// d[a * ds + b] = s[b * ss + a] for a < n, b < m: a transpose of 4-byte elements (moved as
// bits: float shuffles never touch a value). 8 x 8 blocks go through AVX registers (8 row
// loads, 24 shuffles, 8 row stores), the edges element by element.
inline void transpose4_8x8(void* d, std::ptrdiff_t ds, const void* s, std::ptrdiff_t ss) {
#if defined(__AVX__)
  const float* const f = static_cast<const float*>(s);
  float* const o = static_cast<float*>(d);
  __m256 r[8], t[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(f + k * ss);
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    r[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
    r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
    r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(o + k * ds, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
    _mm256_storeu_ps(o + (k + 4) * ds, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
  }
#else
  const uint32_t* const f = static_cast<const uint32_t*>(s);
  uint32_t* const o = static_cast<uint32_t*>(d);
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) o[a * ds + b] = f[b * ss + a];
#endif
}

template <typename T>
inline void transpose4(T* d, std::ptrdiff_t ds, const T* s, std::ptrdiff_t ss, int n, int m) {
  static_assert(sizeof(T) == 4, "transpose4 moves 4-byte elements");
  const int n8 = n - n % 8, m8 = m - m % 8;
  for (int a = 0; a < n8; a += 8)
    for (int b = 0; b < m8; b += 8) transpose4_8x8(d + a * ds + b, ds, s + b * ss + a, ss);
  for (int a = 0; a < n; ++a)                      // the edges
    for (int b = a < n8 ? m8 : 0; b < m; ++b) d[a * ds + b] = s[b * ss + a];
}

// A load where the tile or the GM window is not row-contiguous (a transposed load, a GM
// column into tile rows): the window rows' pointers first, then 16 x 16 blocks, so the strided
// side stays in a few cache lines, with the inner loop along whichever side is contiguous
// down the rows (one element at a time across a whole strided row was store/load-bound).
template <typename T, typename G>
inline void load_blocked(View<T> dst, Window<const G> src, int vc) {
  static thread_local std::vector<const G*> rows;
  rows.clear();
  src.rows([&](const G* g, int) { rows.push_back(g); });
  const int nr = static_cast<int>(rows.size());
  const G* const* const row = rows.data();      // (locals: the stores cannot move them)
  T* const out = dst.p;
  const std::ptrdiff_t rs = dst.rs, dcs = dst.cs, cs = src.stride[4];
  if constexpr (std::is_same<T, typename std::remove_const<G>::type>::value) {
    // window rows evenly spaced (row i at row[0] + i * R): a copy along columns or a transpose
    const std::ptrdiff_t R = nr > 1 ? row[1] - row[0] : 0;
    bool even = nr > 1;
    for (int i = 2; even && i < nr; ++i) even = row[i] - row[0] == i * R;
    if (even && R == 1 && rs == 1) {           // column-major tile, GM columns contiguous
      for (int j = 0; j < vc; ++j) std::memcpy(out + j * dcs, row[0] + j * cs, sizeof(T) * nr);
      return;
    }
    if constexpr (sizeof(T) == 4) {
      if (even && R == 1 && dcs == 1) {        // out[i * rs + j] = row[0][i + j * cs]
        transpose4(out, rs, row[0], cs, nr, vc);
        return;
      }
      if (even && cs == 1 && rs == 1) {        // out[i + j * dcs] = row[0][i * R + j]
        transpose4(out, dcs, row[0], R, vc, nr);
        return;
      }
    }
  }
  const bool down_rows = rs == 1 || (nr > 1 && row[1] - row[0] == 1);
  constexpr int kBlock = 16;
  for (int i0 = 0; i0 < nr; i0 += kBlock) {
    const int i1 = i0 + kBlock < nr ? i0 + kBlock : nr;
    for (int j0 = 0; j0 < vc; j0 += kBlock) {
      const int j1 = j0 + kBlock < vc ? j0 + kBlock : vc;
      if (down_rows) {
        for (int j = j0; j < j1; ++j)
          for (int i = i0; i < i1; ++i)
            std::memcpy(out + i * rs + j * dcs, row[i] + j * cs, sizeof(T));
      } else {
        for (int i = i0; i < i1; ++i)
          for (int j = j0; j < j1; ++j)
            std::memcpy(out + i * rs + j * dcs, row[i] + j * cs, sizeof(T));
      }
    }
  }
}

template <typename T, typename G>
PTO_HOST_WORKER void load_worker(View<T> dst, Window<const G> src, int vc) {
  const std::ptrdiff_t cs = src.stride[4];
  if (!(dst.cs == 1 && cs == 1) && vc > 1) {
    load_blocked(dst, src, vc);
    return;
  }
  src.rows([&](const G* g, int i) {
    T* const d = dst.p + i * dst.rs;
    if (dst.cs == 1 && cs == 1 && vc >= 16) {
      std::memcpy(d, g, sizeof(T) * vc);
    } else {                                  // short rows (row vectors): no memcpy call
      for (int j = 0; j < vc; ++j) std::memcpy(d + j * dst.cs, g + j * cs, sizeof(T));
    }
  });
}

template <typename G, typename T, bool Atomic>
PTO_HOST_WORKER void store_worker(Window<G> dst, View<const T> src, int vc) {
  const std::ptrdiff_t cs = dst.stride[4];
  dst.rows([&](G* g, int i) {
    const T* const s = src.p + i * src.rs;
    if (Atomic && blocks_concurrent()) {
      for (int j = 0; j < vc; ++j) atomic_add(g + j * cs, s[j * src.cs]);
    } else if (Atomic) {
      for (int j = 0; j < vc; ++j) plain_add(g + j * cs, s[j * src.cs]);
    } else if (std::is_same<G, T>::value && src.cs == 1 && cs == 1) {
      std::memcpy(g, s, sizeof(T) * vc);
    } else {
      for (int j = 0; j < vc; ++j) g[j * cs] = convert<G>(s[j * src.cs]);
    }
  });
}

// dst(i, j) = src(r0 + i, c0 + j) over dst's valid region, converting the element type.
template <typename TD, typename TS>
PTO_HOST_WORKER void copy_worker(View<TD> dst, View<const TS> src, int vr, int vc) {
  if constexpr (std::is_same<TD, TS>::value) {     // same layout: whole rows or columns
    if (dst.cs == 1 && src.cs == 1) {
      for (int i = 0; i < vr; ++i) std::memcpy(&dst(i, 0), &src(i, 0), sizeof(TD) * vc);
      return;
    }
    if (dst.rs == 1 && src.rs == 1) {
      for (int j = 0; j < vc; ++j) std::memcpy(&dst(0, j), &src(0, j), sizeof(TD) * vr);
      return;
    }
  }
  // layouts differ (a transpose between row- and column-major tiles)
  if constexpr (std::is_same<TD, TS>::value && sizeof(TD) == 4) {
    if (dst.rs == 1 && src.cs == 1) {          // dst.p[i + j * dst.cs] = src.p[i * src.rs + j]
      transpose4(dst.p, dst.cs, src.p, src.rs, vc, vr);
      return;
    }
    if (dst.cs == 1 && src.rs == 1) {          // dst.p[i * dst.rs + j] = src.p[i + j * src.cs]
      transpose4(dst.p, dst.rs, src.p, src.cs, vr, vc);
      return;
    }
  }
  // otherwise 16 x 16 blocks, so the strided side stays in a few cache lines; the inner loop
  // runs along the destination
  constexpr int kBlock = 16;
  const bool down_columns = dst.rs == 1 && dst.cs != 1;
  for (int i0 = 0; i0 < vr; i0 += kBlock) {
    const int i1 = i0 + kBlock < vr ? i0 + kBlock : vr;
    for (int j0 = 0; j0 < vc; j0 += kBlock) {
      const int j1 = j0 + kBlock < vc ? j0 + kBlock : vc;
      if (down_columns) {
        for (int j = j0; j < j1; ++j)
          for (int i = i0; i < i1; ++i) dst(i, j) = convert<TD>(src(i, j));
      } else {
        for (int i = i0; i < i1; ++i)
          for (int j = j0; j < j1; ++j) dst(i, j) = convert<TD>(src(i, j));
      }
    }
  }
}

template <typename D, typename S>
inline void copy_valid(D& dst, const S& src, int r0, int c0) {
  const View<const elem_t<S>> from{&src.at(r0, c0), S::kRowStride, S::kColStride};
  copy_worker<elem_t<D>, elem_t<S>>(view(dst), from, dst.GetValidRow(), dst.GetValidCol());
}

constexpr int move_pipe(TileType to, TileType from) {
  return from == TileType::Acc ? PIPE_FIX
         : (to == TileType::Vec && from == TileType::Vec) ? PIPE_V
         : PIPE_MTE1;
}

}  // namespace host

template <typename TileT, typename GT,
          std::enable_if_t<is_tile<TileT>::value && is_global<GT>::value, int> = 0>
PTO_INST void TLOAD(TileT& dst, GT& src, PTO_HOST_LINE) {
  using T = typename TileT::DType;
  using G = typename GT::DType;
  static_assert(sizeof(T) == sizeof(G), "TLOAD does not convert element types");
  if (!host::window_matches(dst, src, line, "TLOAD")) return;
  host::load_worker<T, G>(host::view(dst), host::Window<const G>::of(src), dst.GetValidCol());
  host::access(PIPE_MTE2, line, "TLOAD", {host::window_region(src)}, {host::tile_region(dst)});
}

// GM window <- tile (an accumulator tile converts to the GM type); with AtomicAdd the tile is
// added into GM atomically (blocks may accumulate into the same window concurrently).
template <typename TileT, typename GT, AtomicType Atomic = AtomicType::AtomicNone,
          std::enable_if_t<is_tile<TileT>::value && is_global<GT>::value, int> = 0>
PTO_INST void TSTORE(GT& dst, TileT& src, PTO_HOST_LINE) {
  using G = typename GT::DType;
  using T = typename TileT::DType;
  static_assert(TileT::Loc == TileType::Acc || std::is_same<G, T>::value,
                "only accumulator tiles convert on store");
  if (!host::window_matches(src, dst, line, "TSTORE")) return;
  const host::View<const T> from{src.data(), TileT::kRowStride, TileT::kColStride};
  host::store_worker<G, T, Atomic == AtomicType::AtomicAdd>(host::Window<G>::of(dst), from,
                                                            src.GetValidCol());
  constexpr int pipe = TileT::Loc == TileType::Acc ? PIPE_FIX : PIPE_MTE3;
  host::access(pipe, line, "TSTORE", {host::tile_region(src)}, {host::window_region(dst)});
}

// dst <- src (valid region of dst), converting the element type when they differ.
template <typename D, typename S,
          std::enable_if_t<is_tile<D>::value && is_tile<S>::value, int> = 0>
PTO_INST void TMOV(D& dst, S& src, PTO_HOST_LINE) {
  host::copy_valid(dst, src, 0, 0);
  host::access(host::move_pipe(D::Loc, S::Loc), line, "TMOV", {host::tile_region(src)},
               {host::tile_region(dst)});
}

// dst <- the sub-tile of src starting at (index_row, index_col).
template <typename D, typename S>
PTO_INST void TEXTRACT(D& dst, S& src, int index_row, int index_col, PTO_HOST_LINE) {
  host::copy_valid(dst, src, index_row, index_col);
  host::access(host::move_pipe(D::Loc, S::Loc), line, "TEXTRACT", {host::tile_region(src)},
               {host::tile_region(dst)});
}

}  // namespace pto
