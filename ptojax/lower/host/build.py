"""Building emitted PTO C++ kernels for the host CPU: one shared library per source.

``build_library(kernel_source, entries, target)`` wraps the emitted kernels in a translation
unit — buffer capacities of ``target``, ``pto_host.h``, the kernel source verbatim (under
``#line`` so compiler messages point at kernel lines), and one exported launcher per
``EntryPoint`` that runs the kernel's blocks — and returns the path of the built library,
from the disk cache when the same unit was built before by the same compiler, flags and CPU.
A compiler error raises ``CompileError`` quoting the kernel line it points at.
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ptojax.errors import CacheError, CompileError
from ptojax.lower.host.cache import (CacheEntry, checked_root, private_dir, sweep_temporaries,
                                     write_atomic)
from ptojax.lower.host.compiler import (INCLUDE_DIR, Compiler, cpu_features, find_compiler,
                                        not_a_library)
from ptojax.lower.host.prelude import Prelude

ABI_VERSION = 3   # 3: libraries export ptojax_threefry2x32 (include/pto_host_random.h)
PACKAGE_PARENT = Path(__file__).resolve().parents[3]   # the directory holding ``ptojax``
KERNEL_FILE = "kernels.cpp"
SPACE_MACROS = {"UB": "PTO_HOST_UB_BYTES", "L1": "PTO_HOST_L1_BYTES",
                "L0A": "PTO_HOST_L0A_BYTES", "L0B": "PTO_HOST_L0B_BYTES",
                "L0C": "PTO_HOST_L0C_BYTES"}
COMPILE_TIMEOUT_S = 900
# Kernel bodies are straight-line instruction calls (the loops are the header's workers,
# optimized as usual): GCC compiles them at -O1, which makes big kernels build much faster.
KERNEL_OPTIMIZE = ("#if defined(__GNUC__) && !defined(__clang__)", "#pragma GCC push_options",
                   '#pragma GCC optimize("O1")', "#endif")
KERNEL_OPTIMIZE_END = ("#if defined(__GNUC__) && !defined(__clang__)",
                       "#pragma GCC pop_options", "#endif")


@dataclass(frozen=True)
class EntryPoint:
    """An exported launcher ``symbol(void* const* args, long long blocks, int parallel)``: runs
    ``body`` (C++ statements over ``args``, the GM pointers) once per block, the blocks in
    parallel if ``parallel``; a cross-core notification reaches ``vector_cores`` vector cores
    per block. Its twin ``symbol + OBJECTS_SUFFIX(objects, count, offset, blocks, parallel)``
    reads each GM pointer at ``offset`` in an array's Python object."""
    symbol: str
    kernel: str
    body: str
    vector_cores: int = 1


# each launcher also has a twin taking the arrays' objects (``pto_host_launch.h``)
OBJECTS_SUFFIX = "_objects"


@dataclass(frozen=True)
class SourceCopy:
    """One inclusion of the kernel source: inside ``namespace`` (or at global scope when
    empty) with ``macros`` defined — e.g. the cube-core and the vector-core view of mixed
    kernels, whose sections are guarded by ``__DAV_CUBE__`` / ``__DAV_VEC__``."""
    namespace: str
    macros: tuple


BOTH_CORES = (SourceCopy("", ("__DAV_CUBE__", "__DAV_VEC__")),)


