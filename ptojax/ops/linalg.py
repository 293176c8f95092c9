"""``dot_general``: contraction over paired dimensions with optional batch dimensions, with every
fact.

Output dimensions are (batch..., lhs free..., rhs free...), as in XLA. f16/bf16 operands are
multiplied with f32 accumulation, as the cube unit does. The transpose orders its operands so
the result needs no transpose; a batched dot_general whose contraction has one element
(per-example weight gradients) becomes a broadcast ``mul`` (XLA's dot strength reduction).
"""
from __future__ import annotations

import enum
import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.eval.blas import matmul
from ptojax.ops.operand import as_operand
from ptojax.ir.types import TensorType
from ptojax.ops import sharding_rules as sr, tile_forms
from ptojax.ops.arithmetic import bilinear_jvp, mul
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.checks import check_axes, require_same_dtype, user_axes
from ptojax.ops.convert import convert_element_type, convert_impl
from ptojax.ops.dot_algorithms import host_preset, rounds_operands_to
from ptojax.ops.shape import canonical_axes, example_ndim, reshape, shift_axes, transpose
from ptojax.ops.tangents import is_undefined
from ptojax.source_info import user_frame
from ptojax.trace import Primitive
from ptojax.public import add_examples as _add_examples


class Precision(enum.Enum):
    """JAX's matmul precision: accepted and recorded in the IR; on the host (numpy) it does
    not change results, as on JAX's CPU backend."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_NAMES.get(value)

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_NAMES = {"default": Precision.DEFAULT, "fastest": Precision.DEFAULT,
                    "bfloat16": Precision.DEFAULT, "high": Precision.HIGH,
                    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
                    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST}


def canonicalize_precision(precision):
    """None, a pair of Precisions (one per operand) from a Precision, a name, or a pair, or
    the ``DotAlgorithmPreset`` named (checked to run on the host)."""
    if precision is None:
        return None
    preset = host_preset(precision)
    if preset is not None:
        return preset
    pair = (precision, precision) if isinstance(precision, (Precision, str)) else precision
    if isinstance(pair, (tuple, list)) and len(pair) == 2 and (
            all(isinstance(p, Precision) for p in pair) or
            all(isinstance(p, str) for p in pair)):   # a mixed pair is an error in JAX
        try:
            return tuple(Precision(p) for p in pair)
        except ValueError:
            pass
    raise ValueError(f"precision must be None, a lax.Precision, one of "
                     f"{sorted(_PRECISION_NAMES)}, a pair of Precisions or of names, or a "
                     f"lax.DotAlgorithmPreset, got {precision!r}")


def free_dims(ndim, *used):
    taken = {d for group in used for d in group}
    return [d for d in range(ndim) if d not in taken]


def _dot_general_abstract(lhs, rhs, dimension_numbers, preferred_element_type=None,
                          precision=None):
    (lc, rc), (lb, rb) = dimension_numbers
    require_same_dtype("dot_general", (lhs, rhs))
    check_axes("dot_general", (*lc, *lb), lhs.ndim)
    check_axes("dot_general", (*rc, *rb), rhs.ndim)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"dot_general: contracting {dimension_numbers[0]} and batch "
                         f"{dimension_numbers[1]} dimensions must pair up")
    for a, b in (*zip(lc, rc), *zip(lb, rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise ShapeError(f"dot_general: dimension {a} of {lhs} (size {lhs.shape[a]}) "
                             f"does not match dimension {b} of {rhs} (size {rhs.shape[b]})")
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in free_dims(lhs.ndim, lc, lb)]
             + [rhs.shape[d] for d in free_dims(rhs.ndim, rc, rb)])
    out_dtype = dtypes.canonicalize(preferred_element_type or lhs.dtype)
    if not dtypes.is_float(lhs.dtype) and not dtypes.is_float(out_dtype) and \
            out_dtype.itemsize < lhs.dtype.itemsize:
        raise DtypeError(f"dot_general: preferred_element_type {dtypes.short_name(out_dtype)} "
                         f"is narrower than the operands' {dtypes.short_name(lhs.dtype)}; "
                         f"pass a type at least as wide (e.g. int32 for int8 operands)")
    return TensorType(shape, out_dtype, lhs.weak_type and rhs.weak_type)


_MATMUL_DTYPES = frozenset(map(np.dtype, (np.float32, np.float64, np.int32)))
_FLOAT32 = np.dtype(np.float32)


def accumulation_dtype(in_dtype, out_dtype) -> np.dtype:
    """The dtype a dot_general (or convolution) of ``in_dtype`` operands returning
    ``out_dtype`` multiplies and sums in: the preferred type (so int8 operands with
    ``preferred_element_type=int32`` are exact; a complex product keeps its type when only
    its real part is asked for), low-precision floats in f32, bools as int32."""
    compute = in_dtype if dtypes.is_complex(in_dtype) and not dtypes.is_complex(out_dtype) \
        else out_dtype
    if dtypes.accumulates_in_f32(compute):
        return np.dtype(np.float32)
    if dtypes.is_bool(compute):
        return np.dtype(np.int32)
    return np.dtype(compute)


# a matrix product's operand as numpy's matmul takes it, by the operand's contracting axis
_AS_LHS = {(1,): lambda a: a, (0,): np.transpose}    # (free, k)
_AS_RHS = {(0,): lambda a: a, (1,): np.transpose}    # (k, free)


def _matrix_product(lhs, rhs, lc, rc, lb, preferred_element_type):
    """``lhs @ rhs`` with either operand transposed (a transposed view: numpy's BLAS call
    reads it as is), or None unless both are matrices of one matmul dtype contracting one
    axis each, unbatched, with no other result type asked for: the common products (``x @ w``
    and the gradients ``x.T @ g``, ``g @ w.T``), without the general path's bookkeeping."""
    if lb or lhs.ndim != 2 or rhs.ndim != 2 or lc not in _AS_LHS or rc not in _AS_RHS \
            or lhs.dtype not in _MATMUL_DTYPES or rhs.dtype != lhs.dtype \
            or (preferred_element_type is not None and preferred_element_type != lhs.dtype):
        return None
    a, b = _AS_LHS[lc](lhs), _AS_RHS[rc](rhs)
    if _swap_pays(a, b):
        return matmul(b.T, a.T).T
    return matmul(a, b)


