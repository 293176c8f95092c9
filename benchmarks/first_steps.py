"""The first steps of a fresh train step vs JAX, compile included (python benchmarks/first_steps.py).

Each run is a fresh process: an MLP (784-512-512-10, batch 128) SGD step jitted, then
``STEPS`` steps, wall time from before the first call to after the last. ptojax runs with an
empty kernel cache (cold: its first steps run on numpy while the kernels compile in a detached
builder), then again in a new process on the cache the first one left (warm: its recorded
program and library loaded right after the first call, ahead of any compile). The cold run's
30 steps end before its program is hot enough to build (``lower/host/hotness.py``: 0.5 s of
numpy-tier calls): its program is handed to a detached builder at exit
(``lower/host/exit_handoff.py``), which the benchmark waits for (libraries published, no build
or header precompile running) before the warm run. Target (cold): <= 0.5x JAX. The machine may be shared: read ratios as ranges,
and the calling thread's CPU time (first call, then per step) printed below them.

Also the peak resident memory (``ru_maxrss``) of a fresh process running ``RSS_STEPS`` steps of
the same train step (target <= 1.2x JAX's), whole process as a user sees it, and the part above
the process's peak after importing the library and building the inputs. The ptojax process then
waits for its kernels and runs 10 steps more, so its peak covers both tiers (the compiler runs
in a process of its own).
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ptojax.lower.host.cache import file_lock
from ptojax.lower.host.exit_handoff import pending_requests

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 30
RSS_STEPS = 200

CHILD = """
import resource, sys, time
sys.path.insert(0, {here!r})
from autodiff import inputs, jax_loss, pto_loss
import numpy as np
if {jax}:
    import jax, jax.numpy as m
    loss, lib = jax_loss, jax
else:
    import ptojax as lib, ptojax.numpy as m
    loss = pto_loss
params, x, labels = inputs(m)
imported_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
step = lib.jit(lambda p, x, y: lib.tree_util.tree_map(lambda w, g: w - 0.01 * g, p,
                                                      lib.grad(loss)(p, x, y)))
start, cpu_start, process_start = time.perf_counter(), time.thread_time(), time.process_time()
step_cpu = []
for _ in range({steps}):
    before = time.thread_time()
    params = step(params, x, labels)
    step_cpu.append(time.thread_time() - before)
lib.block_until_ready(params) if {jax} else None
elapsed = time.perf_counter() - start
print("CPU", time.process_time() - process_start, time.thread_time() - cpu_start, step_cpu[0],
      sorted(step_cpu[1:])[len(step_cpu[1:]) // 2])
if {settle} and not {jax}:    # wait for the kernels (compiled or loaded) and the tier race
    from ptojax.lower.host.backend import wait_for_compiles
    wait_for_compiles()
    for _ in range(10):
        params = step(params, x, labels)
    print("STATUS", list(step._cache.values())[0].executable.status)
print(imported_kib, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(elapsed)
"""


def run(jax: bool, cache: str, steps: int = STEPS, settle: bool = False):
    """(seconds for ``steps`` steps, (peak KiB after imports and inputs, peak KiB at the end))
    of a fresh process; ``settle``: ptojax then waits for its kernels and runs 10 more steps
    (so the peak includes the compiled tier)."""
    env = {**os.environ, "PTOJAX_CACHE_DIR": cache}
    code = CHILD.format(here=HERE, jax=jax, steps=steps, settle=settle)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    lines = out.stdout.strip().splitlines()
    status = next((line.split(" ", 1)[1] for line in lines if line.startswith("STATUS ")), None)
    cpu = next(tuple(map(float, line.split()[1:])) for line in lines if line.startswith("CPU "))
    return float(lines[-1]), tuple(int(kib) for kib in lines[-2].split()), status, cpu


def wait_for_detached_builds(cache, timeout=300):
    """Seconds until the builds the cold run left are done: the programs it handed off at
    exit (``lower/host/exit_handoff.py``: its 30 steps end before its program is hot enough
    to build, ``hotness.py``), their libraries published and the header
    precompile after them finished (no key's lock held); None if it left none, or they did
    not finish within ``timeout``."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        keys = [open(p).read().strip() for p in glob.glob(f"{cache}/host-kernels/programs/*.key")]
        if not pending_requests(Path(cache)) and not any(map(_held, glob.glob(
                f"{cache}/host-kernels/*/*.lock"))) and \
                all(glob.glob(f"{cache}/host-kernels/{k[:2]}/{k}.json") for k in keys):
            return time.perf_counter() - start if keys else None
        time.sleep(0.05)
    return None


def _held(lock_path) -> bool:
    with file_lock(Path(lock_path), wait=False) as free:
        return not free


def main():
    with tempfile.TemporaryDirectory() as cache:
        jax_s, _, _, jax_cpu = run(True, cache)
        cold, _, _, cold_cpu = run(False, cache)
        published_after = wait_for_detached_builds(cache)
        warm, _, _, warm_cpu = run(False, cache)
        _, jax_rss, _, _ = run(True, cache, RSS_STEPS)
        _, ours_rss, status, _ = run(False, cache, RSS_STEPS, settle=True)
    for name, ours, target in (("cold cache", cold, 0.5), ("warm cache", warm, None)):
        verdict = "" if target is None else \
            f"  target <= {target:.2f}x  {'MET' if ours / jax_s <= target else 'MISSED'}"
        print(f"first {STEPS} MLP train steps, {name:<10}  ptojax {ours:6.2f} s  "
              f"jax {jax_s:6.2f} s  ratio {ours / jax_s:5.2f}x{verdict}")
    # wall time on a shared machine mostly measures the scheduler: CPU times too (the
    # process's threads; ptojax's compiler runs in processes of its own, JAX's in threads)
    for name, (process, thread, first, median) in (("ptojax cold", cold_cpu),
                                                   ("ptojax warm", warm_cpu), ("jax", jax_cpu)):
        print(f"  CPU, {name:<11}  process {process:5.3f} s, calling thread {thread:5.3f} s "
              f"(first call {first * 1e3:6.1f} ms, then a median {median * 1e3:5.2f} ms per step)")
    print("the cold run's builds (handed off at exit, or its own): " + (
        "none left" if published_after is None
        else f"published {published_after:.2f} s after it exited"))
    ratio = ours_rss[1] / jax_rss[1]
    print(f"peak RSS of {RSS_STEPS} MLP train steps (+10 compiled)  ptojax "
          f"{ours_rss[1] / 1024:6.1f} MiB  jax {jax_rss[1] / 1024:6.1f} MiB  ratio {ratio:5.2f}x"
          f"  target <= 1.20x  {'MET' if ratio <= 1.2 else 'MISSED'}")
    print(f"  above the peak after imports and inputs: ptojax "
          f"{(ours_rss[1] - ours_rss[0]) / 1024:6.1f} MiB  "
          f"jax {(jax_rss[1] - jax_rss[0]) / 1024:6.1f} MiB  (ptojax status: {status})")


if __name__ == "__main__":
    main()
