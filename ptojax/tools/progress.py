"""A dependency-free progress bar for training loops (terminal and Jupyter):

    bar = pto.tools.progress(range(steps), desc="train")
    for step in bar:
        params, loss = update(params, batch)
        bar.set(loss=float(loss))

It redraws one line (carriage return) at most every ``min_interval`` seconds and ends it with
a newline; on a stream that is not a terminal it writes a line only every 10% of the way, so
logs stay short.
"""
from __future__ import annotations

import sys
import time
from ptojax.public import add_examples as _add_examples


def _format_value(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class Progress:
    """Iterates over ``iterable`` drawing ``desc [#####-----] n/total rate metrics``."""

    def __init__(self, iterable, total=None, desc: str = "", file=None,
                 min_interval: float = 0.1, width: int = 24):
        self.iterable = iterable
        self.total = total if total is not None else _length(iterable)
        self.desc = desc
        self.file = file if file is not None else sys.stderr
        self.min_interval = min_interval
        self.width = width
        self.count = 0
        self.metrics: dict = {}
        self._start = self._last_draw = None
        self._interactive = _is_interactive(self.file)
        self._next_tenth = 1

    def set(self, **metrics) -> None:
        """Values shown after the bar (e.g. ``loss=0.12``), kept until set again."""
        self.metrics.update(metrics)

    def __iter__(self):
        self._start = time.perf_counter()
        for item in self.iterable:
            yield item
            self.count += 1
            self._maybe_draw()
        self._draw(final=True)

    def line(self) -> str:
        """The current text of the bar."""
        elapsed = time.perf_counter() - (self._start or time.perf_counter())
        rate = f"{self.count / elapsed:.1f} it/s" if elapsed > 0 and self.count else ""
        if self.total:
            filled = int(self.width * min(self.count, self.total) / self.total)
            bar = f"[{'#' * filled}{'-' * (self.width - filled)}] {self.count}/{self.total}"
        else:
            bar = f"{self.count}"
        metrics = " ".join(f"{k}={_format_value(v)}" for k, v in self.metrics.items())
        return " ".join(part for part in (self.desc, bar, rate, metrics) if part)

    def _maybe_draw(self):
        if self._interactive:
            now = time.perf_counter()
            if self._last_draw is None or now - self._last_draw >= self.min_interval:
                self._last_draw = now
                self._draw(final=False)
        elif self.total and self.count * 10 >= self._next_tenth * self.total:
            self._next_tenth += 1
            if self.count < self.total:
                self._draw(final=False)

    def _draw(self, final: bool):
        if self._interactive:
            self.file.write("\r" + self.line() + ("\n" if final else ""))
        else:
            self.file.write(self.line() + "\n")
        self.file.flush()


def _length(iterable):
    try:
        return len(iterable)
    except TypeError:
        return None


def _is_interactive(stream) -> bool:
    """A terminal, or a Jupyter kernel's output stream (both handle carriage returns)."""
    if type(stream).__module__.startswith("ipykernel"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def progress(iterable, total=None, desc: str = "", **options) -> Progress:
    """A ``Progress`` bar over ``iterable`` (see the module docstring)."""
    return Progress(iterable, total, desc, **options)


_add_examples(globals(), """
progress:
    >>> import io
    >>> sum(pto.tools.progress(range(4), desc='steps', file=io.StringIO()))
    6
""")
