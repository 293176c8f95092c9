"""``pto.kernel``: a hand-written tile kernel, as a function of arrays.

    @pto.kernel(out_shape=pto.ShapeDtypeStruct((m, n), pnp.float32), grid=(m // 64,),
                in_specs=[pto.BlockSpec((64, n), lambda i: (i, 0))],
                out_specs=pto.BlockSpec((64, n), lambda i: (i, 0)))
    def softmax_rows(x_ref, o_ref):
        x = x_ref[...]                                   # a 64 x n tile
        e = pnp.exp(x - x.max(axis=-1, keepdims=True))
        o_ref[...] = e / e.sum(axis=-1, keepdims=True)

    y = softmax_rows(x)

The body runs once per program of ``grid``; ``in_specs``/``out_specs`` say which window of
each operand a program sees (``kernel/spec.py``); the body's operations are those of
``kernel/body.py`` and ptojax's array functions on tiles. A call traces the body (once per
ragged-edge region), checks that it lowers to tile IR for ``target`` — the buffers hold its
tiles, every op has a unit and a dtype it supports — and adds one ``kernel_call`` equation.
The call composes with ``jit``, ``grad`` (automatic, loops with static bounds
unrolled: ``kernel/autodiff.py``; or ``custom_vjp`` with a backward kernel), ``vmap`` (a new grid axis)
and ``shard`` (``shard_map`` runs the kernel per shard; ``pto.shard`` gathers its operands).
"""
from __future__ import annotations

import functools
import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.eval import axis_env
from ptojax.eval.leaves import ShapeDtypeStruct
from ptojax.ir.core import Var
from ptojax.ir.types import TensorType
from ptojax.kernel import autodiff  # noqa: F401  (the kernel's jvp and transpose rules)
from ptojax.kernel import body as B
from ptojax.kernel.call import kernel_call_p, kernel_linear_call_p
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, kernel_store_p
from ptojax.kernel.spec import BlockSpec, find_regions, make_window
from ptojax.ops.broadcast import to_front
from ptojax.source_info import user_frame
from ptojax.targets import ascend910b, get_target
from ptojax.trace import Tracer, trace_flat
from ptojax.pytree import tree_flatten

I32 = TensorType((), dtypes.int32)


def _grid(grid) -> tuple:
    if isinstance(grid, int):
        grid = (grid,)
    grid = tuple(int(g) for g in grid) or (1,)
    if any(g < 1 for g in grid):
        raise ShapeError(f"pto.kernel: grid sizes must be positive, got {grid}", user_frame(3))
    return grid


def _specs(specs, n, what):
    if specs is None:
        return [None] * n
    if isinstance(specs, BlockSpec):
        specs = [specs] * n if what == "in_specs" and n != 1 else [specs]
    specs = list(specs)
    if len(specs) != n:
        raise ShapeError(f"pto.kernel: {len(specs)} {what} for {n} operands", user_frame(3))
    return specs


def _origin(window, pids):
    """The window's element offsets for traced program ids: index_map(*pids) * block."""
    if window.index_map is None:
        return [np.int32(0)] * len(window.shape)
    idx = window.index_map(*pids)
    idx = tuple(idx) if isinstance(idx, (tuple, list)) else (idx,)
    out = []
    for i, b in zip(idx, window.block):
        i = B._index32(i)
        if b == 1:
            out.append(i)
        elif isinstance(i, np.integer):
            out.append(np.int32(int(i) * b))
        else:
            out.append(i * np.int32(b))
    return out


def trace_bodies(fn, name, grid, windows, num_inputs, types, regions, batch_axes=0) -> tuple:
    """One block program per region: ``(*program ids, *inputs, *outputs) -> outputs``. The
    first ``batch_axes`` grid axes were added by ``vmap``: the body sees the others."""
    bodies = []
    for region in regions:
        def traced(*args, region=region):
            pids = list(args[:len(grid)])
            ctx = B.BodyContext(name, grid[batch_axes:], pids[batch_axes:])
            ctx.refs = [B.Ref(ctx, i, w, "in" if i < num_inputs else "out",
                              args[len(grid) + i], _origin(w, pids), region.shapes[i])
                        for i, w in enumerate(windows)]
            with B.entered(ctx):
                result = fn(*ctx.refs)
            if result is not None:
                raise UnsupportedError(f"the body of kernel {name} returned a value; kernels "
                                       f"store their results into the output refs")
            return [r.value for r in ctx.refs[num_inputs:]]
        closed = trace_flat(traced, [I32] * len(grid) + list(types), name)
        if any(isinstance(c, Tracer) for c in closed.consts):
            raise UnsupportedError(
                f"the body of kernel {name} uses an array it closes over; pass it as an "
                f"input of the kernel (with a BlockSpec) instead", user_frame(4))
        bodies.append(closed)
    return tuple(bodies)


