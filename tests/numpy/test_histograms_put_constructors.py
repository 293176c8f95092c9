"""histogram family, put/put_along_axis/place, block, fromfunction, frombuffer/fromstring,
mask_indices against jax.numpy: values and dtypes eagerly, under jit and as IR; a gradient
and a vmap; JAX's errors (inplace=True, bad shapes, fromiter)."""
import numpy as np
import pytest

import ptojax.numpy as pnp
from ptojax.errors import ShapeError
from pnp_reference import check, check_grad, check_modes, check_vmap


def _histogram_calls(m, a, w):
    return [*m.histogram(a, 4), *m.histogram(a, 3, range=(0, 6), density=True),
            *m.histogram(a, np.array([0.0, 1, 4, 9], np.float32), weights=w),
            m.histogram_bin_edges(a, 5), m.histogram_bin_edges(a[:1], 2),
            *m.histogram2d(a, w, bins=(2, 3)), *m.histogram2d(a, a, bins=[0.0, 1, 5, 8]),
            *m.histogram2d(a, w, bins=2, weights=w, density=True),
            m.histogramdd(m.stack([a, w, a]).T, bins=(2, 1, 3), range=[(0, 4), None, (-5, 5)])[0]]


def test_histograms_match_jax(jnp):
    a = np.array([1.0, 2.0, 2.5, 5.0, -3, 7, 2.0, 0.5], np.float32)
    w = np.linspace(0, 1, 8, dtype=np.float32)
    check_modes(lambda x, y: _histogram_calls(pnp, x, y),
                lambda x, y: _histogram_calls(jnp, x, y), a, w)
    check_grad(lambda y: pnp.histogram(a, 3, weights=y, density=True)[0],
               lambda y: jnp.histogram(a, 3, weights=y, density=True)[0], w)
    with pytest.raises(NotImplementedError):
        pnp.histogram(a, "auto")
    with pytest.raises(ValueError):
        pnp.histogram(a, 3, weights=w[:2])


def _put_calls(m, a, i, v):
    return [m.put(a, i, v, inplace=False), m.put(a, i, 9.0, mode="clip", inplace=False),
            m.put(a, i, v[:1], mode="wrap", inplace=False),
            m.put_along_axis(a, i[:3].reshape(3, 1) % 4, v[0], axis=1, inplace=False),
            m.put_along_axis(a, i.reshape(1, 4), v, axis=0, inplace=False, mode="clip"),
            m.put_along_axis(a, i[:3], 3.0, axis=None, inplace=False),
            m.place(a, a > 5, v[:3], inplace=False), m.place(a, a, v, inplace=False)]


def test_put_family_matches_jax(jnp):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([0, 5, 20, -1], np.int32)
    v = np.array([7.0, 8.0, -1.0, 2.0], np.float32)
    check_modes(lambda *x: _put_calls(pnp, *x), lambda *x: _put_calls(jnp, *x), a, i, v)
    check_grad(lambda x, y: pnp.put(x, i[:2], y[:2], inplace=False) * y[3],
               lambda x, y: jnp.put(x, i[:2], y[:2], inplace=False) * y[3], a, v)
    check_vmap(lambda x, y: pnp.put_along_axis(x, i[:1] % 3, y, axis=0, inplace=False),
               lambda x, y: jnp.put_along_axis(x, i[:1] % 3, y, axis=0, inplace=False),
               a.T, v)
    for m in (pnp, jnp):
        for call in [lambda: m.put(a, i, v), lambda: m.place(a, a > 1, v),
                     lambda: m.put_along_axis(a, i.reshape(1, 4), v, axis=0),
                     lambda: m.put_along_axis(a, i, v, axis=0, inplace=False),
                     lambda: m.place(a, a[0] > 1, v, inplace=False),
                     lambda: m.place(a, a > 1, v[:0], inplace=False)]:
            with pytest.raises(ValueError):
                call()
    with pytest.raises(NotImplementedError):
        pnp.put(a, i, v, mode="raise", inplace=False)


def _constructor_calls(m, a, b):
    return [m.block([[a, b[:, :1]], [b[:1], 7.0]]), m.block([a[0], b[0], 3.0]),
            m.block([[[a]], [[b]]]), m.block(a),
            m.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=np.int32),
            m.fromfunction(lambda i, j, k: i + j * k, (2, 1, 3)),
            *m.mask_indices(3, m.triu, 1, size=3), *m.mask_indices(4, m.tril, -1, size=8)]


def test_block_fromfunction_mask_indices_match_jax(jnp):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = -a
    check_modes(lambda *x: _constructor_calls(pnp, *x),
                lambda *x: _constructor_calls(jnp, *x), a, b)
    check_grad(lambda x, y: pnp.block([[x, y], [y, x]]),
               lambda x, y: jnp.block([[x, y], [y, x]]), a, b)
    for m in (pnp, jnp):
        for bad in [lambda: m.block([]), lambda: m.block((a, b)), lambda: m.block([[a], b])]:
            with pytest.raises(ValueError):
                bad()
    with pytest.raises(ShapeError, match="tuples"):
        pnp.block((a, b))
    for got, want in zip(pnp.mask_indices(4, pnp.triu, 1), jnp.mask_indices(4, jnp.triu, 1)):
        check(got, want, index=True)


def test_host_constructors_match_jax(jnp):
    data = np.arange(5, dtype=np.float32).tobytes()
    for call in [lambda m: m.frombuffer(data, dtype=np.float32),
                 lambda m: m.frombuffer(data, dtype=np.int16, count=3, offset=2),
                 lambda m: m.frombuffer(np.arange(3.0).tobytes()),
                 lambda m: m.fromstring("1 2 3", dtype=int, sep=" "),
                 lambda m: m.fromstring("1.5,2", sep=",")]:
        check(call(pnp), call(jnp), what="host")
    for m in (pnp, jnp):
        with pytest.raises(NotImplementedError):
            m.fromiter(iter([1, 2]), dtype=float)
        with pytest.raises(NotImplementedError):
            m.fromfile("x.bin")
    host = np.arange(6, dtype=np.int16).reshape(2, 3)
    check(pnp.from_dlpack(host), jnp.from_dlpack(host), (host,), what="from_dlpack")
