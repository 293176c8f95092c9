// pto_host_tile.h — Tile, GlobalTensor and TASSIGN for the host build of PTO kernels.
//
// A Tile is a typed view of a buffer region. TASSIGN(tile, addr) points it at byte `addr` of
// the on-chip buffer its TileType lives in (Vec -> UB, Mat -> L1, Left -> L0A, Right -> L0B,
// Acc -> L0C); on the host each buffer is a per-thread arena of the target's capacity, so the
// planner's addresses are used as they are. Element (i, j) of a row-major tile is at
// i * Cols + j, of a column-major tile at j * Rows + i; fractal (SLayout) boxing of the
// accelerator is not modelled — every instruction addresses elements through the same
// (i, j) mapping, so results do not depend on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "pto_host_types.h"

#ifndef PTO_HOST_UB_BYTES
#define PTO_HOST_UB_BYTES (1u << 20)
#endif
#ifndef PTO_HOST_L1_BYTES
#define PTO_HOST_L1_BYTES (4u << 20)
#endif
#ifndef PTO_HOST_L0A_BYTES
#define PTO_HOST_L0A_BYTES (64u << 10)
#endif
#ifndef PTO_HOST_L0B_BYTES
#define PTO_HOST_L0B_BYTES (64u << 10)
#endif
#ifndef PTO_HOST_L0C_BYTES
#define PTO_HOST_L0C_BYTES (128u << 10)
#endif

#define __global__
#define AICORE
#define __aicore__
#define __gm__
#define __ubuf__
#define __cbuf__
#define PTO_INST inline

namespace pto {

enum class TileType : int { Vec, Mat, Left, Right, Acc, Bias, Scaling };
enum class BLayout : int { RowMajor, ColMajor };
enum class SLayout : int { NoneBox, RowMajor, ColMajor };
enum class PadValue : int { Null, Zero, Max, Min };
enum class Layout : int { ND, DN, NZ, ZN };

constexpr int DYNAMIC = -1;

struct TileConfig {
  static constexpr int alignedSize = 32;
  static constexpr int fractalABSize = 512;
  static constexpr int fractalCSize = 1024;
};

namespace host {

enum Space : int { kUB, kL1, kL0A, kL0B, kL0C, kNumSpaces };

constexpr const char* kSpaceNames[kNumSpaces] = {"UB", "L1", "L0A", "L0B", "L0C"};
constexpr std::size_t kSpaceBytes[kNumSpaces] = {PTO_HOST_UB_BYTES, PTO_HOST_L1_BYTES,
                                                 PTO_HOST_L0A_BYTES, PTO_HOST_L0B_BYTES,
                                                 PTO_HOST_L0C_BYTES};

constexpr Space space_of(TileType loc) {
  return loc == TileType::Vec ? kUB
         : loc == TileType::Left ? kL0A
         : loc == TileType::Right ? kL0B
         : loc == TileType::Acc ? kL0C
         : kL1;  // Mat, Bias and Scaling tiles are staged in L1 on the host
}

// Each vector sub-block of a cube core has a UB of its own: the host keeps them one after
// another in the UB arena, and a Vec tile's data is at its address in the UB of the sub-block
// running (`vector_subblock()`, set by on_core and the sub-block scopes of pto_host_launch.h).
constexpr int kMaxVectorSubblocks = 2;

inline int& vector_subblock() {
  static thread_local int sub = 0;
  return sub;
}

// The on-chip buffers of the block running on this thread (allocated once per thread).
struct Arenas {
  unsigned char* base[kNumSpaces] = {};
  ~Arenas() {
    for (auto* p : base) std::free(p);
  }
  unsigned char* get(Space s) {
    if (base[s] == nullptr) {
      const std::size_t copies = s == kUB ? kMaxVectorSubblocks : 1;
      const std::size_t bytes = (kSpaceBytes[s] * copies + 4095) / 4096 * 4096;
      base[s] = static_cast<unsigned char*>(std::aligned_alloc(4096, bytes));
    }
    return base[s];
  }
};

inline Arenas& arenas() {
  static thread_local Arenas a;
  return a;
}

inline void report_error(int line, const char* op, const char* fmt, ...);

}  // namespace host

template <TileType Loc_, typename Element_, int Rows_, int Cols_,
          BLayout BLayout_ = BLayout::RowMajor, int RowValid_ = Rows_, int ColValid_ = Cols_,
          SLayout SLayout_ = SLayout::NoneBox, int SFractalSize_ = TileConfig::fractalABSize,
          PadValue PadValue_ = PadValue::Null>
class Tile {
 public:
  using DType = Element_;
  static constexpr TileType Loc = Loc_;
  static constexpr int Rows = Rows_;
  static constexpr int Cols = Cols_;
  static constexpr int Numel = Rows_ * Cols_;
  static constexpr int ValidRow = RowValid_;
  static constexpr int ValidCol = ColValid_;
  static constexpr bool isRowMajor = BLayout_ == BLayout::RowMajor;
  static constexpr BLayout BFractal = BLayout_;
  static constexpr SLayout SFractal = SLayout_;
  static constexpr int SFractalSize = SFractalSize_;
  static constexpr PadValue PadVal = PadValue_;
  // element strides of the (row, col) index
  static constexpr std::ptrdiff_t kRowStride = isRowMajor ? Cols_ : 1;
  static constexpr std::ptrdiff_t kColStride = isRowMajor ? 1 : Rows_;
  static_assert(Rows_ > 0 && Cols_ > 0, "tile shapes are positive");
  static_assert(RowValid_ == DYNAMIC || (RowValid_ > 0 && RowValid_ <= Rows_),
                "static valid rows must be in [1, Rows]");
  static_assert(ColValid_ == DYNAMIC || (ColValid_ > 0 && ColValid_ <= Cols_),
                "static valid cols must be in [1, Cols]");

