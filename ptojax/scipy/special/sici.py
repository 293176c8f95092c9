"""The sine and cosine integrals ``sici(x) = (Si(x), Ci(x))``, ``Si(x) = integral_0^x
sin t / t dt``, ``Ci(x) = gamma + log x + integral_0^x (cos t - 1) / t dt``, as JAX: on
``|x| <= 4`` Cephes' rational approximations in ``x^2``; on ``4 < |x| <= 1e9`` the auxiliary
functions ``f, g`` (Cephes' fits below and above 8) with ``Si = pi/2 - f cos x - g sin x``,
``Ci = f sin x - g cos x``; beyond, ``Si = pi/2 - cos x / x``, ``Ci = sin x / x``. ``Si`` is
odd, ``Ci(x < 0)`` is ``Ci(|x|)`` (JAX's real part), ``Ci(-inf)`` is NaN. Derivatives
``sin x / x`` and ``cos x / x``."""
from __future__ import annotations

import math

import numpy as np

from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.normal import inexact, strong
from ptojax.scipy.special.series import horner

# Cephes sici.c coefficients, highest power first
_SN = (-8.39167827910303881427e-11, 4.62591714427012837309e-8, -9.75759303843632795789e-6,
       9.76945438170435310816e-4, -4.13470316229406538752e-2, 1.00000000000000000302e0)
_SD = (2.03269266195951942049e-12, 1.27997891179943299903e-9, 4.41827842801218905784e-7,
       9.96412122043875552487e-5, 1.42085239326149893930e-2, 9.99999999999999996984e-1)
_CN = (2.02524002389102268789e-11, -1.35249504915790756375e-8, 3.59325051419993077021e-6,
       -4.74007206873407909465e-4, 2.89159652607555242092e-2, -1.00000000000000000080e0)
_CD = (4.07746040061880559506e-12, 3.06780997581887812692e-9, 1.23210355685883423679e-6,
       3.17442024775032769882e-4, 5.10028056236446052392e-2, 4.00000000000000000080e0)
_FN4 = (4.23612862892216586994e0, 5.45937717161812843388e0, 1.62083287701538329132e0,
        1.67006611831323023771e-1, 6.81020132472518137426e-3, 1.08936580650328664411e-4,
        5.48900223421373614008e-7)
_FD4 = (1.0, 8.16496634205391016773e0, 7.30828822505564552187e0, 1.86792257950184183883e0,
        1.78792052963149907262e-1, 7.01710668322789753610e-3, 1.10034357153915731354e-4,
        5.48900252756255700982e-7)
_GN4 = (8.71001698973114191777e-2, 6.11379109952219284151e-1, 3.97180296392337498885e-1,
        7.48527737628469092119e-2, 5.38868681462177273157e-3, 1.61999794598934024525e-4,
        1.97963874140963632189e-6, 7.82579040744090311069e-9)
_GD4 = (1.0, 1.64402202413355338886e0, 6.66296701268987968381e-1, 9.88771761277688796203e-2,
        6.22396345441768420760e-3, 1.73221081474177119497e-4, 2.02659182086343991969e-6,
        7.82579218933534490868e-9)
_FN8 = (4.55880873470465315206e-1, 7.13715274100146711374e-1, 1.60300158222319456320e-1,
        1.16064229408124407915e-2, 3.49556442447859055605e-4, 4.86215430826454749482e-6,
        3.20092790091004902806e-8, 9.41779576128512936592e-11, 9.70507110881952024631e-14)
_FD8 = (1.0, 9.17463611873684053703e-1, 1.78685545332074536321e-1, 1.22253594771971293032e-2,
        3.58696481881851580297e-4, 4.92435064317881464393e-6, 3.21956939101046018377e-8,
        9.43720590350276732376e-11, 9.70507110881952025725e-14)
_GN8 = (6.97359953443276214934e-1, 3.30410979305632063225e-1, 3.84878767649974295920e-2,
        1.71718239052347903558e-3, 3.48941165502279436777e-5, 3.47131167084116673800e-7,
        1.70404452782044526189e-9, 3.85945925430276600453e-12, 3.14040098946363334640e-15)
_GD8 = (1.0, 1.68548898811011640017e0, 4.87852258695304967486e-1, 4.67913194259625806320e-2,
        1.90284426674399523638e-3, 3.68475504442561108162e-5, 3.57043223443740838771e-7,
        1.72693748966316146736e-9, 3.87830166023954706752e-12, 3.14040098946363335242e-15)


def _series(x):
    """``(Si, Ci)`` for ``0 <= x <= 4``."""
    t = x * x
    si = x * horner(_SN, t) / horner(_SD, t)
    safe = pnp.where(x == 0, 1.0, x)
    ci = np.euler_gamma + pnp.log(safe) + t * horner(_CN, t) / horner(_CD, t)
    return pnp.where(x == 0, 0.0, si), pnp.where(x == 0, -np.inf, ci)


def _asymptotic(x):
    """``(Si, Ci)`` for ``4 < x <= 1e9`` (``x`` is kept in that range by the caller)."""
    s, c = pnp.sin(x), pnp.cos(x)
    z = 1.0 / (x * x)
    below8 = x < 8.0
    f = pnp.where(below8, horner(_FN4, z) / (x * horner(_FD4, z)),
                  horner(_FN8, z) / (x * horner(_FD8, z)))
    g = pnp.where(below8, z * horner(_GN4, z) / horner(_GD4, z),
                  z * horner(_GN8, z) / horner(_GD8, z))
    return math.pi / 2 - f * c - g * s, f * s - g * c


def _far(x):
    """``(Si, Ci)`` for ``x > 1e9``."""
    infinite = pnp.isposinf(x)
    safe = pnp.where(infinite, 1.0, x)
    return (pnp.where(infinite, math.pi / 2, math.pi / 2 - pnp.cos(safe) / safe),
            pnp.where(infinite, 0.0, pnp.sin(safe) / safe))


@custom_jvp
def _sici(x):
    ax = pnp.abs(x)
    near, middle = ax <= 4, (ax > 4) & (ax <= 1e9)
    si_near, ci_near = _series(pnp.where(near, ax, 1.0))
    si_mid, ci_mid = _asymptotic(pnp.where(middle, ax, 5.0))
    si_far, ci_far = _far(pnp.where(near | middle, 2e9, ax))
    si = pnp.where(near, si_near, pnp.where(middle, si_mid, si_far))
    ci = pnp.where(near, ci_near, pnp.where(middle, ci_mid, ci_far))
    return pnp.sign(x) * si, pnp.where(pnp.isneginf(x), np.nan, ci)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _sici(x), (pnp.sinc(x / np.pi) * t, pnp.cos(x) / x * t)


def sici(x):
    """The sine and cosine integrals ``(Si(x), Ci(x))`` of real ``x`` (see the module).

    Args:
      x: real array.

    Returns:
      A pair of arrays of the shape of ``x``: ``Si(x)`` and ``Ci(x)``.

    Example:
      >>> si, ci = pto.scipy.special.sici(pnp.array([1.0, 10.0]))
      >>> si
      Array([0.94608307, 1.6583477 ], dtype=float32)
    """
    x = inexact("sici", x)
    if pnp.iscomplexobj(x):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    si, ci = _sici(x)
    return strong(si), strong(ci)
