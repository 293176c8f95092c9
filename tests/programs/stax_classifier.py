"""An MNIST-classifier-style program on ``jax.example_libraries``: an MLP from
``stax.serial(Dense, Relu, ..., LogSoftmax)`` initialised on a ``(-1, n)`` input shape,
``optimizers.momentum`` with a jitted update taking the step counter, mini-batches from a
numpy permutation stream, accuracy with argmax. JAX style, program tests."""
import itertools

import numpy.random as npr

import jax.numpy as jnp
from jax import grad, jit, random
from jax.example_libraries import optimizers, stax
from jax.example_libraries.stax import Dense, LogSoftmax, Relu

init_random_params, predict = stax.serial(Dense(32), Relu, Dense(32), Relu, Dense(4),
                                          LogSoftmax)


def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.argmax(predict(params, inputs), axis=1) == jnp.argmax(targets, axis=1))


def batches(images, labels, batch_size):
    rng = npr.RandomState(0)
    while True:
        perm = rng.permutation(images.shape[0])
        for i in range(0, images.shape[0], batch_size):
            idx = perm[i:i + batch_size]
            yield images[idx], labels[idx]


def main(images, labels, epochs=3, batch_size=8):
    opt_init, opt_update, get_params = optimizers.momentum(0.05, mass=0.9)

    @jit
    def update(i, opt_state, batch):
        return opt_update(i, grad(loss)(get_params(opt_state), batch), opt_state)

    _, params = init_random_params(random.PRNGKey(0), (-1, images.shape[1]))
    opt_state, count, stream = opt_init(params), itertools.count(), batches(images, labels,
                                                                           batch_size)
    history = []
    for _ in range(epochs):
        for _ in range(-(-images.shape[0] // batch_size)):
            opt_state = update(next(count), opt_state, next(stream))
        history.append(accuracy(get_params(opt_state), (images, labels)))
    return get_params(opt_state), jnp.stack(history)