  Tile() : valid_row_(RowValid_ == DYNAMIC ? Rows_ : RowValid_),
           valid_col_(ColValid_ == DYNAMIC ? Cols_ : ColValid_) {}
  // One runtime extent: the dynamic one (rows if both are dynamic).
  explicit Tile(int valid) : Tile() {
    if (RowValid_ == DYNAMIC) valid_row_ = valid; else valid_col_ = valid;
  }
  Tile(int valid_row, int valid_col) : valid_row_(valid_row), valid_col_(valid_col) {}

  int GetValidRow() const { return RowValid_ == DYNAMIC ? valid_row_ : RowValid_; }
  int GetValidCol() const { return ColValid_ == DYNAMIC ? valid_col_ : ColValid_; }
  void SetValidRow(int v) { valid_row_ = v; }
  void SetValidCol(int v) { valid_col_ = v; }

  DType* data() const {
    if constexpr (Loc_ == TileType::Vec)   // this sub-block's UB
      return reinterpret_cast<DType*>(reinterpret_cast<unsigned char*>(data_) +
                                      host::vector_subblock() * host::kSpaceBytes[host::kUB]);
    return data_;
  }
  DType& at(int i, int j) const { return data()[i * kRowStride + j * kColStride]; }

  DType* data_ = nullptr;

 private:
  int valid_row_;
  int valid_col_;
};

template <typename T, int Rows, int Cols, int RowValid = Rows, int ColValid = Cols>
using TileLeft = Tile<TileType::Left, T, Rows, Cols, BLayout::RowMajor, RowValid, ColValid>;
template <typename T, int Rows, int Cols, int RowValid = Rows, int ColValid = Cols>
using TileRight = Tile<TileType::Right, T, Rows, Cols, BLayout::RowMajor, RowValid, ColValid>;
template <typename T, int Rows, int Cols, int RowValid = Rows, int ColValid = Cols>
using TileAcc = Tile<TileType::Acc, T, Rows, Cols, BLayout::RowMajor, RowValid, ColValid>;

template <typename T> struct is_tile : std::false_type {};
template <TileType L, typename E, int R, int C, BLayout B, int RV, int CV, SLayout S, int F,
          PadValue P>
struct is_tile<Tile<L, E, R, C, B, RV, CV, S, F, P>> : std::true_type {};

// --- global memory ---------------------------------------------------------------------------
namespace host {
// Five extents (shape) or element strides, each static or DYNAMIC (given at construction, in
// order).
template <int D0, int D1, int D2, int D3, int D4>
struct Dims5 {
  static constexpr int staticShape[5] = {D0, D1, D2, D3, D4};
  static constexpr int kDynamic = (D0 == DYNAMIC) + (D1 == DYNAMIC) + (D2 == DYNAMIC) +
                                  (D3 == DYNAMIC) + (D4 == DYNAMIC);
  int shape[5] = {D0, D1, D2, D3, D4};

