"""The disk cache of kernel libraries: hits and misses, what the key depends on, corrupt and
stale entries rebuilt (never fatal), and two processes building the same library at once."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from handwritten import BUILD_OPTIONS, N, SOURCE, entries, index_of, load
from ptojax.lower.host.build import build_library
from ptojax.lower.host.cache import CacheEntry, cache_root
from ptojax.lower.host.loader import build_and_load
from ptojax.targets import host_cpu

HERE = Path(__file__).resolve().parent


def _unique(tag: str) -> str:
    """SOURCE with a distinct comment: a key no other test builds."""
    return SOURCE + f"\n// cache test: {tag}\n"


def _runs(library):
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    library.launch(index_of("scale"), [x, out], 4)
    np.testing.assert_array_equal(out, 2 * x)


def test_miss_then_hit_under_the_cache_dir():
    source = _unique("miss-hit")
    library, first = load(False, source)
    _, second = load(False, source)
    assert (first.cached, second.cached) == (False, True)
    assert first.path == second.path and first.seconds > 0 and second.seconds == 0
    assert Path(os.environ["PTOJAX_CACHE_DIR"]) in first.path.parents
    assert first.path.parent.parent.parent == cache_root()
    assert first.path.name.startswith(first.key)
    _runs(library)


def test_key_depends_on_source_and_sync_checking():
    keys = {load(False, _unique("key"))[1].key, load(True, _unique("key"))[1].key,
            load(False, _unique("key2"))[1].key}
    assert len(keys) == 3


def test_truncated_library_is_rebuilt():
    source = _unique("truncated")
    built = build_library(source, entries(), host_cpu, **BUILD_OPTIONS)
    data = built.path.read_bytes()
    built.path.write_bytes(data[: len(data) // 3])
    library, rebuilt = build_and_load(source, entries(), host_cpu, **BUILD_OPTIONS)
    assert not rebuilt.cached
    _runs(library)


def test_garbage_manifest_is_rebuilt():
    source = _unique("manifest")
    built = build_library(source, entries(), host_cpu, **BUILD_OPTIONS)
    CacheEntry(built.key).manifest.write_text("{ not json")
    library, rebuilt = build_and_load(source, entries(), host_cpu, **BUILD_OPTIONS)
    assert not rebuilt.cached
    _runs(library)


def test_stale_library_that_lacks_the_launchers_is_rebuilt():
    source = _unique("stale")
    built = build_library(source, entries(), host_cpu, **BUILD_OPTIONS)
    other = build_library(_unique("stale-other"), entries()[:1], host_cpu, **BUILD_OPTIONS)
    entry = CacheEntry(built.key)
    built.path.write_bytes(other.path.read_bytes())     # a valid library, wrong launchers
    meta = json.loads(entry.manifest.read_text())
    other_meta = json.loads(CacheEntry(other.key).manifest.read_text())
    meta.update(size=other_meta["size"], sha256=other_meta["sha256"])
    entry.manifest.write_text(json.dumps(meta))
    assert entry.published() == built.path
    library, rebuilt = build_and_load(source, entries(), host_cpu, **BUILD_OPTIONS)
    assert not rebuilt.cached
    _runs(library)


BUILD_IN_A_PROCESS = textwrap.dedent("""
    import sys, time
    sys.path[:0] = [{here!r}, {tests!r}]
    from handwritten import SOURCE, load
    start = float(sys.argv[1])
    while time.time() < start:
        pass
    library, built = load(False, SOURCE + "\\n// cache test: concurrent\\n")
    print(built.cached, built.path)
""")


def test_two_processes_building_the_same_library_compile_it_once():
    code = BUILD_IN_A_PROCESS.format(here=str(HERE), tests=str(HERE.parent))
    import time
    start = str(time.time() + 2.0)
    procs = [subprocess.Popen([sys.executable, "-c", code, start], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=os.environ.copy())
             for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    outcomes = [out.split() for out, _ in results]
    assert sorted(cached for cached, _ in outcomes) == ["False", "True"]
    assert outcomes[0][1] == outcomes[1][1]
