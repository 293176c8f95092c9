"""Environment variables and options are validated where they are read: a bad value is a
ConfigError naming the variable, the value and what is accepted, never a bare conversion error
or a misleading failure later."""
import importlib
import math
from pathlib import Path

import pytest

import ptojax as pto
from ptojax.errors import ConfigError
from ptojax.eval import memory
from ptojax.lower.host.backend import CpuBackend
from ptojax.lower.host.cache import cache_root
from ptojax.shard.runtime import in_process

devices = importlib.import_module("ptojax.devices")   # (pto.devices is the function)

READERS = {
    "PTOJAX_COLLECTIVE_TIMEOUT": in_process.default_timeout,
    "PTOJAX_NUM_DEVICES": devices.configured_local_count,
    "PTOJAX_KEEP_FREED_MEMORY": memory.keep_freed_memory.__wrapped__,
}
BAD = {
    "PTOJAX_COLLECTIVE_TIMEOUT": ["abc", "0", "-1", "nan", "inf", "1s"],
    "PTOJAX_NUM_DEVICES": ["abc", "0", "-2", "2.5"],
    "PTOJAX_KEEP_FREED_MEMORY": ["2", "maybe"],
}
GOOD = {
    "PTOJAX_COLLECTIVE_TIMEOUT": [("2.5", 2.5), (" 60 ", 60.0), ("", 60.0)],
    "PTOJAX_NUM_DEVICES": [("3", 3), ("", 8)],
    "PTOJAX_KEEP_FREED_MEMORY": [("0", False), ("off", False), ("False", False)],
}


@pytest.mark.parametrize("name, value", [(n, v) for n, vs in BAD.items() for v in vs])
def test_a_bad_environment_variable_is_a_config_error_naming_it(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=f"{name}={value!r} is not valid: expected"):
        READERS[name]()


@pytest.mark.parametrize("name, value, expected",
                         [(n, v, e) for n, cases in GOOD.items() for v, e in cases])
def test_good_environment_values_are_read(monkeypatch, name, value, expected):
    monkeypatch.setenv(name, value)
    assert READERS[name]() == expected


def test_the_cache_dir_is_made_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PTOJAX_CACHE_DIR", "rel/cache")
    assert cache_root() == tmp_path / "rel" / "cache"
    monkeypatch.setenv("PTOJAX_CACHE_DIR", "~/c")
    assert cache_root() == Path.home() / "c"


@pytest.mark.parametrize("seconds", [0, -1, math.nan, "60", True, None])
def test_a_bad_collective_timeout_argument_is_a_config_error(seconds):
    with pytest.raises(ConfigError, match="collective timeout must be a positive number"):
        in_process.set_default_timeout(seconds)


@pytest.mark.parametrize("field, value", [
    ("tiered", "yes"), ("check_sync", 1), ("min_elements", -1), ("min_elements", 1.5),
    ("target", "gpu"), ("tile_config", (8, 8)),
])
def test_bad_cpu_backend_options_are_config_errors(field, value):
    with pytest.raises(ConfigError, match=f"CpuBackend.{field}"):
        CpuBackend(**{field: value})


def test_cpu_backend_takes_a_target_name():
    assert CpuBackend(target="host_cpu").target is pto.targets.host_cpu
