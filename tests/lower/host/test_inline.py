"""The cpu backend splices the bodies of custom_jvp/custom_vjp calls (and of checkpoints that
allow CSE) into its program, so they tile with their neighbours; values and gradients do not
change, and a checkpoint that prevents CSE keeps its call."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.host.backend import CpuBackend, HostExecutable
from ptojax.lower.host.inline import inline_calls


@pto.custom_jvp
def twice(x):                       # returns one computed value twice
    y = pnp.sin(x)
    return y, y


twice.defjvp(lambda p, t: (twice(p[0]), (pnp.cos(p[0]) * t[0], pnp.cos(p[0]) * t[0])))


@pto.custom_jvp
def same(x):                        # returns its input unchanged
    return x


same.defjvp(lambda p, t: (same(p[0]), 3.0 * t[0]))


@pto.custom_vjp
def scaled(x):
    return 2.0 * x


scaled.defvjp(lambda x: (scaled(x), None), lambda _, ct: (5.0 * ct,))


def model(x):
    a, b = twice(x)
    return pnp.sum(pto.nn.softplus(a) + b * same(x) + scaled(x) + pnp.logaddexp(x, a))


def _prims(closed):
    return {e.prim.name for e in closed.ir.eqns}


def test_user_derivative_calls_are_inlined_with_the_same_values_and_gradients():
    x = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
    for fn in (model, pto.grad(model)):
        closed = pto.make_ir(fn)(x)
        assert {"custom_jvp_call", "custom_vjp_call"} & _prims(closed) or fn is not model
        executable = HostExecutable(closed, CpuBackend(min_elements=1 << 30))
        assert not {"custom_jvp_call", "custom_vjp_call"} & _prims(executable.closed)
        expected = pto.jit(fn, backend="interpreter")(x)
        np.testing.assert_allclose(executable.run(x)[0], np.asarray(expected), rtol=1e-5,
                                   atol=1e-6)
    grads = np.asarray(pto.jit(pto.grad(model))(x))
    np.testing.assert_allclose(grads, np.asarray(pto.grad(model)(x)), rtol=1e-5, atol=1e-6)


def test_a_checkpoint_inlines_only_without_prevent_cse():
    x = np.ones((4, 4), np.float32)
    for prevent_cse, kept in ((True, True), (False, False)):
        fn = pto.checkpoint(lambda v: pnp.sin(v) * 2.0, prevent_cse=prevent_cse)
        closed = inline_calls(pto.make_ir(pto.grad(lambda v: pnp.sum(fn(v))))(x))
        assert ("checkpoint" in _prims(closed)) is kept
