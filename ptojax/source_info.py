"""Where in the user's code an operation came from.

An equation remembers the first stack frame outside the ptojax package that led to it. When a
transform re-emits equations (grad, vmap, ...), it sets ``current`` so the new equations keep
the line of the user's original operation instead of the line that called the transform.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
from contextlib import contextmanager
from typing import NamedTuple, Optional

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# The file name of the code ptojax generates (eval/executable.py): not the user's code either.
GENERATED_FILE = "<ptojax generated>"
# frames that are never the user's: ptojax's, the import machinery's, the generated code's, and
# those of numpy's errstate decorator, which ptojax wraps its numpy work in (eval/ieee.py)
_NOT_USER = (_PACKAGE_DIR, "<frozen", GENERATED_FILE, np.errstate.__init__.__code__.co_filename)


class SourceInfo(NamedTuple):
    file: str
    line: int
    function: str

    def __str__(self):
        return f"{self.file}:{self.line} in {self.function}"

    def short(self):
        return f"{os.path.basename(self.file)}:{self.line}"


class _State(threading.local):
    override: Optional[SourceInfo] = None
    scopes: tuple = ()      # the active named_scope names, outermost first


_state = _State()


def user_frame(depth: int = 1) -> Optional[SourceInfo]:
    """The innermost frame outside the ptojax package, or the active override."""
    if _state.override is not None:
        return _state.override
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_NOT_USER):
            function = frame.f_code.co_name
            if _state.scopes:
                function = "/".join((*_state.scopes, function))
            return SourceInfo(filename, frame.f_lineno, function)
        frame = frame.f_back
    return None


def entry_function_name() -> str:
    """The name of the ptojax function the user's code called (the outermost ptojax frame
    below the innermost user frame), for errors that know what went wrong but not which
    public function was given it."""
    frame, name = sys._getframe(1), "?"
    while frame is not None and frame.f_code.co_filename.startswith(_NOT_USER):
        if frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            name = frame.f_code.co_name
        frame = frame.f_back
    return name


@contextmanager
def current(source: Optional[SourceInfo]):
    """Attribute everything emitted inside the block to ``source`` (if not None)."""
    previous = _state.override
    if source is not None:
        _state.override = source
    try:
        yield
    finally:
        _state.override = previous


@contextmanager
def replaying():
    """For an interpreter that re-emits equations: yields ``at(source)``, which attributes
    what is emitted next to ``source`` (or to the enclosing attribution when it is None).
    The attribution in force before the block is restored after it."""
    previous = _state.override
    _state.override = None

    def at(source: Optional[SourceInfo]) -> None:
        _state.override = source or previous

    try:
        yield at
    finally:
        _state.override = previous


@contextmanager
def named_scope(name: str):
    """Name what is traced inside the block: its equations' source reads ``name/function``
    (``closed_ir.pretty(source=True)`` shows ``file.py:12 (name)``; error locations and
    numerics reports show it too); scopes nest. As JAX's ``jax.named_scope`` (whose names go
    to the HLO metadata).

    Example:
        >>> def f(x):
        ...     with pto.named_scope("encoder"):
        ...         return pnp.tanh(x)
        >>> "(encoder)" in pto.make_ir(f)(pnp.ones(2)).pretty(source=True)
        True
    """
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    previous = _state.scopes
    _state.scopes = (*previous, name)
    try:
        yield
    finally:
        _state.scopes = previous


def named_call(fun, *, name: Optional[str] = None):
    """``fun`` whose work is traced under ``named_scope(name)`` (``fun``'s name by
    default), as JAX's ``jax.named_call``.

    Example:
        >>> block = pto.named_call(pnp.tanh, name="block")
        >>> "(block)" in pto.make_ir(block)(pnp.ones(2)).pretty(source=True)
        True
    """
    scope = fun.__name__ if name is None else name

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return named
