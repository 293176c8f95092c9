// pto_host_img2col.h — the convolution path: Img2colTileConfig, the fmatrix register writes
// (TSETFMATRIX, TSET_IMG2COL_RPT, TSET_IMG2COL_PADDING) and TIMG2COL (an L1 feature map ->
// an im2col block in L0A), with the semantics of ptojax's tile_img2col (tile/img2col.py).
//
// The feature map tile holds one image as the (H*W, C) matrix (row h*W + w, column c); the
// block's element (r, q) is the input pixel that kernel tap q / C = kh*KW + kw of output
// position p = posM + r reads for channel q % C, or the padding value outside the image.
// As in FMATRIX_A_MANUAL mode, the feature map's height, width and pads come from the last
// TSETFMATRIX and the padding value from the last TSET_IMG2COL_PADDING (per-core registers:
// thread-local here); the filter, strides and dilation are the instruction's own operands.
#pragma once

#include <cstdint>

#include "pto_host_tile.h"
#include "pto_host_sync.h"
#include "pto_host_map.h"

namespace pto {

enum class SetFmatrixMode : int { FMATRIX_A_AUTO, FMATRIX_B_AUTO, FMATRIX_A_MANUAL,
                                  FMATRIX_B_MANUAL };

template <typename T = uint64_t>
struct Img2colTileConfig {
  uint8_t padList[4] = {0, 0, 0, 0};   // left, right, top, bottom
  uint16_t fmapH = 0;
  uint16_t fmapW = 0;
  uint16_t filterH = 1;
  uint16_t filterW = 1;
  uint8_t dilationH = 1;
  uint8_t dilationW = 1;
  uint8_t strideH = 1;
  uint8_t strideW = 1;
  uint16_t channelSize = 0;
  T padValue = 0;
  bool transpose = false;
  bool smallChannel = false;
};

namespace host {
// One image's convolution geometry: the feature map (h, w, c), the filter width, strides,
// dilations, the top/left pads and the output width.
struct Img2colGeometry {
  int h, w, c, kw, sh, sw, dh, dw, top, left, out_w;
};

// dst(i, j) = the im2col matrix's element (pos_m + i, pos_k + j) of the (h*w, c) feature map
// src, or pad where the tap falls in the padding (the semantics of tile_img2col). Shared by
// TIMG2COL and the fused build; the tap and channel advance without divisions.
template <typename T, typename S>
inline void img2col_fill(View<T> dst, View<S> src, const Img2colGeometry& g, int pos_m,
                         int pos_k, int rows, int cols, T pad) {
  const int tap0 = pos_k / g.c, ch0 = pos_k % g.c;
  for (int i = 0; i < rows; ++i) {
    const int p = pos_m + i;
    const int ih0 = (p / g.out_w) * g.sh - g.top, iw0 = (p % g.out_w) * g.sw - g.left;
    int kh = tap0 / g.kw, kw = tap0 % g.kw, ch = ch0;
    for (int j = 0; j < cols; ++j) {
      const int ih = ih0 + kh * g.dh, iw = iw0 + kw * g.dw;
      dst(i, j) = (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) ? src(ih * g.w + iw, ch) : pad;
      if (++ch == g.c) {
        ch = 0;
        if (++kw == g.kw) {
          kw = 0;
          ++kh;
        }
      }
    }
  }
}

struct FmatrixRegisters {
  int fmap_h = 0, fmap_w = 0;
  int pad[4] = {0, 0, 0, 0};
  bool set = false;
  float pad_value = 0.0f;
};

inline FmatrixRegisters& fmatrix() {
  static thread_local FmatrixRegisters regs;
  return regs;
}
}  // namespace host

template <typename T>
PTO_INST void TSETFMATRIX(const Img2colTileConfig<T>& cfg, PTO_HOST_LINE) {
  (void)line;
  auto& r = host::fmatrix();
  r.fmap_h = cfg.fmapH;
  r.fmap_w = cfg.fmapW;
  for (int i = 0; i < 4; ++i) r.pad[i] = cfg.padList[i];
  r.set = true;
}

// The repeat register: one expansion per TIMG2COL here (its default), nothing to model.
template <typename T>
PTO_INST void TSET_IMG2COL_RPT(const Img2colTileConfig<T>& cfg, PTO_HOST_LINE) {
  (void)cfg;
  (void)line;
}

template <typename T>
PTO_INST void TSET_IMG2COL_PADDING(const Img2colTileConfig<T>& cfg, PTO_HOST_LINE) {
  (void)line;
  host::fmatrix().pad_value = static_cast<float>(cfg.padValue);
}

template <typename D, typename S, typename T>
PTO_INST void TIMG2COL(D& dst, S& src, int pos_m, int pos_k, const Img2colTileConfig<T>& cfg,
                       PTO_HOST_LINE) {
  static_assert(D::Loc == TileType::Left, "TIMG2COL writes an L0A (TileLeft) tile");
  static_assert(S::Loc == TileType::Mat, "TIMG2COL reads an L1 (Mat) feature map");
  using E = typename D::DType;
  const auto& r = host::fmatrix();
  if (!r.set) {
    host::report_error(line, "TIMG2COL", "no TSETFMATRIX before TIMG2COL");
    return;
  }
  const int h = r.fmap_h, w = r.fmap_w, c = cfg.channelSize;
  const int left = r.pad[0], top = r.pad[2];
  const int kw = cfg.filterW, sh = cfg.strideH, sw = cfg.strideW;
  const int dh = cfg.dilationH, dw = cfg.dilationW;
  const int out_w = (w + r.pad[0] + r.pad[1] - dw * (kw - 1) - 1) / sw + 1;
  if (c <= 0 || src.GetValidRow() != h * w || src.GetValidCol() != c) {
    host::report_error(line, "TIMG2COL", "the feature map tile is not fmapH*fmapW x "
                       "channelSize");
    return;
  }
  const host::Img2colGeometry g{h, w, c, kw, sh, sw, dh, dw, top, left, out_w};
  host::img2col_fill(host::view(dst), host::View<const E>{src.data(), S::kRowStride,
                                                          S::kColStride},
                     g, pos_m, pos_k, dst.GetValidRow(), dst.GetValidCol(),
                     static_cast<E>(r.pad_value));
  host::access(PIPE_MTE1, line, "TIMG2COL", {host::tile_region(src)},
               {host::tile_region(dst)});
}

}  // namespace pto
