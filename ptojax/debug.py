"""``pto.debug``: look at values while a program runs — eagerly, under ``jit``, ``grad``,
``vmap``, loops and ``shard``.

    pto.debug.print("step {i}: loss {loss:.4f}", i=i, loss=loss)
    pto.debug.callback(lambda x: history.append(x), x)

Both stage a ``debug_callback`` equation (``ptojax/ops/debugging.py``) that runs when the
program reaches it, with the values of that run: under ``grad`` the forward (primal) values,
under ``vmap`` once per example, in a ``scan`` once per step, under ``pto.shard`` once with the
whole values (or, ``partitioned=True``, per device with its blocks). The optimizer never drops
or merges it. As in JAX, ``ordered=True`` asks for program order between callbacks — which
ptojax's executors always keep.
"""
from __future__ import annotations

import copy
import logging
import string
import sys

import numpy as np

from ptojax.eval.array import Array
from ptojax.ops.debugging import debug_callback
from ptojax.trace import Tracer
from ptojax.pytree import tree_flatten
from ptojax.public import dir_function
from ptojax.source_info import user_frame

_ARRAY_LIKE = (Array, Tracer, np.ndarray, np.generic, bool, int, float)


def _split_arguments(args, kwargs):
    """(treedef of (args, kwargs), the array leaves, {position: other leaf})."""
    leaves, treedef = tree_flatten((args, kwargs))
    dynamic = [x for x in leaves if isinstance(x, _ARRAY_LIKE)]
    static = {i: x for i, x in enumerate(leaves) if not isinstance(x, _ARRAY_LIKE)}
    return treedef, dynamic, static


