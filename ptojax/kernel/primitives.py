"""The primitives of a kernel body (the *block program* a ``pto.kernel`` body traces to).

A body is ordinary ptojax IR over block-sized values, plus three primitives that exist only
inside kernel bodies:

    kernel_load   ref, *starts -> value     a window of a GM array (``sizes`` elements per
                                            dimension from ``starts``; ``squeezed`` dims
                                            dropped from the value)
    kernel_store  ref, value, *starts -> ref   the array with the window overwritten (or,
                                            ``add=True``, accumulated into: an atomic add)
    kernel_fori   lo, hi, *carries, *consts -> carries   a counted loop over a sub-IR
                                            ``(i, *carries, *consts) -> carries``

Refs are the kernel's GM arrays (full shapes), threaded functionally through stores. Starts
are int32 scalars (program ids and loop indices times block sizes). The body's other
values are tiles: ``kernel/lower.py`` turns the block program into tile IR.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import IndexingError, ShapeError
from ptojax.ir.core import ClosedIR, IR
from ptojax.ir.types import TensorType
from ptojax.ops.costs import no_flops
from ptojax.ops.tangents import Zero, is_zero, linear_in_first_jvp
from ptojax.trace import Primitive, Unsupported

ONLY_IN_KERNELS = "it only exists inside pto.kernel bodies"
KERNEL_AD = ("a kernel body is transposed as a whole by kernel/autodiff.py (a load's "
             "cotangent is an atomic add into the input's cotangent, a store's a load of the "
             "output's); static loops are unrolled there, others need pto.custom_vjp")
KERNEL_VMAP = "pto.vmap of a kernel adds a grid axis to the whole kernel (kernel/api.py)"


def window_shape(sizes, squeezed) -> tuple:
    return tuple(s for s, q in zip(sizes, squeezed) if not q)


def _check_starts(name, ref, starts, sizes, squeezed):
    if len(starts) != ref.ndim or len(sizes) != ref.ndim or len(squeezed) != ref.ndim:
        raise ShapeError(f"{name}: {ref} needs one start and size per dimension")
    for s in starts:
        if s.shape != () or not dtypes.is_integer(s.dtype):
            raise ShapeError(f"{name}: window starts must be integer scalars, got {s}")
    for n, size in zip(ref.shape, sizes):
        if size < 1 or size > n:
            raise ShapeError(f"{name}: window sizes {sizes} do not fit {ref}")


def _load_abstract(ref, *starts, sizes, squeezed):
    _check_starts("kernel_load", ref, starts, sizes, squeezed)
    return TensorType(window_shape(sizes, squeezed), ref.dtype)


def window_slices(ref_shape, starts, sizes, what):
    """numpy slices of a window, checking that it lies in the array (names ``what``)."""
    out = []
    for d, (n, s, size) in enumerate(zip(ref_shape, starts, sizes)):
        s = int(s)
        if s < 0 or s + size > n:
            raise IndexingError(f"{what}: the window [{s}, {s + size}) of dimension {d} leaves "
                                f"the array of shape {tuple(ref_shape)}")
        out.append(slice(s, s + size))
    return tuple(out)


def _load(ref, *starts, sizes, squeezed):
    ref = np.asarray(ref)
    block = ref[window_slices(ref.shape, starts, sizes, "kernel_load")]
    return np.array(block.reshape(window_shape(sizes, squeezed)))


kernel_load_p = Primitive("kernel_load", _load_abstract, _load)


def _store_abstract(ref, value, *starts, sizes, squeezed, add=False):
    _check_starts("kernel_store", ref, starts, sizes, squeezed)
    want = window_shape(sizes, squeezed)
    if value.shape != want or value.dtype != ref.dtype:
        raise ShapeError(f"kernel_store: a {value} value does not fit the "
                         f"{dtypes.short_name(ref.dtype)}{list(want)} window of {ref}")
    return ref


def store_into(out, value, starts, sizes, add):
    """Write (or add) ``value`` into the window of the numpy array ``out``, in place."""
    where = window_slices(out.shape, starts, sizes, "kernel_store")
    value = np.asarray(value).reshape(tuple(sizes)).astype(out.dtype, copy=False)
    if add:
        out[where] += value
    else:
        out[where] = value


def _store(ref, value, *starts, sizes, squeezed, add=False):
    out = np.array(ref, copy=True)
    store_into(out, value, starts, sizes, add)
    return out


kernel_store_p = Primitive("kernel_store", _store_abstract, _store)


def _store_jvp(primals, tangents, sizes, squeezed, add=False):
    ref, value, *starts = primals
    out = kernel_store_p.bind(ref, value, *starts, sizes=sizes, squeezed=squeezed, add=add)
    tref, tvalue = tangents[0], tangents[1]
    if is_zero(tref) and is_zero(tvalue):
        return out, Zero(out.aval)
    if is_zero(tref):
        raise ShapeError("kernel_store: the destination's tangent must be a ref (internal)")
    if is_zero(tvalue):
        tvalue = np.zeros(value.shape, value.dtype)
    return out, kernel_store_p.bind(tref, tvalue, *starts, sizes=sizes, squeezed=squeezed,
                                    add=add)


# --- the counted loop ---------------------------------------------------------------------------
def loop_body(params) -> IR:
    body = params["body"]
    return body.ir if isinstance(body, ClosedIR) else body


def _fori_abstract(lo, hi, *args, body, num_carry):
    ir = body.ir if isinstance(body, ClosedIR) else body
    for b in (lo, hi):
        if b.shape != () or not dtypes.is_integer(b.dtype):
            raise ShapeError(f"kernel_fori: loop bounds must be integer scalars, got {b}")
    if len(ir.invars) != 1 + len(args) or len(ir.outvars) != num_carry:
        raise ShapeError("kernel_fori: the body's signature does not match its operands")
    for c, v, o in zip(args[:num_carry], ir.invars[1:], ir.outvars):
        if not (c.same_shape_dtype(v.type) and c.same_shape_dtype(o.type)):
            raise ShapeError(f"kernel_fori: carry {c} does not match the body "
                             f"({v.type} -> {o.type})")
    return [a.strip_weak() for a in args[:num_carry]]


def _fori(lo, hi, *args, body, num_carry):
    ir = body.ir if isinstance(body, ClosedIR) else body
    carries, consts = list(args[:num_carry]), list(args[num_carry:])
    for i in range(int(lo), int(hi)):
        carries = run_body(ir, [np.int32(i), *carries, *consts])
    return carries


def run_body(ir: IR, args, consts=()) -> list:
    """Evaluate a kernel body (or loop body) on numpy values. Stores write into their ref's
    array in place (refs are threaded linearly, so no earlier value is read again)."""
    env = dict(zip(ir.constvars, consts))
    env.update(zip(ir.invars, args))

    def val(a):
        return env[a] if a in env else a.value

    for eqn in ir.eqns:
        vals = [val(a) for a in eqn.inputs]
        if eqn.prim is kernel_store_p:
            ref, value, *starts = vals
            store_into(ref, value, starts, eqn.params["sizes"], eqn.params.get("add", False))
            env[eqn.outputs[0]] = ref
            continue
        out = eqn.prim.impl(*vals, **eqn.params)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outputs, out))
        else:
            env[eqn.outputs[0]] = np.asarray(out, eqn.outputs[0].type.dtype) \
                if eqn.outputs[0].type.shape == () else out
    return [val(v) for v in ir.outvars]


kernel_fori_p = Primitive("kernel_fori", _fori_abstract, _fori, multiple_results=True)

for _p in (kernel_load_p, kernel_store_p, kernel_fori_p):
    _p.define(batch=Unsupported(KERNEL_VMAP), shard=Unsupported(ONLY_IN_KERNELS),
              tile=Unsupported("a kernel body is lowered as a whole (kernel/lower.py)"),
              reference=Unsupported(ONLY_IN_KERNELS))
kernel_load_p.define(jvp=linear_in_first_jvp(kernel_load_p), transpose=Unsupported(KERNEL_AD),
                     cost=no_flops)
kernel_store_p.define(jvp=_store_jvp, transpose=Unsupported(KERNEL_AD), cost=no_flops)


def _fori_cost(eqn, body_counts):
    """The body's flops times the trip count (bounds known only at run time count once)."""
    lo, hi = eqn.inputs[:2]
    trips = int(hi.value) - int(lo.value) if hasattr(hi, "value") and hasattr(lo, "value") \
        else 1
    return {k: v * max(trips, 0) for k, v in body_counts[0].items()}


kernel_fori_p.define(cost=_fori_cost)   # jvp: kernel/loop_autodiff.py