def _swap_pays(a, b) -> bool:
    """Whether ``a @ b`` is faster as ``(b.T @ a.T).T`` (its result then a transposed view):
    for a float32 product of few rows by a transposed row-major matrix — a dense layer's
    input gradient ``g @ w.T`` with a small batch — OpenBLAS's sgemm is ~1.5x slower than on
    the swapped operands (measured with one thread, the same on AMD Zen 4: 32x512 @ 512x784:
    0.43 -> 0.29 ms; 8x1024 @ 1024x1024: 0.70 -> 0.42 ms). float64 shows no such gap."""
    return a.dtype == _FLOAT32 and 4 * a.shape[0] <= b.shape[1] \
        and b.T.flags.c_contiguous and not b.flags.c_contiguous


def _dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None, precision=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out = _matrix_product(lhs, rhs, lc, rc, lb, preferred_element_type)
    if out is not None:
        return out
    order = _batch_in_memory_order(lb, rb)
    if order is not None:
        out = _dot_general(lhs, rhs, ((lc, rc), (tuple(lb[i] for i in order),
                                                 tuple(rb[i] for i in order))),
                           preferred_element_type)
        back = np.argsort(order)
        return np.transpose(out, (*back, *range(len(lb), out.ndim)))
    out_dtype = np.dtype(preferred_element_type or lhs.dtype)
    compute = accumulation_dtype(lhs.dtype, out_dtype)
    if lhs.dtype != compute:
        lhs, rhs = lhs.astype(compute), rhs.astype(compute)
    lf, rf = free_dims(lhs.ndim, lc, lb), free_dims(rhs.ndim, rc, rb)
    if not lb and lhs.ndim == 2 and rhs.ndim == 2 and len(lc) == 1:
        out = matmul(_AS_LHS[lc](lhs), _AS_RHS[rc](rhs))
    else:
        batch = [lhs.shape[d] for d in lb]
        m = [lhs.shape[d] for d in lf]
        n = [rhs.shape[d] for d in rf]
        k = math.prod(lhs.shape[d] for d in lc)
        a = np.transpose(lhs, (*lb, *lf, *lc)).reshape(math.prod(batch), math.prod(m), k)
        b = np.transpose(rhs, (*rb, *rc, *rf)).reshape(math.prod(batch), k, math.prod(n))
        out = matmul(a, b).reshape(batch + m + n)
    if dtypes.is_complex(out.dtype) and not dtypes.is_complex(out_dtype):
        out = out.real   # a real preferred type keeps the real part, as a conversion does
    return out if out.dtype == out_dtype else convert_impl(out, out_dtype)


