"""The axis names bound while tracing or batching: one stack, innermost last.

A ``vmap`` binds its axis (named or not) while its function is traced and while its batching
rules run; a ``shard_map`` binds its mesh axes while its per-device function is traced.
Collectives look names up here (innermost binding first, as JAX); batching rules read the
size and name of the innermost vmap.
"""
from __future__ import annotations

import contextlib
import threading
from typing import NamedTuple, Optional


class Frame(NamedTuple):
    sizes: dict       # axis name -> size
    batch: bool       # a vmap's axis (its single entry may be named None)


class _Stack(threading.local):
    def __init__(self):
        self.frames: list = []


_stack = _Stack()


@contextlib.contextmanager
def bound_axes(sizes: dict, batch: bool = False):
    """Bind axis names (name -> size) for the extent of the block."""
    _stack.frames.append(Frame(dict(sizes), batch))
    try:
        yield
    finally:
        _stack.frames.pop()


def bound_batch_axis(name, size: int):
    """Bind a vmap's axis (its name may be None) while it is traced or batched."""
    return bound_axes({name: size}, batch=True)


def lookup(name: str) -> Optional[int]:
    """The size of the innermost axis called ``name``, or None if none is bound."""
    for frame in reversed(_stack.frames):
        if name in frame.sizes:
            return frame.sizes[name]
    return None


def bound_names() -> list:
    return sorted({n for f in _stack.frames for n in f.sizes if n is not None})


def _innermost_batch() -> Frame:
    return next(f for f in reversed(_stack.frames) if f.batch)


def batch_axis_size() -> int:
    """The size of the innermost vmap's axis (batching rules run inside one)."""
    return next(iter(_innermost_batch().sizes.values()))


def batch_axis_name():
    """The name of the innermost vmap's axis (None when unnamed)."""
    return next(iter(_innermost_batch().sizes))


def innermost_batch_name():
    """The innermost vmap's axis name, or None outside any vmap."""
    frame = next((f for f in reversed(_stack.frames) if f.batch), None)
    return None if frame is None else next(iter(frame.sizes))


def context() -> tuple:
    """The named axes bound now, as a hashable value (outermost first): a trace made under
    them may name them, so a cache of traces keys on it (an unnamed vmap axis cannot be named,
    so it is not part of it, as in JAX)."""
    return tuple((name, size) for f in _stack.frames for name, size in f.sizes.items()
                 if name is not None)
