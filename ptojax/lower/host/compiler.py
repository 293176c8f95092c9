"""The host C++ compiler: which one, its identity, and the flags kernels are built with.

The compiler is ``$CXX`` — split like a shell word list, as make does, so it may carry a
wrapper or arguments (``ccache g++``, ``g++ -O3``) — or else the first of ``g++``/``clang++``
on PATH. Flags are fixed except for probed features — OpenMP (blocks of a kernel run in
parallel), ``-march=native`` (vector width of this CPU) and GCC's vectorizer cost model — each
kept only if a probe library built with it loads and runs (so a command that exits 0 without
building, such as ``echo``, or a C compiler that leaves the C++ runtime unlinked, such as
``gcc``, is no compiler). Probe results are remembered per compiler identity in the cache
directory; a record is used only if it is a trusted file (``cache.trusted_file``) naming this
compiler and flags from the fixed lists above, else the compiler is probed again. A probe is
one build with every optional flag when that works (else one build per flag group). It runs in
a process of its own (``probe_main``, started as the detached builder is, in a session of its
own, at lower CPU priority) that records the flags even if the process that asked exits first:
a short run used to exit mid-probe and leave nothing, so no run that short ever got compiled
kernels; now the next run starts from the record. The parent waits for it and reads the
record; a compiler that fails the probe comes back as the prober's message.
``Compiler.identity`` (resolved path, arguments, ``--version``) and ``cpu_features()`` go into
every cache key, so a different compiler, flags or CPU never loads a library built for another.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ptojax.errors import CacheError, ConfigError
from ptojax.eval.blas import one_pool_wanted, team_routines
from ptojax.lower.host.cache import (checked_root, file_lock, private_dir, read_trusted,
                                     write_atomic)

INCLUDE_DIR = Path(__file__).resolve().parent / "include"

# Flags every kernel library is built with. -fno-math-errno / -fno-trapping-math let loops
# with sqrt and selects vectorize without changing IEEE results; -ffp-contract=off keeps
# a*b+c as two roundings, as numpy computes it (explicit fmas in the header are deliberate).
BASE_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-g0",
              "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-w")
# -fvect-cost-model=cheap: GCC's -O2 default ("very cheap") does not vectorize loops that need
# a remainder, i.e. ragged tiles.
OPTIONAL_FLAGS = (("-march=native",), ("-fopenmp",), ("-fvect-cost-model=cheap",))
# The probe library needs what kernels need: OpenMP when enabled, and the C++ runtime
# (exceptions, strings). ptojax_probe() returns PROBE_RESULT.
PROBE_SOURCE = """
#include <stdexcept>
#include <string>
extern "C" __attribute__((visibility("default"))) int ptojax_probe() {
  int n = 0;
#pragma omp parallel for reduction(+ : n)
  for (int i = 0; i < 4; ++i) n += i;
  try {
    throw std::runtime_error(std::to_string(n));
  } catch (const std::exception& e) {
    return std::stoi(e.what()) + 1;
  }
}
"""
PROBE_RESULT = 7


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
    cxx = os.environ.get("CXX", "")
    if cxx.strip():
        try:
            return tuple(shlex.split(cxx))
        except ValueError as e:
            raise ConfigError(f"environment variable CXX={cxx!r} is not valid: {e}; expected "
                              f"a compiler command such as g++ or 'ccache g++'") from None
    for name in ("g++", "clang++"):
        path = shutil.which(name)
        if path:
            return (path,)
    raise NoCompilerError("no C++ compiler found: $CXX is unset and neither g++ nor clang++ "
                          "is on PATH")


@functools.lru_cache(maxsize=8)
def _find_compiler(command: tuple) -> Compiler:
    shown = shlex.join(command)
    exe = shutil.which(command[0])
    if exe is None:
        raise NoCompilerError(f"the C++ compiler {shown!r}: {command[0]!r} does not exist or "
                              f"is not executable")
    try:
        version = subprocess.run([*command, "--version"], capture_output=True, text=True,
                                 timeout=60, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as e:
        raise NoCompilerError(f"the C++ compiler {shown!r} does not run: {e}") from None
    identity = "\n".join([os.path.realpath(exe), shlex.join(command[1:]), version])
    return Compiler(command, identity, _probed_flags(command, identity))


def find_compiler() -> Compiler:
    """The compiler kernels are built with (raises ``NoCompilerError`` if there is none)."""
    return _find_compiler(compiler_command())


def probe_record(identity: str) -> Path:
    """Where the probed flags of the compiler ``identity`` are remembered."""
    probed = f"{identity}\n{BASE_FLAGS}\n{OPTIONAL_FLAGS}"
    folder = private_dir(checked_root() / "compilers")
    return folder / (hashlib.sha256(probed.encode()).hexdigest()[:32] + ".json")


PACKAGE_DIR = Path(__file__).resolve().parents[2]   # the ``ptojax`` package directory
PROBE_NICENESS = 10
PROBE_TIMEOUT_S = 600
# The prober's program: like ``build._BUILDER``, a stand-in package object that only knows where
# the modules are, so the prober imports just errors, env, cache and this module.
_PROBER = ("import sys, types; package = types.ModuleType('ptojax'); "
           "package.__path__ = [sys.argv[1]]; sys.modules['ptojax'] = package; "
           "from ptojax.lower.host.compiler import probe_main; sys.exit(probe_main())")


def _probed_flags(command: tuple, identity: str) -> tuple:
    record = probe_record(identity)
    flags = _recorded_flags(read_trusted(record), identity)
    if flags is not None:
        return flags
    why = _probe_detached(command, identity)
    if why is not None:
        raise NoCompilerError(why)
    flags = _recorded_flags(read_trusted(record), identity)
    if flags is None:
        raise NoCompilerError(f"the probe of the C++ compiler {shlex.join(command)!r} left no "
                              f"usable record at {record}")
    return flags


def _probe_detached(command: tuple, identity: str) -> Optional[str]:
    """Probe ``command`` in a process of its own (``probe_main``); None once it has recorded
    the flags, else why the compiler cannot be used."""
    request = json.dumps({"command": list(command), "identity": identity})
    proc = subprocess.Popen([sys.executable, "-c", _PROBER, str(PACKAGE_DIR)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(request, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f"probing the C++ compiler {shlex.join(command)!r} took over {PROBE_TIMEOUT_S} s"
    if proc.returncode == 0:
        return None
    return err.strip() or (f"probing the C++ compiler {shlex.join(command)!r} failed (exit "
                           f"status {proc.returncode})")


def probe_main() -> int:
    """The prober: the request (command, identity) on stdin; probes at lower priority,
    records the flags (exit 0) or writes why the compiler cannot be used to stderr (exit 2)."""
    request = json.loads(sys.stdin.read())
    with contextlib.suppress(OSError):
        os.nice(PROBE_NICENESS)
    try:
        _probe_and_record(tuple(request["command"]), request["identity"])
    except (NoCompilerError, CacheError, ConfigError) as e:
        with contextlib.suppress(OSError):
            sys.stderr.write(str(e))
        return 2
    return 0


def _probe_and_record(command: tuple, identity: str) -> None:
    """Probe and record, unless another prober recorded the flags first: probers of one
    compiler take turns (a lock beside the record), so a second process asking while the
    first probe runs (a build handed off at exit: ``exit_handoff.py``) waits for it instead
    of probing again."""
    record = probe_record(identity)
    with file_lock(record.with_suffix(".lock")):
        if _recorded_flags(read_trusted(record), identity) is None:
            _probe_flags_and_record(command, identity)


def _probe_flags_and_record(command: tuple, identity: str) -> None:
    flags = [*BASE_FLAGS, *(flag for group in OPTIONAL_FLAGS for flag in group)]
    if _probe(command, flags) is not None:     # not all of them: one group at a time
        flags = list(BASE_FLAGS)
        why = _probe(command, flags)
        if why is not None:
            raise NoCompilerError(f"the C++ compiler {shlex.join(command)!r} cannot build a "
                                  f"working shared library with {' '.join(flags)}: {why}")
        for extra in OPTIONAL_FLAGS:
            if _probe(command, flags + list(extra)) is None:
                flags += extra
    write_atomic(probe_record(identity), json.dumps({"identity": identity,
                                                     "flags": flags}).encode())


def _recorded_flags(data: Optional[bytes], identity: str) -> Optional[tuple]:
    """The flags of a probe record, if it is one for ``identity`` whose flags are the base
    flags plus some of the optional groups, in order (nothing else may enter a build)."""
    try:
        record = json.loads(data) if data is not None else None
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("identity") != identity:
        return None
    flags = record.get("flags")
    if not isinstance(flags, list) or tuple(flags[:len(BASE_FLAGS)]) != BASE_FLAGS:
        return None
    rest = flags[len(BASE_FLAGS):]
    for group in OPTIONAL_FLAGS:
        if tuple(rest[:len(group)]) == group:
            rest = rest[len(group):]
    return None if rest else tuple(flags)


def _probe(command: tuple, flags: list) -> Optional[str]:
    """None if ``command`` with ``flags`` builds a probe library that loads and runs, else
    why not."""
    with tempfile.TemporaryDirectory(prefix="ptojax-probe-") as tmp:
        src, out = Path(tmp) / "probe.cpp", Path(tmp) / "probe.so"
        src.write_text(PROBE_SOURCE)
        try:
            result = subprocess.run([*command, *flags, str(src), "-o", str(out)],
                                    capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            return f"it does not run ({e})"
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines() or [f"exit status {result.returncode}"]
            return f"it failed: {lines[-1]}"
        why = not_a_library(out)
        if why is not None:
            return f"it exited successfully but {why}"
        openmp_wait_policy()
        try:
            answer = ctypes.CDLL(str(out)).ptojax_probe()
        except (OSError, AttributeError) as e:
            hint = (" (a C compiler such as gcc does not link the C++ runtime: set CXX to a "
                    "C++ compiler such as g++ or clang++)" if "undefined symbol" in str(e)
                    else "")
            return f"the library it built cannot be loaded: {e}{hint}"
        if answer != PROBE_RESULT:
            return f"the library it built computes {answer} instead of {PROBE_RESULT}"
        return None


ELF_MAGIC = b"\x7fELF"
MACHO_MAGICS = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf",
                b"\xfe\xed\xfa\xce", b"\xca\xfe\xba\xbe")
ET_DYN = 3


def not_a_library(path: Path) -> Optional[str]:
    """None if ``path`` looks like a shared library (an ELF shared object, or Mach-O), else
    what it is instead."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return "wrote no library"
    if not head:
        return "wrote an empty library file"
    if head.startswith(ELF_MAGIC):
        order = "little" if head[5:6] == b"\x01" else "big"
        if len(head) == 18 and int.from_bytes(head[16:18], order) == ET_DYN:
            return None
        return "wrote an ELF file that is not a shared library"
    if head[:4] in MACHO_MAGICS:
        return None
    return "wrote a file that is not a shared library"


