"""What the matrix decompositions (``decompositions.py``, ``spectral.py``, ``eig.py``,
``schur.py``) share: the dtypes LAPACK computes in, the checks on matrix operands, and the
facts every such primitive has (batching to the front, stack-dimension sharding, no tile
form)."""
from __future__ import annotations


import math

from ptojax import dtypes
from ptojax.errors import DtypeError, PtoError, ShapeError, UnsupportedError
from ptojax.eval.leaves import leaf_type
from ptojax.ir.types import TensorType
from ptojax.ops import sharding_rules as sr
from ptojax.ops.broadcast import to_front
from ptojax.ops.slicing import pad, slice_in_dim
from ptojax.source_info import user_frame
from ptojax.trace import Unsupported


# The dtypes LAPACK computes in; cholesky and triangular_solve also take complex ones.
LINALG_DTYPES = (dtypes.float32, dtypes.float64)
COMPLEX_LINALG_DTYPES = (dtypes.complex64, dtypes.complex128)
NOT_TILED = Unsupported("matrix decompositions are not tiled for Ascend yet: they run on the "
                        "host")


# checks ----------------------------------------------------------------------------------------
def require_matrices(name, x, square=False, rank=2, complex_ok=False):
    """``x`` is a stack of (square) matrices of a dtype LAPACK computes in (complex ones too
    with ``complex_ok``)."""
    if x.ndim < rank:
        what = "vectors (..., n)" if rank == 1 else "matrices (..., m, n)"
        raise ShapeError(f"{name}: needs a stack of {what}, got {x}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{name}: needs square matrices (..., n, n), got {x}")
    if rank == 2 and not (complex_ok and x.dtype in COMPLEX_LINALG_DTYPES):
        require_linalg_dtype(name, x)


def check_operand(name, x, square=False, complex_ok=False):
    """``require_matrices`` for a user's operand, before any op applies to it: the error
    names the user's line."""
    try:
        require_matrices(name, leaf_type(x), square=square, complex_ok=complex_ok)
    except PtoError as e:
        raise e.with_source(user_frame()) from None


def require_linalg_dtype(name, x):
    if x.dtype in LINALG_DTYPES:
        return
    if dtypes.is_float(x.dtype):
        raise UnsupportedError(f"{name}: {x.dtype} matrices are not supported (LAPACK computes "
                               f"in float32 or float64); convert with .astype(pnp.float32)")
    raise DtypeError(f"{name} requires a floating-point operand, got {x} (convert with "
                     f".astype(pnp.float32); pnp.linalg functions convert for you)")


def _matrix_type(x, shape, dtype=None):
    return TensorType((*x.shape[:-2], *shape), x.dtype if dtype is None else dtype)


def _stack_size(x, rank=2) -> int:
    return math.prod(x.shape[:x.ndim - rank])


# facts shared by every primitive here -----------------------------------------------------------
def _batch_to_front(prim):
    """The stack is native: the batch dimension joins it at the front."""
    def rule(args, dims, **params):
        out = prim.bind(*[to_front(a, d) for a, d in zip(args, dims)], **params)
        return out, [0] * len(out) if prim.multiple_results else 0
    return rule


def _stack_factors(rank=2):
    """The stack dimensions (those before operand 0's last ``rank``) split; the rest stay
    whole."""
    def rule(eqn) -> sr.OpRule:
        f = sr.Factors()
        first = sr.shape_of(eqn.inputs[0])
        stack = [f.new(n) for n in first[:len(first) - rank]]

        def dims(atom):
            return stack + [()] * (len(sr.shape_of(atom)) - len(stack))
        return f.rule([dims(a) for a in eqn.inputs], [dims(o) for o in eqn.outputs])
    return rule


def _define(prim, jvp, cost, reference, rank=2, **facts):
    defaults = dict(batch=_batch_to_front(prim), shard=sr.ShardRule(_stack_factors(rank)),
                    tile=NOT_TILED)
    prim.define(jvp=jvp, cost=cost, reference=reference, **{**defaults, **facts})


def _pad_to(x, rows, cols):
    """``x`` padded with zeros at the bottom and right to ``rows`` x ``cols``."""
    config = [(0, 0, 0)] * (x.ndim - 2) + [(0, rows - x.shape[-2], 0),
                                           (0, cols - x.shape[-1], 0)]
    return pad(x, 0, config)


def _rows(x, start, stop):
    return slice_in_dim(x, start, stop, axis=x.ndim - 2)


def _cols(x, start, stop):
    return slice_in_dim(x, start, stop, axis=x.ndim - 1)