def _batch_in_memory_order(lb, rb):
    """The order of the batch pairs in which both operands hold them (ascending axes), when
    that is not the order asked for, else None: the product then runs over the batch in the
    operands' own order and its result's batch axes are permuted (a view) -- not the operands
    transposed into the asked order, a copy of both (the pairwise kernel of a nested vmap,
    ``vmap(vmap(k))``, pairs its batches (1, 0): copying its (300, 400, 50) operands was 8 of
    its 13 ms)."""
    order = sorted(range(len(lb)), key=lb.__getitem__)
    if order == list(range(len(lb))) or \
            any(rb[a] > rb[b] for a, b in zip(order, order[1:])):
        return None
    return order


# a matmul's result (or its reshape, real part or conversion): never an operand's buffer
dot_general_p = Primitive("dot_general", _dot_general_abstract, _dot_general, linear=True,
                          fresh_outputs=True)


def _type_rank(dtype):
    """XLA's order of operand types in a mixed-type product (the higher one is the result):
    complex, exponent range, mantissa, width, signedness."""
    part = dtypes.real_dtype(dtype)
    info = dtypes.finfo(part) if dtypes.is_float(part) else None
    return (dtypes.is_complex(dtype), int(info.maxexp) if info else -1,
            int(info.nmant) if info else -1, part.itemsize * 8 if part != dtypes.bool_ else 1,
            not dtypes.is_unsigned(part))


def _in_product_dtype(x, dtype):
    """An operand in the product's dtype: one already of that dtype keeps its weak type (a
    product of weakly typed operands is weak, as JAX's); a converted one is strong."""
    keep = x.dtype == dtype and bool(getattr(x, "weak_type", False))
    return convert_element_type(x, dtype, weak_type=keep)


