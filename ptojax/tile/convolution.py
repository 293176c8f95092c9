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
from ptojax.ops.elementwise import zero_like
from ptojax.ops.shape import transpose
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import concatenate, full, pad, slice
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
    return pad(x, zero_like(x), config)


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


# lhs dilation: phases -----------------------------------------------------------------------
# A unit-stride convolution of an lhs-dilated input (a transposed convolution; the input
# gradient of a strided one) reads input pixels only through the taps that land on them: the
# outputs o = D*j + phi of one phase phi (per spatial dim) read taps k0, k0 + D, ... of the
# filter and input pixels j + t + c, a dilation-free convolution of the input with that
# subsampled filter. Each phase is an on-chip im2col kernel; their outputs interleave into the
# result at tensor level (one copy of the output), and no hole is copied or multiplied.
def _dim_phases(n, d, lo, hi, k):
    """(outputs, [(phase outputs J, first tap, taps T, padding lo', hi')]) of one dim."""
    out = (n - 1) * d + 1 + lo + hi - k + 1
    phases = []
    for phi in range(d):
        j = len(range(phi, out, d))
        k0 = (lo - phi) % d
        t = len(range(k0, k, d))
        plo = -((phi + k0 - lo) // d)
        phases.append((j, k0, t, plo, j - 1 + t - n - plo))
    return out, phases


def _phase(x, w, dims, c0, params):
    """One phase's (N, J_h, J_w, O) output, or None when it reads no input pixel."""
    starts, limits, pads, taps = [0, 0, 0, 0], list(x.shape), [], []
    for axis, (j, k0, t, plo, phi) in zip((1, 2), dims):
        start, stop = max(0, -plo), x.shape[axis] + min(0, phi)
        if j == 0 or t == 0 or stop <= start:
            return None
        starts[axis], limits[axis] = start, stop
        pads.append((max(0, plo), max(0, phi)))
        taps.append((k0, t))
    xp = slice(x, starts, limits) if starts != [0, 0, 0, 0] or limits != list(x.shape) else x
    (kh0, th), (kw0, tw) = taps
    wp = slice(w, (kh0, kw0, 0, 0), (kh0 + (th - 1) * params["d"][0] + 1,
                                     kw0 + (tw - 1) * params["d"][1] + 1, *w.shape[2:]),
               (params["d"][0], params["d"][1], 1, 1))
    return canonical_conv(xp, wp, dimension_numbers=ConvDimensionNumbers(*CONV_SPECS), c0=c0,
                          window_strides=(1, 1), padding=tuple(pads), lhs_dilation=(1, 1),
                          rhs_dilation=(1, 1), feature_group_count=1, batch_group_count=1,
                          **params["rest"])


def phase_split_conv(lhs, rhs, *, dimension_numbers, padding, lhs_dilation, c0,
                     window_strides, rhs_dilation, feature_group_count, batch_group_count,
                     **rest):
    """A unit-stride lhs-dilated 2-d convolution as its phases' convolutions, interleaved."""
    ls, rs, os_ = dimension_numbers
    x = _to(lhs, (ls[0], ls[2], ls[3], ls[1]))
    w = _to(rhs, (rs[2], rs[3], rs[1], rs[0]))
    (out_h, ph), (out_w, pw) = (_dim_phases(x.shape[1 + i], lhs_dilation[i], *padding[i],
                                            w.shape[i]) for i in (0, 1))
    dh, dw = lhs_dilation
    jh, jw = -(-out_h // dh), -(-out_w // dw)
    n, o = x.shape[0], w.shape[3]
    rows = []
    for a in ph:
        cols = []
        for b in pw:
            y = _phase(x, w, (a, b), c0, dict(d=lhs_dilation, rest=rest))
            if y is None:
                y = full((n, jh, jw, o), 0, _result_dtype(x, rest))
            else:     # a phase with fewer outputs: zeros after its last
                y = pad(y, zero_like(y), [(0, 0, 0), (0, jh - y.shape[1], 0),
                                                  (0, jw - y.shape[2], 0), (0, 0, 0)])
            cols.append(reshape(y, (n, jh, 1, jw, 1, o)))
        rows.append(concatenate(cols, 4))
    y = reshape(concatenate(rows, 2), (n, jh * dh, jw * dw, o))
    if (jh * dh, jw * dw) != (out_h, out_w):
        y = slice(y, (0, 0, 0, 0), (n, out_h, out_w, o))
    return _to(y, _out_perm(os_))


def _result_dtype(x, rest):
    pet = rest.get("preferred_element_type")
    return pet if pet is not None else x.dtype

