"""Two per-call costs of the numpy executor that a loop body pays on every step: a
``broadcast_in_dim`` read only by ufuncs with a full-shape operand is left to numpy's own
broadcasting (a view with the output's rank where it does not fill the trailing
dimensions: a row max or sum subtracted from its rows), and scalar arithmetic on literals in
a body (index normalisation of a static slice start) is folded once. Values against JAX."""
import re

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.eval.executable import Executable
from ptojax.optimize import optimize
from helpers import assert_close


def _normalized(lib, x):
    """Broadcasts of every kind into ufuncs: a row max subtracted from its rows (keepdims:
    trailing), a sum's cotangent spread back over its axis (dims (0, 2) of three: a view),
    a vector into the middle axis (dims (1,)) and one in the trailing axis."""
    jnp, lax = lib.numpy, lib.lax
    m = jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(x - m)
    p = e / jnp.sum(e, axis=1, keepdims=True)
    g = lib.grad(lambda x: (jnp.sum(x, axis=1) ** 2).sum())(x)
    mid = x * lax.broadcast_in_dim(x[0, :, 0], x.shape, (1,))
    last = x + lax.broadcast_in_dim(x[1, 2], x.shape, (2,))
    return p, g, mid, last


def test_broadcasts_into_ufuncs_match_jax_and_are_views(jax):
    x = np.random.default_rng(0).normal(size=(3, 5, 4)).astype(np.float32)
    ours = pto.jit(lambda x: _normalized(pto, x))(x)
    with jax.enable_x64(False):
        theirs = jax.jit(lambda x: _normalized(jax, x))(x)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
    closed = optimize(pto.make_jaxpr(lambda x: _normalized(pto, x))(x))
    run = Executable(closed)
    assert_close(run(x), theirs, rtol=1e-6, atol=1e-6)
    lines = run.source.splitlines()
    # into sub and mul: an alias (keepdims, trailing) and a view (dims (1,) of three)
    assert sum(bool(re.fullmatch(r" +v\d+ = v\d+", line)) for line in lines) >= 2
    assert sum(".reshape((1, 5, 1))" in line for line in lines) == 1


def test_broadcast_read_by_a_non_ufunc_stays():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    closed = optimize(pto.make_jaxpr(lambda x: pnp.max(x, axis=1, keepdims=True)
                                     * pnp.ones((2, 3)) @ pnp.ones((3, 2)))(x))
    got = Executable(closed)(x)[0]
    np.testing.assert_array_equal(got, np.full((2, 2), [[6.0], [15.0]], np.float32))


def _body_literal_only_eqns(closed):
    scan = next(e for e in closed.ir.eqns if e.prim.name == "scan")
    body = scan.params["body"]
    from ptojax.ir.core import Literal
    return [e for e in body.ir.eqns if all(type(a) is Literal for a in e.inputs)
            and all(v.type.shape == () for v in e.outputs)
            and not e.prim.multiple_results]


@pytest.mark.parametrize("lib_name", ["pto", "jax"])
def test_scan_body_literal_arithmetic_is_folded(lib_name, jax):
    table = np.arange(40.0, dtype=np.float32).reshape(4, 10)

    def f(lib, seq):
        t = lib.numpy.asarray(table)

        def step(c, i):
            return c + t[:, i], c.sum()    # slice start 0 of ':' normalised on literals
        return lib.lax.scan(step, lib.numpy.zeros(4), seq)
    seq = np.array([3, -1, 7, 0], np.int32)
    if lib_name == "jax":
        with jax.enable_x64(False):
            want = jax.jit(lambda s: f(jax, s))(seq)
        got = pto.jit(lambda s: f(pto, s))(seq)
        assert_close(got, want, rtol=0, atol=0)
        return
    closed = pto.make_jaxpr(lambda s: f(pto, s))(seq)
    assert _body_literal_only_eqns(closed)          # traced: index arithmetic on literals
    assert not _body_literal_only_eqns(optimize(closed))
