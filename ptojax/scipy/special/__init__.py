"""``pto.scipy.special``: JAX's ``jax.scipy.special`` for real inputs (``wofz`` also
complex), composed of ``pnp`` and ``lax`` operations (so every transform traces through them).

Not here: ``lpmn`` and ``lpmn_values``, which JAX deprecated (and no longer lists).
"""
from ptojax.scipy.special.bernoulli import bernoulli
from ptojax.scipy.special.dawsn import dawsn
from ptojax.scipy.special.bessel import i0, i0e, i1, i1e
from ptojax.scipy.special.bessel_jn import bessel_jn
from ptojax.scipy.special.incomplete import betainc, gammainc, gammaincc
from ptojax.scipy.special.erfcx import erfcx
from ptojax.scipy.special.expint import exp1, expi, expn
from ptojax.scipy.special.faddeeva import wofz
from ptojax.scipy.special.fresnel import fresnel
from ptojax.scipy.special.hyp1f1 import hyp1f1
from ptojax.scipy.special.hyp2f1 import hyp2f1
from ptojax.scipy.special.entropy import entr, kl_div, rel_entr, xlog1py, xlogy
from ptojax.scipy.special.gamma_family import (beta, betaln, comb, digamma, factorial, gamma,
                                               gammaln, gammasgn, loggamma, multigammaln,
                                               poch)
from ptojax.scipy.special.logistic import (boxcox, boxcox1p, expit, log_softmax, logit,
                                           logsumexp, softmax)
from ptojax.scipy.special.normal import erf, erfc, erfinv, log_ndtr, ndtr, ndtri
from ptojax.scipy.special.owens_t import owens_t
from ptojax.scipy.special.sici import sici
from ptojax.scipy.special.sph_harm import sph_harm_y
from ptojax.scipy.special.spence import spence
from ptojax.scipy.special.zeta import polygamma, zeta
from ptojax.public import dir_function as _dir_function, public_names as _public_names

__all__ = _public_names(globals())
__dir__ = _dir_function(__all__)