  Dims5() { static_assert(kDynamic == 0, "give a value for every DYNAMIC extent"); }
  template <typename... I, typename = std::enable_if_t<(sizeof...(I) > 0)>>
  explicit Dims5(I... values) {
    static_assert(sizeof...(I) == kDynamic, "one value per DYNAMIC extent");
    const int given[] = {static_cast<int>(values)...};
    int next = 0;
    for (int& d : shape) {
      if (d == DYNAMIC) d = given[next++];
    }
  }
  int operator[](int i) const { return shape[i]; }
};
}  // namespace host

template <int D0 = 1, int D1 = 1, int D2 = 1, int D3 = DYNAMIC, int D4 = DYNAMIC>
struct Shape : host::Dims5<D0, D1, D2, D3, D4> {
  using host::Dims5<D0, D1, D2, D3, D4>::Dims5;
};

template <int S0 = DYNAMIC, int S1 = DYNAMIC, int S2 = DYNAMIC, int S3 = DYNAMIC, int S4 = 1>
struct Stride : host::Dims5<S0, S1, S2, S3, S4> {
  using host::Dims5<S0, S1, S2, S3, S4>::Dims5;
};

// A 2-D (rows x cols) window and its row-major strides, as 5-D shape/stride types.
template <typename T, int Rows, int Cols, Layout L = Layout::ND>
using TileShape2D = Shape<1, 1, 1, Rows, Cols>;
template <typename T, int Rows, int Cols, Layout L = Layout::ND>
using BaseShape2D = Stride<Rows * Cols, Rows * Cols, Rows * Cols, Cols, 1>;

template <typename Element_, typename Shape_, typename Stride_, Layout Layout_ = Layout::ND>
struct GlobalTensor {
  using DType = Element_;
  using ShapeType = Shape_;
  using StrideType = Stride_;
  static constexpr Layout layout = Layout_;

  GlobalTensor() = default;
  explicit GlobalTensor(DType* ptr, Shape_ shape = Shape_(), Stride_ stride = Stride_())
      : ptr_(ptr), shape_(shape), stride_(stride) {}

  DType* data() const { return ptr_; }
  int GetShape(int dim) const { return shape_[dim]; }
  std::ptrdiff_t GetStride(int dim) const { return stride_[dim]; }

  DType* ptr_ = nullptr;
  Shape_ shape_;
  Stride_ stride_;
};

template <typename T> struct is_global : std::false_type {};
template <typename E, typename S, typename St, Layout L>
struct is_global<GlobalTensor<E, S, St, L>> : std::true_type {};

// Bind a tile to byte offset `addr` of its buffer, or a GlobalTensor to a GM pointer.
namespace host {
[[gnu::cold, gnu::noinline]] inline void tassign_out_of_range(int line, std::size_t bytes,
                                                            Space space, std::size_t addr) {
  report_error(line, "TASSIGN", "tile of %zu bytes at %s+0x%zx ends past the %zu-byte buffer",
               bytes, kSpaceNames[space], addr, kSpaceBytes[space]);
}
}  // namespace host

template <typename TileT, typename Addr,
          std::enable_if_t<is_tile<TileT>::value && std::is_integral<Addr>::value, int> = 0>
inline void TASSIGN(TileT& tile, Addr addr, PTO_HOST_LINE) {
  constexpr host::Space space = host::space_of(TileT::Loc);
  constexpr std::size_t bytes = sizeof(typename TileT::DType) * TileT::Numel;
  std::size_t offset = static_cast<std::size_t>(addr);
  if (offset + bytes > host::kSpaceBytes[space]) {
    host::tassign_out_of_range(line, bytes, space, offset);
    offset = 0;
  }
  tile.data_ = reinterpret_cast<typename TileT::DType*>(host::arenas().get(space) + offset);
}

template <typename GT, std::enable_if_t<is_global<GT>::value, int> = 0>
inline void TASSIGN(GT& tensor, typename GT::DType* ptr) {
  tensor.ptr_ = ptr;
}

}  // namespace pto
