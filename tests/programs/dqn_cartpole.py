"""Deep Q-learning on cart-pole, calling what JAX's examples/deep_qlearning_cartpole.py calls
and in the same way: layers as (init_fn, forward_fn) pairs with parameters in dicts
(``xavier_uniform`` weights, a 0-d ``normal`` bias drawn with ``shape=()``), ``jax.random.split``
with ``num=``, the network vmapped with ``in_axes=(None, 0)`` over a list of dicts,
``jax.grad`` as a decorator then ``jax.jit``, ``q[jnp.arange(n), actions]``, a jitted
``functools.partial`` of an SGD over ``dict.items()``, epsilon-greedy actions decided by
``if uniform(shape=(1,)) < eps`` (a one-element array as a bool), and an experience replay of
NamedTuple transitions (``random.sample`` from a deque, ``jnp.array`` of tuples of numpy
arrays / Python ints / floats / bools, ``jnp.where(is_terminal, 0, y)``).

gym is not a ptojax dependency: the cart-pole step is written here in numpy (the classic
equations, Euler steps of 0.02 s, failure past 2.4 m or 12 degrees). The example's
``int(action)`` of a shape-(1,) ``randint`` draw is refused by JAX itself (only 0-d arrays
convert to Python scalars), so the draw's one element is taken first; the refusal is part of
the result. JAX style, for the program tests."""
import random
from collections import deque
from functools import partial
from typing import NamedTuple

import numpy as np

import jax
import jax.numpy as jnp

GAMMA = 0.99
EPSILON = 0.3


class CartPole:
    """Cart-pole balancing with numpy state, the old gym step API (state, reward, done, info)."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        return self.state.astype(np.float32)

    def step(self, action):
        x, speed, angle, spin = self.state
        push = 10.0 if action == 1 else -10.0
        cos, sin = np.cos(angle), np.sin(angle)
        common = (push + 0.05 * spin ** 2 * sin) / 1.1
        spin_rate = (9.8 * sin - cos * common) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        speed_rate = common - 0.05 * spin_rate * cos / 1.1
        self.state = np.array([x + 0.02 * speed, speed + 0.02 * speed_rate,
                               angle + 0.02 * spin, spin + 0.02 * spin_rate])
        done = bool(abs(self.state[0]) > 2.4 or abs(self.state[2]) > 12 * np.pi / 180)
        return self.state.astype(np.float32), 1.0, done, {}


class Transition(NamedTuple):
    state: jnp.ndarray
    next_state: jnp.ndarray
    action: int
    reward: float
    is_terminal: bool


def dense(n_in, n_out, activation=lambda v: v):
    def init(key):
        w_key, b_key = jax.random.split(key)
        return dict(W=jax.nn.initializers.xavier_uniform()(w_key, shape=(n_out, n_in)),
                    bias=jax.nn.initializers.normal()(b_key, shape=()))

    def apply(params, x):
        return activation(jnp.dot(params["W"], x) + params["bias"])
    return init, apply


def chain(*layers):
    inits, applies = zip(*layers)

    def init(key):
        return [f(k) for f, k in zip(inits, jax.random.split(key, num=len(layers)))]

    def apply(params, x):
        for f, p in zip(applies, params):
            x = f(p, x)
        return x
    return init, apply


def sgd(params, grads, learning_rate):
    return [{k: v - dv * learning_rate for (k, v), (_, dv) in zip(p.items(), g.items())}
            for p, g in zip(params, grads)]


def main(episodes=4, training_episodes=3, max_steps=30, batch_size=8):
    global EPSILON
    EPSILON = 0.3
    random.seed(0)
    init, apply = chain(dense(4, 16, jax.nn.relu), dense(16, 16, jax.nn.relu), dense(16, 2))
    key, subkey = jax.random.split(jax.random.PRNGKey(0))
    params = init(subkey)
    q_batch = jax.vmap(apply, in_axes=(None, 0))
    target = params

    @jax.grad
    def loss_grad(params, x, y, actions):
        q = q_batch(params, x)[jnp.arange(x.shape[0]), actions]
        return jnp.mean((y - q) ** 2)

    backward = jax.jit(loss_grad)
    update = jax.jit(partial(sgd, learning_rate=1e-3))

    def act(key, state):
        key, sk = jax.random.split(key)
        if jax.random.uniform(sk, shape=(1,)) < EPSILON:
            action = jax.random.randint(sk, shape=(1,), minval=0, maxval=2)[0]
        else:
            action = jnp.argmax(q_batch(params, jnp.expand_dims(state, axis=0))[0])
        return int(action)

    def learn():
        if len(memory) < batch_size:
            return params
        batch = Transition(*zip(*random.sample(memory, k=batch_size)))
        states, next_states = jnp.array(batch.state), jnp.array(batch.next_state)
        actions, rewards = jnp.array(batch.action), jnp.array(batch.reward)
        terminal = jnp.array(batch.is_terminal)
        y = rewards + GAMMA * jnp.max(q_batch(target, next_states), axis=-1)
        y = jnp.where(terminal, 0, y)
        return update(params, backward(params, states, y, actions))

    env, memory, lengths = CartPole(0), deque(maxlen=1000), []
    for episode in range(episodes):
        state = env.reset()
        if episode >= training_episodes:
            EPSILON = 0
        for t in range(max_steps):
            key, subkey = jax.random.split(key)
            action = act(subkey, state)
            next_state, reward, done, _ = env.step(action)
            memory.append(Transition(state=state, next_state=next_state, action=action,
                                     reward=reward, is_terminal=done))
            if episode < training_episodes:
                params = learn()
            EPSILON -= 2e-5
            state = next_state
            if done:
                break
        lengths.append(t)
        target = params
    try:
        int(jax.random.randint(key, shape=(1,), minval=0, maxval=2))
        refused = False
    except TypeError:
        refused = True
    return lengths, params, refused
