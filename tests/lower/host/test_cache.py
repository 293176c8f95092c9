"""The disk cache of kernel libraries: hits and misses, what the key depends on, two processes
building the same library at once — and trust: the cache is private to its user, an entry's
library is named by its key (never by a path from the manifest), and anything malformed,
foreign, truncated or left by a killed build is discarded and rebuilt, never loaded."""
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from handwritten import N, SMALL_SOURCE, small_entries
from ptojax.errors import CacheError, CompileError
from ptojax.lower.host import cache
from ptojax.lower.host import compiler as host_compiler
from ptojax.lower.host.build import (BOTH_CORES, build_library, library_key,
                                     translation_unit)
from ptojax.lower.host.cache import CacheEntry, cache_root
from ptojax.lower.host.compiler import find_compiler
from ptojax.lower.host.loader import build_and_load
from ptojax.targets import host_cpu

HERE = Path(__file__).resolve().parent


def _unique(tag: str) -> str:
    """A small kernel source with a distinct comment: a key no other test builds."""
    return SMALL_SOURCE + f"\n// cache test: {tag} {os.getpid()}\n"


def _build(source, entries=None):
    return build_library(source, entries or small_entries(), host_cpu, name="small")


def _key(source, check_sync=False):
    unit = translation_unit(source, small_entries(), host_cpu, check_sync, BOTH_CORES)
    return library_key(unit, find_compiler())


@pytest.fixture(scope="module")
def good_library():
    """The bytes of a library of the small kernel (built once for the module)."""
    return _build(_unique("good")).path.read_bytes()


def _cached(tag, good_library):
    """(source, entry, library): a source no other test builds, found in the cache — a
    copy of the good library published under its key, so no compile is needed."""
    source = _unique(tag)
    entry = CacheEntry(_key(source))
    with entry.locked():
        built = entry.temporary(".so.tmp")
        built.write_bytes(good_library)
        library = entry.publish(built, source, {})
    assert _build(source).cached
    return source, entry, library


def _load(source):
    return build_and_load(source, small_entries(), host_cpu, name="small")


def _runs(library):
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    library.launch(0, [x, out], 4)
    np.testing.assert_array_equal(out, 2 * x)


def _forge_manifest(entry, **fields):
    meta = json.loads(entry.manifest.read_text())
    meta.update(fields)
    entry.manifest.write_text(json.dumps(meta))


def test_miss_then_hit_under_the_cache_dir():
    source = _unique("miss-hit")
    library, first = _load(source)
    _, second = _load(source)
    assert (first.cached, second.cached) == (False, True)
    assert first.path == second.path and first.seconds > 0 and second.seconds == 0
    assert Path(os.environ["PTOJAX_CACHE_DIR"]) in first.path.parents
    assert first.path.parent.parent.parent == cache_root()
    assert first.path.name.startswith(first.key)
    _runs(library)


def test_key_depends_on_source_and_sync_checking():
    source = _unique("key")
    assert len({_key(source), _key(_unique("key2")), _key(source, check_sync=True)}) == 3


def test_cache_directories_and_files_are_private():
    built = _build(_unique("private"))
    entry = CacheEntry(built.key)
    for path in (cache_root(), entry.dir.parent, entry.dir):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in (entry.manifest, entry.source, entry.lockfile, built.path):
        st = path.stat()
        assert st.st_uid == os.geteuid() and not st.st_mode & 0o077, path


