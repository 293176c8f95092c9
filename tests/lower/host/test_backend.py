"""Backend selection for pto.jit: the cpu backend by default (tiered: numpy first, compiled
kernels once built), the interpreter on request, numpy with one warning when there is no
compiler or building fails, and compiler errors that quote the kernel line."""
import os
import stat
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from handwritten import BUILD_OPTIONS, SOURCE, entries
from host_cases import executable_of
from ptojax.errors import CacheError, CompileError
from ptojax.lower.host.cache import CacheEntry
from ptojax.lower.host.build import build_library
from ptojax.targets import host_cpu
from ptojax.lower.host import backend as host_backend
from ptojax.eval.executable import Executable
from ptojax.lower.host.backend import CpuBackend, HostExecutable

BIG = (256, 160)     # above CpuBackend.min_elements


def chain(x):
    return pnp.tanh(2 * x + 1) * pnp.exp(-x * x) + x


def _x(shape=BIG):
    return np.random.default_rng(3).standard_normal(shape).astype(np.float32)


def test_jit_defaults_to_the_tiered_cpu_backend():
    fn = pto.jit(chain)
    x = _x()
    first = np.asarray(fn(x))
    executable = executable_of(fn, x)
    assert isinstance(executable, HostExecutable)
    assert executable.wait(600)
    assert executable.status == "compiled" and executable.ready_after > 0
    np.testing.assert_allclose(np.asarray(fn(x)), first, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(first, np.asarray(pto.jit(chain, backend="interpreter")(x)),
                               rtol=2e-5, atol=2e-6)


def test_compiling_starts_when_the_first_call_returns():
    executable = HostExecutable(pto.make_ir(chain)(_x((300, 170))), CpuBackend())
    assert executable.status == "compiling" and not executable.wait(0.5)
    executable.run(_x((300, 170)))
    assert executable.wait(600) and executable.status == "compiled"


def test_interpreter_backend_is_the_numpy_executor():
    fn = pto.jit(chain, backend="interpreter")
    x = _x()
    fn(x)
    assert type(executable_of(fn, x)) is Executable


def test_unknown_backend_is_an_error():
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        pto.jit(chain, backend="gpu")(_x())


def test_small_functions_stay_on_numpy():
    fn = pto.jit(chain)
    x = _x((8, 8))
    fn(x)
    executable = executable_of(fn, x)
    assert executable.status == "numpy" and executable.program is None


def test_no_compiler_falls_back_to_numpy_with_one_warning(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent")
    monkeypatch.setattr(host_backend, "_warned", set())
    x = _x()
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler|does not exist") as record:
        a = pto.jit(chain)(x)
        b = pto.jit(lambda v: chain(v) * 2)(x)
        host_backend.wait_for_compiles(600)
    assert len([w for w in record if "numpy executor" in str(w.message)]) == 1
    np.testing.assert_allclose(np.asarray(a) * 2, np.asarray(b), rtol=1e-6)


def _failing_compiler(tmp_path):
    """A CXX that works for the probe but rejects kernel sources."""
    script = tmp_path / "cxx"
    script.write_text('#!/bin/sh\ncase "$*" in *build.cpp*) echo "kernels.cpp:3:1: error: '
                      'injected failure" >&2; exit 1;; esac\nexec g++ "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_a_failed_background_build_warns_and_keeps_numpy(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", _failing_compiler(tmp_path))
    executable = HostExecutable(pto.make_ir(chain)(_x((290, 150))), CpuBackend())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = executable.run(_x((290, 150)))
        assert executable.wait(600)
        host_backend.wait_for_compiles(600)
    assert executable.status.startswith("failed: ") and "injected failure" in executable.status
    assert any("keeps running on the numpy executor" in str(w.message) for w in caught)
    reference = np.asarray(pto.jit(chain, backend="interpreter")(_x((290, 150))))
    np.testing.assert_allclose(np.asarray(first[0]), reference)
    np.testing.assert_allclose(np.asarray(executable.run(_x((290, 150)))[0]), reference)


def test_compile_error_quotes_the_kernel_line():
    bad = SOURCE.replace("TMULS(y, x, 2.0f);", "TMULS(y, x, 2.0f, undefined_thing);", 1)
    with pytest.raises(CompileError) as e:
        build_library(bad, entries(), host_cpu, **BUILD_OPTIONS)
    line = next(i for i, text in enumerate(bad.splitlines(), 1) if "undefined_thing" in text)
    message = str(e.value)
    assert f"kernels.cpp:{line}: TMULS(y, x, 2.0f, undefined_thing);" in message
    assert "undefined_thing" in message.splitlines()[0]
    assert os.path.exists(message.split("translation unit: ")[1].splitlines()[0])


def _trial_outcome(numpy_delay, compiled_delay):
    executable = HostExecutable(pto.make_ir(chain)(_x()), CpuBackend(tiered=False))
    compiled = executable.program.run

    def slow(fn, delay):
        def run(*args):
            time.sleep(delay)
            return fn(*args)
        return run

    executable._fast = None
    executable._trial = host_backend._TierTrial(slow(executable.numpy.run, numpy_delay),
                                                slow(compiled, compiled_delay),
                                                ready=lambda: True, busy=lambda: False)
    x = _x()
    for _ in range(2 * host_backend.TRIAL_CALLS):
        np.testing.assert_allclose(np.asarray(executable.run(x)[0]), chain(x), rtol=2e-5,
                                   atol=2e-6)
    assert executable._trial is None
    return executable


def test_tiers_race_and_the_faster_compiled_program_stays():
    executable = _trial_outcome(numpy_delay=0.02, compiled_delay=0.0)
    assert executable.status == "compiled"


def test_tiers_race_and_a_slower_compiled_program_is_dropped():
    executable = _trial_outcome(numpy_delay=0.0, compiled_delay=0.02)
    assert executable.status.startswith("numpy: the numpy executor measured faster")


def test_no_race_is_timed_while_the_background_worker_is_busy():
    """Background tiling and compiling stall either tier's calls at random: until the worker
    is idle, calls run the compiled program and the race waits."""
    executable = HostExecutable(pto.make_ir(chain)(_x()), CpuBackend(tiered=False))
    busy, ran = [True], []

    def tier(fn, name):
        def run(*args):
            ran.append(name)
            return fn(*args)
        return run
    executable._fast = None
    executable._trial = host_backend._TierTrial(tier(executable.numpy.run, "numpy"),
                                                tier(executable.program.run, "compiled"),
                                                ready=lambda: not busy[0])
    x = _x()
    for _ in range(3 * host_backend.TRIAL_CALLS):
        executable.run(x)
    assert set(ran) == {"compiled"} and executable._trial is not None
    busy[0] = False
    for _ in range(2 * host_backend.TRIAL_CALLS):
        executable.run(x)
    assert "numpy" in ran and executable._trial is None


def test_on_a_busy_machine_the_tiers_race_by_cpu_time():
    """Busy, a call's wall time is mostly the scheduler's doing: the calling thread's CPU
    time decides. Here the numpy tier waits (30 ms, no CPU) and the compiled one computes
    (1 ms of CPU: under a load of 7 on 2 cores that is still ~4 ms of wall, far from 30)."""
    executable = HostExecutable(pto.make_ir(chain)(_x()), CpuBackend(tiered=False))

    def waits(fn):
        def run(*args):
            time.sleep(0.03)
            return fn(*args)
        return run

    def computes(fn):
        def run(*args):
            end = time.thread_time() + 0.001
            while time.thread_time() < end:
                pass
            return fn(*args)
        return run
    x = _x()
    for busy, winner in ((True, "numpy:"), (False, "compiled")):
        executable._fast = None
        executable._trial = host_backend._TierTrial(
            waits(executable.numpy.run), computes(executable.program.run), reraces=0,
            ready=lambda: True, busy=lambda: busy)
        for _ in range(2 * host_backend.TRIAL_CALLS):
            executable.run(x)
        assert executable.status.startswith(winner)


def test_a_race_numpy_won_is_run_again_later():
    """One unlucky race (a stalled compiled call on a busy machine) does not keep a function
    on numpy for good: after ``rerace_after`` numpy calls the tiers race again."""
    executable = HostExecutable(pto.make_ir(chain)(_x()), CpuBackend(tiered=False))
    delays = {"numpy": 0.0, "compiled": 0.02}

    def slow(fn, tier):
        def run(*args):
            time.sleep(delays[tier])
            return fn(*args)
        return run

    executable._fast = None
    executable._trial = host_backend._TierTrial(slow(executable.numpy.run, "numpy"),
                                                slow(executable.program.run, "compiled"),
                                                reraces=1, rerace_after=2, ready=lambda: True,
                                                busy=lambda: False)
    x = _x()
    for _ in range(2 * host_backend.TRIAL_CALLS):
        executable.run(x)
    assert executable.status.startswith("numpy:") and executable._trial is None
    delays.update(numpy=0.02, compiled=0.0)
    for _ in range(2 + 2 * host_backend.TRIAL_CALLS):
        np.testing.assert_allclose(np.asarray(executable.run(x)[0]), chain(x), rtol=2e-5,
                                   atol=2e-6)
    assert executable.status == "compiled" and executable._trial is None


# --- failures end in a final status and one warning ----------------------------------------------
def _background_build(x):
    """A HostExecutable of ``chain`` after its first call and background compile."""
    executable = HostExecutable(pto.make_ir(chain)(x), CpuBackend())
    first = executable.run(x)
    assert executable.wait(600)
    host_backend.wait_for_compiles(600)
    return executable, first


def test_a_crashed_background_compile_fails_with_one_warning(monkeypatch):
    def crash(*args, **kwargs):
        return 1 // 0
    monkeypatch.setattr(host_backend, "tile_ir", crash)
    monkeypatch.setattr(host_backend, "_warned", set())
    x = _x((270, 150))
    with pytest.warns(RuntimeWarning, match="crashed") as record:
        executable, first = _background_build(x)
        _background_build(x)                    # the same crash again: no second warning
    (warning,) = [w for w in record if "crashed" in str(w.message)]
    assert "ZeroDivisionError" in str(warning.message) and "test_backend.py" in \
        str(warning.message)
    assert executable.status.startswith("failed: internal error: ZeroDivisionError")
    np.testing.assert_allclose(np.asarray(executable.run(x)[0]), np.asarray(first[0]))


def test_an_unusable_cache_warns_once_and_keeps_numpy(monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("PTOJAX_CACHE_DIR", str(blocker))
    monkeypatch.setattr(host_backend, "_warned", set())
    x = _x((280, 150))
    with pytest.warns(RuntimeWarning, match=f"{blocker} is not a directory") as record:
        executable, first = _background_build(x)
        _background_build(x)
    assert len([w for w in record if str(blocker) in str(w.message)]) == 1
    assert executable.status.startswith("failed: ") and str(blocker) in executable.status
    np.testing.assert_allclose(np.asarray(first[0]), np.asarray(chain(x)), rtol=1e-6)


def test_an_unusable_cache_is_a_cache_error_when_compiling_is_required(monkeypatch,
                                                                        tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("PTOJAX_CACHE_DIR", str(shared))
    with pytest.raises(CacheError, match=f"refusing to use the kernel cache directory "
                                         f"{shared}: it is writable by group and others"):
        pto.jit(chain, backend=CpuBackend(tiered=False))(_x((260, 150)))


FALLBACK_PROGRAM = """
import numpy as np, ptojax as pto, ptojax.numpy as pnp
x = np.zeros((256, 160), np.float32)
for fn in (lambda v: pnp.log(v) * 2, lambda v: 1 / v + 3):
    pto.jit(fn)(x)
pto.lower.host.backend.wait_for_compiles(600)
print(np.asarray(pnp.log(pnp.zeros(3)))[0])
"""


def test_fallback_warnings_reach_a_user_running_with_W_always(tmp_path):
    # the warning filter ptojax once installed at import outranked -W always and hid these
    env = {**os.environ, "CXX": "/nonexistent/c++", "PTOJAX_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-W", "always", "-c", FALLBACK_PROGRAM],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "-inf"
    assert done.stderr.count("RuntimeWarning: ptojax: the C++ compiler") == 1, done.stderr
    assert "encountered" not in done.stderr          # log(0), 1/0: IEEE results, quietly


def test_a_warm_cache_is_used_from_the_first_call():
    x = _x((270, 130))
    first = executable_of_after_call(pto.jit(chain), x)
    assert first.wait(600) and first.status == "compiled" and not first.warm
    fresh = HostExecutable(first.closed, CpuBackend())   # as the next process makes it
    out = fresh.run(x)[0]
    assert fresh.wait(600) and fresh.status == "compiled" and fresh.program.build.cached
    assert fresh.warm                                     # found when that call asked
    np.testing.assert_allclose(fresh.program.run(x)[0], out, rtol=2e-5, atol=2e-6)


def test_a_stale_program_hint_falls_back_to_compiling_in_the_background():
    x = _x((270, 140))
    first = executable_of_after_call(pto.jit(chain), x)
    assert first.wait(600) and first.status == "compiled"
    CacheEntry(first.program.build.key).discard()
    fresh = HostExecutable(first.closed, CpuBackend())
    fresh.run(x)
    assert fresh.wait(600) and fresh.status == "compiled" and not fresh.program.build.cached
    assert not fresh.warm


def executable_of_after_call(fn, x):
    fn(x)
    return executable_of(fn, x)


def test_the_worker_hands_the_gil_back_promptly_while_it_runs_a_job():
    # its tiling is Python: the calling thread, back from a GIL-free BLAS call or kernel,
    # must not wait a whole default switch interval (5 ms) for the GIL each time
    before = sys.getswitchinterval()
    seen = []
    worker = host_backend._worker()
    worker.submit(lambda: seen.append(sys.getswitchinterval()))
    assert worker.wait_idle(60)
    assert seen[0] <= host_backend.WORKER_SWITCH_INTERVAL_S * 1.01 < before
    assert sys.getswitchinterval() == before           # the caller's interval again
