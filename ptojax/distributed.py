"""Many processes: ``pto.distributed.initialize()`` under ``mpiexec -n P python script.py``.

Every process runs the same script (SPMD). ``initialize`` joins the MPI job (mpi4py), gives
each process ``local_device_count`` virtual devices (default: ``PTOJAX_NUM_DEVICES`` if set,
else 1 — one device per rank, as one rank per NPU) and makes ``pto.devices()`` list all of
them, process-major, so ``make_mesh`` builds meshes spanning the processes. Collectives whose
group spans processes then go through MPI (``runtime/collectives_mpi.py``).

A collective that cannot complete (another process called a different one, or died) raises
``CollectiveError`` after ``timeout`` seconds; an error nobody catches aborts the whole MPI job
(``MPI_Abort``) instead of leaving the other processes waiting.
"""
from __future__ import annotations

import os
import stat
import sys
import time

try:
    import fcntl
    import termios
except ImportError:           # not POSIX: output cannot be drained before an abort
    fcntl = termios = None

from ptojax.env import env_int
from ptojax.errors import CollectiveError, ConfigError
from ptojax.shard.runtime import in_process as collectives
from ptojax import devices
from ptojax.shard.runtime.mpi import MPITransport

_state: dict = {}


def initialize(local_device_count: int | None = None, timeout: float | None = None) -> None:
    """Join the MPI job this process was started in (``mpiexec -n P ...``)."""
    if _state:
        return
    try:
        from mpi4py import MPI
    except ImportError:
        raise CollectiveError("pto.distributed needs mpi4py and an MPI library: "
                              "pip install 'ptojax[mpi]' (mpi4py and mpich)") from None
    _abort_job_on_uncaught_errors(MPI)
    if timeout is not None:
        collectives.set_default_timeout(timeout)
    transport = MPITransport(MPI.COMM_WORLD.Dup())
    if local_device_count is None:
        local_device_count = env_int("PTOJAX_NUM_DEVICES", 1)
    elif isinstance(local_device_count, bool) or not isinstance(local_device_count, int) \
            or local_device_count < 1:
        raise ConfigError(f"pto.distributed.initialize: local_device_count must be a positive "
                          f"integer, got {local_device_count!r}")
    counts = transport.allgather_objects(local_device_count, collectives.default_timeout())
    if len(set(counts)) != 1:
        raise CollectiveError(f"every process must own the same number of devices, got "
                              f"{counts} (by rank)")
    devices.set_topology(transport.rank, len(counts), local_device_count)
    collectives.set_process_transport(transport)
    _state.update(transport=transport)


def is_initialized() -> bool:
    return bool(_state)


def launched_by_mpiexec() -> bool:
    """Whether this process was started by an MPI launcher (MPICH/Hydra, Open MPI, PMIx)."""
    return any(k in os.environ for k in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"))


def _abort_job_on_uncaught_errors(MPI) -> None:
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        _drain_output()
        MPI.COMM_WORLD.Abort(1)

    sys.excepthook = hook


DRAIN_TIMEOUT_S = 10.0


def _drain_output() -> None:
    """Flush stdout/stderr and wait until the launcher has read them.

    ``MPI_Abort`` reaches ``mpiexec`` through the launcher's proxy, which also relays this
    process's output pipes; Hydra's ``mpiexec`` exits as soon as the abort arrives, so any
    bytes still in a pipe when the proxy handles the abort are lost — the traceback of the
    error that caused the abort came out truncated on a loaded machine. Once a pipe is empty
    the proxy has read (and relayed) all of it, so the abort it handles next comes after.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    for fd in (1, 2):
        while _unread_bytes(fd) and time.monotonic() < deadline:
            time.sleep(0.001)


def _unread_bytes(fd: int) -> int:
    """Bytes written to pipe ``fd`` that its reader has not read yet (0 if not a pipe)."""
    if fcntl is None:
        return 0
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return 0
        count = bytearray(4)
        fcntl.ioctl(fd, termios.FIONREAD, count)
    except OSError:
        return 0
    return int.from_bytes(count, sys.byteorder)


def barrier() -> None:
    """Wait until every process gets here (CollectiveError after the collective timeout)."""
    if _state:
        _state["transport"].barrier(collectives.default_timeout())


def process_index() -> int:
    return devices.process_index()


def process_count() -> int:
    return devices.process_count()
