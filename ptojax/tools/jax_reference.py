"""Evaluate PTO IR equation by equation with ``jax.numpy``/``jax.lax`` — the independent
reference of ``check_numerics(..., reference="jax")``.

JAX is imported only when a ``JaxEquations`` is made (ptojax itself never needs it). Each
primitive maps to its JAX counterpart with JAX's (XLA's) semantics, 64-bit types enabled;
sub-IRs (scan, cond, while, calls) become ``lax.scan``/``lax.switch``/``lax.while_loop``
over the JAX evaluation of their bodies. Primitives with no JAX counterpart here
(gather/scatter in ptojax's point-indexing form, threefry, collectives, tile kernels) run
through their own numpy impl; ``JaxEquations.fallbacks`` names them, since those equations
are not checked independently.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.ir.core import Literal, as_ir, sub_irs

LOW_PRECISION = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")


def import_jax():
    """``(jax, jax.numpy, jax.lax)``, or an error saying how to get them."""
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        raise UnsupportedError("check_numerics(reference='jax') needs JAX installed (pip install "
                               "jax; the CPU build is enough); reference='interpreter' needs "
                               "nothing extra") from None
    return jax, jnp, lax


def _x64(jax):
    """A context enabling 64-bit types (explicit float64/int64 IR values stay 64-bit)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64
    return enable_x64()


class JaxEquations:
    """``evaluate(eqn, inputs)``: one equation's outputs computed by JAX from numpy inputs.
    ``fallbacks`` names the primitives that ran through their numpy impl instead."""

    def __init__(self):
        self._jax, self._jnp, lax = import_jax()
        self.fallbacks: set = set()
        self._rules = _rules(self._jnp, lax)
        _add_sub_ir_rules(self._rules, self.fallbacks, self._jnp, lax)

    def evaluate(self, eqn, inputs) -> list:
        jnp = self._jnp
        with _x64(self._jax):
            outs = _apply(eqn, [jnp.asarray(x) for x in inputs], self._rules, self.fallbacks,
                          jnp)
            return [np.asarray(o) for o in outs]


def _read(env, atom, jnp):
    if type(atom) is Literal:
        return jnp.asarray(np.asarray(atom.value, atom.type.dtype))
    return env[atom]


# their bodies run inside lax.scan/switch/while_loop, where a numpy fallback cannot
TRACED_BODIES = frozenset({"scan", "cond", "while"})


def _untranslatable(ir, rules) -> set:
    """Names of the primitives in ``ir`` (sub-IRs included) that have no JAX rule."""
    names = set()
    for eqn in as_ir(ir).eqns:
        if eqn.prim.name not in rules:
            names.add(eqn.prim.name)
        for sub in sub_irs(eqn.params):
            names |= _untranslatable(sub, rules)
    return names


def _fallback_name(eqn, rules):
    """None if JAX can evaluate ``eqn``, else how to name it among the fallbacks."""
    if eqn.prim.name not in rules:
        return eqn.prim.name
    if eqn.prim.name in TRACED_BODIES:
        inner = set().union(*(_untranslatable(b, rules) for b in sub_irs(eqn.params)))
        if inner:
            return f"{eqn.prim.name} (its body has {', '.join(sorted(inner))})"
    return None


def _apply(eqn, inputs, rules, fallbacks, jnp) -> list:
    fallback = _fallback_name(eqn, rules)
    if fallback is not None:
        fallbacks.add(fallback)
        out = eqn.prim.impl(*[np.asarray(x) for x in inputs], **eqn.params)
        outs = out if eqn.prim.multiple_results else [out]
        return [jnp.asarray(np.asarray(o)) for o in outs]
    out = rules[eqn.prim.name](*inputs, **eqn.params)
    outs = list(out) if eqn.prim.multiple_results else [out]
    return [jnp.asarray(o, v.type.dtype) for o, v in zip(outs, eqn.outputs)]


def _body_fn(sub, rules, fallbacks, jnp):
    """A Python function evaluating a sub-IR with JAX (traceable by lax.scan and friends)."""
    ir = as_ir(sub)

    def run(*args):
        env = dict(zip(ir.invars, args))
        for eqn in ir.eqns:
            env.update(zip(eqn.outputs, _apply(eqn, [_read(env, a, jnp) for a in eqn.inputs],
                                               rules, fallbacks, jnp)))
        return [_read(env, v, jnp) for v in ir.outvars]
    return run


