"""Precompiled preludes: the host headers parsed once per cache, not once per library.

Every translation unit (``build.translation_unit``) starts with the same *prelude*: a few
macros (the target's buffer sizes, the sync checker) and ``#include "pto_host.h"``. Parsing
those headers (and the C++ standard library they include) is about half of compiling a small
kernel library with GCC. So after a library is built, the detached builder also precompiles
its prelude (GCC's precompiled headers), once per prelude, compiler and flags:

    host-kernels/<k[:2]>/<k>.prelude/ptojax_prelude.h      the prelude's text
    host-kernels/<k[:2]>/<k>.prelude/ptojax_prelude.h.gch  GCC's precompiled form of it

and later builds of units with that prelude include ``ptojax_prelude.h`` instead (with its
directory first on the include path, GCC reads the ``.gch``). The library is the same either
way (its key is computed from the unit as written); a build that fails with the precompiled
prelude is retried without it, and the prelude is discarded. The files follow the cache's
rules (``cache.py``): private, written atomically under the key's lock, trusted only if this
user wrote them. Only GCC is used this way (clang's precompiled headers work differently).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

from ptojax.lower.host.cache import CacheEntry, private_dir, trusted_file, write_atomic
from ptojax.lower.host.compiler import INCLUDE_DIR, Compiler, cpu_features

PRELUDE_END = '#include "pto_host.h"\n'
HEADER = "ptojax_prelude.h"
BUILD_TIMEOUT_S = 300


class Prelude:
    """The prelude of one translation unit, for one compiler and cache."""

    def __init__(self, text: str, compiler: Compiler, root: Path, header_digest: str):
        parts = (text, header_digest, compiler.identity, " ".join(compiler.flags),
                 cpu_features())
        self.entry = CacheEntry(hashlib.sha256("\0".join(parts).encode()).hexdigest(), root)
        self.text = text
        self.compiler = compiler
        self.dir = self.entry.dir / f"{self.entry.key}.prelude"
        self.header = self.dir / HEADER
        self.precompiled = self.dir / f"{HEADER}.gch"

    @classmethod
    def of(cls, unit: str, compiler: Compiler, root: Path, header_digest: str):
        """The unit's prelude, or None if the unit has none or the compiler is not GCC."""
        end = unit.find(PRELUDE_END)
        if end < 0 or not _is_gcc(compiler):
            return None
        return cls(unit[:end + len(PRELUDE_END)], compiler, root, header_digest)

    def ready(self) -> bool:
        return trusted_file(self.header) and trusted_file(self.precompiled)

    def unit_using_it(self, unit: str) -> str:
        """``unit`` with its prelude replaced by the include of the precompiled one."""
        return f'#include "{HEADER}"\n' + unit[len(self.text):]

    def include_flags(self) -> list:
        return [f"-I{self.dir}"]

    def build(self) -> None:
        """Precompile the prelude unless it is done or another process is doing it; failures
        leave nothing (the builds just keep parsing the headers)."""
        with self.entry.locked(wait=False) as held:
            if held:
                self.build_holding_lock()

    def build_holding_lock(self) -> None:
        """``build``, the caller holding the prelude's lock."""
        if self.ready():
            return
        self.entry.remove_temporaries()
        private_dir(self.dir)
        write_atomic(self.header, self.text.encode())
        out = self.entry.temporary(".gch.tmp")
        flags = [f for f in self.compiler.flags if f != "-shared"]
        cmd = [*self.compiler.command, *flags, "-x", "c++-header", f"-I{INCLUDE_DIR}",
               str(self.header), "-o", str(out)]
        try:
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=BUILD_TIMEOUT_S, start_new_session=True)
            if done.returncode == 0:
                os.chmod(out, 0o600)
                os.replace(out, self.precompiled)
        except (OSError, subprocess.SubprocessError):
            pass
        finally:
            out.unlink(missing_ok=True)

    def building(self) -> bool:
        """Whether some process holds the prelude's lock (``build_later``'s child while it
        precompiles)."""
        with self.entry.locked(wait=False) as held:
            return not held

    def discard(self) -> None:
        with self.entry.locked():
            with contextlib.suppress(OSError):
                shutil.rmtree(self.dir)


def _is_gcc(compiler: Compiler) -> bool:
    identity = compiler.identity.lower()
    return "clang" not in identity and ("g++" in identity or "gcc" in identity)


def build_later(prelude: Optional[Prelude]) -> None:
    """Precompile ``prelude`` in a forked child of this (detached builder) process, so that
    the process waiting for the library is not kept waiting for it, at idle priority (Linux
    ``SCHED_IDLE``, inherited by the compiler): it runs while the program it was built for
    takes over with its kernels, whose threads it must not slow. The prelude's lock is taken
    before the fork and held by the child until it is done, so that once this process has
    exited, the lock says whether the precompile still runs (``Prelude.building``: what
    ``backend.wait_for_compiles`` waits for)."""
    if prelude is None or prelude.ready() or not hasattr(os, "fork"):
        return
    with prelude.entry.locked(wait=False) as held:
        if not held or os.fork() != 0:
            return              # (the parent closes its copy of the lock: the child's holds it)
        try:                    # the child: let go of the parent's pipes, then build
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            with contextlib.suppress(AttributeError, OSError):   # only on an idle core: it
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # slowed steps 30x
            prelude.build_holding_lock()
        finally:
            os._exit(0)