def _merged(treedef, dynamic, static):
    it = iter(dynamic)
    leaves = [static[i] if i in static else next(it)
              for i in range(len(static) + len(dynamic))]
    return treedef.unflatten(leaves)


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` when the program runs, with the values of that run.

    Array arguments (and Python numbers) arrive as ``pto.Array`` copies; other arguments are
    passed as they are. Two forms, as in JAX: ``callback(fn, *args, **kwargs)`` and
    ``callback(ordered=..., partitioned=...)(fn, *args, **kwargs)``.

    Args:
      callback: a Python function returning None.
      *args: its positional arguments (pytrees).
      ordered: keep program order with other ordered callbacks (always the case here).
      partitioned: under ``pto.shard``, call it on every device with that device's blocks
        instead of once with the whole values.
      **kwargs: its keyword arguments.

    Returns:
      None (or, in the two-call form, the function taking ``fn, *args, **kwargs``).

    Example:
      >>> seen = []
      >>> pto.jit(lambda x: pto.debug.callback(seen.append, x * 2) or x)(pnp.ones(2))
      Array([1., 1.], dtype=float32)
      >>> seen
      [Array([2., 2.], dtype=float32)]
    """
    def stage(fn, *c_args, **c_kwargs):
        if not callable(fn):
            raise TypeError(f"pto.debug.callback: the first argument must be callable, got "
                            f"{type(fn).__name__}")
        treedef, dynamic, static = _split_arguments(c_args, c_kwargs)

        def flat_callback(*values):
            a, kw = _merged(treedef, values, static)
            fn(*a, **kw)

        flat_callback.__name__ = getattr(fn, "__name__", "callback")   # shown in the IR
        debug_callback(flat_callback, *dynamic, ordered=ordered, partitioned=partitioned)

    if callback is not None:
        stage(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"pto.debug.callback: the two-call form takes no arguments besides "
                        f"ordered/partitioned; got {args=} {kwargs=}")
    return stage


class _FormatChecker(string.Formatter):
    """Checks that a format string uses exactly the arguments given (formats nothing)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_names = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"pto.debug.print: unused positional arguments {unused}")
        if unused_names:
            raise ValueError(f"pto.debug.print: unused keyword arguments {unused_names}; an "
                             f"f-string formats too early: write pto.debug.print('x={{x}}', "
                             f"x=x)")


def _has_fields(fmt: str) -> bool:
    return any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))


def print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
          **kwargs):
    """Print ``fmt.format(*args, **kwargs)`` when the program runs, with the values of that
    run (a delayed ``print``: pass values as arguments, not in an f-string).

    Args:
      fmt: a ``str.format`` string, e.g. ``"x = {x}"``; without replacement fields the arguments
        are printed after it, separated by spaces.
      *args: positional values to format.
      ordered: keep program order with other ordered prints (always the case here).
      partitioned: under ``pto.shard``, print every device's blocks.
      skip_format_check: do not check that the arguments match the replacement fields.
      **kwargs: keyword values to format.

    Returns:
      None (or, in the two-call form ``print(ordered=...)``, the function taking ``fmt`` and
      the values).

    Example:
      >>> pto.jit(lambda x: pto.debug.print("x = {}", x) or x + 1)(pnp.arange(2.0))
      x = [0. 1.]
      Array([1., 2.], dtype=float32)
    """
    return _delayed_text("print", _write_line, fmt, args, kwargs, ordered, partitioned,
                         skip_format_check)


def log(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
        **kwargs):
    """``pto.debug.print``, but the text goes to the ``logging`` logger ``"ptojax.debug"`` at
    level INFO (as ``jax.debug.log`` sends it to JAX's), in a record naming the file, line
    and function that called ``log``. Same arguments and two-call form as ``print``.

    Example:
      >>> import logging
      >>> class Keep(logging.Handler):
      ...     def emit(self, record): kept.append(record.getMessage())
      >>> kept, logger = [], logging.getLogger("ptojax.debug")
      >>> logger.addHandler(handler := Keep()); logger.setLevel(logging.INFO)
      >>> _ = pto.jit(lambda x: pto.debug.log("x = {}", x) or x)(pnp.arange(2.0))
      >>> logger.removeHandler(handler); kept
      ['x = [0. 1.]']
    """
    return _delayed_text("log", _log_line, fmt, args, kwargs, ordered, partitioned,
                         skip_format_check)


_LOGGER = logging.getLogger("ptojax.debug")


def _write_line(text, record):
    sys.stdout.write(text + "\n")


def _log_line(text, record):
    record = copy.copy(record)
    record.msg, record.args = text, None
    _LOGGER.handle(record)


def _log_record():
    """An INFO record of ``_LOGGER`` naming the user's line (its message set at run time)."""
    where = user_frame()
    file, line, function = where if where is not None else ("<unknown>", 0, None)
    return _LOGGER.makeRecord(_LOGGER.name, logging.INFO, file, line, "", None, None,
                              function)


def _delayed_text(name, output, fmt, args, kwargs, ordered, partitioned, skip_format_check):
    """Stage the formatting of ``fmt`` with the run's values and ``output(text, record)``
    of it (``print``'s and ``log``'s shared body, with their two-call form)."""
    def stage(fmt, *p_args, **p_kwargs):
        if not skip_format_check:
            _FormatChecker().format(fmt, *p_args, **p_kwargs)
        has_fields = _has_fields(fmt)
        options = np.get_printoptions()
        record = _log_record() if output is _log_line else None

        def emit(*values, **named):
            with np.printoptions(**options):
                if has_fields:
                    text = fmt.format(*values, **named)
                else:
                    text = " ".join([fmt, *(str(v) for v in values)])
            output(text, record)

        emit.__name__ = f"{name}({fmt!r})"

        callback(emit, *p_args, ordered=ordered, partitioned=partitioned, **p_kwargs)

    if fmt is not None:
        stage(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"pto.debug.{name}: the two-call form takes no arguments besides "
                        f"ordered/partitioned/skip_format_check; got {args=} {kwargs=}")
    return stage


__all__ = ["callback", "log", "print"]
__dir__ = dir_function(__all__)
