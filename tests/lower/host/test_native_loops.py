"""Loops of small arrays compiled whole (``lower/host/native_loop.py``): the program's kernel
library runs every step of the scan or while loop in one call. Each case is checked three
ways -- that the loop really is compiled whole, against the numpy executor, and against JAX."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import executable_of
from ptojax.control_flow.scan import scan_p
from ptojax.control_flow.while_loop import while_p
from ptojax.lower.host import loop_forms, native_loop
from ptojax.lower.host.backend import CpuBackend

rng = np.random.default_rng(0)


def host_jit(fn):
    """``fn`` on the cpu backend, compiled before its first call; the programs here are small,
    so their loops are all the library holds."""
    return pto.jit(fn, backend=CpuBackend(tiered=False))


def _f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --- the programs (each written once, over either library) ------------------------------------
def hmm_log_normalizer(lib, params, seq):
    """The forward pass of JAX's examples/hmm_em.py."""
    log_pi, log_A, log_B = params

    def marginalize(log_alpha, obs):
        log_alpha = lib.scipy.special.logsumexp(log_alpha[:, None] + log_A, axis=0) \
            + log_B[:, obs]
        return log_alpha, None
    log_alpha, _ = lib.lax.scan(marginalize, log_pi, seq)
    return lib.scipy.special.logsumexp(log_alpha)


def hmm_moments(lib, params, seq):
    return lib.grad(lambda p: hmm_log_normalizer(lib, p, seq))(params)


def rnn(lib, W, U, xs, h0):
    def cell(h, x):
        h = lib.numpy.tanh(W @ h + U @ x)
        return h, h.sum()
    return lib.lax.scan(cell, h0, xs)


def newton_sqrt(lib, a):
    np_ = lib.numpy

    def cond(state):
        x, i = state
        return (np_.abs(x * x - a).max() > 1e-3) & (i < 50)   # (well above float32's floor)

    def body(state):
        x, i = state
        return 0.5 * (x + a / x), i + 1
    return lib.lax.while_loop(cond, body, (a, 0))


def shuffles(lib, xs, c):
    """Reverse scan over 2-d slices: transpose, concatenate, slice, iota, min/max, converts,
    an int carry, a carry passed through and a constant output."""
    np_, lax = lib.numpy, lib.lax

    def step(carry, x):
        acc, count, kept = carry
        t = x.T                                              # (3, 4)
        both = np_.concatenate([t, t[:, ::-1]], axis=1)      # (3, 8)
        ramp = lax.broadcasted_iota(np_.int32, (3, 8), 1).astype(np_.float32)
        acc = acc + (both * ramp)[:, 1:7].min(axis=0) - both.max(axis=1).sum()
        count = count + (x > 0).sum().astype(np_.int32)
        return (acc, count, kept), ((ramp * 2.0).astype(np_.int32), 1.5)
    return lax.scan(step, (np_.zeros(6, np_.float32), np_.int32(0), c), xs, reverse=True)


def updates(lib, xs):
    """dynamic_update_slice and dynamic_slice at clamped positions, fori_loop with static
    bounds (a scan) and a captured constant."""
    np_, lax = lib.numpy, lib.lax
    table = np_.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))

    def body(i, grid):
        row = lax.dynamic_slice(xs, (i % 7, 0), (1, 4))
        grid = lax.dynamic_update_slice(grid, row * table[i % 3], (i - 2, i))
        return grid
    return lax.fori_loop(0, 9, body, np_.zeros((5, 6), np_.float32))


def trajectory(lib, A, U, x0):
    """The trajectory of JAX's examples/control.py (``X.at[t + 1].set``: a scatter), then a
    scan gathering rows by an index vector, scatter-adding (-maxing) into a carry and
    branching (cond, switch)."""
    np_, lax = lib.numpy, lib.lax
    steps = U.shape[0]

    def move(t, X):
        return X.at[t + 1].set(np_.tanh(A @ X[t]) + U[t])
    X = lax.fori_loop(0, steps, move, np_.zeros((steps + 1, x0.shape[0])).at[0].set(x0))

    def gather_scatter(c, i):
        idx = np_.stack([i % 3, (i * 2) % 5, 7])                 # 7: out of bounds
        c = c.at[idx].add(X[i, :3]).at[idx[0]].max(X[i, 0])
        c = lax.cond(c.sum() > 0, lambda c: c * 0.5, lambda c: c - 1.0, c)
        c = lax.switch(i % 3, [lambda c: c, lambda c: c + 0.25, lambda c: np_.tanh(c)], c)
        return c, X[idx, 1].sum()
    return lax.scan(gather_scatter, np_.zeros(5, np_.float32), np_.arange(steps))


