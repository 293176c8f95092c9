// Float32 matrix products on the kernels' OpenMP team (lower/host/team_gemm.py). Every
// kernel library has it: the first one loaded runs all of ptojax's products (eval/blas.py).
//
// Why: numpy's OpenBLAS runs its products on its own pthreads, the kernels run on OpenMP's.
// On two cores the idle pool's workers spin or sleep while the other pool works, and in a
// train step that alternates products and kernels each pool's work waits for the other's
// workers (a VAE step's momentum updates ran slower on two threads than on one). Here a
// product is split over the OpenMP team instead, each member calling numpy's own ?gemm on
// its share with OpenBLAS held at one thread meanwhile (`openblas_set_num_threads_local`,
// restored after): products and kernels then share one pool.
//
// The share: batches when there are several, else the rows, or the columns (in whole
// vectors) of a product of few rows. The last bits may differ from numpy's matmul of
// the same operands: BLAS picks its kernels by the size of each call.
#pragma once

#include <cstdint>
#include <mutex>
#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace pto {
namespace host {
namespace team_gemm {

// cblas_?gemm (row-major), with 32- or 64-bit integer arguments
template <typename T, typename I>
using Gemm = void (*)(int, int, int, I, I, I, T, const T*, I, const T*, I, T, T*, I);
using SetLocalThreads = int (*)(int);

struct Routines {
  void* sgemm = nullptr;
  bool index64 = false;
  SetLocalThreads set_local_threads = nullptr;
};

inline Routines& routines() {
  static Routines r;
  return r;
}

template <typename T, typename I>
inline void call(int ta, int tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                 const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  reinterpret_cast<Gemm<T, I>>(routines().sgemm)(
      kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, static_cast<I>(m),
      static_cast<I>(n), static_cast<I>(k), T(1), a, static_cast<I>(lda), b,
      static_cast<I>(ldb), beta, c, static_cast<I>(ldc));
}

// One ?gemm call (OpenBLAS at one thread in a team member: `gemm` set it).
template <typename T>
inline void one_thread(int ta, int tb, int64_t m, int64_t n, int64_t k, const T* a,
                       int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (routines().index64)
    call<T, int64_t>(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  else
    call<T, int32_t>(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

// Products of fewer rows split their columns (whole vectors of them); others their rows, each
// member's a contiguous block of C (a weight gradient x.T @ g of K = 32: 227-245 us against
// 252-315 split by columns, 512x784 on two threads).
constexpr int64_t kSplitRows = 64;

// Member `t` of `team`: its share of `batch` products of op(A) (m x k) op(B) (k x n).
template <typename T>
inline void share(int t, int team, int ta, int tb, int64_t batch, int64_t m, int64_t n,
                  int64_t k, const T* a, int64_t lda, int64_t a_step, const T* b, int64_t ldb,
                  int64_t b_step, T beta, T* c, int64_t ldc, int64_t c_step) {
  if (batch > 1) {
    for (int64_t i = batch * t / team; i < batch * (t + 1) / team; ++i)
      one_thread(ta, tb, m, n, k, a + i * a_step, lda, b + i * b_step, ldb, beta,
                 c + i * c_step, ldc);
  } else if (m < kSplitRows) {
    constexpr int64_t kVector = 16;
    const int64_t vectors = (n + kVector - 1) / kVector;
    const int64_t j0 = vectors * t / team * kVector;
    const int64_t j1 = t + 1 == team ? n : vectors * (t + 1) / team * kVector;
    one_thread(ta, tb, m, j1 - j0, k, a, lda, tb ? b + j0 * ldb : b + j0, ldb, beta, c + j0,
               ldc);
  } else {
    const int64_t i0 = m * t / team, i1 = m * (t + 1) / team;
    one_thread(ta, tb, i1 - i0, n, k, ta ? a + i0 : a + i0 * lda, lda, b, ldb, beta,
               c + i0 * ldc, ldc);
  }
}

// OpenBLAS held at one thread while any thread of this process runs products here. The "local"
// setting of numpy's pthreads OpenBLAS is one process-wide value, so it is set by the calling
// thread around the whole team's work (set and restored by each member, the last restore would
// be a member's 1), and with several calling threads the first in saves it and the last out
// restores it (each restoring what it found would leave it at 1).
class OneBlasThread {
 public:
  OneBlasThread() {
    std::lock_guard<std::mutex> hold(state().mutex);
    if (state().holders++ == 0) state().saved = routines().set_local_threads(1);
  }
  ~OneBlasThread() {
    std::lock_guard<std::mutex> hold(state().mutex);
    if (--state().holders == 0) routines().set_local_threads(state().saved);
  }

 private:
  struct State {
    std::mutex mutex;
    int holders = 0;
    int saved = 0;
  };
  static State& state() {
    static State s;
    return s;
  }
};

// Where a product runs (eval/foreign_threads.py): on the calling thread or split over the team,
// OpenBLAS at one thread; or on OpenBLAS's own threads.
enum Spread { kCallingThread = 0, kTeam = 1, kOpenBlasThreads = 2 };

template <typename T>
inline void gemm(int ta, int tb, int64_t batch, int64_t m, int64_t n, int64_t k, const T* a,
                 int64_t lda, int64_t a_step, const T* b, int64_t ldb, int64_t b_step, T beta,
                 T* c, int64_t ldc, int64_t c_step, int spread) {
  if (spread == kOpenBlasThreads) {
    share(0, 1, ta, tb, batch, m, n, k, a, lda, a_step, b, ldb, b_step, beta, c, ldc, c_step);
    return;
  }
  const OneBlasThread one_blas_thread;
#if defined(_OPENMP)
  if (spread == kTeam) {
#pragma omp parallel
    share(omp_get_thread_num(), omp_get_num_threads(), ta, tb, batch, m, n, k, a, lda, a_step,
          b, ldb, b_step, beta, c, ldc, c_step);
  } else
#endif
  {
    share(0, 1, ta, tb, batch, m, n, k, a, lda, a_step, b, ldb, b_step, beta, c, ldc, c_step);
  }
}

}  // namespace team_gemm
}  // namespace host
}  // namespace pto

// numpy's cblas_sgemm and openblas_set_num_threads_local, found by the loader (eval/blas.py)
PTO_HOST_EXPORT void ptojax_team_gemm_bind(void* sgemm, int index64, void* set_local_threads) {
  auto& r = pto::host::team_gemm::routines();
  r.sgemm = sgemm;
  r.index64 = index64 != 0;
  r.set_local_threads = reinterpret_cast<pto::host::team_gemm::SetLocalThreads>(
      set_local_threads);
}

// `batch` float32 products C_i = op(A_i) op(B_i) + beta C_i, row-major, the i-th operands
// `*_step` elements after the first, run where `spread` says (a Spread). Returns 1 (and
// computes nothing) if it was not bound.
PTO_HOST_EXPORT int ptojax_team_gemm(int ta, int tb, long long batch, long long m,
                                     long long n, long long k, const float* a, long long lda,
                                     long long a_step, const float* b, long long ldb,
                                     long long b_step, float beta, float* c, long long ldc,
                                     long long c_step, int spread) {
  namespace tg = pto::host::team_gemm;
  if (tg::routines().sgemm == nullptr || tg::routines().set_local_threads == nullptr) return 1;
  tg::gemm(ta, tb, batch, m, n, k, a, lda, a_step, b, ldb, b_step, beta, c, ldc, c_step,
           spread);
  return 0;
}

// The Linux thread ids of the calling thread's OpenMP team, the caller's first, into `tids`:
// the threads whose CPU time is the team's own (eval/foreign_threads.py). Returns how many,
// 0 where they cannot be known (not Linux, no OpenMP).
PTO_HOST_EXPORT int ptojax_team_threads(long long* tids, int capacity) {
  int count = 0;
#if defined(__linux__) && defined(_OPENMP)
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    if (t < capacity) tids[t] = static_cast<long long>(syscall(SYS_gettid));
#pragma omp master
    count = omp_get_num_threads() < capacity ? omp_get_num_threads() : capacity;
  }
#endif
  return count;
}
