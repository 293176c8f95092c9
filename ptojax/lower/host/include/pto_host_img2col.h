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
  const E pad = static_cast<E>(r.pad_value);
  const int rows = dst.GetValidRow(), cols = dst.GetValidCol();
  for (int i = 0; i < rows; ++i) {
    const int p = pos_m + i;
    const int oh = p / out_w, ow = p % out_w;
    for (int j = 0; j < cols; ++j) {
      const int q = pos_k + j;
      const int tap = q / c, ch = q % c;
      const int ih = oh * sh + (tap / kw) * dh - top;
      const int iw = ow * sw + (tap % kw) * dw - left;
      dst.at(i, j) = (ih >= 0 && ih < h && iw >= 0 && iw < w) ? src.at(ih * w + iw, ch) : pad;
    }
  }
  host::access(PIPE_MTE1, line, "TIMG2COL", {host::tile_region(src)},
               {host::tile_region(dst)});
}

}  // namespace pto
