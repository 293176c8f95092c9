"""Pickles of ptojax's own objects (IRs, tiled programs, backend options) that other ptojax
processes read back from the kernel cache.

Only files the cache trusts are read (``cache.read_trusted``: private to this user), and they
are unpickled with ptojax's, numpy's and ml_dtypes' own names only: reading one never imports
a module of the user's (a program whose IR names a function of the user's is not pickled for
another process at all: ``dumps`` fails on it or ``loads`` refuses it). Primitives pickle by
name (``trace.Primitive.__reduce__``).
"""
from __future__ import annotations

import io
import pickle

# the modules whose names a pickle may use
ALLOWED_MODULES = ("ptojax", "numpy", "ml_dtypes", "copyreg", "collections", "builtins")
ALLOWED_BUILTINS = frozenset({"slice", "frozenset", "set", "complex", "range", "tuple",
                              "list", "dict", "bytearray", "Ellipsis", "NotImplemented"})


class _OwnNames(pickle.Unpickler):
    def find_class(self, module, name):
        top = module.split(".")[0]
        if top not in ALLOWED_MODULES or (top == "builtins" and name not in ALLOWED_BUILTINS):
            raise pickle.UnpicklingError(f"{module}.{name} is not one of ptojax's own names")
        return super().find_class(module, name)


# A program whose IR holds more constant bytes than this (weights a function closes over) is
# not pickled for another process: writing it would cost the cache (and an exiting process)
# more than tiling it again costs the next one.
MAX_CONST_BYTES = 16 << 20


class TooLarge(Exception):
    """The object holds more than ``MAX_CONST_BYTES`` of constants."""


def dumps(obj, closed=()) -> bytes:
    """``obj`` pickled; ``TooLarge`` if the ``ClosedIR``s ``closed`` (those ``obj`` holds)
    carry more than ``MAX_CONST_BYTES`` of constants, or the pickle is larger than that."""
    if sum(getattr(c, "nbytes", 0) for ir in closed for c in ir.consts) > MAX_CONST_BYTES:
        raise TooLarge()
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) > 2 * MAX_CONST_BYTES:
        raise TooLarge()
    return data


def loads(data: bytes):
    """``data`` unpickled, naming only ptojax's own modules (and numpy's, ml_dtypes')."""
    return _OwnNames(io.BytesIO(data)).load()
