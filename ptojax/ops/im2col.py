"""The host kernel of ``conv_general_dilated``: blocked im2col and BLAS, in the input's layout.

The input is dilated and padded in its own memory layout (never transposed as a whole), and
its window view ``(G, N, C/G, *out, *K)`` is read as one matrix per group whose rows are
(batch, output position) and whose columns are (input feature, kernel offset). Within each
of the two blocks the axes follow the input's memory order, and the block holding the input's
fastest axis is laid out innermost, so the copy reads runs: the channels of NHWC, the output
rows of NCHW, the batch of a filter gradient (whose "batch" is the input's feature axis).

The matrix is never materialized whole: it is copied in slabs of about ``SLAB_BYTES`` (2 MiB)
into one reused buffer, each slab multiplied (BLAS) while it is still in the core's cache —
into its rows of the output when the rows are the outer block, summed into the output when
the columns are. A whole im2col matrix is ``prod(K)`` times the input (9x for a 3x3 kernel):
written to memory and read back, that traffic was over a quarter of a 3x3 convolution's time
on the host. A slab is at least 8x what each one re-reads (the kernel for row slabs, the
output for column slabs), so large kernels get larger slabs; and when summing column slabs
would update a large output (a spatial axis fastest, as NCHW) the input is first copied once
with its features innermost.

lhs dilation is never materialized: a transposed convolution (the input gradient of a
strided one) is a sum, per output phase, of dilation-free convolutions over the kernel taps
that land on input elements — no hole is copied or multiplied."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ptojax.eval.blas import matmul
from ptojax.ops.windows import dilate_dim, pad_axes, strided_dim, window_view

SLAB_BYTES = 1 << 21    # a slab of the matrix stays in the core's cache until multiplied
REREAD_RATIO = 8        # a slab is at least 8x what each one re-reads of the other operand
LARGE_OUTPUT = 1 << 23  # an output this large is not summed slab by slab (NCHW: see below)


def conv_matmul(lhs, rhs, lhs_spec, rhs_spec, window_strides, padding, lhs_dilation,
                rhs_dilation, groups, batch_groups) -> np.ndarray:
    """The convolution of numpy arrays already in the compute dtype, as canonical
    ``(N, O, *out)`` (a view of a ``(G, rows, O/G)`` result)."""
    if any(d > 1 for d in lhs_dilation):
        return _phases(lhs, rhs, lhs_spec, rhs_spec, window_strides, padding, lhs_dilation,
                       rhs_dilation, groups, batch_groups)
    k = len(lhs_spec) - 2
    x = np.transpose(pad_axes(lhs, lhs_spec[2:], lhs_dilation, padding), lhs_spec)
    w = np.transpose(rhs, rhs_spec)                                    # (O, I, *K)
    win, rows, cont = _windows(x, w, window_strides, rhs_dilation, groups, batch_groups)
    innermost = _innermost_axis(win, rows, cont, w.shape[0] // groups)
    if innermost is not None:
        x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, innermost, -1)), -1, innermost)
        win, rows, cont = _windows(x, w, window_strides, rhs_dilation, groups, batch_groups)
    w = _grouped(x, w, groups, batch_groups)[1]
    kernel_axes = [2 if a == 2 else a - k for a in cont]                # the same, in w
    kernel = np.transpose(w, (0, *kernel_axes, 1))
    kernel = kernel.reshape(groups, math.prod(kernel.shape[1:-1]), w.shape[1])
    if win.size == 0 or kernel.size == 0:
        out = np.zeros((groups, math.prod(win.shape[a] for a in rows), w.shape[1]),
                       np.result_type(win, kernel))
    elif _fastest_inside(win, cont, rows):
        out = _rows_outer(np.transpose(win, (0, *rows, *cont)), len(rows), kernel)
    else:
        out = _columns_outer(np.transpose(win, (0, *cont, *rows)), len(cont), kernel)
    out = out.reshape(groups, *(win.shape[a] for a in rows), w.shape[1])  # (G, *rows, O/G)
    where = {a: i + 1 for i, a in enumerate(rows)}
    out = np.transpose(out, (where[1], 0, len(rows) + 1, *(where[a] for a in range(3, 3 + k))))
    return out.reshape(out.shape[0], groups * w.shape[1], *out.shape[3:])   # (N, O, *P)


def _innermost_axis(win, rows, cont, features):
    """The canonical input axis to copy innermost first (features 1, batch 0), or None: when
    the input's memory order would slab the matrix where each slab re-reads a large operand
    and the other way would not. Summing column slabs into a large output saves nothing
    (NCHW -> NHWC: the matrix then copies feature runs, in row slabs); nor do row slabs each
    re-reading a large kernel (an NCHW filter gradient, whose "kernel" is the output
    cotangent: its batch, the input's features, goes innermost, as in NHWC, and the matrix
    goes in column slabs summed into the small filter)."""
    def large(axes):
        return math.prod(win.shape[a] for a in axes) * features * win.itemsize \
            * REREAD_RATIO > LARGE_OUTPUT
    if _fastest_inside(win, cont, rows):
        return 0 if large(cont) and not large(rows) else None
    return 1 if large(rows) else None


def _phase_plan(n, size, stride, pads, lhs_dilation, rhs_dilation):
    """One spatial dimension of a convolution with lhs dilation, split into dilation-free
    ones: for each output phase ``(first, step, count)``, the kernel phases ``(first, step)``
    whose taps land on input elements, each with its stride, rhs dilation and padding (all
    other taps land on dilation holes and are skipped, never multiplied by zero)."""
    lo, hi = pads
    out = strided_dim(dilate_dim(n, lhs_dilation) + lo + hi, dilate_dim(size, rhs_dilation),
                      stride)
    o_step = lhs_dilation // math.gcd(stride, lhs_dilation)
    k_step = lhs_dilation // math.gcd(rhs_dilation, lhs_dilation)
    plan = []
    for o_first in range(min(o_step, out)):
        count = len(range(o_first, out, o_step))
        taps = []
        for k_first in range(min(k_step, size)):
            offset = o_first * stride + k_first * rhs_dilation - lo
            if offset % lhs_dilation:
                continue
            sub_stride = o_step * stride // lhs_dilation
            sub_dilation = k_step * rhs_dilation // lhs_dilation
            sub_size = len(range(k_first, size, k_step))
            low = -(offset // lhs_dilation)
            span = (count - 1) * sub_stride + (sub_size - 1) * sub_dilation + 1
            taps.append((k_first, k_step, sub_stride, sub_dilation, (low, span - n - low)))
        plan.append(((o_first, o_step, count), taps))
    return out, plan


def _phases(lhs, rhs, lhs_spec, rhs_spec, window_strides, padding, lhs_dilation,
            rhs_dilation, groups, batch_groups) -> np.ndarray:
    """A convolution with lhs dilation (a transposed convolution, the input gradient of a
    strided one) as a sum of dilation-free convolutions per output phase: of a stride-s
    input gradient's im2col matrix, all but 1/s of each dimension's entries are holes."""
    k = len(lhs_spec) - 2
    dims = [_phase_plan(lhs.shape[lhs_spec[2 + i]], rhs.shape[rhs_spec[2 + i]],
                        window_strides[i], padding[i], lhs_dilation[i], rhs_dilation[i])
            for i in range(k)]
    n = lhs.shape[lhs_spec[0]] // (groups if batch_groups else 1)
    # features innermost in memory, as each phase's result (``conv_matmul``) is: the phases'
    # strided additions then copy runs of features, not single elements
    out = np.moveaxis(np.zeros((n, *(size for size, _ in dims), rhs.shape[rhs_spec[0]]),
                               np.result_type(lhs, rhs)), -1, 1)
    for phase in itertools.product(*(plan for _, plan in dims)):
        where = tuple(slice(first, None, step) for (first, step, _), _ in phase)
        for taps in itertools.product(*(t for _, t in phase)):
            kernel = [slice(None)] * rhs.ndim
            for i, (first, step, *_) in enumerate(taps):
                kernel[rhs_spec[2 + i]] = slice(first, None, step)
            out[(slice(None), slice(None), *where)] += conv_matmul(
                lhs, rhs[tuple(kernel)], lhs_spec, rhs_spec, [t[2] for t in taps],
                [t[4] for t in taps], (1,) * k, [t[3] for t in taps], groups, batch_groups)
    return out


def _windows(x, w, window_strides, rhs_dilation, groups, batch_groups):
    """The grouped window view ``(G, N, C', *P, *K)`` of the canonical padded input, its row
    axes (batch, positions) and its column axes (features, offsets), each by stride."""
    k = x.ndim - 2
    xg, wg = _grouped(x, w, groups, batch_groups)
    win = window_view(xg, 3, wg.shape[3:], window_strides, rhs_dilation)
    return (win, _by_stride(win, [1, *range(3, 3 + k)]),
            _by_stride(win, [2, *range(3 + k, 3 + 2 * k)]))


def _grouped(x, w, groups, batch_groups):
    """``x`` as ``(G, N, C/G, *S)`` (batch groups split the batch, feature groups the
    features, G major) and ``w`` as ``(G, O/G, I, *K)``; views, splitting never copies."""
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    if batch_groups:
        x = x.reshape(groups, n // groups, *x.shape[1:])
    else:
        x = np.moveaxis(x.reshape(n, groups, c // groups, *x.shape[2:]), 1, 0)
    return x, w.reshape(groups, o // groups, *w.shape[1:])


def _by_stride(x, axes) -> list:
    """``axes`` of ``x`` ordered by decreasing stride (size-1 axes last)."""
    return sorted(axes, key=lambda a: -abs(x.strides[a]) if x.shape[a] > 1 else 0)


def _fastest_inside(x, block, other) -> bool:
    """Whether ``block`` holds the smaller innermost stride of the two (ties: the longer axis),
    so laying it innermost makes the copy read the longer contiguous runs."""
    def innermost(axes):
        live = [a for a in axes if x.shape[a] > 1]
        return min(((abs(x.strides[a]), -x.shape[a]) for a in live),
                   default=(float("inf"), 0))
    return innermost(block) <= innermost(other)


def _slab_bytes(total: int, reread: int) -> int:
    """The slab size for a matrix of ``total`` bytes whose every slab also reads (or
    updates) ``reread`` bytes of the other operand: ``SLAB_BYTES``, so that a slab is still
    in the core's cache when BLAS reads it, or ``REREAD_RATIO`` times ``reread`` when that is
    larger (re-reading it per slab then costs at most 1/8 more traffic). Measured (AMD Zen 4,
    busy 2-core machine, forward + both gradients of a 3x3 convolution, b32 64->64 32x32
    NHWC): 98 ms of CPU time with 2 MiB slabs, 132 with the earlier rule (8 MiB, at most 4
    slabs, which was for OpenBLAS's threads spinning at each call's barrier on a busy
    machine; BLAS is on one thread there now, ``eval/machine_load.py``); with two threads
    2 MiB slabs were faster too (91 ms wall against 121). Shapes alone decide it, so results
    never depend on the machine."""
    return min(max(SLAB_BYTES, reread * REREAD_RATIO), max(total, 1))


def _slabs(shape, row_bytes, slab_bytes):
    """Index prefixes splitting an array of ``shape`` (each element ``row_bytes``) into
    consecutive slabs of about ``slab_bytes``: whole trailing sub-arrays, in order."""
    inner, lead = row_bytes, len(shape)
    while lead and inner * shape[lead - 1] <= slab_bytes:
        lead -= 1
        inner *= shape[lead]
    if lead == 0:
        yield ()
        return
    step = max(1, slab_bytes // inner)
    for prefix in np.ndindex(*shape[:lead - 1]):
        for j in range(0, shape[lead - 1], step):
            yield prefix + (slice(j, j + step),)


def _slab_buffer(cols, groups, step, slab_bytes, extra) -> np.ndarray:
    """Scratch for one slab: ``step`` whole groups of ``cols``, or ``slab_bytes`` and ``extra``
    elements more, whichever is larger, never more than ``cols`` itself."""
    return np.empty(min(cols.size, max(step * (cols.size // max(groups, 1)),
                                       slab_bytes // cols.itemsize + extra)), cols.dtype)


def _rows_outer(cols, nrow_axes, kernel) -> np.ndarray:
    """``(G, *rows, O/G)`` from the view ``(G, *rows, *cont)``, a slab of rows at a time,
    each multiplied straight into its rows of the output (every output element is one BLAS
    dot product over all of ``cont``). Groups smaller than a slab go several to a slab, as
    one stacked product (per-example filter gradients: a group per example)."""
    groups, ncont, o = kernel.shape
    row_shape = cols.shape[1:1 + nrow_axes]
    out = np.empty((groups, *row_shape, o), np.result_type(cols, kernel))
    slab_bytes = _slab_bytes(cols.size * cols.itemsize, kernel[0].nbytes)
    step = _groups_per_slab(cols, groups, slab_bytes)
    buffer = _slab_buffer(cols, groups, step, slab_bytes, ncont)
    if step > 1:
        for g in range(0, groups, step):
            slab = _copy(cols[g:g + step], buffer)
            slab = slab.reshape(slab.shape[0], -1, ncont)
            matmul(slab, kernel[g:g + step], out=out[g:g + step].reshape(slab.shape[0], -1, o))
        return out
    for g in range(groups):
        for index in _slabs(row_shape, ncont * cols.itemsize, slab_bytes):
            slab = _copy(cols[(g, *index)], buffer).reshape(-1, ncont)
            matmul(slab, kernel[g], out=out[(g, *index)].reshape(-1, o))
    return out


def _columns_outer(cols, ncont_axes, kernel) -> np.ndarray:
    """``(G, rows, O/G)`` from the view ``(G, *cont, *rows)``, a slab of columns at a time,
    each slab's transposed product with its kernel rows summed into the output. Groups
    smaller than a slab go several to a slab, as one stacked product."""
    groups, ncont, o = kernel.shape
    nrows = math.prod(cols.shape[1 + ncont_axes:])
    out = np.empty((groups, nrows, o), np.result_type(cols, kernel))
    slab_bytes = _slab_bytes(cols.size * cols.itemsize, out[0].nbytes)
    step = _groups_per_slab(cols, groups, slab_bytes)
    buffer = _slab_buffer(cols, groups, step, slab_bytes, nrows)
    if step > 1:
        for g in range(0, groups, step):
            slab = _copy(cols[g:g + step], buffer)
            slab = slab.reshape(slab.shape[0], -1, nrows)
            matmul(np.swapaxes(slab, 1, 2), kernel[g:g + step], out=out[g:g + step])
        return out
    for g in range(groups):
        start = 0
        for index in _slabs(cols.shape[1:1 + ncont_axes], nrows * cols.itemsize, slab_bytes):
            slab = _copy(cols[(g, *index)], buffer).reshape(-1, nrows)
            part = kernel[g, start:start + slab.shape[0]]
            if start == 0:
                matmul(slab.T, part, out=out[g])
            else:
                out[g] += matmul(slab.T, part)
            start += slab.shape[0]
    return out


def _groups_per_slab(cols, groups, slab_bytes) -> int:
    """How many whole groups of the matrix ``cols`` (``(G, ...)``) fit in one slab: 1 when
    a group needs a slab or more of its own."""
    group_bytes = cols.size // max(groups, 1) * cols.itemsize
    return max(1, min(groups, slab_bytes // max(group_bytes, 1)))


def _copy(block, buffer) -> np.ndarray:
    """``block`` C-contiguous: itself when it already is, else copied into ``buffer``."""
    if block.flags.c_contiguous:
        return block
    dst = buffer[:block.size].reshape(block.shape)
    np.copyto(dst, block)
    return dst
