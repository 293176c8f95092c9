"""The detached kernel builder (``build._BUILDER`` runs ``main`` with the request on stdin).

``build.py`` starts it in a session of its own for every library it has to compile, sends it
the translation unit, the cache key and the compiler as JSON on stdin, and waits. The builder
lowers its CPU priority (``os.nice``: the compiler competes less with the training steps that
run meanwhile, and holds no lock the parent's Python needs), takes the key's lock, compiles
and publishes atomically (``build.compile_and_publish``: temporaries removed, library then
manifest). Because it is its own process, a build that has started finishes and is published
even when the process that asked for it exits first; the next run finds it cached.

Exit status: ``BUILT`` (stdout ``built`` or ``cached``), ``REJECTED`` (stderr: the
``CompileError`` message), ``CACHE_UNUSABLE`` (stderr: the ``CacheError`` message).
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from ptojax.errors import CacheError, CompileError
from ptojax.lower.host.build import (BUILT, CACHE_UNUSABLE, REJECTED, compile_and_publish,
                                     header_digest)
from ptojax.lower.host.cache import CacheEntry
from ptojax.lower.host.compiler import Compiler
from ptojax.lower.host.prelude import Prelude, build_later

NICENESS = 10


def main() -> int:
    request = json.loads(sys.stdin.read())
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    compiler = Compiler(**{k: tuple(v) if isinstance(v, list) else v
                           for k, v in request["compiler"].items()})
    entry = CacheEntry(request["key"], Path(request["root"]))
    try:
        built = compile_and_publish(request["unit"], compiler, entry, request["name"])
    except CacheError as e:     # (a CompileError too: test it first)
        _say(2, str(e))
        return CACHE_UNUSABLE
    except CompileError as e:
        _say(2, str(e))
        return REJECTED
    _say(1, "built" if built else "cached")
    if built:    # precompile its prelude for the next builds (prelude.py), not waited for
        build_later(Prelude.of(request["unit"], compiler, entry.root, header_digest()))
    return BUILT


def _say(fd: int, text: str) -> None:
    """Tell the parent, if it is still there to read it."""
    with contextlib.suppress(OSError):
        os.write(fd, text.encode())


if __name__ == "__main__":
    sys.exit(main())