@dataclass(frozen=True)
class KernelDef:
    """What a kernel call was made from (``vmap`` re-traces the body with a new grid axis)."""
    fn: Callable
    name: str
    grid: tuple
    in_specs: tuple
    out_specs: tuple
    out_types: tuple
    target: str
    accumulate: tuple
    batch_axes: int = 0


def bind_kernel(d: KernelDef, arrays) -> list:
    """Trace ``d``'s body for ``arrays`` and add its ``kernel_call`` equation."""
    in_types = [TensorType(tuple(a.shape), dtypes.canonicalize(a.dtype)) for a in arrays]
    windows = [make_window(f"input {i}", s, t.shape)
               for i, (s, t) in enumerate(zip(d.in_specs, in_types))]
    windows += [make_window(f"output {i}", s, t.shape)
                for i, (s, t) in enumerate(zip(d.out_specs, d.out_types))]
    regions = find_regions(d.grid, windows)
    bodies = trace_bodies(d.fn, d.name, d.grid, windows, len(arrays),
                          [*in_types, *d.out_types], regions, d.batch_axes)
    return kernel_call_p.bind(*arrays, name=d.name, grid=d.grid, windows=tuple(windows),
                              regions=regions, bodies=bodies, num_inputs=len(arrays),
                              accumulate=d.accumulate, target=d.target, kernel=d)


