"""Baum-Welch EM for a discrete hidden Markov model, in the style of JAX's examples/hmm_em.py:
the forward pass is a ``lax.scan`` of ``logsumexp`` over a log transition matrix (no
per-step output), the E step is ``grad`` of the log normaliser with respect to a list of log
parameters (the expected counts), the M step renormalises them, iterated by a jitted
``fori_loop`` whose trip count is a traced argument; then a sequence is sampled by
``random.categorical`` under a ``scan`` over split keys (length static) and decoded through
a dict keyed by Python ints built with ``defaultdict(partial(next, count()))``."""
from collections import defaultdict
from functools import partial
from itertools import count

import jax.numpy as jnp
from jax import grad, jit, lax, random
from jax.scipy.special import logsumexp


def log_normalizer(params, seq):
    log_pi, log_A, log_B = params

    def forward(log_alpha, obs):
        return logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs], None
    log_alpha, _ = lax.scan(forward, log_pi, seq)
    return logsumexp(log_alpha)


@jit
def baum_welch(params, seq, num_steps):
    def step(i, params):
        counts = grad(log_normalizer)(params, seq)
        return [jnp.log(c / c.sum(-1, keepdims=True)) for c in counts]
    return lax.fori_loop(0, num_steps, step, params)


@partial(jit, static_argnums=(2,))
def sample(key, params, length):
    log_pi, log_A, log_B = params

    def emit(state, key):
        k_obs, k_next = random.split(key)
        return random.categorical(k_next, log_A[state]), random.categorical(k_obs, log_B[state])
    k_init, k_steps = random.split(key)
    _, seq = lax.scan(emit, random.categorical(k_init, log_pi), random.split(k_steps, length))
    return seq


def encode(text):
    codes = defaultdict(partial(next, count()))
    seq = jnp.array([codes[ch] for ch in text])
    return seq, {i: ch for ch, i in codes.items()}


def main(text="the cat sat on the mat; the dog sat on the log. " * 3, num_states=4,
         num_steps=12, length=30):
    seq, decode = encode(text)
    keys = map(random.PRNGKey, count())
    params = [random.normal(next(keys), (num_states,)),
              random.normal(next(keys), (num_states, num_states)),
              random.normal(next(keys), (num_states, len(decode)))]
    before = log_normalizer(params, seq)
    fitted = baum_welch(params, seq, num_steps)
    after = log_normalizer(fitted, seq)
    sampled = sample(next(keys), fitted, length)
    decoded = "".join(decode[int(i)] for i in sampled)
    return (seq, before, after, [jnp.exp(p) for p in fitted], sampled,
            jnp.array([ord(ch) for ch in decoded]))
