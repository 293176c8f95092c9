// pto_host_sync.h — pipes, set_flag/wait_flag, cross-core notifications, and the debug
// checker of their pairing.
//
// On the accelerator each instruction runs on a pipe (MTE2 loads GM -> UB/L1, V computes on UB,
// MTE3 stores UB -> GM, MTE1 moves L1 -> L0A/L0B, M runs the cube, FIX drains L0C), pipes run
// concurrently, and set_flag(src, dst, id) / wait_flag(src, dst, id) order them: the wait
// blocks pipe `dst` until every instruction issued on `src` before the set has finished.
// The host runs instructions in program order, so flags are no-ops in a normal build.
//
// Built with PTO_HOST_CHECK_SYNC, every instruction reports the buffer regions it reads and
// writes and the checker replays the hardware's ordering rules with vector clocks: an access
// that conflicts with an earlier access from another pipe (read after write, write after read
// or write after write) must be ordered by a chain of set/wait pairs, otherwise the kernel
// has a race on hardware and the launch fails naming both instructions and their lines. It
// also rejects a wait without a pending set (a hang on hardware), a second set of a pending
// flag, and a block that ends with a set never waited for.
//
// A block of a mixed kernel is one cube core and its vector sub-block cores; the host runs
// them one after another and the checker keeps each core's pipes apart (a cube MTE2 is not a
// vector MTE2). A cross-core notification (ffts_cross_core_sync -> wait_flag_dev) carries the
// cube core's progress to each vector core, which consumes it with one wait; when the cube code
// runs as a core of its own (a pto.kernel whose vector sub-blocks split the rows), a vector
// core's notification goes to the cube, which waits for one from every vector core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "pto_host_types.h"

namespace pto {
namespace host {
inline void report_error(int line, const char* op, const char* fmt, ...);
}  // namespace host
}  // namespace pto

enum pipe_t : int {
  PIPE_S = 0,
  PIPE_V,
  PIPE_M,
  PIPE_MTE1,
  PIPE_MTE2,
  PIPE_MTE3,
  PIPE_FIX,
  PIPE_ALL,
};

enum event_t : int {
  EVENT_ID0 = 0,
  EVENT_ID1,
  EVENT_ID2,
  EVENT_ID3,
  EVENT_ID4,
  EVENT_ID5,
  EVENT_ID6,
  EVENT_ID7,
};

namespace pto {
namespace host {

constexpr int kPipesPerCore = PIPE_ALL;
constexpr int kMaxCores = 3;  // the cube core and up to two vector sub-block cores
constexpr int kNumPipes = kPipesPerCore * kMaxCores;
constexpr int kNumEvents = 8;
constexpr int kCubeCore = 0;
constexpr int kFirstVectorCore = 1;

inline const char* pipe_name(int p) {
  static const char* const names[] = {"PIPE_S",    "PIPE_V",    "PIPE_M",  "PIPE_MTE1",
                                      "PIPE_MTE2", "PIPE_MTE3", "PIPE_FIX"};
  return p >= 0 && p < kNumPipes ? names[p % kPipesPerCore] : "PIPE_?";
}

// A set of byte intervals: `rows` runs of `row_bytes` bytes, `stride` bytes apart.
struct Region {
  std::uintptr_t lo = 0;
  std::size_t row_bytes = 0;
  std::size_t stride = 0;
  std::size_t rows = 0;