def metropolis(lib, key, x0):
    """A random-walk Metropolis sampler: random draws (threefry, erf_inv) in the loop body."""
    np_, random = lib.numpy, lib.random

    def log_density(x):
        return -0.5 * (x ** 2).sum() - np_.abs(x).sum()

    def step(state, k):
        x, lp = state
        k1, k2 = random.split(k)
        proposal = x + 0.5 * random.normal(k1, x.shape)
        lp_proposal = log_density(proposal)
        accept = np_.log(random.uniform(k2)) < lp_proposal - lp
        return (np_.where(accept, proposal, x), np_.where(accept, lp_proposal, lp)), x
    return lib.lax.scan(step, (x0, log_density(x0)), random.split(key, 150))


def nested(lib, xs):
    """Loops in loops (as ``odeint``: a scan over output times, a while over steps, a scan
    over stages): a scan whose body runs a while loop whose body runs a scan."""
    np_, lax = lib.numpy, lib.lax

    def outer(c, x):
        def inner_cond(state):
            v, k = state
            return (np_.abs(v - x).max() > 1e-3) & (k < 30)

        def inner_body(state):
            v, k = state
            partial, _ = lax.scan(lambda a, w: (a + 0.5 * (w - a), None), v, np_.stack([x, x]))
            return partial, k + 1
        v, k = lax.while_loop(inner_cond, inner_body, (c, 0))
        return v * 0.9, k
    return lax.scan(outer, np_.zeros(3, np_.float32), xs)


def wrapping(lib, seed):
    """Integer arithmetic that wraps (a linear congruential generator in int32 and uint32),
    integer division and remainder: C++'s signed overflow is undefined, the facts' is not."""
    np_, lax = lib.numpy, lib.lax

    def step(i, state):
        a, u = state
        a = a * 1103515245 + 12345
        u = u * np_.uint32(2654435761) + np_.uint32(1)
        return a + (a // (i - 3)) % 7, u ^ (u >> 7)
    return lax.fori_loop(0, 40, step, (seed, seed.astype(np_.uint32)))


CASES = {
    "hmm forward": (hmm_log_normalizer,
                    lambda: ([_f32(12), _f32(12, 12), _f32(12, 30)],
                             (np.arange(200) * 7 % 30).astype(np.int32))),
    "hmm gradient": (hmm_moments,
                     lambda: ([_f32(12), _f32(12, 12), _f32(12, 30)],
                              (np.arange(200) * 11 % 30).astype(np.int32))),
    "rnn": (rnn, lambda: (_f32(16, 16, scale=0.3), _f32(16, 4, scale=0.3), _f32(50, 4),
                          np.zeros(16, np.float32))),
    "while": (newton_sqrt, lambda: (rng.uniform(1, 10, 9).astype(np.float32),)),
    "shuffles": (shuffles, lambda: (_f32(5, 4, 3), np.float32(2.5))),
    "updates": (updates, lambda: (_f32(7, 4),)),
    "metropolis": (metropolis, lambda: (np.array([0, 7], np.uint32), _f32(3))),
    "wrapping": (wrapping, lambda: (np.arange(-3, 5, dtype=np.int32) * 977,)),
    "nested": (nested, lambda: (_f32(6, 3),)),
    "trajectory": (trajectory, lambda: (_f32(4, 4, scale=0.5), _f32(12, 4), _f32(4))),
}


def _loops_compiled_whole(jitted, args) -> list:
    program = executable_of(jitted, *args).program
    return [e for e in program.tensor_runners if e.prim in (scan_p, while_p)]


def _leaves(tree):
    return [np.asarray(x) for x in pto.tree_util.tree_leaves(tree)]


@pytest.mark.parametrize("name", CASES)
def test_small_loops_run_whole_and_agree_with_numpy_and_jax(name):
    jax = pytest.importorskip("jax")
    program, make_args = CASES[name]
    rng.bit_generator.state = np.random.default_rng(sorted(CASES).index(name)).bit_generator.state
    args = make_args()
    jitted = host_jit(lambda *a: program(pto, *a))
    got = jitted(*args)
    assert _loops_compiled_whole(jitted, args), f"{name}: no loop was compiled whole"
    expected = pto.jit(lambda *a: program(pto, *a), backend="interpreter")(*args)
    with jax.enable_x64(False):          # (the session's jax fixture turns x64 on)
        reference = jax.jit(lambda *a: program(jax, *a))(*args)
    for g, e, r in zip(_leaves(got), _leaves(expected), _leaves(reference)):
        assert g.dtype == e.dtype == r.dtype and g.shape == e.shape == r.shape
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-5)