def _result_dtype(lhs, rhs, preferred):
    """The product's dtype: the higher operand type, or ``preferred`` when given (which must
    not narrow an integer or complex result), as JAX."""
    a, b = dtypes.canonicalize(lhs.dtype), dtypes.canonicalize(rhs.dtype)
    ra, rb = _type_rank(a), _type_rank(b)
    if ra == rb and a != b:
        raise DtypeError(f"dot_general: operand dtypes {a} and {b} have no common product "
                         f"type; convert one of them", user_frame())
    result = a if ra >= rb else b
    if preferred is not None and not dtypes.is_float(result) and \
            _type_rank(preferred)[3] < _type_rank(result)[3]:
        raise DtypeError(f"dot_general: preferred_element_type {preferred} must not be "
                         f"narrower than the result type {result}", user_frame())
    return result


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """JAX's dot_general: operands of different dtypes are multiplied in the higher one;
    ``precision`` is recorded (it does not change host results)."""
    lhs, rhs = as_operand("dot_general", lhs), as_operand("dot_general", rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((user_axes("dot_general", lc, lhs.ndim), user_axes("dot_general", rc, rhs.ndim)),
          (user_axes("dot_general", lb, lhs.ndim), user_axes("dot_general", rb, rhs.ndim)))
    pet = None if preferred_element_type is None else dtypes.user_dtype(
        preferred_element_type, "dot")
    dtype = _result_dtype(lhs, rhs, pet)
    lhs, rhs = _in_product_dtype(lhs, dtype), _in_product_dtype(rhs, dtype)
    precision = canonicalize_precision(precision)
    extra = {} if precision is None else {"precision": precision}
    narrow = rounds_operands_to(precision, dtype)
    if narrow is not None:   # the F16_F16_F16 preset: f16 operands and product, as XLA:CPU
        out = dot_general_p.bind(convert_element_type(lhs, narrow),
                                 convert_element_type(rhs, narrow), dimension_numbers=dn,
                                 preferred_element_type=None, **extra)
        return convert_element_type(out, pet or dtype)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, preferred_element_type=pet,
                              **extra)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """Matrix/vector product contracting lhs's last and rhs's first dimension (rank 1 or 2),
    or any contraction given by ``dimension_numbers``."""
    lhs, rhs = as_operand("dot", lhs), as_operand("dot", rhs)
    if dimension_numbers is None:
        if not (1 <= lhs.ndim <= 2 and 1 <= rhs.ndim <= 2) or lhs.shape[-1] != rhs.shape[0]:
            raise ShapeError(f"dot: without dimension_numbers the operands must be vectors or "
                             f"matrices with matching inner sizes, got shapes "
                             f"{tuple(lhs.shape)} and {tuple(rhs.shape)}", user_frame())
        dimension_numbers = (((lhs.ndim - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) dimensions of two arrays of one rank >= 2."""
    if min(lhs.ndim, rhs.ndim) < 2 or lhs.ndim != rhs.ndim:
        raise ShapeError(f"batch_matmul: operands must have one rank of at least 2, got "
                         f"shapes {tuple(lhs.shape)} and {tuple(rhs.shape)}", user_frame())
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)),
                       precision)


# autodiff --------------------------------------------------------------------------------------
def _ranges_like(*groups):
    start = 0
    for g in groups:
        yield tuple(range(start, start + len(g)))
        start += len(g)


def _transpose_operand(ct, x_aval, y, dimension_numbers, precision, swap_ans=False):
    """The cotangent of ``x`` in ``dot_general(x, y)`` (or of ``dot_general(y, x)`` with
    ``swap_ans``): a dot_general of ``ct`` with ``y`` contracting y's free dimensions. The
    operands are ordered so the result comes out in x's layout when either order allows it,
    so no transpose follows the matmul."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = [d for d in range(len(x_aval.shape)) if d not in x_contract and d not in x_batch]
    y_kept = [d for d in range(y.ndim) if d not in y_contract and d not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    ct_first = list(x_batch) + x_kept + x_contract_by_y
    y_first = list(x_batch) + x_contract_by_y + x_kept
    if y.dtype != ct.dtype:  # mixed precision: multiply at the cotangent's precision
        y = convert_element_type(y, ct.dtype)
    extra = {} if precision is None else {"precision": precision}
    if y_first == sorted(y_first) and ct_first != sorted(ct_first):
        out = dot_general_p.bind(
            y, ct, dimension_numbers=((tuple(y_kept), ans_y), (tuple(y_batch), ans_batch)),
            preferred_element_type=None, **extra)
    else:
        out = dot_general_p.bind(
            ct, y, dimension_numbers=((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch))),
            preferred_element_type=None, **extra)
        out = transpose(out, tuple(int(a) for a in np.argsort(ct_first)))
    if out.dtype != x_aval.dtype:
        out = convert_element_type(out, x_aval.dtype)
    return out


def _dot_general_transpose(ct, lhs, rhs, dimension_numbers, preferred_element_type=None,
                           precision=None):
    (lc, rc), (lb, rb) = dimension_numbers
    ct_l = ct_r = None
    if is_undefined(lhs):
        ct_l = _transpose_operand(ct, lhs.aval, rhs, dimension_numbers, precision)
    if is_undefined(rhs):
        ct_r = _transpose_operand(ct, rhs.aval, lhs, ((rc, lc), (rb, lb)), precision,
                                  swap_ans=True)
    return [ct_l, ct_r]


# batching --------------------------------------------------------------------------------------
def _dot_general_batch(args, dims, dimension_numbers, preferred_element_type=None, **extra):
    """No transposes: the batch becomes a paired batch dimension (both operands batched) or
    stays a free dimension of the one batched operand."""
    (lhs, rhs), (ld, rd) = args, dims
    lnd, rnd = example_ndim(lhs, ld), example_ndim(rhs, rd)
    (lc, rc), (lb, rb) = [(canonical_axes(l, lnd), canonical_axes(r, rnd))
                          for l, r in dimension_numbers]
    if ld is not None and rd is not None:
        dn = ((shift_axes(lc, ld), shift_axes(rc, rd)),
              ((ld, *shift_axes(lb, ld)), (rd, *shift_axes(rb, rd))))
        if _is_outer_product(lhs, dn, preferred_element_type):
            return _outer_product(lhs, rhs, dn, preferred_element_type), 0
        out_dim = 0
    elif ld is not None:
        lc, lb = shift_axes(lc, ld), shift_axes(lb, ld)
        dn = ((lc, rc), (lb, rb))
        out_dim = len(lb) + free_dims(lhs.ndim, lc, lb).index(ld)
    else:
        rc, rb = shift_axes(rc, rd), shift_axes(rb, rd)
        dn = ((lc, rc), (lb, rb))
        n_lhs_free = lhs.ndim - len(lc) - len(lb)
        out_dim = len(lb) + n_lhs_free + free_dims(rhs.ndim, rc, rb).index(rd)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                             preferred_element_type=preferred_element_type, **extra)
    return out, out_dim


def _is_outer_product(lhs, dimension_numbers, preferred_element_type) -> bool:
    """A floating-point dot_general whose contraction has a single element."""
    (lc, _), _ = dimension_numbers
    dtype = preferred_element_type or lhs.dtype
    return dtypes.is_float(lhs.dtype) and dtypes.is_float(dtype) and \
        all(lhs.shape[d] == 1 for d in lc)


def _outer_product(lhs, rhs, dimension_numbers, preferred_element_type):
    """A batched outer product as a product of the operands broadcast to the output: numpy
    runs it several times faster than a batched matmul with one-element contractions, and it
    tiles as an elementwise op."""
    (lc, rc), (lb, rb) = dimension_numbers
    lf, rf = free_dims(lhs.ndim, lc, lb), free_dims(rhs.ndim, rc, rb)
    lhs = reshape(transpose(lhs, (*lb, *lf, *lc)), [lhs.shape[d] for d in (*lb, *lf)])
    rhs = reshape(transpose(rhs, (*rb, *rf, *rc)), [rhs.shape[d] for d in (*rb, *rf)])
    nb, nl = len(lb), len(lf)
    shape = (*lhs.shape, *rhs.shape[nb:])
    lhs = broadcast_in_dim(lhs, shape, tuple(range(nb + nl)))
    rhs = broadcast_in_dim(rhs, shape, (*range(nb), *range(nb + nl, len(shape))))
    dtype = preferred_element_type or lhs.dtype
    return mul(_in_product_dtype(lhs, dtype), _in_product_dtype(rhs, dtype))


# sharding and cost -----------------------------------------------------------------------------
def _dot_general_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = sr.shape_of(eqn.inputs[0]), sr.shape_of(eqn.inputs[1])
    contract = sr.reduction_kind(eqn, "sum")
    ldims, rdims = [None] * len(lhs), [None] * len(rhs)
    batch = []
    for a, b in zip(lb, rb):
        ldims[a] = rdims[b] = f.new(lhs[a])
        batch.append(ldims[a])
    for a, b in zip(lc, rc):
        ldims[a] = rdims[b] = f.new(lhs[a], contract) if contract else ()
    lfree = [d for d in range(len(lhs)) if ldims[d] is None]
    rfree = [d for d in range(len(rhs)) if rdims[d] is None]
    for d in lfree:
        ldims[d] = f.new(lhs[d])
    for d in rfree:
        rdims[d] = f.new(rhs[d])
    out = batch + [ldims[d] for d in lfree] + [rdims[d] for d in rfree]
    return f.rule([ldims, rdims], [out])


def _dot_general_flops(eqn) -> int:
    lhs, rhs = (a.type for a in eqn.inputs)
    (_, rc), (_, rb) = eqn.params["dimension_numbers"]
    rhs_free = math.prod(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    return 2 * lhs.size * rhs_free


def _dot_general_reference(jnp, lax):
    def run(a, b, dimension_numbers, preferred_element_type=None, precision=None):
        return lax.dot_general(a, b, dimension_numbers, lax.Precision.HIGHEST,
                               preferred_element_type=preferred_element_type)
    return run


dot_general_p.define(
    jvp=bilinear_jvp(dot_general_p), transpose=_dot_general_transpose,
    batch=_dot_general_batch, shard=sr.ShardRule(_dot_general_factors, linear="one"), tile=tile_forms.MATMUL,
    cost=_dot_general_flops, reference=_dot_general_reference)


_add_examples(globals(), """
batch_matmul:
    >>> pto.lax.batch_matmul(pnp.ones((2, 2, 3)), pnp.ones((2, 3, 1)))[:, :, 0]
    Array([[3., 3.],
           [3., 3.]], dtype=float32)
dot:
    >>> pto.lax.dot(pnp.array([[1.0, 2.0], [3.0, 4.0]]), pnp.array([1.0, 1.0]))
    Array([3., 7.], dtype=float32)
dot_general:
    >>> contract, batch = ((2,), (1,)), ((0,), (0,))
    >>> pto.lax.dot_general(pnp.ones((2, 3, 4)), pnp.ones((2, 4, 5)), (contract, batch)).shape
    (2, 3, 5)
Precision:
    >>> pto.lax.dot(pnp.ones((2, 2)), pnp.ones(2), precision=pto.lax.Precision.HIGHEST)
    Array([2., 2.], dtype=float32)
""")
