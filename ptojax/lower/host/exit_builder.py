"""The detached process that builds the programs a run left waiting at exit
(``exit_handoff.py``; started with the request's path).

Niced from its start (``exit_handoff._BUILDER``), it reads the request (a trusted file of the
cache, unpickled with only ptojax's, numpy's and ml_dtypes' own names: unpickling never
imports a module of the user's), compiles each program as ``CpuBackend(tiered=False)`` does — the library built by
the detached builder (``build.py``) and the program's hint recorded (``cache.program_hint``)
— and removes the request when done. A program that does not unpickle or build is skipped;
the next run compiles it as usual and reports why.
"""
from __future__ import annotations

import contextlib
import io
import pickle
from pathlib import Path

from ptojax.lower.host.backend import CpuBackend, HostExecutable
from ptojax.lower.host.cache import read_trusted
from ptojax.lower.host.exit_handoff import REQUEST_VERSION

# the modules whose names a request may use
ALLOWED_MODULES = ("ptojax", "numpy", "ml_dtypes", "copyreg", "collections", "builtins")
ALLOWED_BUILTINS = frozenset({"slice", "frozenset", "set", "complex", "range", "tuple",
                              "list", "dict", "bytearray", "Ellipsis", "NotImplemented"})


class _OwnNames(pickle.Unpickler):
    def find_class(self, module, name):
        top = module.split(".")[0]
        if top not in ALLOWED_MODULES or (top == "builtins" and name not in ALLOWED_BUILTINS):
            raise pickle.UnpicklingError(f"{module}.{name} is not one of ptojax's own names")
        return super().find_class(module, name)


def main(request_path: str) -> int:
    """Build the programs of the request at ``request_path`` (the process is niced by
    ``exit_handoff._BUILDER`` before it imports anything), then remove the request."""
    path = Path(request_path)
    try:
        data = read_trusted(path)
        request = _load(data) if data is not None else None
        if not isinstance(request, dict) or request.get("version") != REQUEST_VERSION:
            return 2
        for program in request["programs"]:
            build_program(program)
        return 0
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


def build_program(pickled: bytes) -> bool:
    """Build one program of a request; False if it could not be (skipped)."""
    try:
        closed, options, donated, fingerprint = _load(pickled)
        executable = HostExecutable(closed, CpuBackend(**{**options, "tiered": False}),
                                    donated)
    except Exception:      # whatever it is, the next run meets it again and says so
        return False
    return executable._fingerprint() == fingerprint


def _load(data: bytes):
    return _OwnNames(io.BytesIO(data)).load()