def translation_unit(kernel_source: str, entries, target, check_sync: bool = False,
                     copies=BOTH_CORES, bodies_at_o1: bool = True, exports=()) -> str:
    """The complete C++ source of a kernel library (``bodies_at_o1``: kernel bodies of
    straight-line instruction calls; fused kernels, whose bodies are the loops, pass False;
    ``exports``: headers of optional exported routines included once at the end, such as
    ``pto_host_gemm.h``, so that only the libraries that call them compile them)."""
    lines = ["// ptojax host build of PTO kernels (see ptojax/lower/host_build.py)",
             "#define PTO_HOST 1"]
    lines += [f"#define {SPACE_MACROS[s]} {int(n)}u" for s, n in target.buffers.items()
              if s in SPACE_MACROS]
    if check_sync:
        lines.append("#define PTO_HOST_CHECK_SYNC 1")
    lines.append('#include "pto_host.h"')
    for copy in copies:
        lines += [f"#define {m} 1" for m in copy.macros]
        if copy.namespace:
            lines.append(f"namespace {copy.namespace} {{")
        optimize, optimize_end = (KERNEL_OPTIMIZE, KERNEL_OPTIMIZE_END) if bodies_at_o1 \
            else ((), ())
        lines += [*optimize, f'#line 1 "{KERNEL_FILE}"', kernel_source.rstrip("\n"),
                  '#line 1 "ptojax_entry.cpp"', *optimize_end]
        if copy.namespace:
            lines.append(f"}}  // namespace {copy.namespace}")
        lines += [f"#undef {m}" for m in copy.macros]
    lines += ["using namespace pto;   // element types (half, ...) for the launchers",
              f"PTO_HOST_EXPORT int ptojax_host_abi() {{ return {ABI_VERSION}; }}"]
    lines += [f'#include "{header}"' for header in exports]
    for e in entries:
        lines.append(f"PTO_HOST_EXPORT int {e.symbol}(void* const* args, long long blocks, "
                     f"int parallel) {{\n"
                     f"  return pto::host::run_blocks(blocks, parallel, {e.vector_cores}, [&] {{\n"
                     f"{e.body}\n  }});\n}}")
        lines.append(f"PTO_HOST_EXPORT int {e.symbol}{OBJECTS_SUFFIX}(void* const* objects, "
                     f"long long count, long long offset, long long blocks, int parallel) {{\n"
                     f"  return pto::host::launch_objects(objects, count, offset, "
                     f"[&](void* const* args) {{ return {e.symbol}(args, blocks, parallel); }});"
                     f"\n}}")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=1)
