"""Gradients of whole models against JAX: an MLP, softmax cross-entropy with integer labels,
layer norm, causal self-attention and logsumexp — eagerly and under jit. The model code is
written once against a numpy-like module (``pnp`` or ``jax.numpy``) and an nn module."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import nn
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(7)
BATCH, FEATURES, CLASSES, SEQ, HEAD = 6, 5, 4, 7, 3


def _params(sizes, dtype=np.float64):
    return [(RNG.standard_normal((m, n)).astype(dtype) / np.sqrt(m),
             RNG.standard_normal(n).astype(dtype) * 0.1) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp(params, x, np_, nn_):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = np_.tanh(x)
    return x


def mlp_mse(params, x, y, np_, nn_):
    return np_.mean((mlp(params, x, np_, nn_) - y) ** 2)


def cross_entropy(params, x, labels, np_, nn_):
    logp = nn_.log_softmax(mlp(params, x, np_, nn_))
    return -np_.mean(np_.take_along_axis(logp, labels[:, None], axis=1))


def layer_norm_loss(scale, bias, x, np_, nn_):
    mean = np_.mean(x, axis=-1, keepdims=True)
    var = np_.mean((x - mean) ** 2, axis=-1, keepdims=True)
    y = (x - mean) / np_.sqrt(var + 1e-5) * scale + bias
    return np_.sum(np_.sin(y) * x)


def causal_attention(wq, wk, wv, x, np_, nn_):
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = np_.einsum("bqd,bkd->bqk", q, k) / np.sqrt(HEAD)
    mask = np_.tril(np_.ones((SEQ, SEQ), dtype=bool))
    probs = nn_.softmax(np_.where(mask, scores, -np.inf), axis=-1)
    return np_.mean(np_.einsum("bqk,bkd->bqd", probs, v) ** 2)


def logsumexp_loss(x, np_, nn_):
    return np_.sum(nn_.logsumexp(x, axis=1) * np_.arange(x.shape[0]))


X = RNG.standard_normal((BATCH, FEATURES))
MODELS = {
    "mlp_mse": (mlp_mse, (_params([FEATURES, 8, 8, CLASSES]), X,
                          RNG.standard_normal((BATCH, CLASSES)))),
    "cross_entropy_integer_labels": (cross_entropy, (_params([FEATURES, 8, CLASSES]), X,
                                                     RNG.integers(0, CLASSES, BATCH))),
    "layer_norm": (layer_norm_loss, (RNG.standard_normal(FEATURES),
                                     RNG.standard_normal(FEATURES), X)),
    "causal_attention": (causal_attention, (*[RNG.standard_normal((FEATURES, HEAD))
                                              for _ in range(3)],
                                            RNG.standard_normal((2, SEQ, FEATURES)))),
    "logsumexp": (logsumexp_loss, (X,)),
}


def _differentiable_argnums(args):
    return tuple(i for i, a in enumerate(args)
                 if not (isinstance(a, np.ndarray) and a.dtype.kind in "iu"))


@pytest.fixture(scope="module")
def jax_values_and_grads(jax):
    import jax.numpy as jnp

    @jax.jit
    def references():
        return {name: jax.value_and_grad(lambda *a, fn=fn: fn(*a, jnp, jax.nn),
                                         argnums=_differentiable_argnums(args))(*args)
                for name, (fn, args) in MODELS.items()}
    return references()


def _assert_tree_close(got, expected, rtol):
    got_leaves, expected_leaves = pto.tree_util.tree_leaves(got), \
        pto.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        assert_close(g, np.asarray(e), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("under_jit", [False, True], ids=["eager", "jit"])
def test_model_gradient_matches_jax(name, under_jit, jax_values_and_grads):
    fn, args = MODELS[name]
    value_and_grad = pto.value_and_grad(lambda *a: fn(*a, pnp, nn),
                                        argnums=_differentiable_argnums(args))
    if under_jit:
        value_and_grad = pto.jit(value_and_grad)
    value, grads = value_and_grad(*args)
    expected_value, expected_grads = jax_values_and_grads[name]
    assert_close(value, np.asarray(expected_value), rtol=1e-10, atol=1e-10)
    _assert_tree_close(grads, expected_grads, 1e-9)


def test_float32_mlp_gradient_matches_jax(jax):
    import jax.numpy as jnp
    params = _params([FEATURES, 16, CLASSES], np.float32)
    x, y = X.astype(np.float32), RNG.standard_normal((BATCH, CLASSES)).astype(np.float32)
    grads = pto.jit(pto.grad(lambda p: mlp_mse(p, x, y, pnp, nn)))(params)
    expected = jax.grad(lambda p: mlp_mse(p, x, y, jnp, jax.nn))(params)
    _assert_tree_close(grads, expected, 1e-5)
