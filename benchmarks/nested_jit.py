"""jit functions called under an outer transformation, vs JAX, in one process
(python benchmarks/nested_jit.py [repeats]):

1. tests/programs/physical_optimization.py ``main()``: eager ``grad`` of a function with
   Python control flow calling small jitted helpers (JAX's examples/physical_optimization.py
   style)
2. eager ``grad`` of a function calling a jitted 10-op helper 20 times

CPU time per run, medians of interleaved repeats (ptojax, JAX, ptojax, ...). The machine these
run on may be shared: run it a few times and read the ratios as ranges.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from helpers import load_source  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import ptojax as pto  # noqa: E402
import ptojax.numpy as pnp  # noqa: E402


def _grad_of_helper_calls(lib, np_):
    @lib.jit
    def helper(x, y):
        a = x * y + 1.0
        b = np_.sin(a) - y
        c = b * b + x
        d = np_.exp(-c) * a
        e = d + np_.cos(x) * 0.5
        return e * y - a

    def f(x):
        acc = x
        for _ in range(20):
            acc = helper(acc, x) * 0.9
        return acc.sum()
    g, x = lib.grad(f), np_.ones(8) * 0.3
    return lambda: np.asarray(g(x))


def _cpu_medians(runs: dict, repeats: int) -> dict:
    for fn in runs.values():
        fn()
        fn()
    times = {name: [] for name in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            start = time.process_time()
            fn()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main(repeats: int = 21):
    program = os.path.join(HERE, "..", "tests", "programs", "physical_optimization.py")
    on_pto = load_source(program, "physical_optimization_pto", mapped=True)
    on_jax = load_source(program, "physical_optimization_jax", mapped=False)
    cases = {
        "physical_optimization.main()": (on_pto.main, on_jax.main),
        "grad of 20 calls of a jitted 10-op helper": (_grad_of_helper_calls(pto, pnp),
                                                      _grad_of_helper_calls(jax, jnp)),
    }
    for name, (pto_run, jax_run) in cases.items():
        med = _cpu_medians({"ptojax": pto_run, "jax": jax_run}, repeats)
        print(f"{name:45s} ptojax {med['ptojax'] * 1e3:7.1f} ms  jax {med['jax'] * 1e3:7.1f} ms"
              f"  ratio {med['ptojax'] / med['jax']:.2f}  (CPU time, median of {repeats})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