def test_odeint_runs_its_nested_loops_whole():
    """``experimental.ode.odeint`` (a scan over times, a while over adaptive steps, a scan
    over Runge-Kutta stages) is one compiled loop, and agrees with JAX's."""
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jax_odeint
    from ptojax.experimental.ode import odeint

    def make(np_, solve):
        def pendulum(y, t, b, c):
            return np_.stack([y[1], -b * y[1] - c * np_.sin(y[0])])
        return lambda y0, ts: solve(pendulum, y0, ts, 0.25, 9.8, rtol=1e-6, atol=1e-6)
    y0, ts = np.array([np.pi - 0.1, 0.0], np.float32), np.linspace(0, 5, 21, dtype=np.float32)
    jitted = host_jit(make(pnp, odeint))
    got = jitted(y0, ts)
    assert any(e.prim is scan_p for e in _loops_compiled_whole(jitted, (y0, ts)))
    with jax.enable_x64(False):
        expected = jax.jit(make(jax.numpy, jax_odeint))(y0, ts)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-4, atol=1e-4)


def test_a_zero_length_scan_returns_its_initial_carry():
    jitted = host_jit(lambda c, xs: pto.lax.scan(lambda c, x: (c * x, c), c, xs))
    c, xs = np.arange(3, dtype=np.float32), np.ones((0, 3), np.float32)
    carry, ys = jitted(c, xs)
    assert _loops_compiled_whole(jitted, (c, xs))
    np.testing.assert_array_equal(np.asarray(carry), c)
    assert ys.shape == (0, 3)


def test_nan_and_infinities_flow_as_in_numpy():
    def f(xs):
        def step(c, x):
            return pnp.maximum(c, x.max()) + pnp.minimum(0.0, x.min()), pnp.exp(x) / x
        return pto.lax.scan(step, pnp.float32(0.0), xs)
    xs = np.array([[1.0, -np.inf], [np.nan, 2.0], [0.0, np.inf]], np.float32)
    with np.errstate(all="ignore"):
        expected = pto.jit(f, backend="interpreter")(xs)
    got = host_jit(f)(xs)
    for g, e in zip(_leaves(got), _leaves(expected)):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_large_or_unsupported_bodies_keep_their_own_programs():
    big = lambda c, x: (c + x, c)                              # noqa: E731
    unsupported = lambda c, x: (c + pnp.sort(x), c)            # noqa: E731
    small_xs = np.zeros((3, 8), np.float32)
    large_xs = np.zeros((3, loop_forms.MAX_ELEMENTS + 1), np.float32)
    for body, xs in ((big, large_xs), (unsupported, small_xs)):
        eqn = next(e for e in pto.make_ir(lambda xs: pto.lax.scan(body, xs[0], xs))(xs).ir.eqns
                   if e.prim is scan_p)
        assert not native_loop.compiles_whole(eqn)
    jitted = host_jit(lambda xs: pto.lax.scan(unsupported, xs[0], xs))
    np.testing.assert_array_equal(np.asarray(jitted(small_xs)[0]), np.zeros(8))


def test_the_loop_function_is_in_the_program_source():
    jitted = host_jit(lambda c, xs: pto.lax.scan(lambda c, x: (c + x, c * 2.0), c, xs))
    args = (np.zeros(4, np.float32), np.ones((6, 4), np.float32))
    jitted(*args)
    source = executable_of(jitted, *args).program.source
    assert f"namespace {native_loop.NAMESPACE}" in source and "loop_0(void* const* args)" in source
