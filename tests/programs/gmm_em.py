"""Gaussian-mixture EM in pure JAX, in the style of public "EM for GMMs in JAX" notebooks:
the E-step vmaps ``scipy.stats.multivariate_normal.logpdf`` over components and normalises
with ``logsumexp``, the M-step is closed form (an einsum for the covariances), iterated in a
jitted ``fori_loop`` from components picked by ``random.choice``; then a 1-D mixture with
``norm.logpdf`` and ``nn.softmax`` (all under one ``jit``)."""
import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp
from jax.scipy.stats import multivariate_normal, norm


def e_step(x, weights, means, covs):
    logp = jax.vmap(lambda m, c: multivariate_normal.logpdf(x, m, c), out_axes=1)(means, covs)
    logp = logp + jnp.log(weights)
    ll = logsumexp(logp, axis=1)
    return jnp.exp(logp - ll[:, None]), ll.sum()


def m_step(x, resp):
    nk = resp.sum(0)
    means = resp.T @ x / nk[:, None]
    diff = x[None] - means[:, None]
    covs = jnp.einsum("nk,kni,knj->kij", resp, diff, diff) / nk[:, None, None]
    return nk / x.shape[0], means, covs + 1e-4 * jnp.eye(x.shape[1])


@jax.jit
def em(x, params):
    def body(i, carry):
        params, _ = carry
        resp, ll = e_step(x, *params)
        return m_step(x, resp), ll
    return jax.lax.fori_loop(0, 15, body, (params, 0.0))


@jax.jit
def main(x):
    k = 3
    idx = jax.random.choice(jax.random.PRNGKey(42), x.shape[0], (k,), replace=False)
    (w, m, c), ll = em(x, (jnp.ones(k) / k, x[idx], jnp.stack([jnp.eye(2)] * k)))
    order = jnp.argsort(m[:, 0])
    x1, mu, sd, pi = x[:, 0], jnp.array([-1.0, 1.0]), jnp.ones(2), jnp.full(2, 0.5)
    for _ in range(8):
        r = jax.nn.softmax(norm.logpdf(x1[:, None], mu, sd) + jnp.log(pi), axis=1)
        nk = r.sum(0)
        pi, mu = nk / x1.size, (r * x1[:, None]).sum(0) / nk
        sd = jnp.sqrt((r * (x1[:, None] - mu) ** 2).sum(0) / nk)
    return idx, ll, w[order], m[order], c[order], pi, mu, sd
