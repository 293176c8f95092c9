"""Products of vectors: ``vecdot``, ``matvec``, ``vecmat``, ``cross``, ``kron``."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, promote_dtypes
from ptojax.numpy import math as ew
from ptojax.numpy.products import matmul
from ptojax.numpy.manipulation import moveaxis, reshape
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of the vectors along ``axis`` of each (other axes broadcast), ``x1``
    conjugated (as JAX)."""
    x1, x2 = promote_dtypes("vecdot", x1, x2)
    if dtypes.is_complex(x1.dtype):
        x1 = lax.conj(x1)
    a1, a2 = (normalize_axis("vecdot", axis, x.ndim) for x in (x1, x2))
    if x1.shape[a1] != x2.shape[a2]:
        raise ShapeError(f"vecdot: axis {axis} has size {x1.shape[a1]} in {x1.aval} but "
                         f"{x2.shape[a2]} in {x2.aval}", user_frame())
    x1, x2 = moveaxis(x1, a1, -1), moveaxis(x2, a2, -1)
    rows = lax.expand_dims(x1, (x1.ndim - 1,))          # (..., 1, n)
    columns = lax.expand_dims(x2, (x2.ndim,))            # (..., n, 1)
    out = matmul(rows, columns, preferred_element_type=preferred_element_type)
    return lax.squeeze(out, (out.ndim - 2, out.ndim - 1))


def matvec(x1, x2, /):
    """Matrix (..., n, m) times vector (..., m), batch dimensions broadcast."""
    x1, x2 = promote_dtypes("matvec", x1, x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ShapeError(f"matvec: needs a matrix and a vector, got {x1.aval} and {x2.aval}",
                         user_frame())
    out = matmul(x1, lax.expand_dims(x2, (x2.ndim,)))
    return lax.squeeze(out, (out.ndim - 1,))


def vecmat(x1, x2, /):
    """Vector (..., m) times matrix (..., m, n), batch dimensions broadcast."""
    x1, x2 = promote_dtypes("vecmat", x1, x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ShapeError(f"vecmat: needs a vector and a matrix, got {x1.aval} and {x2.aval}",
                         user_frame())
    out = matmul(lax.expand_dims(x1, (x1.ndim - 1,)), x2)
    return lax.squeeze(out, (out.ndim - 2,))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-vectors along ``axisa``/``axisb`` (``axis`` sets all
    three); 2-vectors give the z component (a scalar per pair)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asarray(a, op="cross"), asarray(b, op="cross")
    a = moveaxis(a, normalize_axis("cross", axisa, a.ndim, "axisa"), -1)
    b = moveaxis(b, normalize_axis("cross", axisb, b.ndim, "axisb"), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ShapeError(f"cross: the vectors must have 2 or 3 components, got {a.aval} and "
                         f"{b.aval}", user_frame())
    component = lambda x, i: lax.index_in_dim(x, i, x.ndim - 1, False)
    a0, a1, b0, b1 = component(a, 0), component(a, 1), component(b, 0), component(b, 1)
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return ew.subtract(ew.multiply(a0, b1), ew.multiply(a1, b0))
    zero = lambda x: lax.broadcast_in_dim(np.asarray(0, x.dtype), tuple(x.shape), ())
    a2 = component(a, 2) if a.shape[-1] == 3 else zero(a0)
    b2 = component(b, 2) if b.shape[-1] == 3 else zero(b0)
    parts = [ew.subtract(ew.multiply(a1, b2), ew.multiply(a2, b1)),
             ew.subtract(ew.multiply(a2, b0), ew.multiply(a0, b2)),
             ew.subtract(ew.multiply(a0, b1), ew.multiply(a1, b0))]
    # stacked as an array of the components: strongly typed, as JAX's (a 2-D cross is not)
    c = lax.convert_element_type(lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0),
                                 parts[0].dtype)
    return moveaxis(c, 0, normalize_axis("cross", axisc, c.ndim, "axisc"))


def kron(a, b):
    """The Kronecker product: blocks ``a[i, j] * b``."""
    a, b = promote_dtypes("kron", a, b)
    nd = max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    b = reshape(b, (1,) * (nd - b.ndim) + tuple(b.shape))
    shape = tuple(x for pair in zip(a.shape, b.shape) for x in pair)
    aa = lax.broadcast_in_dim(a, shape, tuple(range(0, 2 * nd, 2)))
    bb = lax.broadcast_in_dim(b, shape, tuple(range(1, 2 * nd, 2)))
    return reshape(lax.mul(aa, bb), tuple(x * y for x, y in zip(a.shape, b.shape)))


__all__ = ["cross", "kron", "matvec", "vecdot", "vecmat"]


_add_examples(globals(), """
cross:
    >>> pnp.cross(pnp.array([1, 0, 0]), pnp.array([0, 1, 0]))
    Array([0, 0, 1], dtype=int32)
kron:
    >>> pnp.kron(pnp.array([1, 10]), pnp.array([1, 2, 3]))
    Array([ 1,  2,  3, 10, 20, 30], dtype=int32)
matvec:
    >>> pnp.matvec(pnp.array([[1, 2], [3, 4]]), pnp.array([1, 1]))
    Array([3, 7], dtype=int32)
vecdot:
    >>> pnp.vecdot(pnp.array([[1, 2], [3, 4]]), pnp.array([1, 1]))
    Array([3, 7], dtype=int32)
vecmat:
    >>> pnp.vecmat(pnp.array([1, 1]), pnp.array([[1, 2], [3, 4]]))
    Array([4, 6], dtype=int32)
""")
