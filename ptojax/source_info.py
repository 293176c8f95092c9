"""Where in the user's code an operation came from.

An equation remembers the first stack frame outside the ptojax package that led to it. When a
transform re-emits equations (grad, vmap, ...), it sets ``current`` so the new equations keep
the line of the user's original operation instead of the line that called the transform.
"""
from __future__ import annotations

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


_state = _State()


def user_frame(depth: int = 1) -> Optional[SourceInfo]:
    """The innermost frame outside the ptojax package, or the active override."""
    if _state.override is not None:
        return _state.override
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_NOT_USER):
            return SourceInfo(filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


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
