"""``pto.scipy.cluster.vq``: JAX's vector quantization, ``vq``: each observation's nearest
code (Euclidean distance) in a code book."""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray
from ptojax.public import add_examples, dir_function


def vq(obs, code_book, check_finite=True):
    """``(code, dist)``: for each row of ``obs`` (M, N) the index of the nearest row of
    ``code_book`` (K, N) and its distance; 1-d inputs are length-1 vectors.
    ``check_finite`` is unused, as in JAX."""
    obs = asarray(obs, op="scipy.cluster.vq.vq")
    code_book = asarray(code_book, op="scipy.cluster.vq.vq")
    dtype = pnp.result_type(obs, code_book)
    if not pnp.issubdtype(dtype, pnp.inexact):
        dtype = pnp.result_type(dtype, pnp.float32)
    obs, code_book = obs.astype(dtype), code_book.astype(dtype)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = pnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = pnp.argmin(dist, axis=-1)
    return code, pnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]


__all__ = ["vq"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
vq:
    >>> from ptojax.scipy.cluster.vq import vq
    >>> codes, dist = vq(pnp.array([[1.0, 1.0], [4.0, 5.0]]),
    ...                  pnp.array([[0.0, 1.0], [4.0, 4.0], [9.0, 9.0]]))
    >>> codes, dist
    (Array([0, 1], dtype=int32), Array([1., 1.], dtype=float32))
""")
