"""The detached process that builds the programs a run left waiting at exit
(``exit_handoff.py``; started with the request's path).

Niced from its start (``exit_handoff._BUILDER``), it reads the request (a trusted file of the
cache, unpickled by ``own_pickle``: never importing a module of the user's), compiles each program as ``CpuBackend(tiered=False)`` does — the library built by
the detached builder (``build.py``) and the program's hint recorded (``cache.program_hint``)
— and removes the request when done. A program that does not unpickle or build is skipped;
the next run compiles it as usual and reports why.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from ptojax.lower.host import own_pickle
from ptojax.lower.host.backend import CpuBackend, HostExecutable
from ptojax.lower.host.cache import read_trusted
from ptojax.lower.host.exit_handoff import REQUEST_VERSION


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
    return own_pickle.loads(data)
