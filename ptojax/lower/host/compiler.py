"""The host C++ compiler: which one, its identity, and the flags kernels are built with.

The compiler is ``$CXX`` (which may carry arguments, e.g. ``ccache g++``) or else the first of
``g++``/``clang++`` on PATH. Flags are fixed except for probed features — OpenMP (blocks of a
kernel run in parallel), ``-march=native`` (vector width of this CPU) and GCC's vectorizer
cost model — each kept only if a test compile with it succeeds; probe results are remembered per compiler identity in the
cache directory. ``Compiler.identity`` (resolved path + ``--version``) and
``cpu_features()`` go into every cache key, so a different compiler, flags or CPU never loads
a library built for another.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ptojax.lower.host.cache import cache_root, write_atomic

INCLUDE_DIR = Path(__file__).resolve().parent / "include"

# Flags every kernel library is built with. -fno-math-errno / -fno-trapping-math let loops
# with sqrt and selects vectorize without changing IEEE results; -ffp-contract=off keeps
# a*b+c as two roundings, as numpy computes it (explicit fmas in the header are deliberate).
BASE_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-g0",
              "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-w")
# -fvect-cost-model=cheap: GCC's -O2 default ("very cheap") does not vectorize loops that need
# a remainder, i.e. ragged tiles.
OPTIONAL_FLAGS = (("-march=native",), ("-fopenmp",), ("-fvect-cost-model=cheap",))
PROBE_SOURCE = """
#include <cstdio>
#ifdef _OPENMP
#include <omp.h>
#endif
extern "C" int probe() {
  int n = 0;
#pragma omp parallel for reduction(+ : n)
  for (int i = 0; i < 4; ++i) n += i;
  return n;
}
"""


@dataclass(frozen=True)
class Compiler:
    """A working C++ compiler: its command, identity, and the flags it builds kernels with."""
    command: tuple           # argv prefix, e.g. ("g++",) or ("ccache", "g++")
    identity: str            # resolved path and first line of --version
    flags: tuple             # full flag list used for kernel libraries

    @property
    def has_openmp(self) -> bool:
        return "-fopenmp" in self.flags

    def describe(self) -> str:
        return f"{' '.join(self.command)} ({self.identity.split(chr(10))[-1]}) " \
               f"{' '.join(self.flags)}"


class NoCompilerError(RuntimeError):
    """No usable C++ compiler (the message says which one was tried and why it failed)."""


def compiler_command() -> tuple:
    """The compiler argv prefix from ``$CXX``, else the first of g++/clang++ on PATH."""
    cxx = os.environ.get("CXX")
    if cxx:
        return tuple(shlex.split(cxx))
    for name in ("g++", "clang++"):
        path = shutil.which(name)
        if path:
            return (path,)
    raise NoCompilerError("no C++ compiler found: $CXX is unset and neither g++ nor clang++ "
                          "is on PATH")


@functools.lru_cache(maxsize=8)
def _find_compiler(command: tuple) -> Compiler:
    exe = shutil.which(command[-1]) if not os.path.isabs(command[-1]) else command[-1]
    if exe is None or not os.access(exe, os.X_OK):
        raise NoCompilerError(f"the C++ compiler {' '.join(command)!r} does not exist or is not "
                              f"executable")
    try:
        version = subprocess.run([*command, "--version"], capture_output=True, text=True,
                                 timeout=60, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as e:
        raise NoCompilerError(f"the C++ compiler {' '.join(command)!r} does not run: {e}") \
            from None
    identity = f"{os.path.realpath(exe)}\n{version}"
    return Compiler(command, identity, _probed_flags(command, identity))


def find_compiler() -> Compiler:
    """The compiler kernels are built with (raises ``NoCompilerError`` if there is none)."""
    return _find_compiler(compiler_command())


def _probed_flags(command: tuple, identity: str) -> tuple:
    probed = f"{identity}\n{BASE_FLAGS}\n{OPTIONAL_FLAGS}"
    record = cache_root() / "compilers" / (hashlib.sha256(probed.encode()).hexdigest()[:32]
                                           + ".json")
    try:
        return tuple(json.loads(record.read_text())["flags"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    flags = list(BASE_FLAGS)
    if not _compiles(command, flags):
        raise NoCompilerError(f"the C++ compiler {' '.join(command)!r} cannot build a shared "
                              f"library with {' '.join(flags)}")
    for extra in OPTIONAL_FLAGS:
        if _compiles(command, flags + list(extra)):
            flags += extra
    write_atomic(record, json.dumps({"identity": identity, "flags": flags}).encode())
    return tuple(flags)


def _compiles(command: tuple, flags: list) -> bool:
    with tempfile.TemporaryDirectory(prefix="ptojax-probe-") as tmp:
        src = Path(tmp) / "probe.cpp"
        src.write_text(PROBE_SOURCE)
        try:
            result = subprocess.run([*command, *flags, str(src), "-o", str(Path(tmp) / "p.so")],
                                    capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return False
        return result.returncode == 0


@functools.lru_cache(maxsize=1)
def cpu_features() -> str:
    """A description of this CPU's instruction set (what -march=native compiles for)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return f"{platform.machine()}:{' '.join(sorted(line.split(':')[1].split()))}"
    except OSError:
        pass
    return f"{platform.machine()}:{platform.processor()}"


def compiler_or_none() -> tuple[Optional[Compiler], Optional[str]]:
    """(compiler, None) or (None, why there is none)."""
    try:
        return find_compiler(), None
    except NoCompilerError as e:
        return None, str(e)
