"""Tensor equations of a compiled host program that read no input (an iota, what is computed
from it alone) are evaluated once when the program is built (lower/host/input_free.py)."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import executable_of, host_jit
from ptojax.ops.slicing import iota_p
from ptojax.tile.kernel import tile_kernel_p


def scrambled(key, x, y):
    return pto.random.bits(key, x.shape) ^ x, pnp.tanh(y) * 2.0   # tanh: a kernel


def program_eqns(executable):
    return executable.program.executable.closed.ir.eqns


def test_random_bits_from_folded_counters_are_jaxs(jax):
    x = np.arange(320, dtype=np.uint32).reshape(32, 10) * np.uint32(2654435761)
    y = np.ones((32, 10), np.float32)
    fn = host_jit(scrambled)
    for seed in (0, 42):
        got, _ = fn(pto.random.PRNGKey(seed), x, y)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(
            jax.random.bits(jax.random.PRNGKey(seed), x.shape, "uint32") ^ x))
    executable = executable_of(fn, pto.random.PRNGKey(0), x, y)
    assert not any(e.prim is iota_p for e in program_eqns(executable))
    consts = executable.program.executable.closed.consts   # the counters: never written
    assert consts and not any(c.flags.writeable for c in consts)


def test_a_loop_bodys_input_free_arrays_are_computed_once_and_stay_intact():
    def epoch(x):
        def body(i, carry):
            ramp = pnp.arange(4096, dtype=pnp.float32).reshape(64, 64)
            return carry * 0.5 + ramp + i.astype(pnp.float32)
        return pto.lax.fori_loop(0, 4, body, x)
    x = np.ones((64, 64), np.float32)
    fn = host_jit(epoch)
    want = np.asarray(pto.jit(epoch, backend="interpreter")(x))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(fn(x)), want)
    [body] = executable_of(fn, x).loop_bodies
    assert body.status == "compiled"
    assert not any(e.prim is iota_p for e in program_eqns(body))
    assert any(e.prim is tile_kernel_p for e in program_eqns(body))


def test_large_input_free_arrays_are_left_to_run_time():
    from ptojax.lower.host.input_free import MAX_ELEMENTS
    n = 2 * MAX_ELEMENTS

    def f(key, y):
        return pto.random.bits(key, (n,)), pnp.tanh(y)
    key, y = pto.random.PRNGKey(0), np.ones(n, np.float32)
    fn = host_jit(f)
    np.testing.assert_array_equal(np.asarray(fn(key, y)[0]),
                                  np.asarray(pto.jit(f, backend="interpreter")(key, y)[0]))
    assert any(e.prim is iota_p for e in program_eqns(executable_of(fn, key, y)))
