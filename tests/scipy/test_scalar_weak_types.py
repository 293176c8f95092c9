"""Results of ``scipy.special``/``scipy.stats``/``nn.logsumexp`` on Python scalars have JAX's
dtype and weak type: most keep the scalar's weak type, while JAX's ``ndtr``, ``ndtri``,
``log_ndtr``, ``erfcx``, ``dawsn``, ``logsumexp`` (and the ``norm`` functions built on them)
return strongly typed arrays, which then decide later promotions (e.g. a loop carry)."""
import pytest

import ptojax as pto

SPECIAL = {"erf": (0.5,), "erfc": (0.5,), "erfinv": (0.5,), "ndtr": (0.5,), "ndtri": (0.5,),
           "log_ndtr": (0.5,), "gammaln": (2.5,), "digamma": (2.5,), "expit": (0.5,),
           "logit": (0.5,), "i0e": (0.5,), "i1e": (0.5,), "erfcx": (0.5,), "exp1": (0.5,),
           "entr": (0.5,), "gamma": (2.5,), "spence": (0.5,), "dawsn": (0.5,),
           "xlogy": (0.5, 2.0), "gammainc": (1.5, 2.0), "betaln": (1.5, 2.0),
           "zeta": (2.5, 1.0), "kl_div": (0.5, 0.3), "betainc": (1.5, 2.0, 0.3),
           "logsumexp": (0.5,), "owens_t": (0.5, 2.0)}
NORM = ("pdf", "logpdf", "cdf", "logcdf", "sf", "ppf")


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_of_python_scalars(jax, name):
    import jax.scipy.special as jsp
    with jax.enable_x64(False):
        want = getattr(jsp, name)(*SPECIAL[name])
    got = getattr(pto.scipy.special, name)(*SPECIAL[name])
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)


def test_norm_and_nn_logsumexp_of_python_scalars(jax):
    import jax.scipy.stats as jst
    with jax.enable_x64(False):
        want = [getattr(jst.norm, f)(0.5) for f in NORM] + [jax.nn.logsumexp(0.5)]
    got = [getattr(pto.scipy.stats.norm, f)(0.5) for f in NORM] + [pto.nn.logsumexp(0.5)]
    assert [(g.dtype, g.weak_type) for g in got] == [(w.dtype, w.weak_type) for w in want]

