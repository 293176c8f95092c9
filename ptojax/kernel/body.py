"""The language of a ``pto.kernel`` body: refs, program ids, loops.

A body receives one ``Ref`` per input and output. ``ref[...]`` loads the program's window (a
tile: an ordinary ptojax value of the window's shape, computed on with ``ptojax.numpy``,
``pto.lax`` or the helpers below); ``ref[...] = tile`` stores it. Sub-windows are indexed
per window dimension with ``pto.kernel.ds(start, size)``, a slice ``:`` or an index (which
drops the dimension); starts may be traced (a program id or loop index times a block size).

    pto.kernel.program_id(axis)        this program's id along a grid axis (int32 scalar)
    pto.kernel.num_programs(axis)      the grid's size along it (a Python int)
    pto.kernel.fori(lo, hi, body, init)   body(i, carry) -> carry, for i in [lo, hi); bounds
                                       may be traced (a causal loop stops at the diagonal)
    pto.kernel.load / store / atomic_add(ref, idx, value)   the function forms of indexing
    pto.kernel.dot(a, b, trans_a=False, trans_b=False)     a matmul on the cube (float32
                                       accumulation, as the L0C accumulator holds it)
    pto.kernel.iota(shape, dim)        int32 indices along ``dim`` (masks, e.g. causal)

Tiles are at most 2-D. What each operation becomes on the hardware (which unit, which
buffer, which PTO instruction) is decided when the body is lowered (``kernel/lower.py``).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ptojax import dtypes
from ptojax.errors import IndexingError, ShapeError, UnsupportedError
from ptojax.ir.core import IR, ClosedIR
from ptojax.ir.types import TensorType
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, kernel_store_p
from ptojax.ops.arithmetic import add
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.convert import convert_element_type
from ptojax.ops.linalg import dot_general
from ptojax.ops.slicing import broadcasted_iota
from ptojax.source_info import user_frame
from ptojax.trace import Tracer, trace_flat
from ptojax.pytree import tree_flatten, tree_unflatten

I32 = dtypes.int32


class _Stack(threading.local):
    def __init__(self):
        self.kernels: list = []


_stack = _Stack()


@dataclass
class BodyContext:
    """The kernel being traced: its program ids and refs."""
    name: str
    grid: tuple
    pids: list
    refs: list = None


def current(what: str) -> BodyContext:
    if not _stack.kernels:
        raise UnsupportedError(f"pto.kernel.{what} is only available inside a pto.kernel "
                               f"body", user_frame())
    return _stack.kernels[-1]


class entered:
    """``with entered(ctx):`` while tracing a body."""

    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        _stack.kernels.append(self.ctx)
        return self.ctx

    def __exit__(self, *exc):
        _stack.kernels.pop()


@dataclass(frozen=True)
class ds:
    """A sub-window along one dimension: ``size`` elements from ``start`` (an int or a traced
    int32 scalar)."""
    start: Any
    size: int


def _index32(x):
    if isinstance(x, (int, np.integer)):
        return np.int32(x)
    if isinstance(x, Tracer) and x.shape == () and dtypes.is_integer(x.dtype):
        return x if x.dtype == I32 else convert_element_type(x, I32)
    raise IndexingError(f"kernel window starts must be ints or traced int scalars, got {x!r}",
                        user_frame(3))


def _offset(origin, extra):
    """origin + extra, folding Python ints."""
    if isinstance(extra, np.integer) and int(extra) == 0:
        return origin
    if isinstance(origin, np.integer) and isinstance(extra, np.integer):
        return np.int32(int(origin) + int(extra))
    return add(origin, extra)


class Ref:
    """A kernel operand in the body: its program window (``shape``) of a GM array."""

    def __init__(self, ctx, index, window, kind, value, origin, shape):
        self._ctx, self.index, self.window, self.kind = ctx, index, window, kind
        self.value = value                  # the GM array (output refs: threaded by stores)
        self._origin = origin               # element offsets of the window, per array dim
        self.shape = tuple(shape)           # the window's shape in this program's region
        self.dtype = value.dtype
        self.ndim = len(self.shape)

    def __repr__(self):
        return f"Ref({self.window.name}: {dtypes.short_name(self.dtype)}{list(self.shape)})"

    # --- indexing -----------------------------------------------------------------------------
    def _window(self, idx):
        """(starts, sizes, squeezed) per array dimension for ``idx`` over the window dims."""
        if idx is Ellipsis or idx == ():
            idx = (slice(None),) * self.ndim
        if not isinstance(idx, tuple):
            idx = (idx,)
        if Ellipsis in idx:
            at = idx.index(Ellipsis)
            idx = idx[:at] + (slice(None),) * (self.ndim - len(idx) + 1) + idx[at + 1:]
        if len(idx) != self.ndim:
            raise IndexingError(f"{self.window.name}: {len(idx)} indices for a "
                                f"{self.ndim}-d window of shape {self.shape}", user_frame(3))
        starts, sizes, squeezed = [], [], []
        it = iter(zip(idx, self.shape))
        for d, (origin, sq) in enumerate(zip(self._origin, self.window.squeezed)):
            if sq:
                starts.append(origin)
                sizes.append(1)
                squeezed.append(True)
                continue
            i, extent = next(it)
            start, size, drop = self._entry(i, extent)
            starts.append(_offset(origin, start))
            sizes.append(size)
            squeezed.append(drop)
        return starts, tuple(sizes), tuple(squeezed)

    def _entry(self, i, extent):
        name = self.window.name
        if isinstance(i, slice):
            if i != slice(None):
                raise IndexingError(f"{name}: use pto.kernel.ds(start, size) for a "
                                    f"sub-window, not {i}", user_frame(4))
            return np.int32(0), extent, False
        if isinstance(i, ds):
            size, start = int(i.size), _index32(i.start)
        else:
            size, start = 1, _index32(i)
        if isinstance(start, np.integer) and (start < 0 or start + size > extent):
            raise IndexingError(f"{name}: the sub-window [{int(start)}, {int(start) + size}) "
                                f"leaves the window of {extent} elements", user_frame(4))
        if size > extent:
            raise IndexingError(f"{name}: a sub-window of {size} elements in a window of "
                                f"{extent}", user_frame(4))
        return start, size, not isinstance(i, ds)

    def __getitem__(self, idx):
        return load(self, idx)

    def __setitem__(self, idx, value):
        store(self, idx, value)


def load(ref: Ref, idx=Ellipsis):
    """The tile at ``idx`` of ``ref``'s window (``ref[idx]``)."""
    starts, sizes, squeezed = ref._window(idx)
    return kernel_load_p.bind(ref.value, *starts, sizes=sizes, squeezed=squeezed)


