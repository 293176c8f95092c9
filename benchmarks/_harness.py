"""Timing helpers shared by the benchmarks: best-of-N wall times and ratio printing."""
from __future__ import annotations

import time


def best_time(fn, *, repeat: int = 7, number: int | None = None, min_time: float = 0.05):
    """Best per-call seconds over ``repeat`` rounds of ``number`` calls (auto-calibrated)."""
    fn()
    if number is None:
        number = 1
        while True:
            start = time.perf_counter()
            for _ in range(number):
                fn()
            if time.perf_counter() - start >= min_time:
                break
            number *= 2
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def interleaved_best(fns, *, rounds: int = 15, min_time: float = 0.05):
    """Best per-call seconds of each of ``fns``, timed in alternating rounds of about
    ``min_time`` each, so that all see the same machine: on a shared VM the speed drifts by
    tens of percent within a minute, and timing one side after the other turns that drift into
    the ratio."""
    numbers = [max(1, int(min_time / max(best_time(f, repeat=1), 1e-6))) for f in fns]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, (f, number) in enumerate(zip(fns, numbers)):
            start = time.perf_counter()
            for _ in range(number):
                f()
            best[i] = min(best[i], (time.perf_counter() - start) / number)
    return best


def once(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def report(name: str, ours: float, jax: float, target: float | None = None, numpy=None):
    ratio = ours / jax
    verdict = ""
    if target is not None:
        verdict = f"  target <= {target:.2f}x  {'MET' if ratio <= target else 'MISSED'}"
    extra = f"  numpy {fmt(numpy)}" if numpy is not None else ""
    print(f"{name:<44} ptojax {fmt(ours)}  jax {fmt(jax)}  ratio {ratio:5.2f}x{verdict}{extra}")
    return ratio
