"""Complex numbers from and to their parts — ``complex real imag conj`` — with every fact.

The four are linear over the reals. Their transposes follow JAX's convention for complex
cotangents (the transpose of a complex-linear map is not conjugated): ``real`` sends ``ct`` to
``ct + 0j``, ``imag`` to ``-1j * ct``, ``complex`` to ``(real(ct), -imag(ct))``, ``conj`` of a
complex value to ``conj(ct)`` and of a real value to ``real(ct)``. So ``grad`` of a real
function of complex inputs gives the conjugate of the gradient used for descent, as in JAX.

Complex values have no tile form: PTO has no complex types, so they stay tensor-level.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref
from ptojax.ops.broadcast import linear_jvp, unbroadcast, zeros_like
from ptojax.ops.checks import broadcast_scalars, require_same_dtype
from ptojax.ops.elementwise import elementwise, lax_function
from ptojax.ops.tangents import is_undefined, linear_in_first_jvp
from ptojax.trace import Unsupported

NO_COMPLEX_TILES = Unsupported("complex dtypes have no tile form (PTO has no complex types); "
                               "kept as a tensor op between kernels")


def _require(name, t, ok, what):
    if not ok(t.dtype):
        raise DtypeError(f"{name} requires {what} operand, got {t}")


def _part_abstract(name):
    def abstract_eval(x):
        _require(name, x, dtypes.is_complex, "a complex")
        return TensorType(x.shape, dtypes.real_dtype(x.dtype), x.weak_type)
    return abstract_eval


def _complex_abstract(x, y):
    require_same_dtype("complex", (x, y))
    _require("complex", x, lambda d: d in (dtypes.float32, dtypes.float64),
             "a float32 or float64")
    shape = broadcast_scalars("complex", (x, y))
    return TensorType(shape, dtypes.complex_dtype(x.dtype), x.weak_type and y.weak_type)


def _conj_abstract(x):
    _require("conj", x, dtypes.is_inexact, "a floating-point or complex")
    return TensorType(x.shape, dtypes.complex_dtype(x.dtype), x.weak_type)


def _complex(x, y):
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), dtypes.complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out


def _conj(x):
    return np.conj(x.astype(dtypes.complex_dtype(x.dtype), copy=False))


def _real_transpose(ct, x):
    return [complex_p.bind(ct, zeros_like(ct))]


def _imag_transpose(ct, x):
    # -1j * ct, as the conjugate of 1j * ct
    return [conj_p.bind(complex_p.bind(zeros_like(ct), ct))]


def _complex_transpose(ct, x, y):
    return [unbroadcast(real_p.bind(ct), x.aval) if is_undefined(x) else None,
            unbroadcast(imag_p.bind(conj_p.bind(ct)), y.aval) if is_undefined(y) else None]


def _conj_transpose(ct, x):
    return [conj_p.bind(ct) if dtypes.is_complex(x.aval.dtype) else real_p.bind(ct)]


def _conj_reference(jnp, lax):
    return lambda x: lax.conj(x)


real_p = elementwise("real", np.real, abstract_eval=_part_abstract("real"), linear=True,
                     shard_linear="unary", transpose=_real_transpose, tile=NO_COMPLEX_TILES,
                     reference=ref.lax_op("real"))
imag_p = elementwise("imag", np.imag, abstract_eval=_part_abstract("imag"), linear=True,
                     shard_linear="unary", transpose=_imag_transpose, tile=NO_COMPLEX_TILES,
                     reference=ref.lax_op("imag"))
complex_p = elementwise("complex", _complex, abstract_eval=_complex_abstract, linear=True,
                        shard_linear="all", transpose=_complex_transpose,
                        tile=NO_COMPLEX_TILES, reference=ref.lax_op("complex"))
conj_p = elementwise("conj", _conj, abstract_eval=_conj_abstract, linear=True,
                     shard_linear="unary", transpose=_conj_transpose, tile=NO_COMPLEX_TILES,
                     reference=_conj_reference)
for _prim in (real_p, imag_p, conj_p):
    _prim.define(jvp=linear_in_first_jvp(_prim))
complex_p.define(jvp=linear_jvp(complex_p))
real, imag, complex, conj = map(lax_function, (real_p, imag_p, complex_p, conj_p))
