"""Precompiled preludes (``lower/host/prelude.py``): the headers every library includes are
precompiled once, later builds use them and build the same library, and a prelude that does not
work (corrupt, or not ours) never breaks a build."""
import os
import time
from pathlib import Path

import numpy as np
import pytest

from handwritten import N, SMALL_SOURCE, small_entries
from ptojax.lower.host import build as host_build
from ptojax.lower.host.build import (BOTH_CORES, compile_and_publish, header_digest,
                                     library_key, translation_unit)
from ptojax.lower.host.cache import CacheEntry, cache_root
from ptojax.lower.host.compiler import Compiler, find_compiler
from ptojax.lower.host.loader import KernelLibrary
from ptojax.lower.host.prelude import Prelude
from ptojax.targets import host_cpu


def _unit(tag):
    source = SMALL_SOURCE + f"\n// prelude test: {tag} {os.getpid()}\n"
    return translation_unit(source, small_entries(), host_cpu, False, BOTH_CORES)


def _prelude(unit):
    compiler = find_compiler()
    prelude = Prelude.of(unit, compiler, cache_root(), header_digest())
    if prelude is None:
        pytest.skip(f"precompiled preludes are built with GCC only ({compiler.identity})")
    return prelude


def _build_recording(unit, monkeypatch):
    """(the library built from ``unit`` in this process, the compiler commands it ran)."""
    commands, run = [], host_build._run_compiler
    monkeypatch.setattr(host_build, "_run_compiler",
                        lambda cmd, temporaries: commands.append(cmd) or run(cmd, temporaries))
    compiler = find_compiler()
    entry = CacheEntry(library_key(unit, compiler))
    assert compile_and_publish(unit, compiler, entry, "small")
    library = KernelLibrary(entry.published(), small_entries())
    x, out = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    library.launch(0, [x, out], 4)
    np.testing.assert_array_equal(out, 2 * x)
    return library, commands


def _uses_prelude(command, prelude) -> bool:
    return f"-I{prelude.dir}" in command


@pytest.fixture(scope="module")
def precompiled():
    """A prelude precompiled once for the module (what the detached builder does)."""
    prelude = _prelude(_unit("first"))
    prelude.build()
    if not prelude.ready():   # a detached builder of another test was precompiling it: wait
        with prelude.entry.locked():
            pass
        prelude.build()
    assert prelude.ready() and prelude.precompiled.stat().st_mode & 0o077 == 0
    return prelude


def test_units_share_one_prelude_per_target_and_sync_checking():
    one, two = _prelude(_unit("a")), _prelude(_unit("b"))
    assert one.entry.key == two.entry.key and one.text.endswith('#include "pto_host.h"\n')
    checked = translation_unit(SMALL_SOURCE, small_entries(), host_cpu, True, BOTH_CORES)
    assert _prelude(checked).entry.key != one.entry.key


def test_a_later_build_uses_the_precompiled_prelude(precompiled, monkeypatch):
    _, commands = _build_recording(_unit("later"), monkeypatch)
    assert len(commands) == 1 and _uses_prelude(commands[0], precompiled)


def test_a_corrupt_precompiled_header_still_builds_the_library(precompiled, monkeypatch):
    good = precompiled.precompiled.read_bytes()
    precompiled.precompiled.write_bytes(b"not a precompiled header")   # GCC reads the text
    try:
        _, commands = _build_recording(_unit("corrupt"), monkeypatch)
        assert len(commands) == 1 and _uses_prelude(commands[0], precompiled)
    finally:
        precompiled.precompiled.write_bytes(good)


def test_a_prelude_that_fails_is_retried_without_it_and_discarded(precompiled, monkeypatch):
    precompiled.header.write_text("#error a broken prelude\n")
    precompiled.precompiled.write_bytes(b"not a precompiled header")
    _, commands = _build_recording(_unit("broken"), monkeypatch)
    assert [_uses_prelude(c, precompiled) for c in commands] == [True, False]
    assert not precompiled.dir.exists()
    precompiled.build()                      # rebuilt for the tests after this one
    assert precompiled.ready()


def test_a_prelude_someone_else_could_have_written_is_not_used(precompiled, monkeypatch):
    os.chmod(precompiled.precompiled, 0o666)
    try:
        assert not precompiled.ready()
        _, commands = _build_recording(_unit("foreign"), monkeypatch)
        assert len(commands) == 1 and not _uses_prelude(commands[0], precompiled)
    finally:
        os.chmod(precompiled.precompiled, 0o600)


def test_only_gcc_gets_a_prelude():
    clang = Compiler(("clang++",), "clang++ (Debian clang version 14.0.6)", ())
    assert Prelude.of(_unit("clang"), clang, Path("/nonexistent"), "digest") is None
    assert Prelude.of("int f();\n", find_compiler(), cache_root(), header_digest()) is None


# JAX (imported by other test files in the same worker) warns at every fork
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
def test_wait_for_compiles_waits_for_a_precompile_left_by_this_process_builds(monkeypatch):
    """The detached builder forks the precompile and exits; the child holds the prelude's lock
    (taken before the fork) until it is done, and ``wait_for_compiles`` waits for it."""
    from ptojax.lower.host import backend as host_backend
    from ptojax.lower.host.prelude import build_later
    gcc = Compiler(("g++",), "/usr/bin/g++\n\ng++ (wait test)", ("-O2",))
    prelude = Prelude(f"// wait test {os.getpid()}\n", gcc, cache_root(), header_digest())
    monkeypatch.setattr(Prelude, "build_holding_lock", lambda self: time.sleep(0.5))
    monkeypatch.setattr(host_build, "_preludes_started", [prelude])
    build_later(prelude)
    assert prelude.building()                 # already when build_later returns
    assert not host_backend.wait_for_compiles(0.05)
    assert host_backend.wait_for_compiles(60)
    assert not prelude.building() and host_build._preludes_started == []
