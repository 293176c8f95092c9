"""Training with ``Dropout`` (its key passed as ``rng=`` and split by ``serial``), an
``optimizers.rmsprop_momentum`` step under ``piecewise_constant`` schedule, the optimizer state
saved mid-run as plain numpy through ``unpack_optimizer_state`` (JoinPoint leaves) and
restored with ``pack_optimizer_state``, then gradients clipped with ``clip_grads``; JAX
style, program tests."""
import numpy as np

import jax
import jax.numpy as jnp
from jax import random
from jax.example_libraries import optimizers, stax

init_fun, apply_fun = stax.serial(stax.Dense(16), stax.Elu, stax.Dropout(0.8), stax.Dense(16),
                                  stax.Gelu, stax.Dense(2))


def loss(params, batch, rng):
    x, y = batch
    return jnp.mean((apply_fun(params, x, rng=rng) - y) ** 2)


def save(opt_state):
    """A picklable copy: the unpacked tree with every state leaf as a numpy array."""
    marked = optimizers.unpack_optimizer_state(opt_state)
    return jax.tree.map(lambda m: optimizers.JoinPoint(jax.tree.map(np.asarray, m.subtree)),
                        marked)


def main(x, y, steps=4):
    schedule = optimizers.piecewise_constant([1, 2], [0.05, 0.02, 0.01])
    opt_init, opt_update, get_params = optimizers.rmsprop_momentum(schedule)

    @jax.jit
    def update(i, opt_state, rng):
        grads = jax.grad(loss)(get_params(opt_state), (x, y), rng)
        return opt_update(i, optimizers.clip_grads(grads, 1.0), opt_state)

    _, params = init_fun(random.PRNGKey(0), x.shape)
    opt_state = opt_init(params)
    for i in range(steps):
        opt_state = update(i, opt_state, random.fold_in(random.PRNGKey(1), i))
        if i == steps // 2:
            opt_state = optimizers.pack_optimizer_state(save(opt_state))
    params = get_params(opt_state)
    return params, optimizers.l2_norm(params)
