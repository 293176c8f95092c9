"""The host compiler: $CXX split like a shell word list, a compiler counts only if the library
it builds loads and runs, and the probe record in the cache is validated before its flags
enter a build."""
import json

import pytest

from ptojax.errors import ConfigError
from ptojax.lower.host import compiler as host_compiler
from ptojax.lower.host.compiler import (BASE_FLAGS, NoCompilerError, compiler_or_none,
                                        find_compiler, probe_record)


@pytest.fixture
def cxx(monkeypatch):
    """Set $CXX for one test, with no compiler remembered from another."""
    host_compiler._find_compiler.cache_clear()

    def use(value):
        monkeypatch.setenv("CXX", value)
    yield use
    host_compiler._find_compiler.cache_clear()


def test_cxx_may_carry_arguments(cxx):
    cxx("g++")
    plain = find_compiler()
    cxx("g++ -O3")
    compiler = find_compiler()
    assert compiler.command == ("g++", "-O3") and compiler.flags == plain.flags
    assert compiler.identity != plain.identity        # so its libraries get other keys


@pytest.mark.parametrize("command, why", [
    ("echo", "exited successfully but wrote no library"),
    ("true", "exited successfully but wrote no library"),
    ("gcc", "cannot be loaded: .*undefined symbol.* set CXX to a C\\+\\+ compiler"),
    ("/nonexistent/c++", "does not exist or is not executable"),
])
def test_a_command_that_builds_no_working_library_is_no_compiler(cxx, command, why):
    cxx(command)
    with pytest.raises(NoCompilerError, match=why):
        find_compiler()
    compiler, reason = compiler_or_none()
    assert compiler is None and command in reason


def test_unparsable_cxx_is_a_config_error(cxx):
    cxx("g++ 'unbalanced")
    with pytest.raises(ConfigError, match="CXX=\"g\\+\\+ 'unbalanced\" is not valid"):
        find_compiler()


@pytest.mark.parametrize("record", [
    {"flags": [*BASE_FLAGS, "-fplugin=/tmp/evil.so"]},            # injected
    {"flags": [*BASE_FLAGS, "-fopenmp", "-march=native"]},        # out of order
    {"flags": [*BASE_FLAGS, "-fopenmp", "-fopenmp"]},             # repeated
    {"flags": ["-O0"]},                                            # not the base flags
    {"flags": "-std=c++17"},
    {"identity": "another compiler"},
    [],
])
def test_a_probe_record_must_name_the_compiler_and_known_flags(record):
    identity = "/usr/bin/g++\n\ng++ 12"
    if isinstance(record, dict):
        record = {"identity": identity, "flags": list(BASE_FLAGS), **record}
    assert host_compiler._recorded_flags(json.dumps(record).encode(), identity) is None
    good = {"identity": identity, "flags": [*BASE_FLAGS, "-march=native", "-fopenmp"]}
    assert host_compiler._recorded_flags(json.dumps(good).encode(), identity) == \
        tuple(good["flags"])


def test_a_bad_probe_record_is_probed_again(cxx):
    cxx("g++")
    good = find_compiler()
    path = probe_record(good.identity)
    path.write_text(json.dumps({"identity": good.identity,
                                "flags": [*BASE_FLAGS, "-fplugin=/tmp/evil.so"]}))
    host_compiler._find_compiler.cache_clear()
    assert find_compiler().flags == good.flags
    assert json.loads(path.read_text())["flags"] == list(good.flags)


def test_a_probe_record_others_could_write_is_ignored(cxx):
    cxx("g++")
    good = find_compiler()
    path = probe_record(good.identity)
    path.write_text(json.dumps({"identity": good.identity, "flags": list(BASE_FLAGS)}))
    path.chmod(0o666)
    host_compiler._find_compiler.cache_clear()
    assert find_compiler().flags == good.flags


PROBE_THEN_EXIT = """
import os, subprocess, threading
import ptojax.lower.host.compiler as C
started, Popen = threading.Event(), subprocess.Popen
class Watched(Popen):
    def communicate(self, input=None, timeout=None):
        if C._PROBER in self.args:   # exit once the prober has its request, not before
            self.stdin.write(input)
            self.stdin.close()
            self.stdin, input = None, None
            started.set()
        return super().communicate(input, timeout)
subprocess.Popen = Watched
threading.Thread(target=C.find_compiler, daemon=True).start()
started.wait(120)
os._exit(0)
"""


def test_a_probe_outlives_the_process_that_started_it(tmp_path):
    """A run that exits mid-probe still leaves the probe record (the prober is a process of
    its own), so the next run does not probe again."""
    import os
    import subprocess
    import sys
    import time
    cache = tmp_path / "cache"
    env = {**os.environ, "PTOJAX_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", PROBE_THEN_EXIT], env=env, check=True, timeout=300)
    deadline = time.monotonic() + 120
    while not list(cache.glob("compilers/*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (record,) = cache.glob("compilers/*.json")
    assert json.loads(record.read_text())["flags"][:len(BASE_FLAGS)] == list(BASE_FLAGS)


def test_a_prober_that_waited_for_another_uses_its_record(monkeypatch):
    """Probers of one compiler take turns (a lock beside the record): one that finds the
    record written while it waited does not probe again."""
    compiler = host_compiler.find_compiler()            # recorded
    monkeypatch.setattr(host_compiler, "_probe_flags_and_record",
                        lambda *a: pytest.fail("probed again"))
    host_compiler._probe_and_record(compiler.command, compiler.identity)