  std::uintptr_t hi() const { return lo + (rows - 1) * stride + row_bytes; }
  bool same(const Region& o) const {
    return lo == o.lo && row_bytes == o.row_bytes && stride == o.stride && rows == o.rows;
  }
  bool overlaps_interval(std::uintptr_t s, std::uintptr_t e) const {
    if (e <= lo || s >= hi()) return false;
    std::size_t k = s > lo + row_bytes ? (s - lo - row_bytes) / stride : 0;
    for (; k < rows && lo + k * stride < e; ++k)
      if (lo + k * stride + row_bytes > s) return true;
    return false;
  }
  bool overlaps(const Region& o) const {
    if (o.hi() <= lo || o.lo >= hi()) return false;
    for (std::size_t k = 0; k < rows; ++k) {
      const std::uintptr_t s = lo + k * stride;
      if (o.overlaps_interval(s, s + row_bytes)) return true;
    }
    return false;
  }
};

inline Region contiguous(const void* p, std::size_t bytes) {
  return Region{reinterpret_cast<std::uintptr_t>(p), bytes, bytes, 1};
}

using Clocks = std::vector<std::uint64_t>;  // one entry per pipe (kNumPipes)

struct Access {
  int pipe = -1;            // checker pipe index (core * kPipesPerCore + pipe_t)
  std::uint64_t clock = 0;  // the instruction's position on its pipe (1-based)
  const char* op = "";
  int line = 0;
};

struct RegionRecord {
  Region region;
  Access writer;
  std::vector<Access> readers;  // the latest reader on each pipe that read it
};

struct PendingFlag {
  int src, dst, event, line;
  Clocks carried;
};

struct Notification {
  int flag, core, line;
  Clocks carried;
  int source = kCubeCore;  // the core that set it
};

// Per-block ordering state: clocks per pipe, and what each pipe is known to wait for.
class SyncChecker {
 public:
  void begin_block() {
    clock_.assign(kNumPipes, 0);
    seen_.assign(kNumPipes, Clocks(kNumPipes, 0));
    pending_.clear();
    notes_.clear();
    records_.clear();
    cube_apart_ = false;
  }

  void set_core(int core) {
    core_ = core;
    if (core == kCubeCore) cube_apart_ = true;
  }
  // The block's cube code runs as a core of its own (before its first cube statement too).
  void cube_runs_apart() { cube_apart_ = true; }
  int core() const { return core_; }

  void end_block() {
    for (const PendingFlag& f : pending_)
      report_error(f.line, "set_flag", "set_flag(%s, %s, EVENT_ID%d) is never waited for "
                   "before the kernel ends (set/wait must pair)", pipe_name(f.src),
                   pipe_name(f.dst), f.event);
    for (const Notification& n : notes_) {
      if (n.core == kCubeCore)
        report_error(n.line, "ffts_cross_core_sync", "notification %d from vector sub-block %d "
                     "to the cube core is never consumed by wait_flag_dev", n.flag,
                     n.source - kFirstVectorCore);
      else
        report_error(n.line, "ffts_cross_core_sync", "notification %d to vector sub-block %d "
                     "is never consumed by wait_flag_dev", n.flag, n.core - kFirstVectorCore);
    }
  }

  void set_flag(int src_local, int dst_local, int event, int line) {
    const int src = global(src_local), dst = global(dst_local);
    if (!valid(src_local, dst_local, event, line, "set_flag")) return;
    if (find(src, dst, event) != nullptr) {
      report_error(line, "set_flag", "set_flag(%s, %s, EVENT_ID%d) again before its wait_flag",
                   pipe_name(src), pipe_name(dst), event);
      return;
    }
    pending_.push_back(PendingFlag{src, dst, event, line, progress(src)});
  }

  void wait_flag(int src_local, int dst_local, int event, int line) {
    const int src = global(src_local), dst = global(dst_local);
    if (!valid(src_local, dst_local, event, line, "wait_flag")) return;
    PendingFlag* f = find(src, dst, event);
    if (f == nullptr) {
      report_error(line, "wait_flag", "wait_flag(%s, %s, EVENT_ID%d) has no pending set_flag: "
                   "it would hang on hardware", pipe_name(src), pipe_name(dst), event);
      return;
    }
    merge(seen_[dst], f->carried);
    pending_.erase(pending_.begin() + (f - pending_.data()));
  }

  void barrier(int pipe_local) {
    if (pipe_local != PIPE_ALL) return;  // a single-pipe barrier orders that pipe only
    const int base = core_ * kPipesPerCore;
    for (int p = base; p < base + kPipesPerCore; ++p)
      for (int q = base; q < base + kPipesPerCore; ++q) seen_[p][q] = clock_[q];
  }