def header_digest() -> str:
    """SHA-256 over the host headers (their contents are part of every library's key)."""
    h = hashlib.sha256()
    for path in sorted(INCLUDE_DIR.glob("*.h")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def library_key(unit: str, compiler: Compiler) -> str:
    parts = (unit, header_digest(), compiler.identity, " ".join(compiler.flags), cpu_features(),
             str(ABI_VERSION))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class NotCached(Exception):
    """``build_library(cached_only=True)``: the library of this key is not in the cache."""


@dataclass(frozen=True)
class BuildResult:
    path: Path
    key: str
    cached: bool          # found in the disk cache (no compile)
    seconds: float        # time spent compiling (0 when cached)


def build_library(kernel_source: str, entries, target, *, check_sync: bool = False,
                  copies=BOTH_CORES, compiler: Optional[Compiler] = None,
                  name: str = "kernels", bodies_at_o1: bool = True,
                  cached_only: bool = False, on_key=None, exports=()) -> BuildResult:
    """The built library for these kernels (compiled now, or found in the disk cache; with
    ``cached_only``, ``NotCached`` instead of compiling). ``on_key(key)`` is told the
    library's key before anything is built."""
    compiler = compiler or find_compiler()
    unit = translation_unit(kernel_source, entries, target, check_sync, copies, bodies_at_o1,
                            exports)
    key = library_key(unit, compiler)
    if on_key is not None:
        on_key(key)
    root = checked_root()
    sweep_temporaries(root)
    entry = CacheEntry(key, root)
    entry.make_dirs()                       # and checks they are private
    path = entry.published()
    if path is not None:
        return BuildResult(path, key, True, 0.0)
    if cached_only:
        raise NotCached(key)
    start = time.perf_counter()
    path, cached = _build_detached(unit, compiler, entry, name)
    return BuildResult(path, key, cached, 0.0 if cached else time.perf_counter() - start)


def compile_and_publish(unit: str, compiler: Compiler, entry: CacheEntry, name: str) -> bool:
    """Build ``unit`` and publish it under ``entry`` (under its lock); False if another
    process published it first. What the detached builder (``detached.py``) runs."""
    with entry.locked():
        if entry.published() is not None:   # another process built it while we waited
            return False
        entry.discard()
        entry.remove_temporaries()          # left by a build of this key that was killed
        built = _compile(unit, compiler, entry, name)
        try:
            entry.publish(built, unit, {"compiler": compiler.describe(), "name": name})
        finally:
            built.unlink(missing_ok=True)
        return True


# exit codes of the detached builder
BUILT, REJECTED, CACHE_UNUSABLE = 0, 2, 3
# The builder's program. It does not import the ptojax package, whose __init__ imports every
# layer (0.7 s of a build's start-up): a stand-in package object that only knows where the
# modules are lets ``detached.py`` import just errors, env, cache, compiler and this module
# (0.1 s), whose own imports stay within those.
_BUILDER = ("import sys, types; package = types.ModuleType('ptojax'); "
            "package.__path__ = [sys.argv[1]]; sys.modules['ptojax'] = package; "
            "from ptojax.lower.host.detached import main; sys.exit(main())")


def _build_detached(unit: str, compiler: Compiler, entry: CacheEntry, name: str):
    """(published library, whether another process had built it) — built by a detached
    process (``detached.py``, started by ``_BUILDER``, at lower CPU priority) that finishes
    and publishes even if this process exits first, so the next run finds it cached."""
    request = json.dumps({"unit": unit, "key": entry.key, "root": str(entry.root),
                          "name": name, "compiler": dataclasses.asdict(compiler)})
    proc = subprocess.Popen([sys.executable, "-c", _BUILDER, str(PACKAGE_PARENT / "ptojax")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(request, timeout=COMPILE_TIMEOUT_S + 120)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise CompileError(f"the host C++ compiler did not finish building `{name}` within "
                           f"{COMPILE_TIMEOUT_S} s") from None
    if proc.returncode == REJECTED:
        raise CompileError(err.strip())
    if proc.returncode == CACHE_UNUSABLE:
        raise CacheError(err.strip())
    path = entry.published()
    if proc.returncode != BUILT or path is None:
        raise CompileError(f"the detached host kernel build of `{name}` failed (exit code "
                           f"{proc.returncode}): {err.strip()[-2000:] or '(no output)'}")
    cached = out.strip() == "cached"
    if not cached:    # the builder may have left its prelude precompiling (prelude.build_later)
        prelude = Prelude.of(unit, compiler, entry.root, header_digest())
        if prelude is not None:
            with _running_lock:
                if all(p.dir != prelude.dir for p in _preludes_started):
                    _preludes_started.append(prelude)
    return path, cached


# the preludes that detached builders this process started may still be precompiling
_preludes_started: list = []
PRELUDE_POLL_S = 0.02


def wait_for_detached_preludes(timeout: Optional[float] = None) -> bool:
    """Block until no prelude precompile started for this process's builds (by its detached
    builders, which exit before it ends: ``prelude.build_later``) is running; False on
    timeout. Such a precompile takes a core for seconds (at idle priority)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        with _running_lock:
            pending = list(_preludes_started)
        running = [p for p in pending if p.building()]
        with _running_lock:
            for p in pending:
                if p not in running and p in _preludes_started:
                    _preludes_started.remove(p)
        if not running:
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(PRELUDE_POLL_S)


def _compile(unit: str, compiler: Compiler, entry: CacheEntry, name: str) -> Path:
    """The library built from ``unit`` in a temporary file of ``entry`` (hold its lock): with
    the unit's precompiled prelude if there is one (``prelude.py``), else, or if that fails,
    from the unit as it is."""
    prelude = Prelude.of(unit, compiler, entry.root, header_digest())
    with_prelude = prelude is not None and prelude.ready()
    if with_prelude:
        out, returncode, stderr = _run_build(prelude.unit_using_it(unit), compiler, entry,
                                             prelude.include_flags())
    if not with_prelude or returncode not in (0, None):
        out, returncode, stderr = _run_build(unit, compiler, entry, [])
        if with_prelude and returncode == 0:   # the prelude failed where the unit builds
            prelude.discard()
    if returncode is None:
        raise CompileError(f"the host C++ compiler did not finish building `{name}` "
                           f"within {COMPILE_TIMEOUT_S} s")
    if returncode != 0:
        raise CompileError(_compile_error_message(name, unit, stderr, compiler,
                                                  _keep_failed(entry.root, entry.key, unit),
                                                  returncode))
    why = not_a_library(out)
    if why is not None:
        out.unlink(missing_ok=True)
        raise CompileError(f"the host C++ compiler exited successfully building `{name}` "
                           f"but {why}\n  compiler: {compiler.describe()}")
    return out


def _run_build(source: str, compiler: Compiler, entry: CacheEntry, include_flags) -> tuple:
    """(the built library or None, the compiler's return code, its stderr)."""
    src, out = entry.temporary(".build.cpp"), entry.temporary(".so.tmp")
    try:
        write_atomic(src, source.encode())
        cmd = [*compiler.command, *compiler.flags, *include_flags, f"-I{INCLUDE_DIR}",
               str(src), "-o", str(out)]
        returncode, stderr = _run_compiler(cmd, (src, out))
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    finally:
        src.unlink(missing_ok=True)
    if returncode != 0:
        out.unlink(missing_ok=True)
        return None, returncode, stderr
    return out, returncode, stderr


# compiler processes in flight -> their temporary files: killed (with the processes they
# started) and removed if Python exits first
_running: dict = {}
_running_lock = threading.Lock()


def _run_compiler(cmd, temporaries) -> tuple:
    """(return code, stderr) of the compiler; return code None if it timed out. The compiler
    runs in a process group of its own, so that killing it kills its cc1plus, as and ld."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    with _running_lock:
        _running[proc] = temporaries
    try:
        _, stderr = proc.communicate(timeout=COMPILE_TIMEOUT_S)
        return proc.returncode, stderr
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return None, ""
    finally:
        with _running_lock:
            _running.pop(proc, None)


def _kill_group(proc) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


@atexit.register
def _kill_running_compilers():
    with _running_lock:
        for proc, temporaries in _running.items():
            _kill_group(proc)
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                proc.wait(timeout=5)
            for path in temporaries:
                path.unlink(missing_ok=True)


def _keep_failed(root: Path, key: str, unit: str) -> Path:
    path = private_dir(private_dir(root / "host-kernels") / "failed") / f"{key}.cpp"
    write_atomic(path, unit.encode())
    return path


_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$",
                    re.M)
_KERNEL_REF = re.compile(re.escape(KERNEL_FILE) + r":(?P<line>\d+)")


def _compile_error_message(name, unit, stderr, compiler, kept: Path, returncode: int) -> str:
    """The first compiler error and the kernel line it points at."""
    first = _ERROR.search(stderr)
    msg = first.group("msg") if first else (stderr.strip().splitlines() or ["(no output)"])[-1]
    if first is None and returncode < 0:
        msg = f"the compiler was killed by signal {-returncode} ({msg})"
    where = _kernel_line(first, stderr)
    kernel_lines = unit.split(f'#line 1 "{KERNEL_FILE}"\n', 1)[-1].splitlines()
    text = f"the host C++ compiler rejected the kernels of `{name}`: {msg}"
    if where is not None and 0 < where <= len(kernel_lines):
        text += f"\n  {KERNEL_FILE}:{where}: {kernel_lines[where - 1].strip()}"
    return (f"{text}\n  compiler: {compiler.describe()}\n  translation unit: {kept}\n"
            f"  compiler output:\n    " + "\n    ".join(stderr.strip().splitlines()[:20]))


def _kernel_line(first, stderr) -> Optional[int]:
    if first is not None and first.group("file").endswith(KERNEL_FILE):
        return int(first.group("line"))
    ref = _KERNEL_REF.search(stderr)
    return int(ref.group("line")) if ref else None
