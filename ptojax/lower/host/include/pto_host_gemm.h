// A float32 matrix product of few rows without packing: C = A @ B (+ beta * C), all three
// row-major, for host programs' `dot_general` equations of that form
// (lower/host/few_rows_gemm.py). Included at the end of a kernel library only when its program
// has such a product (it is not part of pto_host.h: every other library would compile it).
//
// A small batch's dense layer `x @ w` (32 x 784 @ 784 x 512) is what this is for. A BLAS
// sgemm packs the weight matrix into panels on every call, and with 32 rows that copy is a
// third of the product's time. Here each block of kRows x (kVecs * kLanes) results is held in
// registers while the loop over k reads one row of B's column panel straight from B (the
// panel, k x 64 floats, stays in L2 across the row blocks) and broadcasts one element of A per
// row. Column panels are shared out over OpenMP threads when `parallel`.
//
// Numerics: each result is one running sum over k in order (one rounding per term), so its
// error is within the float bound of the sum; the last bits differ from a BLAS's, which sums
// each K block apart and then adds the blocks.
#pragma once

#include <cstdint>
#include <cstring>

namespace pto {
namespace host {
namespace few_rows {

#if defined(__AVX512F__)
constexpr int kLanes = 16;   // floats per vector register
constexpr int kVecs = 4;     // vectors per block row: 6 x 4 accumulators of 32 registers
#else
constexpr int kLanes = 8;
constexpr int kVecs = 2;     // 6 x 2 accumulators of 16 registers
#endif
constexpr int kRows = 6;
constexpr int64_t kPanel = kVecs * kLanes;   // columns of one panel
// B's rows are read kPrefetch ahead: a panel's rows are a row length apart, too far for the
// hardware prefetcher, and in a train step the weights come from L3 or memory (32 x 784 @
// 784 x 512 with cold caches, one thread: 346 us, 445 without, 396-449 OpenBLAS)
constexpr int64_t kPrefetch = 16;

typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

// rows x (vecs * kLanes) results of C, from the same rows of A and columns of B
template <int rows, int vecs>
inline void block(const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                  int64_t ldc, int64_t k, float beta) {
  Vec acc[rows][vecs];
  _Pragma("GCC unroll 8") for (int r = 0; r < rows; ++r)
    _Pragma("GCC unroll 8") for (int j = 0; j < vecs; ++j) acc[r][j] = Vec{};
  for (int64_t p = 0; p < k; ++p) {
    Vec bv[vecs];
    _Pragma("GCC unroll 8") for (int j = 0; j < vecs; ++j) {
      __builtin_prefetch(b + (p + kPrefetch) * ldb + j * kLanes);
      bv[j] = load(b + p * ldb + j * kLanes);
    }
    _Pragma("GCC unroll 8") for (int r = 0; r < rows; ++r) {
      const float s = a[r * lda + p];
      _Pragma("GCC unroll 8") for (int j = 0; j < vecs; ++j) acc[r][j] += s * bv[j];
    }
  }
  _Pragma("GCC unroll 8") for (int r = 0; r < rows; ++r)
    _Pragma("GCC unroll 8") for (int j = 0; j < vecs; ++j) {
      float* out = c + r * ldc + j * kLanes;
      store(out, beta == 0.0f ? acc[r][j] : acc[r][j] + beta * load(out));
    }
}

// every row of C in the columns of one panel of `vecs` vectors
template <int vecs>
inline void panel(const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                  int64_t ldc, int64_t m, int64_t k, float beta) {
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    block<kRows, vecs>(a + i * lda, lda, b, ldb, c + i * ldc, ldc, k, beta);
  a += i * lda;
  c += i * ldc;
  switch (m - i) {
    case 5: block<5, vecs>(a, lda, b, ldb, c, ldc, k, beta); break;
    case 4: block<4, vecs>(a, lda, b, ldb, c, ldc, k, beta); break;
    case 3: block<3, vecs>(a, lda, b, ldb, c, ldc, k, beta); break;
    case 2: block<2, vecs>(a, lda, b, ldb, c, ldc, k, beta); break;
    case 1: block<1, vecs>(a, lda, b, ldb, c, ldc, k, beta); break;
    default: break;
  }
}

// the last columns, fewer than one vector
inline void scalar_columns(const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                           int64_t ldc, int64_t m, int64_t n, int64_t k, float beta) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = beta == 0.0f ? s : s + beta * c[i * ldc + j];
    }
}

inline void gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc, int parallel) {
  const int64_t panels = n / kPanel;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (parallel && panels > 1)
#endif
  for (int64_t q = 0; q < panels; ++q)
    panel<kVecs>(a, lda, b + q * kPanel, ldb, c + q * kPanel, ldc, m, k, beta);
  int64_t j = panels * kPanel;
  const int vecs = static_cast<int>((n - j) / kLanes);   // the last columns: one narrower panel
  switch (vecs) {
    case 3: panel<3>(a, lda, b + j, ldb, c + j, ldc, m, k, beta); break;
    case 2: panel<2>(a, lda, b + j, ldb, c + j, ldc, m, k, beta); break;
    case 1: panel<1>(a, lda, b + j, ldb, c + j, ldc, m, k, beta); break;
    default: break;
  }
  j += vecs * kLanes;
  if (j < n) scalar_columns(a, lda, b + j, ldb, c + j, ldc, m, n - j, k, beta);
}

}  // namespace few_rows
}  // namespace host
}  // namespace pto

PTO_HOST_EXPORT void ptojax_gemm_few_rows_f32(long long m, long long n, long long k,
                                              const float* a, long long lda, const float* b,
                                              long long ldb, float beta, float* c,
                                              long long ldc, int parallel) {
  pto::host::few_rows::gemm(m, n, k, a, lda, b, ldb, beta, c, ldc, parallel);
}