# --- malformed entries are rebuilt, never loaded ------------------------------------------------
def test_truncated_library_is_rebuilt(good_library):
    source, _, library = _cached("truncated", good_library)
    library.write_bytes(good_library[: len(good_library) // 3])
    loaded, rebuilt = _load(source)
    assert not rebuilt.cached
    _runs(loaded)


@pytest.mark.parametrize("manifest", ["{ not json", "[1, 2]", '{"version": 1}'])
def test_garbage_manifest_is_rebuilt(good_library, manifest):
    source, entry, _ = _cached(f"manifest {manifest}", good_library)
    entry.manifest.write_text(manifest)
    loaded, rebuilt = _load(source)
    assert not rebuilt.cached
    _runs(loaded)


def _replace_library(entry, library, data):
    """Swap the library's bytes and make the manifest match them (as a corrupt build
    would)."""
    library.write_bytes(data)
    _forge_manifest(entry, size=len(data), sha256=cache.file_sha256(library))
    assert entry.published() == library


def test_stale_library_that_lacks_the_launchers_is_rebuilt(good_library):
    source, entry, library = _cached("stale", good_library)
    other = _build(_unique("stale-other"), small_entries("ptojax_launch_7"))
    _replace_library(entry, library, other.path.read_bytes())   # valid, wrong launchers
    loaded, rebuilt = _load(source)
    assert not rebuilt.cached
    _runs(loaded)


def test_a_library_without_the_error_reporter_is_rebuilt(tmp_path, good_library):
    source, entry, library = _cached("no-error-symbol", good_library)
    stub = tmp_path / "stub.cpp"
    stub.write_text('extern "C" __attribute__((visibility("default"))) int ptojax_host_abi() '
                    '{ return 2; }\n')
    compiler = find_compiler()
    subprocess.run([*compiler.command, *compiler.flags, str(stub), "-o", str(tmp_path / "s")],
                   check=True)
    _replace_library(entry, library, (tmp_path / "s").read_bytes())
    loaded, rebuilt = _load(source)
    assert not rebuilt.cached
    _runs(loaded)


@pytest.mark.parametrize("name", ["absolute", "parent", "other key"])
def test_a_manifest_cannot_name_a_library_outside_its_key(tmp_path, good_library, name):
    source, entry, _ = _cached(f"outside {name}", good_library)
    other_key = "f" * 64
    planted = {"absolute": tmp_path / "planted.so", "parent": tmp_path / "planted.so",
               "other key": entry.dir / f"{other_key}.00000000.so"}[name]
    planted.write_bytes(good_library)               # a valid library, and it would load
    library = {"absolute": str(planted), "parent": os.path.relpath(planted, entry.dir),
               "other key": planted.name}[name]
    _forge_manifest(entry, library=library)
    assert entry.published() is None
    loaded, rebuilt = _load(source)
    assert not rebuilt.cached and rebuilt.path.parent == entry.dir
    assert rebuilt.path.name.startswith(entry.key)
    assert planted.exists()         # discarding the entry did not delete what it named
    _runs(loaded)


@pytest.mark.parametrize("how", ["group-writable", "other-writable", "symlink", "foreign"])
def test_a_library_someone_else_could_have_written_is_rebuilt(tmp_path, good_library, how):
    if how == "foreign" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    source, entry, library = _cached(f"untrusted {how}", good_library)
    if how == "foreign":
        os.chown(library, 4242, -1)
    elif how == "symlink":
        copy = tmp_path / "copy.so"
        copy.write_bytes(good_library)
        library.unlink()
        library.symlink_to(copy)
    else:
        library.chmod(0o720 if how == "group-writable" else 0o702)
    assert entry.published() is None
    loaded, rebuilt = _load(source)
    assert not rebuilt.cached
    _runs(loaded)


# --- an unsafe cache directory is refused ------------------------------------------------------
def _use_cache(monkeypatch, path):
    monkeypatch.setenv("PTOJAX_CACHE_DIR", str(path))
    monkeypatch.setattr(cache, "_swept", set())


@pytest.mark.parametrize("how", ["shared 1777", "group-writable", "foreign owner"])
def test_a_cache_directory_others_can_write_is_refused(tmp_path, monkeypatch, how):
    root = tmp_path / "cache"
    root.mkdir()
    if how == "shared 1777":
        root.chmod(0o1777)
    elif how == "group-writable":
        root.chmod(0o770)
    else:
        monkeypatch.setattr(cache, "current_uid", lambda: os.geteuid() + 4242)
    _use_cache(monkeypatch, root)
    with pytest.raises(CacheError, match="refusing to use the kernel cache directory") as e:
        _build(_unique("refused"))
    assert str(root) in str(e.value)
    assert ("owned by uid" if how == "foreign owner" else "writable by") in str(e.value)
    assert not list(root.iterdir())             # nothing was written into it


def test_a_writable_subdirectory_is_refused(tmp_path, monkeypatch, good_library):
    _use_cache(monkeypatch, tmp_path / "cache")
    source, entry, _ = _cached("subdir", good_library)
    entry.dir.chmod(0o777)
    with pytest.raises(CacheError, match=f"{entry.dir}.*writable by group and others"):
        _build(source)


def test_an_ancestor_anyone_can_replace_is_refused(tmp_path, monkeypatch):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)                       # no sticky bit: others can rename entries
    _use_cache(monkeypatch, open_dir / "cache")
    with pytest.raises(CacheError, match=f"ancestor {open_dir} is writable by others"):
        _build(_unique("ancestor"))


@pytest.mark.parametrize("how", ["a file", "under a file", "manifest is a directory"])
def test_an_unusable_cache_path_is_a_cache_error(tmp_path, monkeypatch, how):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    root = {"a file": blocker, "under a file": blocker / "cache",
            "manifest is a directory": tmp_path / "cache"}[how]
    _use_cache(monkeypatch, root)
    source = _unique("unusable")
    if how == "manifest is a directory":
        key = library_key(translation_unit(source, small_entries(), host_cpu, False,
                                           BOTH_CORES), find_compiler())
        CacheEntry(key).manifest.mkdir(parents=True)
    with pytest.raises(CacheError, match=str(root)):
        _build(source)


# --- killed builds -------------------------------------------------------------------------------
BUILD_IN_A_PROCESS = textwrap.dedent("""
    import sys, time
    sys.path[:0] = [{here!r}, {tests!r}]
    from handwritten import SMALL_SOURCE, small_entries
    from ptojax.lower.host.build import build_library
    from ptojax.targets import host_cpu
    start = float(sys.argv[1])
    while time.time() < start:
        pass
    built = build_library(SMALL_SOURCE + sys.argv[2], small_entries(), host_cpu, name="small")
    print(built.cached, built.path)
""")


def _build_in_a_process(tag, start=0.0):
    code = BUILD_IN_A_PROCESS.format(here=str(HERE), tests=str(HERE.parent))
    return subprocess.Popen([sys.executable, "-c", code, str(start), tag],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ.copy())


def test_two_processes_building_the_same_library_compile_it_once():
    start = time.time() + 2.0
    tag = f"\n// cache test: concurrent {os.getpid()}\n"
    procs = [_build_in_a_process(tag, start) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    outcomes = [out.split() for out, _ in results]
    assert sorted(cached for cached, _ in outcomes) == ["False", "True"]
    assert outcomes[0][1] == outcomes[1][1]


def _children(pid):
    """The pids whose parent is ``pid`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _leads_its_group(pid) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def _compiler_of(proc, deadline):
    """(detached builder pids, compiler pids) of the build running in ``proc``: the builder
    is ``proc``'s child, the compiler the builder's child in a session of its own (not a
    short-lived ``--version`` probe, which shares the builder's group)."""
    while proc.poll() is None and time.time() < deadline:
        builders = _children(proc.pid)
        compilers = [pid for b in builders for pid in _children(b) if _leads_its_group(pid)]
        if compilers:
            return builders, compilers
        time.sleep(0.01)
    raise AssertionError("the build never started its compiler")


# compile-time work (~1 s of GCC's constant evaluation): a build that is surely still
# compiling when the test kills it
SLOW_TO_COMPILE = """
template <int K> constexpr long spin() {
  long s = K;
  for (long i = 0; i < 700; ++i) for (long j = 0; j < 700; ++j) s += (i ^ j) & 7;
  return s;
}
static_assert(spin<1>() != 1, "compile-time work");
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_build_killed_mid_compile_leaves_nothing_that_blocks_the_next():
    tag = f"\n// cache test: killed {os.getpid()}\n{SLOW_TO_COMPILE}"
    key = library_key(translation_unit(SMALL_SOURCE + tag, small_entries(), host_cpu, False,
                                       BOTH_CORES), find_compiler())
    entry = CacheEntry(key)
    proc = _build_in_a_process(tag)
    builders, compilers = _compiler_of(proc, time.time() + 120)
    for pid in builders:
        os.kill(pid, signal.SIGKILL)                        # kill -9 the builder, mid-compile
    for pid in compilers:
        os.killpg(pid, signal.SIGKILL)                      # and the compiler with it
    proc.communicate()
    assert {p.suffix for p in entry.temporaries()} >= {".cpp", ".tmp"}
    assert entry.published() is None
    rebuilt = _build(SMALL_SOURCE + tag)
    assert not rebuilt.cached and entry.temporaries() == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_build_outlives_the_process_that_started_it():
    tag = f"\n// cache test: orphaned {os.getpid()}\n"
    key = library_key(translation_unit(SMALL_SOURCE + tag, small_entries(), host_cpu, False,
                                       BOTH_CORES), find_compiler())
    entry = CacheEntry(key)
    proc = _build_in_a_process(tag)
    builders, _ = _compiler_of(proc, time.time() + 120)
    proc.kill()                                   # the short-lived parent goes away
    proc.communicate()
    deadline = time.time() + 600
    while any(Path(f"/proc/{pid}").exists() and _state(pid) != "Z" for pid in builders) \
            and time.time() < deadline:
        time.sleep(0.05)
    assert entry.published() is not None          # finished and published all the same
    assert entry.temporaries() == []
    assert _build(SMALL_SOURCE + tag).cached      # the next run finds it


def _state(pid) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_the_startup_sweep_spares_a_live_build(monkeypatch):
    dead, live = (CacheEntry(_key(_unique(t))) for t in ("sweep-dead", "sweep-live"))
    for entry in (dead, live):
        entry.temporary(".so.tmp")
        entry.temporary(".build.cpp")
    monkeypatch.setattr(cache, "_swept", set())
    with live.locked():                          # a build of `live` is in progress
        cache.sweep_temporaries(cache_root())
        assert dead.temporaries() == [] and len(live.temporaries()) == 2
    live.remove_temporaries()


def test_a_compiler_that_builds_no_library_publishes_nothing(tmp_path, monkeypatch):
    # works for the probe, then "succeeds" at kernels without a shared library ($OUTPUT)
    script = tmp_path / "cxx"
    script.write_text('#!/bin/sh\ncase "$*" in *build.cpp*)\n'
                      '  for a; do [ "$prev" = -o ] && out=$a; prev=$a; done\n'
                      '  case $OUTPUT in\n'
                      '    nothing) rm -f "$out";;\n'
                      '    empty) : > "$out";;\n'
                      '    text) echo "not a library" > "$out";;\n'
                      '  esac; exit 0;;\nesac\nexec g++ "$@"\n')
    script.chmod(0o700)
    monkeypatch.setenv("CXX", str(script))
    host_compiler._find_compiler.cache_clear()
    try:
        for output in ("nothing", "empty", "text"):
            monkeypatch.setenv("OUTPUT", output)
            source = _unique(f"no library {output}")
            with pytest.raises(CompileError, match="exited successfully building `small` but"):
                _build(source)
            entry = CacheEntry(_key(source))
            assert entry.published() is None and not entry.manifest.exists()
            assert entry.temporaries() == [] and not list(entry.dir.glob(f"{entry.key}*.so"))
    finally:
        host_compiler._find_compiler.cache_clear()


def test_a_planted_library_never_runs(tmp_path, monkeypatch, good_library):
    """A library with a constructor, planted (1) through a manifest that names it by absolute
    path, (2) as a complete entry in a shared 1777 cache directory: its code must not run."""
    marker = tmp_path / "constructor-ran"
    planted = tmp_path / "planted.so"
    (tmp_path / "planted.cpp").write_text(
        f'#include <cstdio>\n__attribute__((constructor)) static void run() {{ '
        f'std::fclose(std::fopen("{marker}", "w")); }}\n'
        f'extern "C" __attribute__((visibility("default"))) int ptojax_host_abi() '
        f'{{ return 2; }}\n')
    compiler = find_compiler()
    subprocess.run([*compiler.command, *compiler.flags, str(tmp_path / "planted.cpp"), "-o",
                    str(planted)], check=True)
    source, entry, _ = _cached("planted by path", good_library)
    _forge_manifest(entry, library=str(planted), size=planted.stat().st_size,
                    sha256=cache.file_sha256(planted))
    _runs(_load(source)[0])

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("PTOJAX_CACHE_DIR", str(shared))
    source = _unique("planted in a shared cache")
    victim = CacheEntry(_key(source), shared)
    victim.dir.mkdir(parents=True)
    library = victim.dir / f"{victim.key}.00000000.so"
    library.write_bytes(planted.read_bytes())
    victim.manifest.write_text(json.dumps({
        "version": cache.MANIFEST_VERSION, "key": victim.key, "library": library.name,
        "size": library.stat().st_size, "sha256": cache.file_sha256(library)}))
    with pytest.raises(CacheError, match=f"refusing to use the kernel cache directory {shared}"):
        _load(source)
    assert not marker.exists()
