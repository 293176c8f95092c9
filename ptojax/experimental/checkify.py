"""``ptojax.experimental.checkify``: run-time checks inside transformed functions, as JAX's
``jax.experimental.checkify``.

``check(pred, msg, *fmt_args)`` asserts on traced values. Run eagerly it raises at once;
under ``checkify(f)`` it becomes data: ``checkify(f)(*args)`` returns ``(error, out)``, where
``error`` is an ``Error`` (a pytree of arrays, so it leaves ``jit`` and ``vmap``) saying
whether a check failed and which one did first, with the values its message shows.
``checkify`` can also add automatic checks (``errors=``): NaNs made by a primitive
(``nan_checks``), divisions by zero (``div_checks``) and out-of-bounds indices
(``index_checks``).

How: ``checkify`` traces ``f`` to IR (``check`` stages a ``check`` equation there, see
``ptojax/ops/runtime_check.py``, which ``grad`` and ``vmap`` know how to rewrite) and
evaluates that IR with an error state threaded through: ``check`` equations update it, each
equation an automatic check watches adds its test, ``cond``/``while``/``scan`` are re-bound
with the state in their operands and carries, and the bodies of calls (``custom_jvp``,
``custom_vjp``, ``checkpoint``) are evaluated in line (so their custom rules do not survive
``checkify``). Every check site is known before the evaluation, so the state has one fixed
structure (a flag, the code of the first failed site and each site's payload), as loops
need. Other equations with their own IR (``shard_map``, tile kernels) are left as they are:
a ``check`` there is not functionalized (it raises when it runs) and automatic checks do
not look inside.
"""
from __future__ import annotations

import contextlib
import functools
import threading

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.autodiff.api import trace_pytree_fn
from ptojax.batching.api import vmap
from ptojax.control_flow import cond_p, scan_p, while_p
from ptojax.eval.array import Array
from ptojax.ir.core import Var
from ptojax.ops.runtime_check import (DivisionByZeroError, FailedCheckError, JaxException,
                                      JaxRuntimeError, Message, NaNError, OOBError, check_p)
from ptojax.public import dir_function
from ptojax import source_info as _source_info
from ptojax.trace import Tracer, bind as _bind, eager_context, is_concrete, tracing
from ptojax.tree_util import register_pytree_node_class, tree_flatten, tree_unflatten

