// A float32 matrix product without packing: C = A @ B (+ beta * C), A and B row-major, C
// row-major or stored transposed, for host programs' `dot_general` equations with few rows
// on one side
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
// A layer's input gradient `g @ w.T` (32 x 512 @ 512 x 784) is the same product the other way
// round: C^T = w @ g^T, with A = w read in place (many rows, streamed once), B = g^T (a copy,
// k x 32, that stays in L2) and C^T's elements stored at their transposed places, so the
// caller gets `g @ w.T` row-major.
//
// Numerics: each result is one running sum over k in order (one rounding per term), so its
// error is within the float bound of the sum; the last bits differ from a BLAS's, which sums
// each K block apart and then adds the blocks.
#pragma once

#include <algorithm>
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
// element (r, col) of the block is stored at c[r * ldc + col], or at c[col * ldc + r] when
// `transposed`
template <int rows, int vecs>
inline void block(const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                  int64_t ldc, int64_t k, float beta, bool transposed) {
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
  if (transposed) {
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < vecs; ++j)
        for (int l = 0; l < kLanes; ++l) {
          float* out = c + (j * kLanes + l) * ldc + r;
          *out = beta == 0.0f ? acc[r][j][l] : acc[r][j][l] + beta * *out;
        }
    return;
  }
  _Pragma("GCC unroll 8") for (int r = 0; r < rows; ++r)
    _Pragma("GCC unroll 8") for (int j = 0; j < vecs; ++j) {
      float* out = c + r * ldc + j * kLanes;
      store(out, beta == 0.0f ? acc[r][j] : acc[r][j] + beta * load(out));
    }
}

// every row of C in the columns of one panel of `vecs` vectors
// (c: the panel's first column of row 0; `row` and `col` its strides in C)
template <int vecs>
inline void panel(const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                  int64_t ldc, int64_t m, int64_t k, float beta, bool transposed) {
  const int64_t row = transposed ? 1 : ldc;
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    block<kRows, vecs>(a + i * lda, lda, b, ldb, c + i * row, ldc, k, beta, transposed);
  a += i * lda;
  c += i * row;
  switch (m - i) {
    case 5: block<5, vecs>(a, lda, b, ldb, c, ldc, k, beta, transposed); break;
    case 4: block<4, vecs>(a, lda, b, ldb, c, ldc, k, beta, transposed); break;
    case 3: block<3, vecs>(a, lda, b, ldb, c, ldc, k, beta, transposed); break;
    case 2: block<2, vecs>(a, lda, b, ldb, c, ldc, k, beta, transposed); break;
    case 1: block<1, vecs>(a, lda, b, ldb, c, ldc, k, beta, transposed); break;
    default: break;
  }
}

// the last columns, fewer than one vector
inline void scalar_columns(const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                           int64_t ldc, int64_t m, int64_t n, int64_t k, float beta,
                           bool transposed) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += a[i * lda + p] * b[p * ldb + j];
      float* out = transposed ? c + j * ldc + i : c + i * ldc + j;
      *out = beta == 0.0f ? s : s + beta * *out;
    }
}

// the columns of panel `q` (the last one: the columns after the full panels, narrower)
inline void any_panel(int64_t q, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc, int64_t m, int64_t n, int64_t k, float beta,
                      bool transposed) {
  const int64_t col = transposed ? ldc : 1;   // C's stride between columns
  int64_t j = q * kPanel;
  if (j + kPanel <= n) {
    panel<kVecs>(a, lda, b + j, ldb, c + j * col, ldc, m, k, beta, transposed);
    return;
  }
  const int vecs = static_cast<int>((n - j) / kLanes);
  switch (vecs) {
    case 3: panel<3>(a, lda, b + j, ldb, c + j * col, ldc, m, k, beta, transposed); break;
    case 2: panel<2>(a, lda, b + j, ldb, c + j * col, ldc, m, k, beta, transposed); break;
    case 1: panel<1>(a, lda, b + j, ldb, c + j * col, ldc, m, k, beta, transposed); break;
    default: break;
  }
  j += vecs * kLanes;
  if (j < n)
    scalar_columns(a, lda, b + j, ldb, c + j * col, ldc, m, n - j, k, beta, transposed);
}

// Tasks for the threads: each panel of columns by each chunk of kChunkRows rows (a product of
// few rows has one chunk; one of few columns, the input gradient's, many)
constexpr int64_t kChunkRows = 16 * kRows;

inline void gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc, bool transposed,
                 int parallel) {
  const int64_t row = transposed ? 1 : ldc;   // C's stride between rows
  const int64_t panels = (n + kPanel - 1) / kPanel;
  const int64_t chunks = (m + kChunkRows - 1) / kChunkRows;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (parallel && panels * chunks > 1)
#endif
  for (int64_t t = 0; t < panels * chunks; ++t) {
    const int64_t i = (t % chunks) * kChunkRows, rows = std::min(kChunkRows, m - i);
    any_panel(t / chunks, a + i * lda, lda, b, ldb, c + i * row, ldc, rows, n, k, beta,
              transposed);
  }
}

}  // namespace few_rows
}  // namespace host
}  // namespace pto

// C (m x n) = A (m x k) @ B (k x n) + beta * C; C's element (i, j) at c[i * ldc + j], or at
// c[j * ldc + i] when `c_transposed`
PTO_HOST_EXPORT void ptojax_gemm_few_rows_f32(long long m, long long n, long long k,
                                              const float* a, long long lda, const float* b,
                                              long long ldb, float beta, float* c,
                                              long long ldc, int c_transposed, int parallel) {
  pto::host::few_rows::gemm(m, n, k, a, lda, b, ldb, beta, c, ldc, c_transposed != 0,
                            parallel);
}
