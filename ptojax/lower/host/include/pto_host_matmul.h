// pto_host_matmul.h — the cube instructions TMATMUL and TMATMUL_ACC.
//
// C (M x N) [+]= A (M x K) . B (K x N) over the valid regions (M, K from A, N from B), products
// accumulated in the accumulator tile's type (float for float/half/bfloat16 inputs, int32 for
// int8). Operands are packed into zero-padded row-major scratch in the compute type, then a
// register-blocked kernel (kRowBlock rows x kColBlock columns of C per step) runs over K.
#pragma once

#include <vector>

#include "pto_host_map.h"
#include "pto_host_math.h"

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
  for (int i = 0; i < prows; ++i)
    for (int j = 0; j < pitch; ++j)
      out[i * pitch + j] = (i < rows && j < cols) ? static_cast<C>(widen(t(i, j))) : C(0);
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

// c = [c_in +] a . b over (m x k) . (k x n); c_in may be null.
template <typename TC, typename TL, typename TR>
PTO_HOST_WORKER void matmul_worker(View<TC> c, const TC* c_in, View<const TL> a,
                                   View<const TR> b, int m, int k, int n) {
  using C = compute_t<TC>;
  const int pm = round_up(m, kRowBlock), pn = round_up(n, kColBlock);
  C* pa = matmul_scratch<C>(0, static_cast<std::size_t>(pm) * k);
  C* pb = matmul_scratch<C>(1, static_cast<std::size_t>(k) * pn);
  pack(pa, a, m, k, pm, k);
  pack(pb, b, k, n, k, pn);
  const View<const TC> in{c_in, c.rs, c.cs};
  for (int i0 = 0; i0 < pm; i0 += kRowBlock) {
    const int rows = m - i0 < kRowBlock ? m - i0 : kRowBlock;
    for (int j0 = 0; j0 < pn; j0 += kColBlock) {
      const int cols = n - j0 < kColBlock ? n - j0 : kColBlock;
      C acc[kRowBlock][kColBlock] = {};
      if (c_in != nullptr)
        for (int r = 0; r < rows; ++r)
          for (int q = 0; q < cols; ++q) acc[r][q] = widen(in(i0 + r, j0 + q));
      matmul_block(pa + static_cast<std::ptrdiff_t>(i0) * k, pb + j0, acc, k, k, pn);
      for (int r = 0; r < rows; ++r)
        for (int q = 0; q < cols; ++q) c(i0 + r, j0 + q) = narrow<TC>(acc[r][q]);
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