ErrorCategory = type[JaxException]
user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
div_checks = frozenset({DivisionByZeroError})
index_checks = frozenset({OOBError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


class BatchedError(JaxException):
    """The errors of a batch (an ``Error`` from ``vmap(checkify(f))``): ``error_mapping``
    maps each failing index to its error."""

    def __init__(self, error_mapping):
        self.error_mapping = error_mapping
        super().__init__("\n".join(f"at mapped index {', '.join(map(str, idx))}: {e}"
                                   for idx, e in error_mapping.items()))

    def __repr__(self):
        return f"BatchedError(error_mapping={self.error_mapping!r})"


@register_pytree_node_class
class Error:
    """What ``checkify(f)`` returns beside ``f``'s output: whether a check failed, which one
    failed first (its code) and the values its message shows. A pytree of arrays (batched
    under ``vmap``: one error per example); read it with ``get``, ``get_exception`` or
    ``throw`` (outside ``jit``).

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import checkify
        >>> def f(x):
        ...     checkify.check(x > 0, "x must be positive, got {}", x)
        ...     return pnp.log(x)
        >>> error, y = checkify.checkify(f)(pnp.array(-1.0))
        >>> print(error.get())
        x must be positive, got -1.0 (`check` failed)
    """

    def __init__(self, failed, code, payloads, messages):
        self._failed, self._code = failed, code
        self._payloads, self._messages = tuple(map(tuple, payloads)), tuple(messages)

    def tree_flatten(self):
        leaves = [self._failed, self._code, *(x for p in self._payloads for x in p)]
        return leaves, (self._messages, tuple(map(len, self._payloads)))

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        messages, counts = aux
        payloads, rest = [], list(leaves[2:])
        for n in counts:
            payloads.append(rest[:n])
            rest = rest[n:]
        return cls(leaves[0], leaves[1], payloads, messages)

    def get(self):
        """The message of the first failed check (one line per failing example of a
        batched error), or None."""
        exception = self.get_exception()
        return None if exception is None else str(exception)

    def get_exception(self):
        """The first failed check as a ``JaxException`` of its category (a
        ``BatchedError`` for a batched error), or None."""
        failed = np.asarray(self._failed)
        if failed.ndim == 0:
            return self._exception_at(()) if failed else None
        mapping = {idx: self._exception_at(idx) for idx in np.ndindex(failed.shape)
                   if failed[idx]}
        return BatchedError(mapping) if mapping else None

    def throw(self):
        """Raise ``JaxRuntimeError`` if a check failed (for a batch: the last failing
        example's, as JAX)."""
        exception = self.get_exception()
        if isinstance(exception, BatchedError):
            exception = list(exception.error_mapping.values())[-1]
        if exception is not None:
            raise JaxRuntimeError(str(exception))

    def _exception_at(self, idx):
        code = int(np.asarray(self._code)[idx])
        payload = [np.asarray(x)[idx] for x in self._payloads[code]]
        return self._messages[code].exception(payload)

    def __str__(self):
        return f"Error({self.get()})"

    __repr__ = __str__


init_error = Error(np.False_, np.int32(0), (), ())


class _Functionalizing(threading.local):
    depth = 0


_functionalizing = _Functionalizing()


@contextlib.contextmanager
def _inside_checkify():
    _functionalizing.depth += 1
    try:
        yield
    finally:
        _functionalizing.depth -= 1


def check(pred, msg, *fmt_args, debug=False, **fmt_kwargs):
    """Assert ``pred`` (a boolean scalar): if it is false, the error is ``msg`` formatted
    (``str.format``) with ``fmt_args``/``fmt_kwargs`` (pytrees of arrays). Eagerly a false
    predicate raises ``JaxRuntimeError``; inside ``checkify`` it becomes the returned
    ``Error``; staged out (``jit``, loops) without ``checkify`` it is an error. With
    ``debug=True`` it is ``debug_check``.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import checkify
        >>> checkify.check(pnp.array(2.0) > 0, "fine")
        >>> error, _ = checkify.checkify(lambda x: checkify.check(x < 1, "x={}", x))(
        ...     pnp.array(2.0))
        >>> print(error.get())
        x=2.0 (`check` failed)
    """
    _check_pred(pred)
    leaves, tree = tree_flatten((fmt_args, fmt_kwargs))
    for leaf in leaves:
        if not isinstance(leaf, (Array, Tracer, np.ndarray, np.generic)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {leaf!r} of type {type(leaf)}.")
    message = Message(FailedCheckError, msg, tree)
    if _functionalizing.depth:
        check_p.bind(pred, *leaves, message=message)
    elif tracing() and eager_context() and not all(map(is_concrete, [pred, *leaves])):
        # an eager transform (vmap outside jit): its IR runs now, the check with it
        check_p.bind(pred, *leaves, message=message)
    elif all(map(is_concrete, [pred, *leaves])):
        if not bool(pred):  # (a value being differentiated is shown without its derivative)
            raise JaxRuntimeError(message.format([lax.stop_gradient(x) for x in leaves]))
    elif not debug:
        raise _not_functionalized()


def _not_functionalized():
    return ValueError(
        "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
        "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
        "functionalizing it through `checkify.checkify`.")


def debug_check(pred, msg, *fmt_args, **fmt_kwargs):
    """``check``, but staged out without ``checkify`` it does nothing (instead of being an
    error).

    Example:
        >>> import ptojax as pto
        >>> from ptojax.experimental import checkify
        >>> print(pto.jit(lambda x: (checkify.debug_check(x > 0, "no"), x)[1])(-1.0))
        -1.0
    """
    check(pred, msg, *fmt_args, debug=True, **fmt_kwargs)


def _check_pred(pred):
    shape, dtype = np.shape(pred), getattr(pred, "dtype", None)
    if isinstance(pred, (bool, np.bool_)):
        return
    if shape != () or dtype is None or np.dtype(dtype) != np.bool_:
        raise TypeError(f"check takes a scalar pred as argument, got {pred}")


def check_error(error: Error) -> None:
    """Raise ``error`` again: eagerly ``error.throw()``; inside ``checkify`` it becomes part
    of the returned error (so a function can pass on errors of a ``checkify``-ed call).

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import checkify
        >>> def f(x):
        ...     checkify.check(x > 0, "x={}", x)
        ...     return x
        >>> def g(x):
        ...     error, y = checkify.checkify(f)(x)
        ...     checkify.check_error(error)
        ...     return y
        >>> print(checkify.checkify(g)(pnp.array(-3.0))[0].get())
        x=-3.0 (`check` failed)
    """
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error (from checkify), got {type(error)}")
    if _functionalizing.depth and np.ndim(error._failed):
        vmap(check_error)(error)
    elif _functionalizing.depth:
        for code, (message, payload) in enumerate(zip(error._messages, error._payloads)):
            failed_here = error._failed & (error._code == code)
            check_p.bind(~failed_here, *payload, message=message)
    elif all(map(is_concrete, tree_flatten(error)[0])):
        error.throw()
    else:
        raise _not_functionalized()


def checkify(f, errors=user_checks):
    """``f`` made to return ``(error, out)``: ``error`` (an ``Error``) records the first
    check that failed: the ``check`` calls in ``f`` (``user_checks``) and the automatic
    checks in ``errors`` (``nan_checks``, ``div_checks``, ``index_checks``; ``all_checks``
    is every one). Composes with ``jit`` (either way round), ``vmap`` (a batched error) and
    ``grad``.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import checkify
        >>> error, y = checkify.checkify(lambda x, i: x[i], errors=checkify.index_checks)(
        ...     pnp.arange(3.0), 5)
        >>> print(error.get())
        out-of-bounds indexing for array of shape (3,): index 5 is out of bounds for axis 0 with size 3.
    """
    errors = frozenset(errors)
    for category in errors:
        if not (isinstance(category, type) and issubclass(category, JaxException)):
            raise TypeError(f"checkify's errors must be ErrorCategory values (as in "
                            f"checkify.all_checks), got {category!r}")

    @functools.wraps(f)
    def checked(*args, **kwargs):
        leaves, in_tree = tree_flatten((args, kwargs))
        with _inside_checkify():
            closed, out_tree, _ = trace_pytree_fn(lambda a, k: f(*a, **k), leaves, in_tree,
                                                  name=getattr(f, "__name__", "checkify"))
        sites = _Sites(errors)
        sites.find(closed)
        state = sites.initial_state()
        with _inside_checkify():
            outs, state = _Checker(sites).run(closed, leaves, state)
        failed, code, payloads = state
        return (Error(failed, code, payloads, [m for m, _ in sites.messages]),
                tree_unflatten(out_tree, outs))
    return checked


# where errors can happen -----------------------------------------------------------------------
# the primitives that can make a NaN: JAX's list, in ptojax's names (its reduce, linear_solve,
# reduce_window and rng_uniform are compositions here: their parts are checked)
_MAKE_NANS = frozenset(
    "acos acosh add asin asinh atan2 atan atanh bessel_i0e bessel_i1e cbrt "
    "conv_general_dilated cos cosh cumlogsumexp cummax cummin cumprod cumsum digamma "
    "dot_general erf_inv erf erfc exp expm1 fft igamma_grad_a igamma igammac integer_pow "
    "lgamma log1p log logistic mul pad pow psum reduce_prod reduce_sum betainc rem rsqrt sin "
    "sinh sqrt sub tan tanh div".split())
_INDEXING = ("dynamic_slice", "dynamic_update_slice", "gather", "scatter")


class _Sites:
    """Each equation that can fail (a check, or one an automatic check watches), numbered
    in program order, with its ``Message`` and its payload's types."""

    def __init__(self, errors):
        self.errors = errors
        self.messages = []   # (Message, payload types)
        self.code = {}       # (equation id, kind) -> code
        self.inside = {}     # id of a threaded equation -> whether its IR has sites

    def find(self, closed) -> bool:
        found = False
        for eqn in closed.ir.eqns:
            threaded = _threaded_irs(eqn)
            if threaded:
                self.inside[id(eqn)] = any([self.find(sub) for sub in threaded])
                found |= self.inside[id(eqn)]
                continue
            for kind, message, types in self._of(eqn):
                self.code[(id(eqn), kind)] = len(self.messages)
                self.messages.append((message, types))
                found = True
        return found

    def _of(self, eqn):
        name, errors = eqn.prim.name, self.errors
        if eqn.prim is check_p:
            if FailedCheckError in errors:
                message = eqn.params["message"]
                yield "check", message, [_type_of(x) for x in eqn.inputs[1:]]
            return
        if OOBError in errors and name in _INDEXING:
            shape = _type_of(eqn.inputs[0]).shape
            text = (f"out-of-bounds indexing for array of shape {shape}: index {{}} is out of "
                    f"bounds for axis {{}} with size {{}}. ")
            yield "oob", Message(OOBError, text, _THREE), [_INDEX] * 3
        if DivisionByZeroError in errors and name == "div":
            yield "div", Message(DivisionByZeroError, "division by zero", _NONE), []
        if NaNError in errors and name in _MAKE_NANS and any(
                _is_float(_type_of(v)) for v in eqn.outputs):
            yield "nan", Message(NaNError, f"nan generated by primitive: {name}.", _NONE), []

    def initial_state(self):
        payloads = [[pnp.zeros(t.shape, t.dtype) for t in types] for _, types in self.messages]
        return pnp.array(False), pnp.int32(0), payloads


_NONE = tree_flatten(((), {}))[1]
_THREE = tree_flatten(((0, 0, 0), {}))[1]
_INDEX = np.zeros((), np.int32)  # the type of an index, an axis and a size


def _type_of(x):
    return x.type if hasattr(x, "type") else x.aval


def _is_float(t) -> bool:
    return dtypes.is_inexact(t.dtype)


def _threaded_irs(eqn):
    """The IRs of an equation ``checkify`` evaluates itself, threading the error state:
    cond's branches, while's condition and body, scan's body, and the body of a call
    (custom_jvp/custom_vjp functions and checkpoint, inlined: their rules are dropped)."""
    if eqn.prim is cond_p:
        return list(eqn.params["branches"])
    if eqn.prim is while_p:
        return [eqn.params["cond"], eqn.params["body"]]
    if eqn.prim is scan_p or _is_call(eqn):
        return [eqn.params["body"]]
    return []


def _is_call(eqn) -> bool:
    body = eqn.params.get("body") if eqn.prim.call_like else None
    return body is not None and len(body.ir.invars) == len(eqn.inputs)


# evaluation with the error state ---------------------------------------------------------------
class _Checker:
    def __init__(self, sites):
        self.sites = sites

    def run(self, closed, args, state):
        """``closed``'s outputs on ``args``, and the error state after it."""
        ir = closed.ir
        env = dict(zip(ir.constvars, closed.consts))
        env.update(zip(ir.invars, args))
        with _source_info.replaying() as at:
            for eqn in ir.eqns:
                inputs = [env[v] if type(v) is Var else _literal(v) for v in eqn.inputs]
                at(eqn.source)
                outs, state = self.equation(eqn, inputs, state)
                env.update(zip(eqn.outputs, outs))
        return [env[v] if type(v) is Var else _literal(v) for v in ir.outvars], state

    def equation(self, eqn, inputs, state):
        codes = {kind: self.sites.code.get((id(eqn), kind))
                 for kind in ("check", "oob", "div", "nan")}
        if eqn.prim is check_p:
            if codes["check"] is not None:
                state = _record(state, codes["check"], ~inputs[0], inputs[1:])
            return [], state
        if self.sites.inside.get(id(eqn)):
            return self.threaded(eqn, inputs, state)
        if codes["oob"] is not None:
            state = _record(state, codes["oob"], *_out_of_bounds(eqn, inputs))
        if codes["div"] is not None:
            state = _record(state, codes["div"], pnp.any(inputs[1] == 0), [])
        out = _bind(eqn.prim, inputs, eqn.params)
        outs = list(out) if eqn.prim.multiple_results else [out]
        if codes["nan"] is not None:
            made = [pnp.any(pnp.isnan(o)) for o in outs if _is_float(pnp.asarray(o))]
            state = _record(state, codes["nan"], pnp.any(pnp.array(made)), [])
        return outs, state

    def threaded(self, eqn, inputs, state):
        """A cond, while or scan re-bound with the error state in its operands/carry (a
        while's condition is evaluated once more on each new carry to record its errors, as
        JAX does); a call's body evaluated in line."""
        params = eqn.params
        if _is_call(eqn):
            return self.run(params["body"], inputs, state)
        if eqn.prim is cond_p:
            index, *ops = inputs

            def branch(closed):
                return lambda state, ops: self.run(closed, ops, state)[::-1]

            state, outs = lax.switch(index, [branch(b) for b in params["branches"]],
                                     state, ops)
            return outs, state
        if eqn.prim is while_p:
            nc, nb = params["cond_nconsts"], params["body_nconsts"]
            cond_consts, body_consts, carry = inputs[:nc], inputs[nc:nc + nb], inputs[nc + nb:]

            def test(carry, state):
                return self.run(params["cond"], [*cond_consts, *carry], state)

            def keep_going(pair):  # (its checks count where test runs them, below)
                return test(pair[1], pair[0])[0][0]

            def body(pair):
                outs, new_state = self.run(params["body"], [*body_consts, *pair[1]], pair[0])
                return test(outs, new_state)[1], outs

            state = test(carry, state)[1]
            state, carry = lax.while_loop(keep_going, body, (state, carry))
            return carry, state
        n_consts, n_carry = params["num_consts"], params["num_carry"]
        consts, carry = inputs[:n_consts], inputs[n_consts:n_consts + n_carry]
        xs = inputs[n_consts + n_carry:]

        def step(pair, x):
            outs, new_state = self.run(params["body"], [*consts, *pair[1], *x], pair[0])
            return (new_state, outs[:n_carry]), outs[n_carry:]

        (state, carry), ys = lax.scan(step, (state, carry), xs, length=params["length"],
                                      reverse=params["reverse"])
        return [*carry, *ys], state


def _literal(v):
    return Array(np.asarray(v.value, v.type.dtype), v.type.weak_type)


def _record(state, code, fails, payload):
    """The state after a site that ``fails`` (a boolean scalar) with ``payload``: the first
    failure is kept."""
    failed, current, payloads = state
    first = fails & ~failed
    payloads = list(payloads)
    payloads[code] = [pnp.where(first, pnp.asarray(new, old.dtype), old)
                      for new, old in zip(payload, payloads[code])]
    return failed | fails, pnp.where(first, pnp.int32(code), current), payloads


def _out_of_bounds(eqn, inputs):
    """Whether an indexing equation reads or writes out of bounds, and (index, axis, size)
    of the first bad index (in the order of the indices)."""
    shape = _type_of(eqn.inputs[0]).shape
    if eqn.prim.name in ("dynamic_slice", "dynamic_update_slice"):
        if eqn.prim.name == "dynamic_slice":
            starts, sizes = inputs[1:], eqn.params["slice_sizes"]
        else:
            starts, sizes = inputs[2:], _type_of(eqn.inputs[1]).shape
        starts = pnp.stack([pnp.asarray(s, np.int32) for s in starts])
        limits = pnp.array([n - k for n, k in zip(shape, sizes)], np.int32)
        axes = pnp.arange(len(shape), dtype=np.int32)
        bad = (starts < 0) | (starts > limits)
        dims = pnp.array(shape, np.int32)
    else:
        nbatch, axes_of = eqn.params["nbatch"], eqn.params["axes"]
        indices = pnp.asarray(inputs[1], np.int32)
        sizes = np.array([shape[nbatch + a] for a in axes_of], np.int32)
        bad = (indices < 0) | (indices >= sizes)
        starts = indices.reshape(-1)
        bad = bad.reshape(-1)
        axes = pnp.tile(pnp.array([nbatch + a for a in axes_of], np.int32),
                        starts.shape[0] // len(axes_of))
        dims = pnp.tile(pnp.asarray(sizes), starts.shape[0] // len(axes_of))
    first = pnp.argmax(bad)
    return pnp.any(bad), [starts[first], axes[first], dims[first]]


__all__ = ["Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks",
           "index_checks", "init_error", "nan_checks", "user_checks"]
__dir__ = dir_function(__all__)
