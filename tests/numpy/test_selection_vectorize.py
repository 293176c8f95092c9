"""select, choose, piecewise, vectorize (signature=, excluded=), apply_along_axis,
apply_over_axes, copy and the type predicates against jax.numpy: values and dtypes eagerly,
under jit and as IR; gradients and vmap where JAX differentiates; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ConcretizationError, ShapeError
from pnp_reference import check_grad, check_modes, check_vmap


def _select_calls(m, x, i):
    return [m.select([x < 0, x > 1], [x, x * 2]), m.select([x > 0], [i], default=2.5),
            m.select([i, x[0] < 0], [3, 4]), m.select([x < 0], [1.0]),
            m.choose(i % 3, [x, x * 10, -x], mode="wrap"),
            m.choose(i, [x[0], 1, 2.0], mode="clip"), m.choose(i % 2, [i, i * 3], mode="wrap"),
            m.piecewise(x, [x < 0, x > 1], [lambda v: -v, 1.0, lambda v: v * v]),
            m.piecewise(x, [x < 0, x > -1], [lambda v, s: v * s, 7], 3.0),
            m.piecewise(i, [i > 0], [lambda v: v * 2.7])]


def test_select_choose_piecewise_match_jax(jnp):
    x = np.array([[-2.0, 0.5, 3.0], [1.5, -0.5, 0.0]], np.float32)
    i = np.array([[0, 2, 1], [5, -1, 1]], np.int32)
    check_modes(lambda a, b: _select_calls(pnp, a, b), lambda a, b: _select_calls(jnp, a, b),
                x, i)


def test_select_choose_piecewise_grad_and_choose_raise_match_jax(jnp):
    x = np.array([-2.0, 0.5, 3.0, 1.5], np.float32)
    check_grad(lambda a: pnp.select([a < 0, a > 1], [a * a, a * 3], default=a),
               lambda a: jnp.select([a < 0, a > 1], [a * a, a * 3], default=a), x)
    check_grad(lambda a: pnp.piecewise(a, [a < 0], [lambda v: v ** 3, pnp.sin]),
               lambda a: jnp.piecewise(a, [a < 0], [lambda v: v ** 3, jnp.sin]), x)
    pw = lambda m: lambda a: m.piecewise(a, [a < 0, a > 1], [lambda v: v * v, 7.0, m.cos])
    check_vmap(pw(pnp), pw(jnp), x.reshape(2, 2))
    sel = lambda m: lambda a, j: m.select([a < 0], [a * 2], a) + m.choose(j, [a, -a], mode="clip")
    check_vmap(sel(pnp), sel(jnp), x.reshape(2, 2), np.array([[0, 1], [2, -1]], np.int32))
    k = np.array([1, 0, 1, 1], np.int32)
    np.testing.assert_array_equal(pnp.choose(k, [x, -x]), jnp.choose(k, [x, -x]))
    with pytest.raises(ConcretizationError, match="mode='wrap'"):
        pto.jit(lambda j: pnp.choose(j, [x, -x]))(k)
    for m in (pnp, jnp):
        with pytest.raises(ValueError, match="invalid entry"):
            m.choose(k + 1, [x, -x])
        with pytest.raises(ValueError, match="integer"):
            m.choose(x, [x, -x])
        with pytest.raises(ValueError, match="length"):
            m.select([x > 0], [x, x])
        with pytest.raises(ValueError, match="functions"):
            m.piecewise(x, [x > 0], [1, 2, 3])


def _vectorize_calls(m, a, b):
    inner = m.vectorize(lambda u, v: (u * v).sum(), signature="(n),(n)->()")
    outer = m.vectorize(lambda u, v: (u[:, None] * v[None, :], u.sum()),
                        signature="(n),(k)->(n,k),()")
    scaled = m.vectorize(lambda u, s, mode: u * s if mode == "mul" else u + s, excluded={2})
    return [inner(a, b), inner(a[:1], b[0]), *outer(a, b[:, :2]), scaled(a, 2.0, "mul"),
            scaled(a[0], b[:, :1], "add"), m.vectorize(lambda u: u * 2)(a),
            m.vectorize(lambda u, v: u - v)(a[:, :1], b[0]),
            m.vectorize(lambda u, c=None: u if c is None else u + c)(a, None),
            m.apply_along_axis(lambda v: v[::-1] * v[0], 1, a),
            m.apply_along_axis(lambda v, s: (v * s).sum(), 0, a, 3.0),
            m.apply_along_axis(lambda v: m.outer(v, v), -1, b[:, :2]),
            m.apply_over_axes(m.sum, a, [0, 1]), m.apply_over_axes(m.mean, a, (1,))]


def test_vectorize_and_apply_match_jax(jnp):
    a = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
    b = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    check_modes(lambda x, y: _vectorize_calls(pnp, x, y),
                lambda x, y: _vectorize_calls(jnp, x, y), a, b)


def test_vectorize_grad_vmap_and_errors_match_jax(jnp):
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 3
    norm = lambda m: m.vectorize(lambda u: m.sqrt((u * u).sum()), signature="(n)->()")
    check_grad(lambda x: norm(pnp)(x), lambda x: norm(jnp)(x), a)
    check_vmap(lambda x: norm(pnp)(x), lambda x: norm(jnp)(x), a[None].repeat(2, 0))
    bad = [lambda m: m.vectorize(lambda u: u, signature="(n)->(n)")(a[0], a[0]),
           lambda m: m.vectorize(lambda u, v: u, signature="(n),(n)->()")(a, a[:, :2]),
           lambda m: m.vectorize(lambda u: u, signature="(n)->()")(a),
           lambda m: m.vectorize(lambda u: u, signature="n->()")(a)]
    for make in bad:
        for m in (pnp, jnp):
            with pytest.raises((TypeError, ValueError)):
                make(m)
    with pytest.raises(TypeError, match="excluded"):
        pnp.vectorize(lambda u, y=1.0: u + y)(a, y=5.0)  # JAX ignores y silently
    with pytest.raises(TypeError):
        pnp.vectorize(lambda u: u, excluded={1.5})
    with pytest.raises(ShapeError):
        pnp.apply_over_axes(lambda x, ax: x.sum(), a, [0])


def test_copy_and_type_predicates_match_jax(jnp):
    x = np.arange(3, dtype=np.int16)
    check_modes(lambda v: pnp.copy(v) * 2, lambda v: jnp.copy(v) * 2, x)
    with pytest.raises(NotImplementedError):
        pnp.copy(x, order="F")
    values = [1, 2.5, True, np.float32(1), x, x[0], [1, 2], "s", None, pnp.ones(()),
              pnp.ones(2)]
    for v in values:
        j = jnp.asarray(v) if isinstance(v, pnp.ndarray) else v
        assert pnp.isscalar(v) == jnp.isscalar(j), v
        assert pnp.iterable(v) == jnp.iterable(j), v
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("bool", "real floating"), np.int16, pnp.float32]
    for dt in [pnp.bool_, pnp.int8, pnp.uint32, pnp.float16, pnp.bfloat16, pnp.float64,
               pnp.complex64, pnp.float8_e5m2]:
        for kind in kinds:
            assert pnp.isdtype(dt, kind) == jnp.isdtype(dt, kind), (dt, kind)
        for to in [pnp.int32, pnp.float32, pnp.complex64, pnp.bfloat16]:
            for casting in ("safe", "same_kind", "unsafe"):
                assert pnp.can_cast(dt, to, casting) == jnp.can_cast(dt, to, casting)
    with pytest.raises(ValueError):
        pnp.isdtype(pnp.int8, "integer kinds")
    assert pnp.euler_gamma == jnp.euler_gamma
