"""``check``: a run-time assertion on traced values (the primitive behind
``pto.experimental.checkify.check``), and the error kinds ``checkify`` reports.

``check_p`` takes the predicate and the leaves of the message's formatting arguments and
has no results; it is ``effectful``, so no optimization drops it. Its ``message`` parameter
(a ``Message``: what kind of error, the text and how to rebuild the formatting arguments)
is static. Run eagerly it raises ``JaxRuntimeError`` when the predicate is false; staged
out, ``checkify`` turns each one into error values (an ``Error``) that the function
returns. Its facts:

- jvp: the check sees the primal values, as ``debug_callback``;
- batch: one check over the whole batch, false if any example's predicate is; the message
  is formatted with the arguments of the last failing example (JAX's choice).

The error kinds (``FailedCheckError``, ``NaNError``, ``DivisionByZeroError``, ``OOBError``,
all ``JaxException``s) are the ``ErrorCategory`` values ``checkify``'s ``errors=`` sets hold.
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import PtoError
from ptojax.ops.costs import no_flops
from ptojax.ops.dynamic_slicing import dynamic_index_in_dim
from ptojax.ops.logic import not_p
from ptojax.ops.reductions import argmax, reduce_and_p
from ptojax.ops.shape import move_axis
from ptojax.ops.slicing import rev
from ptojax.pytree import tree_unflatten
from ptojax.trace import Primitive, Unsupported


class JaxRuntimeError(PtoError, ValueError):
    """A failed check, raised by ``Error.throw()`` or by a ``check`` run eagerly (raised
    where a program runs, it names the check's line).

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import checkify
        >>> try:
        ...     checkify.check(pnp.array(-1.0) > 0, "negative")
        ... except checkify.JaxRuntimeError as e:
        ...     print(e)
        negative (`check` failed)
    """


class JaxException(Exception):
    """An error ``checkify`` found: its kind (the subclass) and the values its message shows."""

    def __init__(self, message: str, *payload):
        super().__init__(message)
        self.message, self.payload = message, payload

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"{type(self).__name__}({self.message!r})"


class FailedCheckError(JaxException):
    """A user's ``check`` whose predicate was false."""


class NaNError(JaxException):
    """A primitive produced a NaN from operands without one."""


class DivisionByZeroError(JaxException):
    """A division by zero."""


class OOBError(JaxException):
    """An out-of-bounds index."""


class Message:
    """What a check reports: its ``category`` (a ``JaxException`` subclass), its ``text``
    (a ``str.format`` template) and ``tree``, the pytree structure of ``(args, kwargs)``
    formatting it. Compared by identity: each check site is its own message."""
    __slots__ = ("category", "text", "tree")

    def __init__(self, category, text, tree):
        self.category, self.text, self.tree = category, text, tree

    def format(self, payload) -> str:
        """The message with the payload's values (arrays, as numpy shows them)."""
        values = [np.asarray(v)[()] if np.ndim(v) == 0 else np.asarray(v) for v in payload]
        args, kwargs = tree_unflatten(self.tree, values)
        text = self.text.format(*args, **kwargs)
        return f"{text} (`check` failed)" if self.category is FailedCheckError else text

    def exception(self, payload) -> JaxException:
        return self.category(self.format(payload), *payload)

    def __repr__(self):
        return f"{self.category.__name__}({self.text!r})"


def _abstract_eval(pred, *payload, message):
    return []


def _impl(pred, *payload, message):
    if not bool(np.asarray(pred)):
        raise JaxRuntimeError(message.format(payload))
    return []


check_p = Primitive("check", _abstract_eval, _impl, multiple_results=True, effectful=True)


def _jvp(primals, tangents, message):
    return check_p.bind(*primals, message=message), []


def _batch(args, dims, message):
    """All examples pass, with the formatting arguments of the last one that does not."""
    pred, *payload = args
    pred_dim, *payload_dims = dims
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    if pred_dim is None:
        last = np.int32(0)
        ok = pred
    else:
        pred = move_axis(pred, pred_dim, 0)
        ok = reduce_and_p.bind(pred, axes=(0,))
        last = size - 1 - argmax(rev(not_p.bind(pred), (0,)), 0)
    payload = [x if d is None else dynamic_index_in_dim(move_axis(x, d, 0), last, 0, False)
               for x, d in zip(payload, payload_dims)]
    return check_p.bind(ok, *payload, message=message), []


_NO_VALUES = "a check computes no values"
check_p.define(
    jvp=_jvp, batch=_batch, cost=no_flops,
    shard=Unsupported("checks are functionalized by checkify before sharding"),
    tile=Unsupported("a check runs between kernels, as a tensor-level equation"),
    reference=Unsupported(f"{_NO_VALUES} to compare with JAX"))