def _store(ref, idx, value, add_):
    if ref.kind != "out":
        raise UnsupportedError(f"{ref.window.name} is an input: kernels store into their "
                               f"outputs (out_specs) only", user_frame(3))
    starts, sizes, squeezed = ref._window(idx)
    shape = tuple(s for s, q in zip(sizes, squeezed) if not q)
    value = _as_tile(value, shape, ref.dtype)
    ref.value = kernel_store_p.bind(ref.value, value, *starts, sizes=sizes, squeezed=squeezed,
                                    add=add_)


def _as_tile(value, shape, dtype):
    value = value if isinstance(value, Tracer) else np.asarray(value, dtype)
    if tuple(value.shape) == () and shape != ():
        value = broadcast_in_dim(value, shape, ())
    if tuple(value.shape) != tuple(shape):
        raise ShapeError(f"a {value.shape} tile does not fit a window of shape {shape}",
                         user_frame(4))
    if value.dtype != dtype:
        raise ShapeError(f"a {dtypes.short_name(value.dtype)} tile stored into a "
                         f"{dtypes.short_name(dtype)} output; convert it with "
                         f".astype({dtypes.short_name(dtype)})", user_frame(4))
    return value


def store(ref: Ref, idx, value):
    """Store the tile ``value`` at ``idx`` of ``ref``'s window (``ref[idx] = value``)."""
    _store(ref, idx, value, False)


