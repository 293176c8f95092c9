"""Convolutions before tiling: the layout the on-chip im2col kernel reads.

A convolution the cube can run with ``TIMG2COL`` (``rules.direct_conv_reason``) is rewritten
into the canonical NHWC input / HWIO filter / NHWC output form, with tensor-level transposes
for the operands and the result where the program's layout differs (none for NHWC/HWIO
programs), and input channels zero-padded to a multiple of C0 where they are not (an RGB
input layer: a tensor-level pad of the input and the filter, what the NC1HWC0 format
conversion does). The canonical convolution is then one cube kernel (``rules.CONV_RULE``): its
input's 2-D view is (batch x pixels, channels), one image of which is the feature-map tile,
its filter's is the (taps x channels, features) right operand, and its result's the
(batch x output positions, features) matmul result, so a bias or activation epilogue fuses
as on any matmul. Other convolutions keep the im2col expansion in primitives
(``ops/convolution.py``'s ``tile`` fact).
"""
from __future__ import annotations

from ptojax.ops.convolution import ConvDimensionNumbers, conv_general_dilated_p
from ptojax.ops.elementwise import constant
from ptojax.ops.shape import transpose
from ptojax.ops.slicing import pad
from ptojax.tile.rules import CONV_SPECS


def _to(x, perm):
    return x if tuple(perm) == tuple(range(len(perm))) else transpose(x, tuple(perm))


def _out_perm(out_spec) -> tuple:
    """The transpose taking an NHWC result to the ``out_spec`` layout."""
    current = (0, 3, 1, 2)          # canonical (batch, feature, h, w) -> NHWC position
    return tuple(current[list(out_spec).index(d)] for d in range(4))


def _pad_channels(x, axis, c0):
    """``x`` with zero channels appended along ``axis`` up to a multiple of ``c0``."""
    extra = -x.shape[axis] % c0
    if not extra:
        return x
    config = [(0, 0, 0)] * x.ndim
    config[axis] = (0, extra, 0)
    return pad(x, constant(0, x.dtype), config)


def canonical_conv(lhs, rhs, *, dimension_numbers, c0, **params):
    """The convolution as NHWC/HWIO/NHWC, between transposes of its operands and result,
    its input channels zero-padded to a multiple of ``c0`` (as NC1HWC0 pads its last block:
    the padded channels multiply zero filter rows)."""
    ls, rs, os_ = dimension_numbers
    x = _pad_channels(_to(lhs, (ls[0], ls[2], ls[3], ls[1])), 3, c0)
    w = _pad_channels(_to(rhs, (rs[2], rs[3], rs[1], rs[0])), 2, c0)
    out = conv_general_dilated_p.bind(x, w, dimension_numbers=ConvDimensionNumbers(
        *CONV_SPECS), **params)
    return _to(out, _out_perm(os_))
