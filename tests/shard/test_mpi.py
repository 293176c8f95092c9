"""Many processes: ``mpiexec -n 2`` runs the examples and the programs in ``mpi_programs/``;
collectives cross processes through mpi4py, and failures end in CollectiveErrors, not hangs."""
import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

try:
    import mpi4py  # noqa: F401
    _MISSING = None if shutil.which("mpiexec") else "mpiexec is not on PATH"
except ImportError:
    _MISSING = "mpi4py is not installed (pip install 'ptojax[mpi]')"

pytestmark = pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")


def mpiexec(script, *args, processes=2, devices=None, launcher_flags=(), timeout=90):
    env = {k: v for k, v in os.environ.items() if k != "PTOJAX_NUM_DEVICES"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    if devices is not None:
        env["PTOJAX_NUM_DEVICES"] = str(devices)
    start = time.monotonic()
    done = subprocess.run(["mpiexec", *launcher_flags, "-n", str(processes), sys.executable,
                           script, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)
    return done, time.monotonic() - start


@pytest.mark.parametrize("devices", [1, 2])
def test_collectives_across_processes(devices):
    done, _ = mpiexec(os.path.join(HERE, "mpi_programs", "collectives.py"), devices=devices)
    assert done.returncode == 0, done.stderr
    for rank in (0, 1):
        assert f"process {rank}: collectives ok on {2 * devices} devices" in done.stdout


def test_data_parallel_example():
    done, _ = mpiexec(os.path.join(ROOT, "examples", "train_data_parallel.py"), "--steps", "6")
    assert done.returncode == 0, done.stderr
    assert "2 devices in 2 process(es)" in done.stdout
    assert "losses match single-device training" in done.stdout


def test_tensor_parallel_example():
    done, _ = mpiexec(os.path.join(ROOT, "examples", "train_tensor_parallel.py"),
                      "--steps", "3")
    assert done.returncode == 0, done.stderr
    assert "2 x psum over ('model',)" in done.stdout
    assert "losses match single-device training" in done.stdout


def test_mismatched_collectives_are_reported_by_every_process():
    done, _ = mpiexec(os.path.join(HERE, "mpi_programs", "mismatch.py"))
    assert done.returncode == 0, done.stderr
    for rank in (0, 1):
        assert (f"process {rank}: CollectiveError: mismatched collectives across processes: "
                f"process 0: psum") in done.stdout


@pytest.mark.parametrize("how", ["exit", "hang"])
def test_a_dead_or_stuck_process_ends_in_a_collective_error(how):
    # Hydra's auto-cleanup would kill the survivor as soon as a process exits; without it,
    # the survivor must find out by itself
    flags = ("-disable-auto-cleanup",) if how == "exit" else ()
    done, seconds = mpiexec(os.path.join(HERE, "mpi_programs", "dead_rank.py"), how,
                            launcher_flags=flags)
    assert done.returncode != 0
    assert "CollectiveError" in done.stderr and "timed out after 3 s" in done.stderr
    assert "unreachable" not in done.stdout
    assert seconds < 60


def test_an_uncaught_error_reaches_stderr_whole_before_the_job_aborts():
    # mpiexec exits as soon as the abort arrives; a traceback still in the output pipe was
    # lost (the last lines first) when the machine was loaded
    done, _ = mpiexec(os.path.join(HERE, "mpi_programs", "abort_output.py"))
    assert done.returncode != 0
    assert "log line 0799" in done.stderr
    assert "RuntimeError: rank 0 fails on purpose: END OF THE ERROR MESSAGE" in done.stderr
    assert "unreachable" not in done.stdout
