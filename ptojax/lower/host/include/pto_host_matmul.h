// pto_host_matmul.h — the cube instructions TMATMUL and TMATMUL_ACC.
//
// C (M x N) [+]= A (M x K) . B (K x N) over the valid regions (M, K from A, N from B), products
// accumulated in the accumulator tile's type (float for float/half/bfloat16 inputs, int32 for
// int8). Operands are packed into zero-padded row-major scratch in the compute type (an operand
// already row-major in it, in whole blocks, is read in place), then a register-blocked kernel
// (kRowBlock rows x kColBlock columns of C per step; float with AVX-512: 8 x 32 in 16 vector
// registers) runs over K. Every C element is the same chain of fused multiply-adds in K order
// whatever the blocking, so results do not depend on it.
#pragma once

#include <cstring>
#include <vector>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "pto_host_map.h"
#include "pto_host_math.h"
#include "pto_host_memory.h"

namespace pto {
namespace host {

constexpr int kRowBlock = 4;
constexpr int kColBlock = 32;

template <typename C>
inline C* matmul_scratch(int which, std::size_t n) {
  static thread_local std::vector<C> buffers[2];
  std::vector<C>& b = buffers[which];
  if (b.size() < n) b.resize(n);
  return b.data();
}

inline int round_up(int n, int m) { return (n + m - 1) / m * m; }

// Copy the (rows x cols) region of a view into `out` (row pitch `pitch`, `prows` rows),
// widened to C and zero-padded.
template <typename C, typename T>
inline void pack(C* out, View<const T> t, int rows, int cols, int prows, int pitch) {
  if constexpr (std::is_same<C, T>::value && sizeof(T) == 4) {
    if (t.rs == 1 && t.cs != 1) {    // a column-major 4-byte operand: 8 x 8 AVX transposes
      transpose4(out, pitch, t.p, t.cs, rows, cols);
      for (int i = 0; i < prows; ++i)
        for (int j = (i < rows ? cols : 0); j < pitch; ++j)
          out[static_cast<std::ptrdiff_t>(i) * pitch + j] = C(0);
      return;
    }
  }
  if (t.rs == 1 && t.cs != 1) {      // a column-major operand: 16 x 16 blocks, read down columns
    constexpr int kBlock = 16;
    for (int i0 = 0; i0 < rows; i0 += kBlock) {
      const int i1 = i0 + kBlock < rows ? i0 + kBlock : rows;
      for (int j0 = 0; j0 < cols; j0 += kBlock) {
        const int j1 = j0 + kBlock < cols ? j0 + kBlock : cols;
        for (int j = j0; j < j1; ++j)
          for (int i = i0; i < i1; ++i)
            out[static_cast<std::ptrdiff_t>(i) * pitch + j] = static_cast<C>(widen(t(i, j)));
      }
    }
    for (int i = 0; i < prows; ++i)
      for (int j = (i < rows ? cols : 0); j < pitch; ++j)
        out[static_cast<std::ptrdiff_t>(i) * pitch + j] = C(0);
    return;
  }
  for (int i = 0; i < prows; ++i) {
    C* const o = out + static_cast<std::ptrdiff_t>(i) * pitch;
    int j = 0;
    if (i < rows) {
      if constexpr (std::is_same<C, T>::value) {
        if (t.cs == 1) {
          std::memcpy(o, &t(i, 0), sizeof(C) * cols);
          j = cols;
        }
      }
      for (; j < cols; ++j) o[j] = static_cast<C>(widen(t(i, j)));
    }
    for (; j < pitch; ++j) o[j] = C(0);
  }
}

template <typename C>
inline C multiply_add(C a, C b, C acc) {
  if constexpr (std::is_floating_point<C>::value) return fmadd(a, b, acc);
  else return acc + a * b;
}

// One kRowBlock x kColBlock block of C: acc += A[i0.., :] . B[:, j0..].
template <typename C>
inline void matmul_block(const C* a, const C* b, C (&acc)[kRowBlock][kColBlock], int k,
                         int pitch_a, int pitch_b) {
  for (int kk = 0; kk < k; ++kk) {
    const C* brow = b + static_cast<std::ptrdiff_t>(kk) * pitch_b;
    for (int r = 0; r < kRowBlock; ++r) {
      const C av = a[r * pitch_a + kk];
      for (int q = 0; q < kColBlock; ++q) acc[r][q] = multiply_add(av, brow[q], acc[r][q]);
    }
  }
}

#if defined(__AVX512F__)
constexpr int kWideRows = 8;     // float blocks of 8 x 32 with the accumulators in registers

// matmul_block for float, kWideRows x kColBlock: the same fused multiply-adds in the same
// order (so the same results), with C's block held in 16 AVX-512 registers instead of memory.
inline void matmul_block_wide(const float* a, const float* b, float* acc, int k, int pitch_a,
                              int pitch_b) {
  static_assert(kColBlock == 32, "two 16-float registers per row");
  __m512 c[kWideRows][2];
#pragma GCC unroll 8
  for (int r = 0; r < kWideRows; ++r) {
    c[r][0] = _mm512_loadu_ps(acc + r * kColBlock);
    c[r][1] = _mm512_loadu_ps(acc + r * kColBlock + 16);
  }
  for (int kk = 0; kk < k; ++kk) {
    const float* brow = b + static_cast<std::ptrdiff_t>(kk) * pitch_b;
    const __m512 b0 = _mm512_loadu_ps(brow), b1 = _mm512_loadu_ps(brow + 16);
#pragma GCC unroll 8
    for (int r = 0; r < kWideRows; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * pitch_a + kk]);
      c[r][0] = _mm512_fmadd_ps(av, b0, c[r][0]);
      c[r][1] = _mm512_fmadd_ps(av, b1, c[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kWideRows; ++r) {
    _mm512_storeu_ps(acc + r * kColBlock, c[r][0]);
    _mm512_storeu_ps(acc + r * kColBlock + 16, c[r][1]);
  }
}
#endif

// c = [c_in +] a . b over (m x k) . (k x n); c_in may be null.
template <typename TC, typename TL, typename TR>
PTO_HOST_WORKER void matmul_worker(View<TC> c, const TC* c_in, View<const TL> a,
                                   View<const TR> b, int m, int k, int n) {
  using C = compute_t<TC>;
#if defined(__AVX512F__)
  constexpr bool wide = std::is_same<C, float>::value;
#else
  constexpr bool wide = false;
#endif
  constexpr int row_block = wide ? 8 : kRowBlock;
  const int pm = round_up(m, row_block), pn = round_up(n, kColBlock);
  // an operand already row-major in C and in whole blocks is read in place, others packed
  bool a_direct = false, b_direct = false;
  if constexpr (std::is_same<TL, C>::value) a_direct = a.cs == 1 && pm == m;
  if constexpr (std::is_same<TR, C>::value) b_direct = b.cs == 1 && pn == n;
  const std::ptrdiff_t pitch_a = a_direct ? a.rs : k, pitch_b = b_direct ? b.rs : pn;
  const C* pa = reinterpret_cast<const C*>(a.p);
  const C* pb = reinterpret_cast<const C*>(b.p);
  if (!a_direct) {
    C* scratch = matmul_scratch<C>(0, static_cast<std::size_t>(pm) * k);
    pack(scratch, a, m, k, pm, k);
    pa = scratch;
  }
  if (!b_direct) {
    C* scratch = matmul_scratch<C>(1, static_cast<std::size_t>(k) * pn);
    pack(scratch, b, k, n, k, pn);
    pb = scratch;
  }
  const View<const TC> in{c_in, c.rs, c.cs};
  for (int i0 = 0; i0 < pm; i0 += row_block) {
    const int rows = m - i0 < row_block ? m - i0 : row_block;
    for (int j0 = 0; j0 < pn; j0 += kColBlock) {
      const int cols = n - j0 < kColBlock ? n - j0 : kColBlock;
      C acc[row_block][kColBlock] = {};
      const bool column_major = c.rs == 1 && c.cs != 1;   // walk C along its contiguous side
      if (c_in != nullptr && column_major) {
        for (int q = 0; q < cols; ++q)
          for (int r = 0; r < rows; ++r) acc[r][q] = widen(in(i0 + r, j0 + q));
      } else if (c_in != nullptr) {
        for (int r = 0; r < rows; ++r)
          for (int q = 0; q < cols; ++q) acc[r][q] = widen(in(i0 + r, j0 + q));
      }
      const C* ablock = pa + i0 * pitch_a;
#if defined(__AVX512F__)
      if constexpr (wide)
        matmul_block_wide(ablock, pb + j0, &acc[0][0], k, static_cast<int>(pitch_a),
                          static_cast<int>(pitch_b));
      else
#endif
        matmul_block(ablock, pb + j0, acc, k, static_cast<int>(pitch_a),
                     static_cast<int>(pitch_b));
      if (column_major) {
        for (int q = 0; q < cols; ++q)
          for (int r = 0; r < rows; ++r) c(i0 + r, j0 + q) = narrow<TC>(acc[r][q]);
      } else if (std::is_same<TC, C>::value && c.cs == 1) {
        for (int r = 0; r < rows; ++r) std::memcpy(&c(i0 + r, j0), acc[r], sizeof(C) * cols);
      } else {
        for (int r = 0; r < rows; ++r)
          for (int q = 0; q < cols; ++q) c(i0 + r, j0 + q) = narrow<TC>(acc[r][q]);
      }
    }
  }
}

template <typename Out, typename L, typename R>
inline void matmul(Out& c_out, const Out* c_in, const L& a, const R& b) {
  const View<const elem_t<L>> va{a.data(), L::kRowStride, L::kColStride};
  const View<const elem_t<R>> vb{b.data(), R::kRowStride, R::kColStride};
  matmul_worker<elem_t<Out>, elem_t<L>, elem_t<R>>(view(c_out), c_in ? c_in->data() : nullptr,
                                                   va, vb, a.GetValidRow(), a.GetValidCol(),
                                                   b.GetValidCol());
}

template <typename Out, typename L, typename R>
inline void cube_access(int line, const char* op, const Out& c, const L& a, const R& b) {
  if (kCheckSync)
    sync_checker().access(PIPE_M, line, op,
                          {contiguous(a.data(), sizeof(elem_t<L>) * L::Numel),
                           contiguous(b.data(), sizeof(elem_t<R>) * R::Numel)},
                          {contiguous(c.data(), sizeof(elem_t<Out>) * Out::Numel)});
}

}  // namespace host

template <typename Out, typename L, typename R>
PTO_INST void TMATMUL(Out& c, L& a, R& b, PTO_HOST_LINE) {
  host::matmul(c, static_cast<const Out*>(nullptr), a, b);
  host::cube_access(line, "TMATMUL", c, a, b);
}

template <typename Out, typename L, typename R>
PTO_INST void TMATMUL_ACC(Out& c_out, Out& c_in, L& a, R& b, PTO_HOST_LINE) {
  host::matmul(c_out, &c_in, a, b);
  host::cube_access(line, "TMATMUL_ACC", c_out, a, b);
}

}  // namespace pto
