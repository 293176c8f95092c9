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


def dumps(obj) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes):
    """``data`` unpickled, naming only ptojax's own modules (and numpy's, ml_dtypes')."""
    return _OwnNames(io.BytesIO(data)).load()
