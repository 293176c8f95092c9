"""Programs still waiting for their kernels when the interpreter exits, built for the next run.

A tiered function compiles on the background worker after its first call (``backend.py``);
a short run can exit before its compile has even started (its first job is finding the
compiler, and probing a compiler takes a second or more), and the worker, a daemon thread,
dies with it. At exit, ``hand_off`` gives the programs whose library build had not started
yet to a detached process (``exit_builder.py``) that builds them, so the next run finds them
cached — loaded from its first calls (``cache.program_hint``) instead of compiled again:

- the request — each program's IR as given to its ``HostExecutable`` (pickled: primitives by
  name), its backend options and donated inputs — is written atomically, private, to
  ``host-kernels/handoff/<random>.pickle`` in the cache, and the builder is started in a
  session of its own with the request's path, and not waited for: exiting stays as fast as
  writing a file and starting a process (measured by the tests);
- the builder lowers its priority (``os.nice``, before it imports ptojax), compiles each program as
  ``CpuBackend(tiered=False)`` would (which finds the compiler, waiting for a probe still
  running, builds through the detached builder: atomic publication, nothing half-written)
  and records the program's hint, then removes the request. A program it cannot build is
  skipped (the next run compiles it as usual, and reports why).

A program is handed off only if it pickles (its IR names no Python function of the user's,
its target is a named one) and holds at most ``own_pickle.MAX_CONST_BYTES`` of constants;
one that does not is left to the next run. ``$PTOJAX_BUILD_AT_EXIT``
(default on) turns this off; the test suite does, so that it does not leave builds behind.
"""
from __future__ import annotations

import contextlib
import dataclasses
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Optional

from ptojax.env import env_flag
from ptojax.errors import CacheError
from ptojax.lower.host import own_pickle
from ptojax.lower.host.cache import checked_root, private_dir, write_atomic
from ptojax.targets import TARGETS

ENV = "PTOJAX_BUILD_AT_EXIT"
REQUEST_VERSION = 1
REQUEST_SUFFIX = ".pickle"
PACKAGE_PARENT = Path(__file__).resolve().parents[3]   # the directory holding ``ptojax``
NICENESS = 10
# The builder's program: niced before anything else (importing ptojax takes a core for most of
# a second, while the process that started it is still exiting), ptojax imported from where
# this process imported it.
_BUILDER = (f"import os, sys; os.nice({NICENESS}); sys.path.insert(0, sys.argv[1]); "
            "from ptojax.lower.host.exit_builder import main; sys.exit(main(sys.argv[2]))")


@dataclasses.dataclass(frozen=True)
class Program:
    """One program to build: the IR its ``HostExecutable`` was given, its options, the
    inputs it may overwrite, and its fingerprint (``HostExecutable._fingerprint``)."""
    closed: object
    options: object
    donated: frozenset
    fingerprint: str


def enabled() -> bool:
    return env_flag(ENV, True)


def handoff_dir(root: Path) -> Path:
    return private_dir(private_dir(root / "host-kernels") / "handoff")


def pending_requests(root: Path) -> list:
    """The requests whose builders have not finished (each removes its own when done)."""
    try:
        return sorted((root / "host-kernels" / "handoff").glob(f"*{REQUEST_SUFFIX}"))
    except OSError:
        return []


def hand_off(programs) -> Optional[subprocess.Popen]:
    """Start a detached builder for ``programs`` (``Program``s); the process, or None if none
    of them could be handed off (or the cache is unusable)."""
    pickled = [p for p in map(_pickled, programs) if p is not None]
    if not pickled:
        return None
    try:
        path = handoff_dir(checked_root()) / f"{secrets.token_hex(8)}{REQUEST_SUFFIX}"
        write_atomic(path, own_pickle.dumps({"version": REQUEST_VERSION, "programs": pickled}))
    except (CacheError, OSError):
        return None
    try:
        return subprocess.Popen([sys.executable, "-c", _BUILDER, str(PACKAGE_PARENT), str(path)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def _pickled(program: Program) -> Optional[bytes]:
    """The program pickled, its options as a dict with the target by name; None if it does
    not pickle (a function of the user's in its IR, an unnamed target) or is too large
    (``own_pickle.MAX_CONST_BYTES``)."""
    options = {f.name: getattr(program.options, f.name)
               for f in dataclasses.fields(program.options)}
    target = options["target"]
    if TARGETS.get(target.name) != target:
        return None
    options["target"] = target.name
    try:
        return own_pickle.dumps((program.closed, options, program.donated, program.fingerprint),
                                closed=(program.closed,))
    except Exception:        # anything that does not pickle: left to the next run
        return None