  // The cube core tells each of `vector_cores` vector cores that `flag` is ready. When the
  // block's cube code runs as a core of its own (set_core(kCubeCore)), a vector core's
  // notification goes to the cube core; else (a pto.kernel whose vector code runs on one
  // sub-block, run as one core) to the vector cores, as the cube's.
  void notify(int pipe_local, int flag, int vector_cores, int line) {
    const Clocks carried = progress(global(pipe_local));
    if (core_ != kCubeCore && cube_apart_) {
      notes_.push_back(Notification{flag, kCubeCore, line, carried, core_});
      return;
    }
    for (int v = 0; v < vector_cores; ++v)
      notes_.push_back(Notification{flag, kFirstVectorCore + v, line, carried});
  }

  // This core waits for one notification of `flag`; the cube core, for one from each of the
  // `vector_cores` vector cores (CANN CrossCoreSetFlag mode 2: the cube's counter rises once
  // every AIV of its group has set).
  void wait_notified(int flag, int vector_cores, int line) {
    if (core_ == kCubeCore) {
      for (int v = 0; v < vector_cores; ++v)
        if (!consume(flag, kFirstVectorCore + v, line)) return;
      return;
    }
    for (std::size_t i = 0; i < notes_.size(); ++i) {
      if (notes_[i].flag != flag || notes_[i].core != core_) continue;
      for (int p = core_ * kPipesPerCore; p < (core_ + 1) * kPipesPerCore; ++p)
        merge(seen_[p], notes_[i].carried);
      notes_.erase(notes_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
    report_error(line, "wait_flag_dev", "wait_flag_dev(%d) on vector sub-block %d has no "
                 "pending ffts_cross_core_sync: it would hang on hardware", flag,
                 core_ - kFirstVectorCore);
  }

  // The cube core consumes one notification of `flag` from vector core `source`.
  bool consume(int flag, int source, int line) {
    for (std::size_t i = 0; i < notes_.size(); ++i) {
      const Notification& n = notes_[i];
      if (n.flag != flag || n.core != kCubeCore || n.source != source) continue;
      for (int p = kCubeCore * kPipesPerCore; p < (kCubeCore + 1) * kPipesPerCore; ++p)
        merge(seen_[p], n.carried);
      notes_.erase(notes_.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
    report_error(line, "wait_flag_dev", "wait_flag_dev(%d) on the cube core has no pending "
                 "ffts_cross_core_sync from vector sub-block %d: it would hang on hardware",
                 flag, source - kFirstVectorCore);
    return false;
  }

  void access(int pipe_local, int line, const char* op, std::initializer_list<Region> reads,
              std::initializer_list<Region> writes) {
    const int pipe = global(pipe_local);
    const Access me{pipe, ++clock_[pipe], op, line};
    for (const Region& r : reads) check(me, r, false);
    for (const Region& r : writes) check(me, r, true);
    for (const Region& r : reads) record(me, r, false);
    for (const Region& r : writes) record(me, r, true);
  }

 private:
  int global(int pipe_local) const { return core_ * kPipesPerCore + pipe_local; }

  bool valid(int src, int dst, int event, int line, const char* op) {
    if (src >= 0 && src < kPipesPerCore && dst >= 0 && dst < kPipesPerCore && event >= 0 &&
        event < kNumEvents)
      return true;
    report_error(line, op, "invalid pipe pair or event id (%d, %d, %d)", src, dst, event);
    return false;
  }

  PendingFlag* find(int src, int dst, int event) {
    for (PendingFlag& f : pending_)
      if (f.src == src && f.dst == dst && f.event == event) return &f;
    return nullptr;
  }

  // Everything pipe `p` has finished or waited for so far.
  Clocks progress(int p) const {
    Clocks c = seen_[p];
    c[p] = clock_[p];
    return c;
  }

  static void merge(Clocks& into, const Clocks& from) {
    for (int q = 0; q < kNumPipes; ++q)
      if (from[q] > into[q]) into[q] = from[q];
  }

  bool ordered(const Access& me, const Access& before) const {
    return before.pipe < 0 || before.pipe == me.pipe || seen_[me.pipe][before.pipe] >= before.clock;
  }

  void hazard(const Access& me, const Access& before, bool before_wrote) {
    const bool same_core = me.pipe / kPipesPerCore == before.pipe / kPipesPerCore;
    report_error(me.line, me.op, "%s on %s %s a buffer that %s (line %d, %s) %s, with no %s "
                 "between them", me.op, pipe_name(me.pipe), before_wrote ? "reads" : "overwrites",
                 before.op, before.line, pipe_name(before.pipe), before_wrote ? "wrote" : "reads",
                 same_core ? "set_flag/wait_flag pair ordering the two pipes"
                           : "cross-core notification (ffts_cross_core_sync / wait_flag_dev)");
  }

  void check(const Access& me, const Region& r, bool write) {
    for (const RegionRecord& rec : records_) {
      if (!rec.region.overlaps(r)) continue;
      if (!ordered(me, rec.writer)) {
        hazard(me, rec.writer, true);
        return;
      }
      if (!write) continue;
      for (const Access& reader : rec.readers) {
        if (!ordered(me, reader)) {
          hazard(me, reader, false);
          return;
        }
      }
    }
  }

  void record(const Access& me, const Region& r, bool write) {
    for (RegionRecord& rec : records_) {
      if (!rec.region.same(r)) continue;
      if (write) {
        rec.writer = me;
        rec.readers.clear();
      } else {
        add_reader(rec, me);
      }
      return;
    }
    RegionRecord rec;
    rec.region = r;
    if (write) rec.writer = me; else add_reader(rec, me);
    records_.push_back(rec);
  }

  static void add_reader(RegionRecord& rec, const Access& me) {
    for (Access& a : rec.readers) {
      if (a.pipe == me.pipe) {
        a = me;
        return;
      }
    }
    rec.readers.push_back(me);
  }

  int core_ = kFirstVectorCore;
  bool cube_apart_ = false;
  Clocks clock_ = Clocks(kNumPipes, 0);
  std::vector<Clocks> seen_ = std::vector<Clocks>(kNumPipes, Clocks(kNumPipes, 0));
  std::vector<PendingFlag> pending_;
  std::vector<Notification> notes_;
  std::vector<RegionRecord> records_;
};

inline SyncChecker& sync_checker() {
  static thread_local SyncChecker checker;
  return checker;
}

#ifdef PTO_HOST_CHECK_SYNC
constexpr bool kCheckSync = true;
#else
constexpr bool kCheckSync = false;
#endif

// Report an instruction's buffer accesses to the checker (compiled out without it).
inline void access(int pipe, int line, const char* op, std::initializer_list<Region> reads,
                   std::initializer_list<Region> writes) {
  if (kCheckSync) sync_checker().access(pipe, line, op, reads, writes);
}

// How many vector cores a cross-core notification reaches (set per launch).
inline int& vector_cores_per_block() {
  static thread_local int n = 1;
  return n;
}

}  // namespace host
}  // namespace pto

inline void set_flag(pipe_t src, pipe_t dst, int event, PTO_HOST_LINE) {
  if (pto::host::kCheckSync) pto::host::sync_checker().set_flag(src, dst, event, line);
}

inline void wait_flag(pipe_t src, pipe_t dst, int event, PTO_HOST_LINE) {
  if (pto::host::kCheckSync) pto::host::sync_checker().wait_flag(src, dst, event, line);
}

inline void pipe_barrier(pipe_t pipe) {
  if (pto::host::kCheckSync) pto::host::sync_checker().barrier(pipe);
}

// The message of a cross-core notification: a mode and a flag id (the host keeps the id).
inline uint64_t getFFTSMsg(uint64_t mode, uint64_t flag) {
  (void)mode;
  return flag;
}

inline void ffts_cross_core_sync(pipe_t pipe, uint64_t message, PTO_HOST_LINE) {
  if (pto::host::kCheckSync)
    pto::host::sync_checker().notify(pipe, static_cast<int>(message),
                                     pto::host::vector_cores_per_block(), line);
}

inline void wait_flag_dev(int64_t flag, PTO_HOST_LINE) {
  if (pto::host::kCheckSync)
    pto::host::sync_checker().wait_notified(static_cast<int>(flag),
                                            pto::host::vector_cores_per_block(), line);
}
