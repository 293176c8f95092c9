"""An LSTM unrolled with ``lax.scan`` over time (the style of public pure-JAX RNN
tutorials: gates from one matmul, ``jnp.split``, ``nn.initializers`` glorot/orthogonal),
trained on a running-sum target with a hand-written Adam over the parameter pytree, and a
GRU run backwards (``scan(reverse=True)``) vmapped over sequences."""
import jax
import jax.numpy as jnp
from jax import lax, random
from jax.nn import initializers, sigmoid


def lstm_init(key, n_in, n_hid):
    k1, k2, k3 = random.split(key, 3)
    return {"wx": initializers.glorot_normal()(k1, (n_in, 4 * n_hid)),
            "wh": initializers.orthogonal()(k2, (n_hid, 4 * n_hid)),
            "b": jnp.zeros(4 * n_hid), "wo": initializers.glorot_normal()(k3, (n_hid, 1))}


def forward(params, xs):
    def cell(carry, x):
        h, c = carry
        i, f, g, o = jnp.split(x @ params["wx"] + h @ params["wh"] + params["b"], 4, axis=-1)
        c = sigmoid(f + 1.0) * c + sigmoid(i) * jnp.tanh(g)
        h = sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    zeros = jnp.zeros((xs.shape[1], params["wh"].shape[0]))
    _, hs = lax.scan(cell, (zeros, zeros), xs)
    return (hs @ params["wo"])[..., 0]


def loss(params, xs, ys):
    return jnp.mean((forward(params, xs) - ys) ** 2)


@jax.jit
def train_step(params, m, v, t, xs, ys, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    value, g = jax.value_and_grad(loss)(params, xs, ys)
    t = t + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - lr * (m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + eps),
        params, m, v)
    return params, m, v, t, value


def gru(w, u, seq):
    def step(h, x):
        z = sigmoid(x @ w[0] + h @ u[0])
        r = sigmoid(x @ w[1] + h @ u[1])
        h = (1 - z) * jnp.tanh(x @ w[2] + (r * h) @ u[2]) + z * h
        return h, h
    return lax.scan(step, jnp.zeros(u.shape[-1]), seq, reverse=True)[1]


@jax.jit
def backward_gru(xs):
    kw, ku = random.split(random.PRNGKey(3))
    w, u = random.normal(kw, (3, 1, 4)) * 0.5, random.normal(ku, (3, 4, 4)) * 0.5
    seqs = jnp.transpose(xs, (1, 0, 2))
    return jax.vmap(lambda s: gru(w, u, s))(seqs)[:, 0]


def main(xs):
    ys = jnp.cumsum(xs[..., 0], axis=0) * 0.3
    params = jax.jit(lstm_init, static_argnums=(1, 2))(random.PRNGKey(0), 1, 8)
    m = v = jax.tree_util.tree_map(jnp.zeros_like, params)
    t, losses = 0, []
    for _ in range(6):
        params, m, v, t, value = train_step(params, m, v, t, xs, ys)
        losses.append(value)
    return jnp.stack(losses), jax.jit(forward)(params, xs)[-1], backward_gru(xs)
