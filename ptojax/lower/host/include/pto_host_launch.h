// pto_host_launch.h — running the blocks of a kernel, block indices and error reporting.
//
// `run_blocks(n, parallel, vector_cores, body)` runs body once per block, in parallel over
// OpenMP threads when asked and the build has OpenMP (each thread has its own on-chip buffer
// arenas and sync checker).
// Within a block, `on_core(core, fn)` runs the code of one core: the cube core, or vector
// sub-block core kFirstVectorCore + get_subblockid(). A failed runtime check (report_error)
// does not stop the kernel; the first error — lowest block, then program order — is kept and
// returned to Python through ptojax_host_error().
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <mutex>

#include "pto_host_sync.h"
#include "pto_host_tile.h"

#define PTO_HOST_EXPORT extern "C" __attribute__((visibility("default")))

// The number of blocks of the running kernel (an AscendC built-in variable).
inline thread_local int64_t block_num = 1;

namespace pto {
namespace host {

struct BlockContext {
  int64_t index = 0;
  int64_t count = 1;
  int64_t subblock = 0;
};

inline BlockContext& block_context() {
  static thread_local BlockContext context;
  return context;
}

struct ErrorState {
  std::mutex mutex;
  bool failed = false;
  int64_t block = 0;
  char text[2048] = {};
};

inline ErrorState& error_state() {
  static ErrorState state;
  return state;
}

inline void report_error(int line, const char* op, const char* fmt, ...) {
  char detail[1536];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(detail, sizeof detail, fmt, args);
  va_end(args);
  ErrorState& e = error_state();
  const int64_t block = block_context().index;
  std::lock_guard<std::mutex> lock(e.mutex);
  if (e.failed && e.block <= block) return;
  e.failed = true;
  e.block = block;
  std::snprintf(e.text, sizeof e.text, "kernel line %d: %s: %s (block %lld)", line, op, detail,
                static_cast<long long>(block));
}

template <typename Body>
inline int run_blocks(int64_t blocks, int parallel, int vector_cores, Body body) {
  {
    ErrorState& e = error_state();
    std::lock_guard<std::mutex> lock(e.mutex);
    e.failed = false;
    e.text[0] = '\0';
  }
#if defined(_OPENMP)
  const bool concurrent = parallel && blocks > 1;
#else
  const bool concurrent = false;
#endif
  BlockOrder order(concurrent ? blocks : 0);
  auto run_block = [&](int64_t b) {
    block_context() = BlockContext{b, blocks, 0};
    add_turn() = AddTurn{concurrent ? &order : nullptr, b};
    ::block_num = blocks;
    vector_cores_per_block() = vector_cores;
    if (kCheckSync) sync_checker().begin_block();
    body();
    if (kCheckSync) sync_checker().end_block();
    if (concurrent) order.end(b);
  };
  if (concurrent) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks; ++b) run_block(b);
  } else {   // no OpenMP region: even a serialized one costs ~2 us a launch (libgomp's team)
    for (int64_t b = 0; b < blocks; ++b) run_block(b);
  }
  return error_state().failed ? 1 : 0;
}

// A launcher called with the arrays' Python objects rather than their data pointers: each
// data pointer is read at `offset` bytes into its object (numpy's C ABI keeps it right after
// the object header; ptojax checks that offset against `a.ctypes.data` at import), which
// saves reading them one by one in Python (~0.5 us each) — lower/host/loader.py.
constexpr int64_t kMaxLaunchArrays = 256;

template <typename Launch>
inline int launch_objects(void* const* objects, int64_t count, int64_t offset, Launch launch) {
  void* args[kMaxLaunchArrays];
  if (count > kMaxLaunchArrays) return -1;
  for (int64_t i = 0; i < count; ++i)
    args[i] = *reinterpret_cast<void* const*>(static_cast<const char*>(objects[i]) + offset);
  return launch(args);
}

// Run the code of one core of the current block.
template <typename Fn>
inline void on_core(int core, Fn fn) {
  block_context().subblock = core >= kFirstVectorCore ? core - kFirstVectorCore : 0;
  vector_subblock() = static_cast<int>(block_context().subblock);
  if (kCheckSync) sync_checker().set_core(core);
  fn();
}

// A mixed pto.kernel whose vector sub-blocks split the rows runs its body in program order on
// one thread: each cube block as the cube core (`for (CubeCore c; c.next();) {...}`), each
// vector block once per vector sub-block (`for (VectorSubblocks v; v.next();) {...}`), each
// sub-block with its own UB and pipes; both restore the core running before.
class CoreScope {
 public:
  CoreScope() : subblock_(block_context().subblock), core_(sync_checker().core()) {}
  ~CoreScope() { enter(core_, subblock_); }

 protected:
  static void enter(int core, int64_t subblock) {
    block_context().subblock = subblock;
    vector_subblock() = static_cast<int>(subblock);
    if (kCheckSync) {
      sync_checker().cube_runs_apart();
      sync_checker().set_core(core);
    }
  }

 private:
  int64_t subblock_;
  int core_;
};

class CubeCore : public CoreScope {
 public:
  bool next() {
    if (done_) return false;
    enter(kCubeCore, 0);
    return done_ = true;
  }

 private:
  bool done_ = false;
};

class VectorSubblocks : public CoreScope {
 public:
  bool next() {
    if (sub_ >= vector_cores_per_block()) return false;
    enter(kFirstVectorCore + sub_, sub_);
    ++sub_;
    return true;
  }

 private:
  int sub_ = 0;
};

}  // namespace host
}  // namespace pto

inline int64_t get_block_idx() { return pto::host::block_context().index; }
inline int64_t get_block_num() { return pto::host::block_context().count; }
inline int64_t get_subblockid() { return pto::host::block_context().subblock; }

PTO_HOST_EXPORT const char* ptojax_host_error() { return pto::host::error_state().text; }
