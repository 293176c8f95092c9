"""Arrays built from other things: nested blocks (``block``), a function of the indices
(``fromfunction``, vmapped over each axis as JAX), host bytes and text (``frombuffer``,
``fromstring``: NumPy parses them, then the values become an array), DLPack tensors
(``from_dlpack``). ``fromiter`` and ``fromfile`` are not provided, as in JAX: consuming an
iterator or a file is a side effect."""
from __future__ import annotations

import numpy as np

from ptojax import lax
from ptojax.batching.api import vmap
from ptojax.errors import ConcretizationError, ShapeError, UnsupportedError
from ptojax.numpy._promote import asarray, supported_dtype
from ptojax.numpy.creation import arange
from ptojax.numpy.manipulation import concatenate
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _at_least(x, ndim):
    return x if x.ndim >= ndim else lax.reshape(x, (1,) * (ndim - x.ndim) + tuple(x.shape))


def _block(xs):
    """(the assembled array, the depth of list nesting)."""
    if isinstance(xs, tuple):
        raise ShapeError(f"block: tuples are not allowed (use lists), got {xs!r:.60}",
                         user_frame())
    if not isinstance(xs, list):
        return asarray(xs, op="block"), 1
    if not xs:
        raise ShapeError("block: empty lists are not allowed", user_frame())
    parts, depths = zip(*[_block(x) for x in xs])
    if any(d != depths[0] for d in depths):
        raise ShapeError("block: the lists are nested to different depths", user_frame())
    rank = max(depths[0], max(p.ndim for p in parts))
    return concatenate([_at_least(p, rank) for p in parts], axis=-depths[0]), depths[0] + 1


def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists join along the
    last axis, the next along the one before, and so on."""
    return _block(arrays)[0]


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(*indices)`` evaluated on the index grid of ``shape`` (each index array of
    ``dtype``); the function is vmapped over each axis, so it sees scalars."""
    if any(type(s) is Tracer for s in np.atleast_1d(np.asarray(shape, dtype=object))):
        raise ConcretizationError("fromfunction: shape must be static", user_frame())
    shape = tuple(int(s) for s in (shape if np.ndim(shape) else (shape,)))
    dtype = supported_dtype(dtype, "fromfunction")
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap(function, in_axes=tuple(reversed(in_axes)))
    return function(*(arange(s, dtype=dtype) for s in shape), **kwargs)


def _host(op, value, dtype):
    return asarray(value.astype(supported_dtype(dtype, op), copy=False), op=op)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """The values stored in ``buffer`` (bytes, or an object with the buffer protocol) read
    as ``dtype``; a Python ``float``/``int`` dtype means ptojax's default width."""
    return _host("frombuffer", np.frombuffer(buffer, dtype=dtype, count=count, offset=offset),
                 dtype)


def fromstring(string, dtype=float, count=-1, *, sep):
    """The numbers written in ``string``, separated by ``sep``."""
    return _host("fromstring", np.fromstring(string, dtype=dtype, count=count, sep=sep),
                 dtype)


def fromiter(*args, **kwargs):
    """Not provided, as in JAX: consuming an iterator is a side effect that jit would not
    repeat. Use ``pnp.asarray(numpy.fromiter(...))`` outside transformed functions."""
    raise UnsupportedError("fromiter: not implemented, as in JAX (consuming an iterable is a "
                           "side effect that transformations would not repeat); use "
                           "pnp.asarray(numpy.fromiter(...)) outside jit", user_frame())


def fromfile(*args, **kwargs):
    """Not provided, as in JAX: reading a file is a side effect that jit would not repeat.
    Use ``pnp.asarray(numpy.fromfile(...))`` outside transformed functions."""
    raise UnsupportedError("fromfile: not implemented, as in JAX (reading a file is a side "
                           "effect that transformations would not repeat); use "
                           "pnp.asarray(numpy.fromfile(...)) outside jit", user_frame())


def from_dlpack(x, /, *, device=None, copy=None):
    """An array holding the values of ``x``, any object with the DLPack protocol (a NumPy
    array, a host tensor of another library); the values are copied to ptojax's host."""
    if device is not None and str(device).lower() not in ("cpu", "host"):
        raise UnsupportedError(f"from_dlpack: device={device!r} is not supported (ptojax "
                               f"reads DLPack tensors on the host)", user_frame())
    return asarray(np.from_dlpack(x, copy=copy), op="from_dlpack")


__all__ = ["block", "from_dlpack", "frombuffer", "fromfile", "fromfunction", "fromiter",
           "fromstring"]


_add_examples(globals(), """
block:
    >>> pnp.block([[pnp.eye(2), pnp.zeros((2, 1))], [pnp.ones((1, 2)), pnp.full((1, 1), 5.0)]])
    Array([[1., 0., 0.],
           [0., 1., 0.],
           [1., 1., 5.]], dtype=float32)
fromfunction:
    >>> pnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=pnp.int32)
    Array([[ 0,  1,  2],
           [10, 11, 12]], dtype=int32)
frombuffer:
    >>> pnp.frombuffer(b"\\x01\\x02\\x03", dtype=pnp.uint8)
    Array([1, 2, 3], dtype=uint8)
fromstring:
    >>> pnp.fromstring("1 2 3.5", sep=" ")
    Array([1. , 2. , 3.5], dtype=float32)
fromfile:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> np.arange(2, dtype=np.int32).tofile(path)
    >>> pnp.asarray(np.fromfile(path, dtype=np.int32))  # instead of pnp.fromfile
    Array([0, 1], dtype=int32)
from_dlpack:
    >>> pnp.from_dlpack(np.arange(3, dtype=np.float32))
    Array([0., 1., 2.], dtype=float32)
fromiter:
    >>> pnp.asarray(np.fromiter(iter([1, 2]), dtype=np.float32))  # instead of pnp.fromiter
    Array([1., 2.], dtype=float32)
""")
