"""The Fresnel integrals ``fresnel(x) = (S(x), C(x))``, ``S(x) = integral_0^x sin(pi t^2 / 2)
dt``, ``C(x) = integral_0^x cos(pi t^2 / 2) dt``, as JAX (Cephes' ``fresnl``; float32 with
the polynomial fits of ``fresnlf``, float64 with the rational fits of ``fresnl``;
float16/bfloat16 computed in float32): power series in ``x^4`` for ``x^2 < 2.5625``, the
auxiliary functions ``f, g`` in ``1 / (pi x^2)`` beyond, and ``1/2`` (float32) or
``1/2 -+ cos/sin(pi x^2 / 2) / (pi x)`` (float64) above ``36974``. Both are odd. ``sin(pi x^2 / 2)``
and ``cos(pi x^2 / 2)`` are computed with the argument reduced modulo 2 (exact for large
``x``). Derivatives ``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)``."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.normal import inexact
from ptojax.scipy.special.series import horner

# Cephes fresnlf (float32), highest power first
_SN32 = (1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
         -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
         5.235987735681432e-1)
_CN32 = (1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
         -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
         9.999999760004487e-1)
_FN32 = (-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
         7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
         -1.032877601091159e2, 2.999401847870011e0)
_GN32 = (-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
         6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
         -1.493439396592284e1, 9.999841934744914e-1)
# Cephes fresnl (float64)
_SN64 = (-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
         2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11)
_SD64 = (1.0, 2.81376268889994315696e2, 4.55847810806532581675e4, 5.17343888770096400730e6,
         4.19320245898111231129e8, 2.24411795645340920940e10, 6.07366389490084639049e11)
_CN64 = (-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
         1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1)
_CD64 = (3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
         1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
         1.00000000000000000118e0)
_FN64 = (4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
         3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
         1.02304514164907233465e-10, 1.72010743268161828879e-13, 1.34283276233062758925e-16,
         3.76329711269987889006e-20)
_FD64 = (1.0, 7.51586398353378947175e-1, 1.16888925859191382142e-1, 6.44051526508858611005e-3,
         1.55934409164153020873e-4, 1.84627567348930545870e-6, 1.12699224763999035261e-8,
         3.60140029589371370404e-11, 5.88754533621578410010e-14, 4.52001434074129701496e-17,
         1.25443237090011264384e-20)
_GN64 = (5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
         6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
         4.45344415861750144738e-10, 1.08268041139020870318e-12, 1.37555460633261799868e-15,
         8.36354435630677421531e-19, 1.86958710162783235106e-22)
_GD64 = (1.0, 1.47495759925128324529e0, 3.37748989120019970451e-1, 2.53603741420338795122e-2,
         8.14679107184306179049e-4, 1.27545075667729118702e-5, 1.04314589657571990585e-7,
         4.60680728146520428211e-10, 1.10273215066240270757e-12, 1.38796531259578871258e-15,
         8.39158816283118707363e-19, 1.86958710162783236342e-22)


def _sin_cos_half_pi_square(x):
    """``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)`` with ``x^2 / 2`` reduced modulo 2 exactly
    (``s = x mod 2``, ``r = s (x - s/2) mod 2``)."""
    x = pnp.abs(x)
    s = pnp.fmod(x, 2.0)
    r = pnp.fmod(s * (x - s / 2), 2.0)
    sin = pnp.where(r < 0.5, pnp.sin(np.pi * r),
                    pnp.where(r > 1.5, pnp.sin(np.pi * (r - 2.0)), -pnp.sin(np.pi * (r - 1.0))))
    cos = pnp.where(r == 0.5, 0.0, pnp.where(r < 1.0, -pnp.sin(np.pi * (r - 0.5)),
                                             pnp.sin(np.pi * (r - 1.5))))
    return sin, cos


def _fresnel_of_abs(x, single):
    """``(S, C)`` for ``x = |input|``, float32 (``single``) or float64 fits."""
    x2 = x * x
    t = x2 * x2
    if single:
        s_small, c_small = x * x2 * horner(_SN32, t), x * horner(_CN32, t)
    else:
        s_small = x * x2 * horner(_SN64, t) / horner(_SD64, t)
        c_small = x * horner(_CN64, t) / horner(_CD64, t)
    sin, cos = _sin_cos_half_pi_square(x)
    if single:
        s_large = c_large = 0.5
    else:
        s_large, c_large = 0.5 - cos / (np.pi * x), 0.5 + sin / (np.pi * x)
    t = 1.0 / (np.pi * x2)
    u = t * t
    if single:
        f, g = 1.0 - u * horner(_FN32, u), t * horner(_GN32, u)
    else:
        f = 1.0 - u * horner(_FN64, u) / horner(_FD64, u)
        g = t * horner(_GN64, u) / horner(_GD64, u)
    s_mid = 0.5 - (f * cos + g * sin) / (np.pi * x)
    c_mid = 0.5 + (f * sin - g * cos) / (np.pi * x)
    small, large, infinite = x2 < 2.5625, x > 36974.0, pnp.isinf(x)
    s = pnp.where(infinite, 0.5, pnp.where(small, s_small, pnp.where(large, s_large, s_mid)))
    c = pnp.where(infinite, 0.5, pnp.where(small, c_small, pnp.where(large, c_large, c_mid)))
    return s, c


@custom_jvp
def _fresnel(x):
    wide = x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)
    s, c = _fresnel_of_abs(pnp.abs(wide), wide.dtype == np.float32)
    negative = wide < 0
    s, c = pnp.where(negative, -s, s), pnp.where(negative, -c, c)
    return s.astype(x.dtype), c.astype(x.dtype)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    sin, cos = _sin_cos_half_pi_square(x)
    return _fresnel(x), (sin * t, cos * t)


def fresnel(x):
    """The Fresnel integrals ``(S(x), C(x))`` of real ``x`` (see the module); accurate on
    ``[-10, 10]`` as Cephes'.

    Args:
      x: real array.

    Returns:
      A pair of arrays of the shape and dtype of ``x``: ``S(x)`` and ``C(x)``.

    Example:
      >>> s, c = pto.scipy.special.fresnel(pnp.array([0.5, 2.0]))
      >>> c
      Array([0.49234423, 0.4882534 ], dtype=float32)
    """
    x = inexact("fresnel", x)
    if pnp.iscomplexobj(x):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if x.dtype not in (np.float16, np.float32, np.float64) and x.dtype.name != "bfloat16":
        raise NotImplementedError(f"Support for {x.dtype} dtype is not implemented yet.")
    return _fresnel(x)