def _out_structs(out_shape):
    leaves, tree = tree_flatten(out_shape, is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    for x in leaves:
        if not isinstance(x, ShapeDtypeStruct) and not hasattr(x, "shape"):
            raise ShapeError(f"pto.kernel: out_shape leaves must be pto.ShapeDtypeStruct, got "
                             f"{x!r}", user_frame(4))
    return [TensorType(tuple(x.shape), dtypes.canonicalize(x.dtype)) for x in leaves], tree


def make_call(fn, *, out_shape, grid=(), in_specs=None, out_specs=None, name=None,
              target=ascend910b, accumulate=()):
    """``fn`` (the body) as a function of its input arrays."""
    grid = _grid(grid)
    target = get_target(target)
    name = name or getattr(fn, "__name__", "kernel")
    out_types, out_tree = _out_structs(out_shape)
    outs = tuple(_specs(out_specs, len(out_types), "out_specs"))

    @functools.wraps(fn)
    def call(*args):
        arrays = [a if isinstance(a, Tracer) or hasattr(a, "aval")
                  else dtypes.canonical_value(a) for a in args]   # 32-bit without x64
        d = KernelDef(fn, name, grid, tuple(_specs(in_specs, len(args), "in_specs")), outs,
                      tuple(out_types), target.name, tuple(accumulate))
        return out_tree.unflatten(list(bind_kernel(d, arrays)))
    return call


# --- vmap: a new leading grid axis -------------------------------------------------------------
def _block_indices(index_map, point, ndim) -> tuple:
    if index_map is None:
        return (0,) * ndim
    idx = index_map(*point)
    return tuple(idx) if isinstance(idx, (tuple, list)) else (idx,)


def batched_spec(spec, shape) -> BlockSpec:
    """``spec`` of an operand of ``shape``, for the operand with a new leading batch axis that
    the new leading grid axis walks (one squeezed element per program)."""
    block = shape if spec is None or spec.block_shape is None else spec.block_shape
    inner = None if spec is None else spec.index_map
    return BlockSpec((None, *block),
                     lambda b, *p: (b, *_block_indices(inner, p, len(block))))


def unbatched_spec(spec):
    """``spec`` of an operand every batch element shares."""
    if spec is None or spec.index_map is None:
        return spec
    return BlockSpec(spec.block_shape, lambda b, *p: spec.index_map(*p))


def _kernel_batch(args, dims, *, kernel, **params):
    if kernel is None:            # a derivative kernel: its bodies are rewritten instead
        return _derived_kernel_batch(args, dims, **params)
    d = kernel
    size = axis_env.batch_axis_size()
    arrays, in_specs = [], []
    for a, dim, spec in zip(args, dims, d.in_specs):
        if dim is None:
            arrays.append(a)
            in_specs.append(unbatched_spec(spec))
        else:
            a = to_front(a, dim)
            arrays.append(a)
            in_specs.append(batched_spec(spec, tuple(a.shape[1:])))
    batched = dataclasses.replace(
        d, grid=(size, *d.grid), in_specs=tuple(in_specs),
        out_specs=tuple(batched_spec(s, t.shape) for s, t in zip(d.out_specs, d.out_types)),
        out_types=tuple(TensorType((size, *t.shape), t.dtype) for t in d.out_types),
        batch_axes=d.batch_axes + 1)
    outs = bind_kernel(batched, arrays)
    return outs, [0] * len(outs)


def _spec_of(w) -> BlockSpec:
    """The BlockSpec a Window was made from."""
    if w.index_map is None:
        return BlockSpec()
    return BlockSpec(tuple(None if sq else b for b, sq in zip(w.block, w.squeezed)),
                     w.index_map)


def _derived_kernel_batch(args, dims, *, name, grid, windows, regions, bodies, num_inputs,
                          accumulate, target, prim=kernel_call_p, **rest):
    """vmap of a kernel without a body function (a derivative kernel): each body reads and
    writes batch element ``program_id(0)`` of the batched operands (``batched_body``)."""
    size = axis_env.batch_axis_size()
    arrays = [a if d is None else to_front(a, d) for a, d in zip(args, dims)]
    mask = [d is not None for d in dims] + [True] * (len(windows) - num_inputs)
    new_windows = tuple(
        make_window(w.name, batched_spec(_spec_of(w), w.shape) if m else
                    unbatched_spec(_spec_of(w)), (size, *w.shape) if m else w.shape)
        for w, m in zip(windows, mask))
    new_grid = (size, *grid)
    new_regions = find_regions(new_grid, new_windows)
    by_shapes = {r.shapes: b for r, b in zip(regions, bodies)}
    new_bodies = tuple(batched_body(by_shapes[r.shapes], len(grid), mask, size)
                       for r in new_regions)
    outs = prim.bind(*arrays, name=name, grid=new_grid, windows=new_windows,
                     regions=new_regions, bodies=new_bodies, num_inputs=num_inputs,
                     accumulate=accumulate, target=target, **rest)
    return outs, [0] * len(outs)


def batched_body(body, k, mask, size):
    """``(b, *program ids, *operands) -> outputs``: ``body`` on batch element ``b`` of the
    operands marked in ``mask`` (their loads and stores get a leading squeezed index)."""
    types = body.in_types
    new_types = [I32, *types[:k]] + [TensorType((size, *t.shape), t.dtype) if m else t
                                    for t, m in zip(types[k:], mask)]
    batched = {v for v, m in zip(body.ir.invars[k:], mask) if m}

    def fn(b, *args):
        return _run_batched(body.ir, body.consts, args, batched, b)
    return trace_flat(fn, new_types, "kernel_batched")


def _run_batched(ir, consts, args, batched, b):
    env = dict(zip(ir.constvars, consts))
    env.update(zip(ir.invars, args))
    batched = set(batched)

    def val(a):
        return env[a] if type(a) is Var else a

    for eqn in ir.eqns:
        ins = [val(a) for a in eqn.inputs]
        p = dict(eqn.params)
        if eqn.prim in (kernel_load_p, kernel_store_p) and eqn.inputs[0] in batched:
            at = 1 if eqn.prim is kernel_load_p else 2
            ins = [*ins[:at], b, *ins[at:]]
            p.update(sizes=(1, *p["sizes"]), squeezed=(True, *p["squeezed"]))
        if eqn.prim is kernel_fori_p:      # derivative kernels have their loops unrolled
            raise UnsupportedError("vmap of a derivative kernel with a loop")
        outs = eqn.prim.bind(*ins, **p)
        outs = outs if eqn.prim.multiple_results else [outs]
        if eqn.prim is kernel_store_p and eqn.inputs[0] in batched:
            batched.add(eqn.outputs[0])
        env.update(zip(eqn.outputs, outs))
    return [val(v) for v in ir.outvars]


kernel_call_p.define(batch=_kernel_batch)
kernel_linear_call_p.define(
    batch=lambda args, dims, **params: _derived_kernel_batch(
        args, dims, prim=kernel_linear_call_p, **{k: v for k, v in params.items()
                                                  if k != "kernel"}))


def kernel(body=None, **options):
    """``pto.kernel(body, out_shape=..., grid=..., in_specs=..., out_specs=...)``, or as a
    decorator ``@pto.kernel(out_shape=..., ...)``: the kernel as a function of its inputs.
    See the module docstring."""
    if body is None:
        return lambda fn: make_call(fn, **options)
    return make_call(body, **options)


class KernelNamespace:
    """``pto.kernel``: calling it makes a kernel; its attributes are the body's operations.

    Example:
        >>> @pto.kernel(out_shape=pto.ShapeDtypeStruct((4, 8), pnp.float32), grid=(2,),
        ...             in_specs=[pto.BlockSpec((2, 8), lambda i: (i, 0))],
        ...             out_specs=pto.BlockSpec((2, 8), lambda i: (i, 0)))
        ... def double(x_ref, o_ref):
        ...     o_ref[...] = x_ref[...] * 2.0
        >>> double(pnp.ones((4, 8)))[:, 0]
        Array([2., 2., 2., 2.], dtype=float32)
    """
    __call__ = staticmethod(kernel)
    BlockSpec = BlockSpec
    ds = B.ds
    program_id = staticmethod(B.program_id)
    num_programs = staticmethod(B.num_programs)
    fori = staticmethod(B.fori)
    load = staticmethod(B.load)
    store = staticmethod(B.store)
    atomic_add = staticmethod(B.atomic_add)
    dot = staticmethod(B.dot)
    iota = staticmethod(B.iota)

    def __repr__(self):
        return "pto.kernel"


namespace = KernelNamespace()