def atomic_add(ref: Ref, idx, value):
    """Add ``value`` into ``ref``'s window at ``idx``: programs may accumulate into the same
    window (an atomic-add store; the output starts at zero)."""
    _store(ref, idx, value, True)


def program_id(axis: int):
    """This program's id along grid axis ``axis`` (an int32 scalar)."""
    ctx = current("program_id")
    if not -len(ctx.grid) <= axis < len(ctx.grid):
        raise IndexingError(f"program_id({axis}) of a {len(ctx.grid)}-d grid", user_frame())
    return ctx.pids[axis]


def num_programs(axis: int) -> int:
    """The grid's size along ``axis`` (a Python int)."""
    return current("num_programs").grid[axis]


def dot(a, b, trans_a=False, trans_b=False, preferred_element_type=dtypes.float32):
    """``a @ b`` (operands optionally transposed) on the cube: the accumulator is float32."""
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"pto.kernel.dot multiplies 2-d tiles, got {a.shape} and {b.shape}",
                         user_frame())
    contract = ((0 if trans_a else 1,), (1 if trans_b else 0,))
    return dot_general(a, b, (contract, ((), ())),
                       preferred_element_type=preferred_element_type)


def iota(shape, dim: int):
    """int32 indices along dimension ``dim`` of a ``shape`` tile."""
    return broadcasted_iota(I32, tuple(shape), dim)


# --- loops ----------------------------------------------------------------------------------------
def fori(lower, upper, body, init):
    """``carry = body(i, carry)`` for ``i`` in ``[lower, upper)``; returns the final carry.

    Bounds are ints or traced int32 scalars. Stores into output refs inside the loop are kept
    (the refs are carried through it)."""
    ctx = current("fori")
    leaves, tree = tree_flatten(init)
    leaves = [x if isinstance(x, Tracer) else np.asarray(x) for x in leaves]
    carry_types = [TensorType(tuple(x.shape), dtypes.canonicalize(x.dtype)) for x in leaves]
    outs = [r for r in ctx.refs if r.kind == "out"]
    ref_types = [r.value.aval for r in outs]
    source = user_frame()

    def traced(i, *args):
        carries, refs = args[:len(leaves)], args[len(leaves):]
        saved = [r.value for r in outs]
        for r, v in zip(outs, refs):
            r.value = v
        try:
            result = body(i, tree_unflatten(tree, list(carries)))
            new_leaves, new_tree = tree_flatten(result)
            if new_tree != tree:
                raise ShapeError(f"pto.kernel.fori: the body returns {new_tree}, but the "
                                 f"carry is {tree}", source)
            for t, x in zip(carry_types, new_leaves):
                if tuple(np.shape(x)) != t.shape or dtypes.canonicalize(
                        np.result_type(x) if not isinstance(x, Tracer) else x.dtype) != t.dtype:
                    raise ShapeError(f"pto.kernel.fori: a carry of {t} comes back from the "
                                     f"body as {getattr(x, 'aval', np.shape(x))}; keep each "
                                     f"carry's shape and dtype", source)
            return [*new_leaves, *[r.value for r in outs]]
        finally:
            for r, v in zip(outs, saved):
                r.value = v

    closed = trace_flat(traced, [TensorType((), I32), *carry_types, *ref_types], "fori_body")
    ir = closed.ir         # (i, *carries, *refs, *captured values): captured values last
    body_ir = ClosedIR(IR((), (*ir.invars, *ir.constvars), ir.eqns, ir.outvars))
    consts = closed.consts
    n = len(leaves) + len(outs)
    results = kernel_fori_p.bind(_index32(lower), _index32(upper), *leaves,
                                 *[r.value for r in outs], *consts, body=body_ir, num_carry=n)
    for r, v in zip(outs, results[len(leaves):]):
        r.value = v
    return tree_unflatten(tree, list(results[:len(leaves)]))


__all__ = ["Ref", "ds", "load", "store", "atomic_add", "program_id", "num_programs", "dot",
           "iota", "fori"]
