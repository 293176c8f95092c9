"""A jaxpr interpreter in the style of JAX's "Writing custom Jaxpr interpreters" page: trace
with make_jaxpr, evaluate the equations with ``eqn.primitive.bind(*values, **eqn.params)``
(literals through ``jax.extend.core.Literal``), and an inverse interpreter that walks the
equations backwards through a table keyed by ``lax.*_p``; the new transformation composes
with jit, vmap and grad. JAX style, program tests."""
from functools import wraps

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend import core

INVERSES = {lax.exp_p: jnp.log, lax.tanh_p: jnp.arctanh, lax.sin_p: jnp.arcsin}


def run_equations(jaxpr, consts, args, equations, inputs_of, outputs_of, apply):
    env = {}

    def read(var):
        return var.val if type(var) is core.Literal else env[var]

    def write(variables, values):
        for var, value in zip(variables, values):
            env[var] = value

    write(jaxpr.constvars, consts)
    write(inputs_of(jaxpr), args)
    for eqn in equations(jaxpr):
        values = apply(eqn, [read(v) for v in inputs_of(eqn)])
        write(outputs_of(eqn), values)
    return [read(v) for v in outputs_of(jaxpr)]


def eval_jaxpr(jaxpr, consts, *args):
    def apply(eqn, values):
        out = eqn.primitive.bind(*values, **eqn.params)
        return out if eqn.primitive.multiple_results else [out]
    return run_equations(jaxpr, consts, args, lambda j: j.eqns, lambda e: e.invars,
                         lambda e: e.outvars, apply)


def inverse(fun):
    @wraps(fun)
    def wrapped(y):
        closed = jax.make_jaxpr(fun)(y)
        return run_equations(closed.jaxpr, closed.literals, [y], lambda j: j.eqns[::-1],
                             lambda e: e.outvars, lambda e: e.invars,
                             lambda eqn, values: [INVERSES[eqn.primitive](*values)])[0]
    return wrapped


def forward(x):
    return jnp.exp(jnp.tanh(jnp.sin(x)))


def main(x, w):
    closed = jax.make_jaxpr(lambda x, w: (jnp.tanh(x @ w) * 2.0 + 1.0, jnp.maximum(x, 0.5)))(x, w)
    shapes = ([str(v.aval) for v in closed.jaxpr.invars],
              [str(v.aval) for v in closed.jaxpr.outvars])
    evaluated = eval_jaxpr(closed.jaxpr, closed.literals, x, w)
    primitives = [str(e.primitive) for e in jax.make_jaxpr(inverse(forward))(x[0]).jaxpr.eqns]
    y = forward(x[0])
    return (shapes == (["float32[4,3]", "float32[3,2]"], ["float32[4,2]", "float32[4,3]"]),
            evaluated, inverse(forward)(y), primitives == ["log", "atanh", "asin"],
            jax.jit(jax.vmap(jax.grad(inverse(forward))))(y))
