"""Dawson's integral ``D(x) = exp(-x^2) * integral_0^x exp(t^2) dt``, as JAX's
``jax.scipy.special.dawsn``: odd in ``x``; on ``|x|`` the Cephes rational approximations of
three ranges (``x P(x^2)/Q(x^2)`` below 3.25, ``(1 + t P(t)/Q(t)) / (2x)`` with ``t = 1/x^2``
below 6.25 and above), the coefficients below being Cephes' ``dawsn.c`` (as JAX and SciPy use
them). float16/bfloat16 are computed in float32. Derivative ``D'(x) = 1 - 2 x D(x)``."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.normal import inexact, strong
from ptojax.scipy.special.series import horner
from ptojax.public import add_examples

# highest power first
_AN = (1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8,
       9.53151741254484363489e-7, 3.07828309874913200438e-6, 3.52513368520288738649e-4,
       -8.50149846724410912031e-4, 4.22618223005546594270e-2, -9.17480371773452345351e-2,
       9.99999999999999994612e-1)
_AD = (2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8,
       1.27258478273186970203e-6, 2.32490249820789513991e-5, 3.25524741826057911661e-4,
       3.48805814657162590916e-3, 2.79448531198828973716e-2, 1.58874241960120565368e-1,
       5.74918629489320327824e-1, 1.00000000000000000539e0)
_BN = (5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2,
       -2.18711255142039025206e-2, 3.66207612329569181322e-3, -4.23209114460388756528e-4,
       3.59641304793896631888e-5, -2.14640351719968974225e-6, 9.10010780076391431042e-8,
       -2.40274520828250956942e-9, 3.59233385440928410398e-11)
_BD = (1.0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
       -5.31806367003223277662e-2, 8.48041718586295374409e-3, -9.47996768486665330168e-4,
       7.81025592944552338085e-5, -4.55875153252442634831e-6, 1.89100358111421846170e-7,
       -4.91324691331920606875e-9, 7.18466403235734541950e-11)
_CN = (-5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1,
       1.64837047825189632310e-2, -4.86827613020462700845e-4)
_CD = (1.0, -2.69820057197544900361e0, 1.73270799045947845857e0,
       -3.93708582281939493482e-1, 3.44278924041233391079e-2, -9.73655226040941223894e-4)


def _dawsn_of_abs(ax):
    """D on ``ax >= 0``; each range evaluated where it applies (a safe 1 elsewhere)."""
    one = pnp.ones_like(ax)
    low, mid = ax < 3.25, (ax >= 3.25) & (ax < 6.25)
    a = pnp.where(low, ax, one)
    a2 = a * a
    small = a * horner(_AN, a2) / horner(_AD, a2)
    t_mid, x_mid = pnp.where(mid, 1 / (ax * ax), one), pnp.where(mid, ax, one)
    middle = (0.5 / x_mid) * (1 + t_mid * horner(_BN, t_mid) / horner(_BD, t_mid))
    high = ax >= 6.25
    t_high, x_high = pnp.where(high, 1 / (ax * ax), one), pnp.where(high, ax, one)
    large = (0.5 / x_high) * (1 + t_high * horner(_CN, t_high) / horner(_CD, t_high))
    return pnp.where(low, small, pnp.where(mid, middle, large))


@custom_jvp
def _dawsn(x):
    if x.dtype in (np.float32, np.float64):
        return pnp.sign(x) * _dawsn_of_abs(pnp.abs(x))
    wide = x.astype(np.float32)
    return (pnp.sign(wide) * _dawsn_of_abs(pnp.abs(wide))).astype(x.dtype)


_dawsn.defjvps(lambda t, out, x: t * (1 - 2 * x * out))


def dawsn(x):
    """Dawson's integral of real ``x`` (see the module); complex inputs raise."""
    x = inexact("dawsn", x)
    if pnp.iscomplexobj(x):
        raise ValueError("dawsn does not support complex-valued inputs.")
    return strong(_dawsn(x))


add_examples(globals(), """
dawsn:
    >>> pto.scipy.special.dawsn(pnp.array([0.0, 1.0, 10.0]))
    Array([0.        , 0.5380795 , 0.05025385], dtype=float32)
""")
