"""``pto.core`` against ``jax.core``: reachable after ``import ptojax`` with a source file (JAX's
examples/hmm_em.py reads ``jax.core.__file__``), ``Tracer`` is the class of traced values
under jit, grad and vmap and not of concrete arrays, ``ShapedArray`` is what a jaxpr's
avals are, and ``eval_jaxpr`` evaluates a jaxpr with its consts, eagerly and under jit."""
import os

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close


def test_core_is_loaded_with_the_package(jax):
    for lib in (pto, jax):
        assert os.path.isfile(lib.core.__file__)
        assert {"ShapedArray", "Tracer", "ensure_compile_time_eval", "eval_jaxpr"} <= set(
            dir(lib.core))


def _tracer_flags(lib):
    seen = []

    def f(x):
        seen.append(isinstance(x, lib.core.Tracer))
        return x * 2.0
    x = lib.numpy.ones(3)
    lib.jit(f)(x)
    lib.grad(lambda x: f(x).sum())(x)
    lib.vmap(f)(x)
    f(x)
    f(np.ones(3, np.float32))
    return seen


def test_tracer_is_the_class_of_traced_values(jax):
    assert _tracer_flags(pto) == _tracer_flags(jax) == [True, True, True, False, False]


def _jaxpr_results(lib):
    w = lib.numpy.array([1.0, -2.0, 0.5])
    closed = lib.make_jaxpr(lambda x: lib.numpy.tanh(x) * w + x.sum())(lib.numpy.zeros(3))
    avals = [(a.shape, np.dtype(a.dtype)) for a in (*closed.in_avals, *closed.out_avals)]
    assert all(isinstance(a, lib.core.ShapedArray) for a in closed.in_avals)
    x = np.array([0.3, -1.0, 2.0], np.float32)
    eager = lib.core.eval_jaxpr(closed.jaxpr, closed.consts, x)
    jitted = lib.jit(lambda y: lib.core.eval_jaxpr(closed.jaxpr, closed.consts, y))(x)
    assert type(eager) is list and len(eager) == 1
    return avals, np.asarray(eager[0]), np.asarray(jitted[0])


def test_eval_jaxpr_matches_jax(jax):
    ours = _jaxpr_results(pto)
    with jax.enable_x64(False):
        theirs = _jaxpr_results(jax)
    assert ours[0] == theirs[0]
    assert_close(ours[1:], theirs[1:], rtol=1e-6, atol=1e-6)


def test_eval_jaxpr_rejects_a_closed_jaxpr_and_wrong_consts():
    closed = pto.make_jaxpr(lambda x: x * pnp.array([1.0, 2.0]))(pnp.zeros(2))
    with pytest.raises(TypeError, match="got ClosedIR"):
        pto.core.eval_jaxpr(closed, closed.consts, pnp.ones(2))
    with pytest.raises(TypeError, match="constvars"):
        pto.core.eval_jaxpr(closed.jaxpr, (), pnp.ones(2))


def test_ensure_compile_time_eval_is_the_top_level_one(jax):
    assert pto.core.ensure_compile_time_eval is pto.ensure_compile_time_eval
    assert jax.core.ensure_compile_time_eval is jax.ensure_compile_time_eval


def _typeofs(lib):
    seen = []
    lib.jit(lambda x, y: seen.append(lib.typeof(x)) or seen.append(lib.typeof(y)) or x)(
        1.0, np.ones(2, np.int32))
    values = [np.ones((2, 3), np.float32), 1.0, 3, lib.numpy.arange(3)]
    return [(isinstance(t, lib.core.ShapedArray), str(t), repr(t), t.shape, np.dtype(t.dtype),
             t.weak_type) for t in [*map(lib.typeof, values), *seen]]


def test_typeof_is_a_shaped_array_shown_as_jax_shows_it(jax):
    with jax.enable_x64(False):
        theirs = _typeofs(jax)
    assert _typeofs(pto) == theirs
