"""``with pto.profile() as p:`` — what ran, how often, how long, how many bytes.

Executors report each jitted call and each host kernel through ``record``; while no profile
is active that costs one global read. ``p.report()`` is a table sorted by total time (with the
target cost model's estimate where the executor knows it); ``p.save_chrome_trace(path)``
writes a trace for chrome://tracing or https://ui.perfetto.dev.
"""
from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from typing import NamedTuple, Optional
from ptojax.public import add_examples as _add_examples

_lock = threading.Lock()
active: Optional["Profile"] = None


class Event(NamedTuple):
    name: str
    kind: str              # "jit" | "kernel" | ...
    start: float           # seconds (perf_counter)
    duration: float        # seconds
    nbytes: int
    estimate_us: Optional[float]
    thread: int
    args: Optional[dict] = None   # an annotation's keyword arguments (pto.profiler)


def record(name: str, kind: str, start: float, duration: float, nbytes: int = 0,
           estimate_us: Optional[float] = None, args: Optional[dict] = None) -> None:
    prof = active
    if prof is not None:
        prof.events.append(Event(name, kind, start, duration, nbytes, estimate_us,
                                 threading.get_ident(), args))


class Profile:
    def __init__(self):
        self.events: list[Event] = []
        self.start = time.perf_counter()

    def __enter__(self):
        global active
        with _lock:
            if active is not None:
                raise RuntimeError("a pto.profile() is already active; profiles do not nest")
            active = self
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        global active
        with _lock:
            active = None
        return False

    def summary(self) -> list[dict]:
        rows = defaultdict(lambda: {"calls": 0, "total": 0.0, "bytes": 0, "estimate_us": None})
        for e in self.events:
            row = rows[(e.kind, e.name)]
            row["calls"] += 1
            row["total"] += e.duration
            row["bytes"] += e.nbytes
            if e.estimate_us is not None:
                row["estimate_us"] = e.estimate_us
        out = [{"kind": k, "name": n, **r, "mean": r["total"] / r["calls"]}
               for (k, n), r in rows.items()]
        return sorted(out, key=lambda r: -r["total"])

    def report(self) -> "ProfileReport":
        return ProfileReport(self.summary())

    def chrome_trace(self) -> dict:
        """The events in Chrome's trace format (``{"traceEvents": [...]}``): one complete
        ("X") event per record, times in microseconds from the profile's start."""
        events = [{"name": e.name, "cat": e.kind, "ph": "X", "pid": 0, "tid": e.thread,
                   "ts": (e.start - self.start) * 1e6, "dur": e.duration * 1e6,
                   "args": {**({"bytes": e.nbytes} if e.args is None else {}),
                            **({"estimate_us": e.estimate_us}
                               if e.estimate_us is not None else {}),
                            **{k: str(v) for k, v in (e.args or {}).items()}}}
                  for e in self.events]
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def save_chrome_trace(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)


class ProfileReport(str):
    """The summary table as text (it is a str) that also renders as HTML in Jupyter."""

    def __new__(cls, rows):
        header = (f"{'kind':<8} {'name':<36} {'calls':>6} {'total ms':>10} {'mean us':>10} "
                  f"{'MB':>8} {'target est us':>14}")
        lines = [header, "-" * len(header)]
        for r in rows:
            est = f"{r['estimate_us']:.1f}" if r["estimate_us"] is not None else "-"
            lines.append(f"{r['kind']:<8} {r['name'][:36]:<36} {r['calls']:>6} "
                         f"{r['total'] * 1e3:>10.3f} {r['mean'] * 1e6:>10.1f} "
                         f"{r['bytes'] / 1e6:>8.2f} {est:>14}")
        obj = super().__new__(cls, "\n".join(lines))
        obj.rows = rows
        return obj

    def _repr_html_(self):
        def row(r):
            est = "" if r["estimate_us"] is None else f"{r['estimate_us']:.1f}"
            return (f"<tr><td>{r['kind']}</td><td>{r['name']}</td><td>{r['calls']}</td>"
                    f"<td>{r['total'] * 1e3:.3f}</td><td>{r['mean'] * 1e6:.1f}</td>"
                    f"<td>{r['bytes'] / 1e6:.2f}</td><td>{est}</td></tr>")
        return ("<table><tr><th>kind</th><th>name</th><th>calls</th><th>total ms</th>"
                "<th>mean µs</th><th>MB</th><th>target est µs</th></tr>"
                + "".join(row(r) for r in self.rows) + "</table>")


def profile() -> Profile:
    """A context manager recording every jitted call and kernel run inside it."""
    return Profile()


_add_examples(globals(), """
profile:
    >>> with pto.profile() as prof:
    ...     _ = pto.jit(lambda x: x + 1.0)(pnp.ones(4))
    >>> len(prof.events) >= 1
    True
""")