# libgomp's spins before an idle OpenMP worker sleeps (~26 ns each on the Zen 4 measured:
# about 0.5 ms), and libomp's equivalent in ms
OPENMP_SPINS = 20000
OPENMP_BLOCKTIME_MS = 1


def openmp_wait_policy():
    """How OpenMP workers wait between parallel regions: briefly spinning, then asleep, when
    the products run on the OpenMP team too (``$PTOJAX_ONE_THREAD_POOL`` on, and numpy's
    OpenBLAS can be held at one thread: ``eval/blas.py``); else asleep at once (``PASSIVE``).

    libgomp and libomp read this once, when the first library that needs it is loaded; a
    policy the user set (``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``, ``KMP_BLOCKTIME``) is kept.
    A worker that sleeps at once must be woken for each kernel, which on a VM wakes a halted
    virtual core: a 784x512 momentum update took 119-150 us that way against 54 us with the
    worker spinning. Spinning beside OpenBLAS's own threads starves both pools (a kernel
    then a matmul measured 8-36 ms instead of ~0.9 ms), so it is only chosen when products
    leave OpenBLAS's threads alone, and bounded: libgomp's default spins ~8 ms here.
    """
    if "OMP_WAIT_POLICY" in os.environ:
        return
    if team_routines() is None or not one_pool_wanted():
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        return
    os.environ.setdefault("GOMP_SPINCOUNT", str(OPENMP_SPINS))
    os.environ.setdefault("KMP_BLOCKTIME", str(OPENMP_BLOCKTIME_MS))


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
    """(compiler, None) or (None, why there is none, or cannot be probed)."""
    try:
        return find_compiler(), None
    except (NoCompilerError, CacheError, ConfigError) as e:
        return None, str(e)
