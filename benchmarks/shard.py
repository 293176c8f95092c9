"""Sharded training steps (python benchmarks/shard.py).

1. Bytes communicated per training step of an MLP, data parallel vs tensor parallel
   (Megatron), on 2, 4 and 8 devices: counted statically from the per-device IR and measured
   by the runtime while the step runs — the two must agree.
2. Wall time per data-parallel step with a fixed global batch: one process (1 device, and 2
   devices on threads) vs two MPI processes (``mpiexec -n 2``, one device each), next to the
   unsharded step under ptojax and JAX.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import best_time, fmt  # noqa: E402

import ptojax as pto  # noqa: E402
import ptojax.numpy as pnp  # noqa: E402
from ptojax.shard.runtime.in_process import CommunicationLog  # noqa: E402
from ptojax.shard.runtime.cost import ir_bytes  # noqa: E402
from ptojax.lower.host.backend import wait_for_compiles  # noqa: E402

P = pto.P
DIM, HIDDEN, BATCH, BLOCKS = 256, 1024, 256, 2
MEGATRON = dict(w1=P(None, "d"), b1=P("d"), w2=P("d", None), b2=P())


def init_params(seed=0):
    rng = np.random.default_rng(seed)
    return [dict(w1=(rng.normal(size=(DIM, HIDDEN)) / np.sqrt(DIM)).astype(np.float32),
                 b1=np.zeros(HIDDEN, np.float32),
                 w2=(rng.normal(size=(HIDDEN, DIM)) / np.sqrt(HIDDEN)).astype(np.float32),
                 b2=np.zeros(DIM, np.float32)) for _ in range(BLOCKS)]


def model(params, x, np_module=pnp):
    for p in params:
        x = x + np_module.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]
    return x


def loss_fn(params, x, y):
    return pnp.mean((model(params, x) - y) ** 2)


def train_step(params, x, y):
    loss, grads = pto.value_and_grad(loss_fn)(params, x, y)
    return pto.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss


def batch(seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, DIM)).astype(np.float32)
    return x, np.tanh(x)


def sharded_step(mode, mesh):
    specs = [MEGATRON] * BLOCKS if mode == "tp" else P()
    data = P() if mode == "tp" else P("d")
    return pto.shard(train_step, mesh=mesh, in_specs=(specs, data, data),
                     out_specs=(specs, P()))


# 1. bytes per step ---------------------------------------------------------------------------
def bytes_per_step():
    print(f"bytes sent per training step, all devices together (MLP {BLOCKS} x "
          f"[{DIM} -> {HIDDEN} -> {DIM}], batch {BATCH}, f32)")
    params, (x, y) = init_params(), batch()
    for n in (2, 4, 8):
        mesh = pto.make_mesh((n,), ("d",))
        for mode in ("dp", "tp"):
            step = sharded_step(mode, mesh)
            closed = pto.make_ir(step)(params, x, y)
            body = next(e for e in closed.eqns if e.prim.name == "shard_map").params["body"]
            counted = ir_bytes(body, mesh)
            with CommunicationLog() as log:
                step(params, x, y)
            agree = "agree" if log.bytes_by_kind == counted else "DISAGREE"
            kinds = ", ".join(f"{k} {v / 2**20:.2f} MiB" for k, v in sorted(counted.items()))
            print(f"  {n} devices  {mode.upper()}  IR {sum(counted.values()) / 2**20:8.2f} MiB"
                  f"  runtime {log.total_bytes / 2**20:8.2f} MiB  ({agree})  [{kinds}]")


# 2. wall time: one process vs two MPI processes ----------------------------------------------
def mpi_worker(steps):
    """Run under mpiexec: time the data-parallel step over every device of the job."""
    if pto.distributed.launched_by_mpiexec():
        pto.distributed.initialize()
    mesh = pto.make_mesh((pto.device_count(),), ("d",))
    step = sharded_step("dp", mesh)
    params, (x, y) = init_params(), batch()
    state = {"params": params}

    def run():
        state["params"], loss = step(state["params"], x, y)
        float(loss)

    seconds = best_time(settled(run), repeat=3, number=steps)
    if pto.process_index() == 0:
        print(f"SECONDS_PER_STEP {seconds}", flush=True)


def settled(run, calls=8):
    """``run`` after the default backend's background compiles and its tier race are over
    (measuring while a compiler runs in the background times the compiler)."""
    run()
    wait_for_compiles()
    for _ in range(calls):
        run()
    return run


def _launch(processes, devices):
    """Seconds per step of a worker job; one BLAS thread per device, so each device is one
    core and the configurations compare like for like."""
    env = {**os.environ, "PTOJAX_NUM_DEVICES": str(devices), "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    command = [sys.executable, os.path.abspath(__file__), "--mpi-worker"]
    if processes > 1:
        command = ["mpiexec", "-n", str(processes)] + command
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("SECONDS_PER_STEP"))
    return float(line.split()[1])


def wall_times():
    print(f"\nwall time per data-parallel training step, global batch {BATCH} "
          f"(machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    params, (x, y) = init_params(), batch()
    unsharded = pto.jit(train_step)
    ours = best_time(settled(lambda: float(unsharded(params, x, y)[1])), repeat=3)
    print(f"  unsharded ptojax jit step (default BLAS)  {fmt(ours)}")
    jax_time = _jax_step_time(params, x, y)
    if jax_time is not None:
        print(f"  unsharded JAX jit step                    {fmt(jax_time)}  "
              f"(ptojax / JAX {ours / jax_time:.2f}x)")
    one = _launch(1, 1)
    threads = _launch(1, 2)
    print("  sharded, one BLAS thread per device:")
    print(f"  1 process,  1 device                      {fmt(one)}")
    print(f"  1 process,  2 devices (threads)           {fmt(threads)}  "
          f"speedup {one / threads:.2f}x")
    if shutil.which("mpiexec") is None or not _has_mpi4py():
        print("  2 MPI processes: skipped (mpi4py/mpiexec not installed: "
              "pip install 'ptojax[mpi]')")
        return
    two = _launch(2, 1)
    print(f"  2 MPI processes, 1 device each            {fmt(two)}  speedup {one / two:.2f}x")


def _has_mpi4py():
    try:
        import mpi4py  # noqa: F401
        return True
    except ImportError:
        return False


def _jax_step_time(params, x, y):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def jloss(params, x, y):
        return jnp.mean((model(params, x, jnp) - y) ** 2)

    @jax.jit
    def jstep(params, x, y):
        loss, grads = jax.value_and_grad(jloss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss

    jparams = jax.tree_util.tree_map(jnp.asarray, params)
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    return best_time(lambda: jstep(jparams, jx, jy)[1].block_until_ready(), repeat=3)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpi-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    if args.mpi_worker:
        mpi_worker(args.steps)
    else:
        bytes_per_step()
        wall_times()
