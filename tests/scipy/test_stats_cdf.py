"""gamma/beta/chi2 ``cdf``, ``logcdf``, ``sf`` and ``logsf``, poisson and gennorm ``cdf``,
against JAX's."""
import numpy as np
import pytest

import ptojax as pto


@pytest.mark.parametrize("dist,args", [("gamma", (2.0,)), ("gamma", (0.7, 0.5, 2.0)),
                                       ("beta", (2.0, 3.0)), ("beta", (0.5, 1.5, -1.0, 3.0)),
                                       ("chi2", (3.0,)), ("chi2", (1.0, 0.5, 2.0))])
def test_cdf_sf_families_match_jax(jax, dist, args):
    """gamma/beta/chi2 ``cdf``, ``logcdf``, ``sf``, ``logsf`` (incomplete gamma/beta of the
    standardized, clamped argument) against JAX, below, inside and above the support."""
    import jax.scipy.stats as jst
    x = np.array([-2.0, 0.0, 0.3, 0.9, 1.7, 4.0, 30.0], np.float32)
    for f in ("cdf", "logcdf", "sf", "logsf"):
        with jax.enable_x64(False):
            want = np.asarray(getattr(getattr(jst, dist), f)(x, *args))
        got = np.asarray(getattr(getattr(pto.scipy.stats, dist), f)(x, *args))
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6, err_msg=f"{dist}.{f}")


def test_poisson_and_gennorm_cdf_match_jax(jax):
    import jax.scipy.stats as jst
    k = np.array([-1.0, 0.0, 1.0, 2.5, 4.0, 12.0], np.float32)
    x = np.array([-3.0, -0.5, 0.0, 0.4, 1.0, 2.5], np.float32)
    with jax.enable_x64(False):
        want = [jst.poisson.cdf(k, 2.5), jst.poisson.cdf(k, 0.7, 1.0),
                jst.gennorm.cdf(x, 2.0), jst.gennorm.cdf(x, 0.8)]
    got = [pto.scipy.stats.poisson.cdf(k, 2.5), pto.scipy.stats.poisson.cdf(k, 0.7, 1.0),
           pto.scipy.stats.gennorm.cdf(x, 2.0), pto.scipy.stats.gennorm.cdf(x, 0.8)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-6)
