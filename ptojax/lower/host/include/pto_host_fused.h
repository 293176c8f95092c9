// pto_host_fused.h — what fused host kernels (ptojax/lower/host/fused.py) add to pto_host.h.
//
// A fused kernel computes a tile kernel's chain one element at a time in registers: a value
// of element type T is held in T's compute type (float for half / bfloat16_t, bool for masks)
// and, for the 16-bit floats, rounded to T after every operation (round_as), so that each
// primitive rounds once, as numpy and the PTO build's instructions do. The element
// functions are the primitives' `host` facts: op_add ... op_not, exp_f32 ... (pto_host_
// elementwise.h, pto_host_vmath.h), convert_to below.
#pragma once

#include <cstddef>
#include <vector>

#include "pto_host.h"

namespace pto {
namespace host {

using bool_t = bool;   // a mask's element type in convert_to<bool_t>

// columns per strip of a strip-mined pass (lower/host/fused_strips.py): its buffers stay in L1;
// whole lane groups, so that a reducing pass adds its elements in the order of one loop
constexpr int kStripColumns = 256;
static_assert(kStripColumns % kReduceLanes == 0, "a strip is whole lane groups");

// v rounded to element type T, back in T's compute type (the identity unless T is 16-bit float)
template <typename T>
static inline PTO_VMATH_INLINE compute_t<T> round_as(compute_t<T> v) {
  return widen(narrow<T>(v));
}

// a mask element read as its byte: GCC 12 does not vectorize a loop that loads a bool
static inline PTO_VMATH_INLINE bool load_bool(const bool& b) {
  return *reinterpret_cast<const unsigned char*>(&b) != 0;
}

// x converted to element type To, in To's compute type: float -> integer truncates toward
// zero, saturates and sends NaN to 0; the other conversions are mode-independent.
template <typename To, typename C>
static inline PTO_VMATH_INLINE compute_t<To> convert_to(C x) {
  return widen(convert<To>(x, RoundMode::CAST_TRUNC));
}

// Per-thread scratch arrays, one per `which` in each of the pools. Held as bytes:
// std::vector<bool> has no data() (bool rows of a mask are buffers too).
template <int Pool, typename T>
inline T* thread_scratch(int which, std::size_t n) {
  struct alignas(T) Slot { unsigned char bytes[sizeof(T)]; };
  static thread_local std::vector<std::vector<Slot>> buffers;
  if (static_cast<int>(buffers.size()) <= which) buffers.resize(which + 1);
  std::vector<Slot>& b = buffers[which];
  if (b.size() < n) b.resize(n);
  return reinterpret_cast<T*>(b.data());
}

// A fused kernel's scratch within a tile (row buffers, accumulators) ...
template <typename T>
inline T* fused_buffer(int which, std::size_t n) {
  return thread_scratch<0, T>(which, n);
}

// ... and across its block's tiles (their column sums, fused.py).
template <typename T>
inline T* block_buffer(int which, std::size_t n) {
  return thread_scratch<1, T>(which, n);
}

// The kReduceLanes partial results of a row reduction combined pairwise, as reduce_contiguous
// (pto_host_reduce.h) combines them: fused kernels reduce in the same order as TROWSUM & co.
template <typename C, typename Op>
static inline C fold_lanes(C (&part)[kReduceLanes], Op op) {
  combine_lanes<kReduceLanes / 2>(part, op);
  return part[0];
}

}  // namespace host
}  // namespace pto
