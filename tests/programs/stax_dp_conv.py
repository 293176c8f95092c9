"""Differentially private SGD on a stax conv net, as JAX's differentially_private_sgd
example: ``Conv(SAME, strides)``, ``MaxPool``, ``Flatten``, ``Dense``; per-example gradients
with ``vmap`` over a dummy batch axis, each clipped by its global norm (``optimizers.l2_norm``
with ``stop_gradient`` on the divisor), summed, noised, averaged; ``optimizers.sgd`` with an
``exponential_decay`` schedule; the private update jitted with ``random.fold_in``. Program
tests."""
from functools import partial

import jax.numpy as jnp
from jax import grad, jit, random, tree_util, vmap
from jax.example_libraries import optimizers, stax
from jax.lax import stop_gradient

init_random_params, predict = stax.serial(
    stax.Conv(4, (3, 3), padding="SAME", strides=(2, 2)), stax.Relu,
    stax.MaxPool((2, 2), (1, 1)),
    stax.Conv(8, (2, 2), padding="VALID", strides=(2, 2)), stax.Relu,
    stax.Flatten, stax.Dense(16), stax.Relu, stax.Dense(3))


def loss(params, batch):
    inputs, targets = batch
    logits = stax.logsoftmax(predict(params, inputs))
    return -jnp.mean(jnp.sum(logits * targets, axis=1))


def private_grad(params, batch, rng, l2_norm_clip=1.0, noise_multiplier=0.5):
    def clipped_grad(params, single_example_batch):
        grads = grad(loss)(params, single_example_batch)
        divisor = stop_gradient(jnp.maximum(optimizers.l2_norm(grads) / l2_norm_clip, 1.))
        return tree_util.tree_map(lambda g: g / divisor, grads)

    per_example = vmap(partial(clipped_grad, params))(batch)
    summed = tree_util.tree_map(lambda g: jnp.sum(g, 0), per_example)
    leaves, treedef = tree_util.tree_flatten(summed)
    keys = random.split(rng, len(leaves))
    noised = [g + l2_norm_clip * noise_multiplier * random.normal(k, g.shape)
              for k, g in zip(keys, leaves)]
    size = batch[0].shape[0]
    return tree_util.tree_unflatten(treedef, [g / size for g in noised])


def main(images, labels, steps=3):
    opt_init, opt_update, get_params = optimizers.sgd(optimizers.exponential_decay(0.3, 2, 0.5))

    @jit
    def private_update(rng, i, opt_state, batch):
        rng = random.fold_in(rng, i)
        return opt_update(i, private_grad(get_params(opt_state), batch, rng), opt_state)

    key = random.PRNGKey(0)
    _, params = init_random_params(key, (-1,) + images.shape[1:])
    opt_state = opt_init(params)
    dummy = (images[:, None], labels[:, None])   # each example as a batch of one
    for i in range(steps):
        opt_state = private_update(key, i, opt_state, dummy)
    params = get_params(opt_state)
    return params, loss(params, (images, labels))
