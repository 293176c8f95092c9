"""Complex parts and tests of ``ptojax.numpy``: real, imag, conj, angle, iscomplex, isreal,
iscomplexobj, isrealobj (JAX semantics: real values are their own real part and conjugate,
with a zero imaginary part)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.numpy._constants import lax_like
from ptojax.numpy._promote import array_from, dtype_and_weak, promote_args
from ptojax.public import add_examples as _add_examples


def _is_complex(x) -> bool:
    return dtypes.is_complex(x.dtype)


def real(val, /):
    (val,) = promote_args("real", val)
    return lax.real(val) if _is_complex(val) else val


def imag(val, /):
    (val,) = promote_args("imag", val)
    if _is_complex(val):
        return lax.imag(val)
    return lax.broadcast_in_dim(lax.convert_element_type(0, val.dtype, val.weak_type),
                                val.shape, ())


def conjugate(x, /):
    (x,) = promote_args("conjugate", x)
    return lax.conj(x) if _is_complex(x) else x


conj = conjugate


def angle(z, deg: bool = False):
    """The argument of ``z`` (in degrees with ``deg``). As JAX's: the parts of integers and
    of 0-d real floats are converted to the default float (so the result is strong; a 0-d
    float16 gives float32), other floats keep their dtype and weak type."""
    (z,) = promote_args("angle", z)
    re, im = real(z), imag(z)
    if not dtypes.is_inexact(re.dtype) or (dtypes.is_float(z.dtype) and z.ndim == 0):
        re = lax.convert_element_type(re, dtypes.default_float())
        im = lax.convert_element_type(im, dtypes.default_float())
    out = lax.atan2(im, re)
    return lax.mul(out, lax_like(out, float(180 / np.pi))) if deg else out   # as degrees


def iscomplex(x, /):
    """Elementwise: a nonzero imaginary part."""
    im = imag(x)
    return lax.ne(im, lax_like(im, 0))


def isreal(x, /):
    """Elementwise: a zero imaginary part."""
    im = imag(x)
    return lax.eq(im, lax_like(im, 0))


def iscomplexobj(x, /) -> bool:
    """Whether ``x`` has a complex dtype (whatever its values)."""
    if x is None:
        return False
    if isinstance(x, (list, tuple)):   # a question about a value's type: lists too, as JAX
        x = array_from(x, op="iscomplexobj")
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = dtype_and_weak(x, "iscomplexobj")[0]
    return np.issubdtype(dtype, np.complexfloating)


def isrealobj(x, /) -> bool:
    return not iscomplexobj(x)


_add_examples(globals(), """
conjugate: The complex conjugate, elementwise (``conj``); real inputs are returned unchanged.
    >>> pnp.conjugate(pnp.array([1 + 2j, 3 - 1j]))
    Array([1.-2.j, 3.+1.j], dtype=complex64)
imag: The imaginary part, elementwise (zeros of the input's dtype for real inputs).
    >>> pnp.imag(pnp.array([1 + 2j, 3 - 1j]))
    Array([ 2., -1.], dtype=float32)
real: The real part, elementwise (real inputs are returned unchanged).
    >>> pnp.real(pnp.array([1 + 2j, 3 - 1j]))
    Array([1., 3.], dtype=float32)
isrealobj: Whether ``x`` has a non-complex dtype (whatever its values).
    >>> pnp.isrealobj(pnp.array([1.0, 2.0]))
    True
angle:
    >>> pnp.angle(pnp.array([1j, -1.0, 1 + 1j]))
    Array([1.5707964, 3.1415927, 0.7853981], dtype=float32)
iscomplex:
    >>> pnp.iscomplex(pnp.array([1 + 1j, 2 + 0j]))
    Array([ True, False], dtype=bool)
iscomplexobj:
    >>> pnp.iscomplexobj(pnp.array([1 + 0j]))
    True
isreal:
    >>> pnp.isreal(pnp.array([1 + 1j, 2 + 0j]))
    Array([False,  True], dtype=bool)
""")