# --- the table --------------------------------------------------------------------------------
def _rules(jnp, lax) -> dict:
    def broadcasting(fn):
        """lax ops need equal shapes; PTO IR lets rank-0 operands broadcast."""
        return lambda *xs: fn(*jnp.broadcast_arrays(*xs))

    def widened(fn):
        """Low-precision floats accumulate in float32 (as ptojax and XLA on CPU do)."""
        def run(x, *args, **kwargs):
            if x.dtype.name in LOW_PRECISION:
                return fn(x.astype(jnp.float32), *args, **kwargs).astype(x.dtype)
            return fn(x, *args, **kwargs)
        return run

    def reduce(op, identity):
        return lambda x, axes: lax.reduce(x, np.array(identity(x.dtype), x.dtype), op,
                                          tuple(axes))

    def low(dtype):
        return -np.inf if dtypes.is_float(dtype) else np.iinfo(dtype).min

    def high(dtype):
        return np.inf if dtypes.is_float(dtype) else np.iinfo(dtype).max

    def cumulative(fn):
        return widened(lambda x, axis, reverse=False: fn(x, axis % x.ndim, reverse))

    def rounding(x, method):
        away = lax.RoundingMethod.AWAY_FROM_ZERO
        return lax.round(x, away if method == "half_away" else lax.RoundingMethod.TO_NEAREST_EVEN)

    rules = {name: broadcasting(getattr(lax, lax_name)) for name, lax_name in {
        "add": "add", "sub": "sub", "mul": "mul", "div": "div", "rem": "rem", "pow": "pow",
        "max": "max", "min": "min", "atan2": "atan2", "nextafter": "nextafter",
        "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
        "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
        "shift_left": "shift_left", "shift_right_logical": "shift_right_logical",
        "select": "select"}.items()}
    rules.update({name: getattr(lax, lax_name) for name, lax_name in {
        "neg": "neg", "abs": "abs", "sign": "sign", "floor": "floor", "ceil": "ceil",
        "is_finite": "is_finite", "exp": "exp", "exp2": "exp2", "log": "log",
        "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt",
        "tanh": "tanh", "logistic": "logistic", "sin": "sin", "cos": "cos", "tan": "tan",
        "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
        "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "erf": "erf",
        "erf_inv": "erf_inv", "not": "bitwise_not"}.items()})
    identity = lambda x, **_: x  # noqa: E731
    rules.update({
        "round": rounding,
        "integer_pow": lambda x, y: lax.integer_pow(x, y),
        "clamp": lax.clamp,
        "convert_element_type": lambda x, new_dtype, weak_type=False:
            lax.convert_element_type(x, new_dtype),
        "stop_gradient": identity, "copy": identity, "sharding_constraint": identity,
        "reduce_sum": widened(reduce(lax.add, lambda d: 0)),
        "reduce_prod": widened(reduce(lax.mul, lambda d: 1)),
        "reduce_max": reduce(lax.max, low),
        "reduce_min": reduce(lax.min, high),
        "reduce_and": reduce(lax.bitwise_and, lambda d: True),
        "reduce_or": reduce(lax.bitwise_or, lambda d: False),
        "argmax": lambda x, axis, index_dtype: jnp.argmax(x, axis).astype(index_dtype),
        "argmin": lambda x, axis, index_dtype: jnp.argmin(x, axis).astype(index_dtype),
        "cumsum": cumulative(lax.cumsum), "cumprod": cumulative(lax.cumprod),
        "cummax": cumulative(lax.cummax), "cummin": cumulative(lax.cummin),
        "cumlogsumexp": cumulative(lax.cumlogsumexp),
        "broadcast_in_dim": lambda x, shape, broadcast_dimensions:
            lax.broadcast_in_dim(x, shape, broadcast_dimensions),
        "reshape": lambda x, new_sizes: jnp.reshape(x, new_sizes),
        "transpose": lambda x, permutation: jnp.transpose(x, permutation),
        "squeeze": lambda x, dimensions: lax.squeeze(x, dimensions),
        "expand_dims": lambda x, dimensions: lax.expand_dims(x, dimensions),
        "rev": lambda x, dimensions: lax.rev(x, dimensions),
        "slice": lambda x, start_indices, limit_indices, strides=None:
            lax.slice(x, start_indices, limit_indices, strides),
        "concatenate": lambda *xs, dimension: lax.concatenate(xs, dimension),
        "pad": lambda x, value, padding_config: lax.pad(x, value, padding_config),
        "iota": lambda dtype, shape, dimension: lax.broadcasted_iota(dtype, shape, dimension),
        "dynamic_slice": lambda x, *starts, slice_sizes:
            lax.dynamic_slice(x, starts, slice_sizes),
        "dynamic_update_slice": lambda x, update, *starts:
            lax.dynamic_update_slice(x, update, starts),
        "dot_general": lambda a, b, dimension_numbers, preferred_element_type=None:
            lax.dot_general(a, b, dimension_numbers, lax.Precision.HIGHEST,
                            preferred_element_type=preferred_element_type),
        "sort": lambda *xs, dimension, num_keys=1:
            lax.sort(xs, dimension=dimension, is_stable=True, num_keys=num_keys),
    })
    return rules


def _add_sub_ir_rules(rules, fallbacks, jnp, lax) -> None:
    """Rows for primitives carrying sub-IRs (their bodies are evaluated with the table)."""
    def call(*args, body, **_):
        return _body_fn(body, rules, fallbacks, jnp)(*args)

    def scan(*args, body, num_consts, num_carry, length, reverse):
        consts, carry, xs = (args[:num_consts], args[num_consts:num_consts + num_carry],
                             args[num_consts + num_carry:])
        run = _body_fn(body, rules, fallbacks, jnp)

        def step(c, x):
            outs = run(*consts, *c, *x)
            return tuple(outs[:num_carry]), tuple(outs[num_carry:])
        final, ys = lax.scan(step, tuple(carry), tuple(xs), length=length, reverse=reverse)
        return [*final, *ys]

    def cond(index, *operands, branches):
        return lax.switch(index, [_body_fn(b, rules, fallbacks, jnp) for b in branches],
                          *operands)

    def while_(*args, cond, body, cond_nconsts, body_nconsts, max_steps):
        cond_consts = args[:cond_nconsts]
        body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]
        test, step = (_body_fn(cond, rules, fallbacks, jnp), _body_fn(body, rules, fallbacks, jnp))

        def keep_going(state):
            steps, carry = state
            running = test(*cond_consts, *carry)[0]
            return running if max_steps is None else running & (steps < max_steps)

        def advance(state):
            steps, carry = state
            return steps + 1, tuple(step(*body_consts, *carry))
        _, final = lax.while_loop(keep_going, advance,
                                  (0, tuple(args[cond_nconsts + body_nconsts:])))
        return list(final)

    rules.update({"checkpoint": call, "custom_jvp_call": call, "custom_vjp_call": call,
                  "scan": scan, "cond": cond, "while": while_})
