"""Loops under the cpu backend: a scan's or while's body runs as its own tiered program
(compiled kernels once built), so a fori_loop of train steps runs compiled code; results
equal the numpy executor's, and a loop returning its operands never has them overwritten."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import executable_of
from ptojax.lower.host import backend as host_backend
from ptojax.lower.host.backend import HostExecutable

BIG = (256, 160)     # above CpuBackend.min_elements


def step(x):
    return pnp.tanh(0.5 * x + 0.25) * pnp.exp(-0.1 * x * x) + 0.5 * x


def loops(x, xs, n):
    x = pto.lax.fori_loop(0, n, lambda i, c: step(c), x)          # traced bound: a while

    def scan_body(c, s):
        c = step(c) + s
        return c, c * 2.0
    x, ys = pto.lax.scan(scan_body, x, xs, reverse=True)
    return x, ys


def test_loop_bodies_run_compiled_and_agree_with_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(BIG).astype(np.float32)
    xs = rng.standard_normal((3, *BIG)).astype(np.float32) * 0.1
    n = np.int32(4)
    fn = pto.jit(loops)
    expected = pto.jit(loops, backend="interpreter")(x, xs, n)
    first = fn(x, xs, n)
    bodies = executable_of(fn, x, xs, n).loop_bodies
    assert len(bodies) == 2
    assert all(isinstance(b, HostExecutable) for b in bodies)
    assert host_backend.wait_for_compiles(600)
    assert [b.status for b in bodies] == ["compiled", "compiled"]
    for _ in range(2 * host_backend.TRIAL_CALLS + 1):   # through the tier race
        out = fn(x, xs, n)
    for got in (first, out):
        for a, b in zip(got, expected):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


def test_a_loop_returning_its_operand_leaves_it_intact():
    x = pnp.asarray(np.ones(BIG, np.float32))
    fn = pto.jit(lambda x, n: pto.lax.fori_loop(0, n, lambda i, c: c * 2.0, x) + 1.0)
    np.testing.assert_array_equal(np.asarray(fn(x, 0)), np.full(BIG, 2, np.float32))
    np.testing.assert_array_equal(np.asarray(x), np.ones(BIG, np.float32))
