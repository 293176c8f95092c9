"""Special functions — erf, erf_inv — with every fact. Their numpy impls (accurate to float64)
are in ``special_math.py``."""
from __future__ import annotations

import numpy as np

from ptojax.ops import references as ref
from ptojax.ops import special_math
from ptojax.ops.arithmetic import NOT_TILED, mul, neg, unary_jvp
from ptojax.ops.elementwise import elementwise, lax_function
from ptojax.ops.transcendental import exp

SQRT_PI = float(np.sqrt(np.pi))


def _special(name, impl, **facts):
    return elementwise(name, impl, "float", nargs=1, reference=ref.lax_op(name), **facts)


erf_p = _special("erf", special_math.erf, tile=NOT_TILED)
erf_inv_p = _special("erf_inv", special_math.erf_inv, tile=NOT_TILED)
erf, erf_inv = lax_function(erf_p), lax_function(erf_inv_p)

erf_p.define(jvp=unary_jvp(erf_p, lambda x, o: mul(exp(neg(mul(x, x))), 2 / SQRT_PI)))
erf_inv_p.define(jvp=unary_jvp(erf_inv_p, lambda x, o: mul(exp(mul(o, o)), SQRT_PI / 2)))
