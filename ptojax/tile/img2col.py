"""``tile_img2col``: a convolution's im2col matrix tile, built on chip from a feature map in L1.

    tile_img2col(fmap, pos_m, pos_k, top; config, shape, valid, stage) -> L0A  [PTO TIMG2COL]

``fmap`` is a feature map in L1: an (H*W, C) tile, row h*W + w holding pixel (h, w)'s
channels: one image, or a band of H of its rows (``config.fmap``'s H), whose place in the
image the runtime scalars ``top`` (the band's top pad) and ``pos_m`` (positions counted
from the band's first output row) carry. The result is the (pos_m, pos_k) window, ``valid``
in size, of the feature map's im2col matrix: row p is output position p = oh*OW + ow,
column q is the kernel tap and input channel q = (kh*KW + kw)*C + c, and the element is the
input pixel that tap of that output reads,

    ih = oh*stride_h + kh*dilation_h - top,   iw = ow*stride_w + kw*dilation_w - pad_left

or 0 where (ih, iw) falls in the padding. So a convolution tiles as a cube matmul whose left
operand never exists in GM: the feature map is loaded into L1 once per output tile and each K
step expands its (m, k) block into L0A (``tile/build.py``'s ``conv``).

The geometry (``Img2colConfig``) is what PTO's fmatrix registers hold: ``TSETFMATRIX`` (feature
map height/width and the four pads), ``TSET_IMG2COL_RPT`` (the repeat of one expansion) and
``TSET_IMG2COL_PADDING`` (the pad value, 0), set once per output tile (a band's top pad is
the tile's) before the K loop's
``TIMG2COL`` instructions (``FMATRIX_A_MANUAL`` mode). Modelled, not the hardware's bits: the
L1 tile is the (H*W, C) matrix in the cube's NZ fractal layout (for fp16, C0 = 16 channel
blocks of H*W rows: the bytes of NC1HWC0 for one image), and the im2col K order is tap-major
(kh, kw, c) to match the filter's HWIO rows, where the hardware orders K as (c1, kh, kw, c0)
with the filter in FRACTAL_Z; the two orders differ by a permutation of K applied to both
operands, which leaves the products unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptojax.errors import ShapeError
from ptojax.ir import pto
from ptojax.ops.costs import no_flops
from ptojax.tile import ops as T
from ptojax.trace import Primitive


@dataclass(frozen=True)
class Img2colConfig:
    """One image's convolution geometry (what the fmatrix registers hold)."""
    fmap: tuple            # (H, W, C) of the L1 feature map
    filter: tuple          # (KH, KW)
    strides: tuple         # (stride_h, stride_w)
    dilation: tuple        # (rhs dilation h, w)
    pads: tuple            # ((top, bottom), (left, right))
    out: tuple             # (OH, OW)

    @property
    def k(self) -> int:
        """The im2col matrix's columns: taps x channels."""
        return self.filter[0] * self.filter[1] * self.fmap[2]

    @property
    def m(self) -> int:
        """The im2col matrix's rows per image: output positions."""
        return self.out[0] * self.out[1]


def img2col_block(fmap, pos_m: int, pos_k: int, rows: int, cols: int, cfg: Img2colConfig,
                  top=None):
    """The (rows, cols) block at (pos_m, pos_k) of the im2col matrix of ``fmap`` (H*W, C);
    ``top``: the top pad when it is set per tile (a band of the image's rows)."""
    (H, W, C), (_, KW) = cfg.fmap, cfg.filter
    (sh, sw), (dh, dw) = cfg.strides, cfg.dilation
    (pt, _), (pl, _) = cfg.pads
    pt = pt if top is None else int(top)
    p = pos_m + np.arange(rows)
    q = pos_k + np.arange(cols)
    oh, ow = np.divmod(p, cfg.out[1])
    tap, c = np.divmod(q, C)
    kh, kw = np.divmod(tap, KW)
    ih = oh[:, None] * sh + kh[None, :] * dh - pt
    iw = ow[:, None] * sw + kw[None, :] * dw - pl
    inside = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    src = np.asarray(fmap)
    rows_idx = np.where(inside, ih * W + iw, 0)
    out = src[rows_idx, np.broadcast_to(c[None, :], rows_idx.shape)]
    return np.where(inside, out, np.zeros((), src.dtype))


def _img2col_abstract(fmap, pos_m, pos_k, top, *, config, shape, valid, stage=None):
    T._require_tile("tile_img2col", fmap, ("L1",))
    for a in (pos_m, pos_k, top):
        T._require_index("tile_img2col", a)
    H, W, C = config.fmap
    if fmap.shape != (H * W, C) or T.valid_shape(fmap) != fmap.shape:
        raise ShapeError(f"tile_img2col: the feature map {fmap} is not a full "
                         f"{H * W}x{C} tile of {H}x{W} pixels of {C} channels")
    if any(v > s for v, s in zip(valid, shape)):
        raise ShapeError(f"tile_img2col: valid {valid} exceeds the tile {shape}")
    return T.tile_type(shape, fmap.dtype, "L0A", valid)


def _img2col(fmap, pos_m, pos_k, top, *, config, shape, valid, stage=None):
    return img2col_block(fmap, int(pos_m), int(pos_k), valid[0], valid[1], config, top)


tile_img2col_p = Primitive("tile_img2col", _img2col_abstract, _img2col)
tile_img2col_p.tile_inplace = False
tile_img2col_p.tile_scratch = None
tile_img2col_p.tile_staged = True    # fills a pipeline buffer (``stage``), as tile_move does
T.TILE_PRIMS.append(tile_img2col_p)


def _img2col_recipe(eqn):
    fmap, pos_m, pos_k, _ = eqn.inputs      # the top pad is in the fmatrix registers
    return [pto.Instr("TIMG2COL", eqn.outputs[0], (fmap, pos_m, pos_k),
                      {"img2col": eqn.params["config"]})]


# the fmatrix configuration written once per output tile (lower/schedule.py places it)
FMATRIX_OPS = ("TSETFMATRIX", "TSET_IMG2COL_RPT", "TSET_IMG2COL_PADDING")


def fmatrix_config(config: Img2colConfig, top) -> list:
    """The instructions setting the fmatrix registers for ``config`` with top pad ``top``
    (an int32 atom: a band's top pad is set per tile) before TIMG2COL."""
    return [pto.Instr(op, None, (top,), {"img2col": config}) for op in FMATRIX_OPS]


tile_img2col_p.define(pto=_img2col_recipe, cost=no_flops)
T.define_tile_op_facts(tile_img2col_p)
