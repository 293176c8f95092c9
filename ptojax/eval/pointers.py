"""``data_pointers``: numpy arrays' data pointers, read straight from the array objects.

``a.ctypes.data`` builds a helper object per array, which made the launch of a small host
kernel (``lower/host/loader.py``) or a small BLAS call (``eval/blas.py``) cost many times
its ctypes call.
"""
from __future__ import annotations

import ctypes
import platform

import numpy as np


def _data_pointer_offset():
    """Where a numpy array object keeps its data pointer: right after the object header
    (``PyArrayObject_fields.data``, fixed by numpy's C ABI), on CPython, where ``id`` is the
    object's address. Checked against ``a.ctypes.data`` on arrays and views; None if it does
    not hold (another Python, another layout)."""
    if platform.python_implementation() != "CPython":
        return None
    offset = object.__basicsize__
    base = np.arange(12.0).reshape(3, 4)
    for probe in (base, base[1:], base[:, 2:], np.empty(0, np.int8), np.float32(1.0) * base):
        if ctypes.c_void_p.from_address(id(probe) + offset).value != probe.ctypes.data:
            return None
    return offset


_DATA_OFFSET = _data_pointer_offset()


def data_pointers(arrays) -> list:
    """``[a.ctypes.data for a in arrays]`` (numpy arrays), 5x faster where the array layout
    was verified (``_data_pointer_offset``)."""
    if _DATA_OFFSET is None:
        return [a.ctypes.data for a in arrays]
    at, offset = ctypes.c_void_p.from_address, _DATA_OFFSET
    return [at(id(a) + offset).value for a in arrays]


def data_pointer_offset():
    """The offset of an array object's data pointer from its address (``id``), or None
    where the layout was not verified (``_data_pointer_offset``)."""
    return _DATA_OFFSET


def data_pointer(a) -> int:
    """``a.ctypes.data`` of one numpy array (``data_pointers``)."""
    if _DATA_OFFSET is None:
        return a.ctypes.data
    return ctypes.c_void_p.from_address(id(a) + _DATA_OFFSET).value
