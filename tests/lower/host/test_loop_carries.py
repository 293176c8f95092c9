"""Loop carries updated in place (lower/host/carries.py, kernel_aliases.py): a loop body's
large carries are donated to it, its kernels write their outputs over inputs that die there,
and neither the caller's arrays nor a loop's consts are ever written."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import executable_of, host_jit
from ptojax.lower.host.backend import CpuBackend
from ptojax.lower.host.kernel_aliases import alias_pairs
from ptojax.lower.host.program import kernel_eqns

BIG = (256, 160)     # above carries.DONATE_MIN_ELEMENTS
RNG = np.random.default_rng(0)


def momentum_epoch(p, v, g):
    def body(i, state):
        p, v = state
        v = 0.9 * v + g * (i + 1).astype(np.float32)
        return p - 1e-3 * v, v
    return pto.lax.fori_loop(0, 4, body, (p, v))


def test_a_momentum_loop_updates_its_carries_in_place():
    p, v, g = (RNG.standard_normal(BIG).astype(np.float32) for _ in range(3))
    kept = [p.copy(), v.copy(), g.copy()]
    fn = host_jit(momentum_epoch)
    expected = pto.jit(momentum_epoch, backend="interpreter")(p, v, g)
    for _ in range(2):
        got = fn(p, pnp.asarray(v), g)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)
    for a, b in zip((p, v, g), kept):
        np.testing.assert_array_equal(a, b)          # the caller's arrays are left alone
    body = executable_of(fn, p, pnp.asarray(v), g).loop_bodies[0]
    assert body.status == "compiled" and len(body.donated) == 2
    assert "# in place:" in body.program.executable.source


def test_a_const_passed_on_as_a_carry_is_copied_before_it_is_written_over():
    w, c = (RNG.standard_normal(BIG).astype(np.float32) for _ in range(2))
    kept = w.copy()

    def fn(w, c):   # carry 0 becomes the const w; the next step writes 2a + b over carry 0
        return pto.lax.fori_loop(0, 3, lambda i, s: (w, s[0] * 2.0 + s[1]), (c, c))
    numpy_tier = pto.jit(fn, backend=CpuBackend(min_elements=1 << 30))
    got = numpy_tier(w, c)
    expected = pto.jit(fn, backend="interpreter")(w, c)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(w, kept)
    assert executable_of(numpy_tier, w, c).loop_bodies[0].fresh_outputs == (False, True)


def _kernels(fn, *args):
    """(the tiled program's inputs, its kernels)."""
    tiled = pto.jit(fn).lower(*args, target=pto.targets.host_jit).tile_ir
    return tiled.ir.invars, kernel_eqns(tiled)


def test_only_outputs_computed_from_the_same_elements_may_take_an_inputs_buffer():
    x, y = (np.ones((64, 128), np.float32) for _ in range(2))
    (vx, vy), [kernel] = _kernels(lambda x, y: (y * 2.0, x + y), x, y)
    at_x, at_y = kernel.inputs.index(vx), kernel.inputs.index(vy)
    # y * 2 does not read x: its store may come before x is read, so it never takes x's buffer
    assert set(alias_pairs(kernel)) == {(0, at_y), (1, at_x), (1, at_y)}
    _, [softmax] = _kernels(lambda x: pnp.exp(x - x.max(1, keepdims=True)), x)
    assert alias_pairs(softmax) == ()               # a row reduction: several passes
    source = pto.jit(lambda x, y: (y * 2.0, x + y)).lower(
        x, y, target=pto.targets.host_jit).as_text("fused-cpp")
    assert "float* out0" in source and "float* __restrict out0" not in source
