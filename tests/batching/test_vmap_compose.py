"""vmap composed with the other transforms, against JAX: per-example gradients of an MLP
(vmap(grad)), grad(vmap), jit(vmap), vmap(vmap), vmap(jvp), the Jacobians built on vmap
(jacfwd/jacrev/hessian), and the call primitives (custom_jvp, custom_vjp, checkpoint)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RTOL = 2e-5


def _mlp_params(rng, sizes):
    return [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
             (0.1 * rng.standard_normal(n)).astype(np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def _mlp_loss(np_, nn):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return -np_.sum(nn.log_softmax(logits) * nn.one_hot(y, logits.shape[-1]))
    return loss


@pytest.fixture(scope="module")
def mlp():
    rng = np.random.default_rng(0)
    params = _mlp_params(rng, [6, 8, 8, 4])
    x = rng.standard_normal((5, 6)).astype(np.float32)
    y = rng.integers(0, 4, 5).astype(np.int32)
    return params, x, y


def test_per_example_gradients_of_an_mlp_match_jax(jax, jnp, mlp):
    params, x, y = mlp
    ours = pto.jit(pto.vmap(pto.grad(_mlp_loss(pnp, pto.nn)), in_axes=(None, 0, 0)))
    theirs = jax.jit(jax.vmap(jax.grad(_mlp_loss(jnp, jax.nn)), in_axes=(None, 0, 0)))
    assert_close(ours(params, x, y), theirs(params, x, y), rtol=RTOL, atol=RTOL, check_dtype=False)
    loop = [pto.grad(_mlp_loss(pnp, pto.nn))(params, x[k], y[k]) for k in range(len(x))]
    stacked = pto.tree_util.tree_map(lambda *g: np.stack([np.asarray(a) for a in g]), *loop)
    assert_close(ours(params, x, y), stacked, rtol=RTOL, atol=RTOL, check_dtype=False)


def test_grad_of_a_vmapped_loss_matches_jax(jax, jnp, mlp):
    params, x, y = mlp

    def batch_loss(vmap, grad_of, loss):
        return grad_of(lambda p: vmap(loss, in_axes=(None, 0, 0))(p, x, y).mean())

    ours = batch_loss(pto.vmap, pto.grad, _mlp_loss(pnp, pto.nn))(params)
    theirs = jax.jit(batch_loss(jax.vmap, jax.grad, _mlp_loss(jnp, jax.nn)))(params)
    assert_close(ours, theirs, rtol=RTOL, atol=RTOL, check_dtype=False)


def test_jit_and_vmap_compose_in_both_orders(jax, jnp):
    x = np.random.default_rng(1).standard_normal((3, 4, 5))

    def f(np_):
        return lambda a: np_.sum(np_.sin(a) @ a.T, axis=0)

    want = jax.vmap(f(jnp))(x)
    assert_close(pto.jit(pto.vmap(f(pnp)))(x), want)
    assert_close(pto.vmap(pto.jit(f(pnp)))(x), want)

    def g(np_):
        return lambda a: np_.sin(a) * np_.sum(a)

    assert_close(pto.vmap(pto.vmap(g(pnp), in_axes=1), in_axes=2)(x),
                 jax.vmap(jax.vmap(g(jnp), in_axes=1), in_axes=2)(x))


def test_vmap_of_jvp_and_jvp_of_vmap(jax, jnp):
    rng = np.random.default_rng(2)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def f(np_):
        return lambda a: np_.tanh(a) * np_.sum(a ** 2)

    ours = pto.vmap(lambda a, b: pto.jvp(f(pnp), (a,), (b,)))(x, t)
    assert_close(ours, jax.vmap(lambda a, b: jax.jvp(f(jnp), (a,), (b,)))(x, t), rtol=1e-12, atol=1e-12, check_dtype=False)
    ours = pto.jvp(pto.vmap(f(pnp)), (x,), (t,))
    assert_close(ours, jax.jvp(jax.vmap(f(jnp)), (x,), (t,)), rtol=1e-12, atol=1e-12, check_dtype=False)


def _jacobian_fn(np_):
    def f(p, x):
        return {"y": np_.sin(p["a"] * x) @ p["m"], "z": np_.sum(p["a"] ** 3)}
    return f


@pytest.mark.parametrize("which", ["jacfwd", "jacrev", "hessian"])
def test_jacobians_built_on_vmap_match_jax(jax, jnp, which):
    rng = np.random.default_rng(3)
    p = {"a": rng.standard_normal(3), "m": rng.standard_normal((3, 2))}
    x = rng.standard_normal(3)
    ours = getattr(pto, which)(_jacobian_fn(pnp))(p, x)
    theirs = jax.jit(getattr(jax, which)(_jacobian_fn(jnp)))(p, x)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-10, check_dtype=False)
    ours = getattr(pto, which)(_jacobian_fn(pnp), argnums=(0, 1))(p, x)
    theirs = jax.jit(getattr(jax, which)(_jacobian_fn(jnp), argnums=(0, 1)))(p, x)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-10, check_dtype=False)


def test_vmap_of_a_jacobian_matches_jax(jax, jnp):
    xs = np.random.default_rng(4).standard_normal((5, 3))

    def f(np_):
        return lambda a: np_.tanh(a) * np_.sum(a)

    assert_close(pto.vmap(pto.jacrev(f(pnp)))(xs), jax.jit(jax.vmap(jax.jacrev(f(jnp))))(xs))
    assert_close(pto.vmap(pto.hessian(lambda a: pnp.sum(f(pnp)(a))))(xs),
                 jax.jit(jax.vmap(jax.hessian(lambda a: jnp.sum(f(jnp)(a)))))(xs), rtol=1e-10)


# the call primitives -------------------------------------------------------------------------
def _custom_functions(m, np_):
    """custom_jvp/custom_vjp functions whose rules deliberately differ from the true
    derivative (so the tests see that the rule, not the body, was differentiated), and a
    checkpointed region."""
    @m.custom_jvp
    def f(w, x):
        return np_.sin(w * x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (w, x), (tw, tx) = primals, tangents
        return f(w, x), 3.0 * (tw * x + w * tx)

    @m.custom_vjp
    def g(w, x):
        return np_.tanh(w * x)

    def g_fwd(w, x):
        return np_.tanh(w * x), (w, x)

    def g_bwd(res, ct):
        w, x = res
        return 2.0 * ct * x, 5.0 * ct * w

    g.defvjp(g_fwd, g_bwd)
    h = m.checkpoint(lambda w, x: np_.sin(np_.cos(w * x)) * w)
    return {"custom_jvp": f, "custom_vjp": g, "checkpoint": h}


COMPOSITIONS = {
    "vmap": lambda t, F: t.vmap(F, in_axes=(None, 0)),
    "vmap(grad)": lambda t, F: t.vmap(t.grad(lambda w, x: F(w, x).sum(), argnums=(0, 1)),
                                      in_axes=(None, 0)),
    "grad(vmap)": lambda t, F: t.grad(lambda w, x: t.vmap(F, in_axes=(None, 0))(w, x).sum()),
    "jit(vmap(grad))": lambda t, F: t.jit(t.vmap(t.grad(lambda w, x: F(w, x).sum()),
                                                 in_axes=(None, 0))),
    "jacfwd(vmap)": lambda t, F: lambda w, x: t.jacfwd(
        lambda w: t.vmap(F, in_axes=(None, 0))(w, x))(w),
}


@pytest.mark.parametrize("call, composition", [
    (call, composition) for call in ("custom_jvp", "custom_vjp", "checkpoint")
    for composition in sorted(COMPOSITIONS)
    if (call, composition) != ("custom_vjp", "jacfwd(vmap)")])  # reverse mode only, as JAX
def test_call_primitives_under_vmap_match_jax(jax, jnp, call, composition):
    rng = np.random.default_rng(5)
    w, xs = rng.standard_normal(3), rng.standard_normal((4, 3))
    ours = COMPOSITIONS[composition](pto, _custom_functions(pto, pnp)[call])(w, xs)
    theirs = jax.jit(COMPOSITIONS[composition](jax, _custom_functions(jax, jnp)[call]))(w, xs)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12, check_dtype=False)
