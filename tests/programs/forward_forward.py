"""Hinton's forward-forward training, calling what JAX's examples/forward-forward-mnist.py
calls and in the same way, on synthetic images (no MNIST download, no torch): labels embedded
in the first ten pixels in numpy, batches collated by ``jnp.array`` of tuples of numpy arrays,
layers whose state is a NamedTuple of (weights, biases) and an optimizer state,
``jax.nn.initializers.glorot_uniform`` with an explicit dtype, a class used as a namespace of
functions vmapped by ``functools.partial(jax.vmap, in_axes=(None, 0))`` as decorators, an
in-place ``x /= ...`` on a traced row, ``jnp.power(h, 2).sum()``, ``jax.nn.log_sigmoid``, a
jitted step returning (loss, NamedTuple), a Python float accumulating Arrays, ``copy.deepcopy``
of Arrays, and prediction / hard-negative mining vmapped over a Python loop of
``.at[i].set(x.max())`` / ``.at[i].add(g)`` updates, ``jnp.split`` and ``jax.lax.top_k``.
optax is not a ptojax dependency: its ``sgd`` is written here as the two functions the example
uses (``init``/``update``, and ``apply_updates``). JAX style, for the program tests."""
import copy
import functools
from typing import NamedTuple, Tuple

import numpy as np

import jax
import jax.numpy as jnp
from jax import jit, value_and_grad, vmap


class Sgd(NamedTuple):
    init: object
    update: object


def sgd(learning_rate):
    return Sgd(init=lambda params: (),
               update=lambda grads, state: (jax.tree.map(lambda g: -learning_rate * g, grads),
                                            state))


def apply_updates(params, updates):
    return jax.tree.map(lambda p, u: p + u, params, updates)


def labelled(images, labels, wrong_labels):
    """(plain, positive, negative) images: label pixels zeroed, then one set to the maximum."""
    plain, positive, negative = [], [], []
    for image, label, wrong in zip(images, labels, wrong_labels):
        image = np.ravel(np.array(image, dtype=np.float32))
        image[:10] = 0
        pos, neg = image.copy(), image.copy()
        pos[label] = image.max()
        neg[wrong] = image.max()
        plain.append(image), positive.append(pos), negative.append(neg)
    return tuple(jnp.array(part) for part in (plain, positive, negative))


class LayerState(NamedTuple):
    params: Tuple[jnp.ndarray, jnp.ndarray]
    opt_state: Tuple


def new_layer(n_in, n_out, key, opt, scale=1.0):
    w_key, b_key = jax.random.split(key)
    w = jax.nn.initializers.glorot_uniform()(w_key, (n_out, n_in), jnp.float32) * scale
    b = jax.random.normal(b_key, (n_out,), jnp.float32) * scale
    return LayerState((w, b), opt.init((w, b)))


class FF:
    def layer(params, x):
        x /= (jnp.sqrt(jnp.mean(x ** 2, axis=-1, keepdims=True)) + 1e-6)
        w, b = params
        return jax.nn.relu(jnp.dot(w, x) + b)

    @functools.partial(jax.vmap, in_axes=(None, 0))
    def layer_batch(params, xs):
        return FF.layer(params, xs)

    def goodness(params, x):
        h = FF.layer(params, x)
        return jnp.power(h, 2).sum(), h

    @functools.partial(jax.vmap, in_axes=(None, 0))
    def goodness_batch(params, xs):
        return FF.goodness(params, xs)

    def loss(params, pos, neg):
        good_pos, _ = FF.goodness_batch(params, pos)
        good_neg, _ = FF.goodness_batch(params, neg)
        logits = jnp.concatenate([good_pos - pos.shape[-1], -(good_neg - neg.shape[-1])])
        return -jax.nn.log_sigmoid(logits).mean()


def scores(params, x):
    """Summed goodness of every layer with each of the ten labels embedded."""
    total = jnp.zeros(10)
    for label in range(10):
        h = jnp.array(x.copy())
        h = h.at[label].set(h.max())
        for layer_params in params:
            g, h = FF.goodness(layer_params, h)
            total = total.at[label].add(g)
    return total


def hard_negative(params, x):
    true_label = jnp.argmax(jnp.split(x, [10])[0])
    runner_up = jax.lax.top_k(scores(params, x), 2)[1][1]
    neg = jnp.array(x.copy()).at[true_label].set(0)
    return neg.at[runner_up].set(neg.max())


def accuracy(params, xs, labels):
    guesses = vmap(lambda p, x: jnp.argmax(scores(p, x)), in_axes=(None, 0))(params, xs)
    return jnp.mean(labels == guesses)


def train_one(opt, epochs, batch, state, pos, neg):
    @jit
    def step(state, pos, neg):
        loss, grads = value_and_grad(FF.loss)(state.params, pos, neg)
        updates, opt_state = opt.update(grads, state.opt_state)
        return loss, LayerState(apply_updates(state.params, updates), opt_state)

    pos_batches = [pos[i:i + batch] for i in range(0, len(pos), batch)]
    neg_batches = [neg[i:i + batch] for i in range(0, len(neg), batch)]
    history = []
    for _ in range(epochs):
        total = 0.
        for p, n in zip(pos_batches, neg_batches):
            loss, state = step(state, p, n)
            total += loss
        history.append(float(total))
    return state, history


def main(images, labels, wrong_labels, test_images, test_labels, epochs=3, episodes=2,
         batch=16, width=24):
    plain, pos, neg = labelled(images, labels, wrong_labels)
    labels, test_labels = jnp.array(tuple(labels)), jnp.array(test_labels)
    test_plain = labelled(test_images, np.asarray(test_labels), np.zeros_like(test_labels))[0]
    opt = sgd(0.001)
    key = jax.random.PRNGKey(39)
    states = [new_layer(plain.shape[1], width, key, opt), new_layer(width, width, key, opt)]
    pos_kept, histories, accuracies = copy.deepcopy(pos), [], []
    for _ in range(episodes):
        trained = []
        for state in states:
            state, history = train_one(opt, epochs, batch, state, pos, neg)
            trained.append(state)
            histories.append(history)
            pos, neg = FF.layer_batch(state.params, pos), FF.layer_batch(state.params, neg)
        params = [s.params for s in trained]
        accuracies += [accuracy(params, plain, labels), accuracy(params, test_plain, test_labels)]
        states, pos = trained, pos_kept
        neg = vmap(hard_negative, in_axes=(None, 0))(params, plain)
    return histories, accuracies, neg, [s.params for s in states]
