"""``lax.zeta`` and ``lax.polygamma``: the Hurwitz zeta and polygamma compositions of
``ptojax/ops/zeta.py`` (shared with ``scipy.special``) with lax's operand rules, as JAX's:
both operands floating and of one dtype (a Python scalar takes the other operand's dtype),
no promotion; shapes broadcast as lax's binary operations do."""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import DtypeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.elementwise import operands
from ptojax.public import add_examples
from ptojax.ops import zeta as _ops_zeta
from ptojax.ops.broadcast import broadcast_in_dim, broadcast_shapes
from ptojax.source_info import user_frame


def _checked(name, a, b):
    check_arraylike(name, a, b)
    a, b = operands(a, b)
    for i, x in enumerate((a, b)):
        if not dtypes.is_float(x.dtype):
            raise DtypeError(f"{name} does not accept dtype {x.dtype} at position {i}. "
                             f"Accepted dtypes at position {i} are subtypes of floating.",
                             user_frame(3))
    if a.dtype != b.dtype:
        raise DtypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                         f"{a.dtype}, {b.dtype}.", user_frame(3))
    shape = broadcast_shapes(a.shape, b.shape)
    return [broadcast_in_dim(x, shape, tuple(range(len(shape) - x.ndim, len(shape))))
            for x in (a, b)]


def zeta(x, q):
    """The Hurwitz zeta function ``sum_k (q + k)^-x`` (``x > 1``)."""
    return _ops_zeta.zeta(*_checked("zeta", x, q))


def polygamma(m, x):
    """The ``m``-th derivative of the digamma function at ``x`` (``m`` of ``x``'s float dtype;
    NaN where it is negative or not an integer)."""
    return _ops_zeta.polygamma(*_checked("polygamma", m, x))


add_examples(globals(), """
zeta:
    >>> pto.lax.zeta(pnp.float32(2.0), pnp.float32(1.0))
    Array(1.6449342, dtype=float32)
polygamma:
    >>> pto.lax.polygamma(pnp.float32(1.0), pnp.float32(2.0))
    Array(0.6449341, dtype=float32)
""")
