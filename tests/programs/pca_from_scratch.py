"""PCA from scratch, in the style of JAX's examples/pca_from_scratch.py: ``jnp.linalg.svd``
(``full_matrices=False``) of centred data under ``jit`` with ``n_components`` static by name,
the same function batched by ``vmap(..., in_axes=(0, None))`` and jitted again with
``static_argnames`` naming the wrapped function's parameter (passed by position), data
rotated by the Q of ``jnp.linalg.qr`` of a normal matrix, and ``block_until_ready``.
Singular vectors are only defined up to sign, so the program returns sign-free results:
the explained variance ratios, each component's outer product and the projections'
absolute values."""
import time
from functools import partial

import jax
import jax.numpy as jnp
from jax import jit, vmap


@partial(jit, static_argnames=["n_components"])
def pca(X, n_components=2):
    mean = jnp.mean(X, axis=0)
    centred = X - mean
    U, S, Vt = jnp.linalg.svd(centred, full_matrices=False)
    components = Vt[:n_components]
    projected = centred @ components.T
    variance = S**2 / (X.shape[0] - 1)
    return projected, components, variance[:n_components] / jnp.sum(variance)


batched_pca = jit(vmap(pca, in_axes=(0, None)), static_argnames=["n_components"])


def structured(key, shape, scales, rotation):
    return (jax.random.normal(key, shape) * scales) @ rotation


def main(n_samples=400, n_features=12, batch_size=3, batch_samples=200):
    key = jax.random.PRNGKey(42)
    scales = jnp.array([10.0, 5.0] + [1.0] * (n_features - 2))
    key, sub = jax.random.split(key)
    rotation, _ = jnp.linalg.qr(jax.random.normal(sub, (n_features, n_features)))
    X = structured(key, (n_samples, n_features), scales, rotation)
    _ = pca(X, n_components=2)
    start = time.time()
    proj, comp, evr = pca(X, n_components=2)
    proj.block_until_ready()
    elapsed = time.time() - start
    key, sub = jax.random.split(key)
    X_batch = structured(sub, (batch_size, batch_samples, n_features), scales, rotation)
    _ = batched_pca(X_batch, 2)
    proj_b, comp_b, evr_b = batched_pca(X_batch, 2)
    proj_b.block_until_ready()
    outer = jnp.einsum("...ki,...kj->...kij", comp_b, comp_b)
    return (evr, jnp.abs(proj), comp[:, :, None] * comp[:, None, :], evr_b, outer,
            jnp.abs(proj_b), jnp.array(proj_b.shape), elapsed >= 0)
