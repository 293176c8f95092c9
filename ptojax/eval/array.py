"""``ptojax.Array``: a concrete, immutable, numpy-backed value.

Arithmetic, indexing and methods (``x + y``, ``x[1:]``, ``x.sum()``) are attached by
``ptojax.numpy.array_methods`` so Arrays and Tracers behave the same.
"""
from __future__ import annotations

import functools

import numpy as np

from ptojax import dtypes
from ptojax.errors import located
from ptojax.ir.types import TensorType
from ptojax.devices import local_devices
from ptojax.sharding import Shard, SingleDeviceSharding, single_device_sharding
from ptojax.scoped_options import DEFAULT_DEVICE
from ptojax.eval.scalar_conversion import (check_bool_conversion, check_index_conversion,
                                             check_scalar_conversion)
from ptojax.source_info import user_frame


def default_device_sharding():
    """The sharding of a new Array under ``jax_default_device`` (None: the ordinary one, on
    this process's first device)."""
    device = DEFAULT_DEVICE.get()
    return None if device is None or device == "cpu" else _on_device(device)


@functools.lru_cache(maxsize=None)
def _on_device(device) -> SingleDeviceSharding:
    return SingleDeviceSharding(device)


class Array:
    """A ptojax array (``pnp.ndarray``): an immutable value of a shape and dtype, possibly
    sharded over devices; the NumPy operators, methods and indexing apply (``x.at[i].set(v)``
    for updates).

    Example:
        >>> x = pnp.array([[1.0, 2.0], [3.0, 4.0]])
        >>> x.shape, x.dtype
        ((2, 2), dtype('float32'))
        >>> (x.T @ x)[0]
        Array([10., 14.], dtype=float32)
    """
    __slots__ = ("_value", "weak_type", "_aval", "_sharding", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, weak_type: bool = False, sharding=None):
        # ``value`` is owned by this Array: nothing else writes to it. numpy sees it only
        # through read-only views (``__array__``).
        self._value = value if type(value) is np.ndarray else np.asarray(value)
        self.weak_type = weak_type
        self._aval = None
        if sharding is None and DEFAULT_DEVICE.changed:   # jax_default_device: it lands there
            sharding = default_device_sharding()
        self._sharding = sharding

    @property
    def aval(self) -> TensorType:
        if self._aval is None:
            self._aval = TensorType(self._value.shape, dtypes.canonicalize(self._value.dtype),
                                    self.weak_type)
        return self._aval

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self._value.itemsize)

    @property
    def sharding(self):
        if self._sharding is None:
            return single_device_sharding()
        return self._sharding

    @property
    def addressable_shards(self) -> list:
        return [Shard(self.sharding.device, tuple(slice(0, n) for n in self.shape), self)]

    def devices(self) -> set:
        """The devices holding (a part of) this array."""
        return set(self.sharding.device_set)

    @property
    def device(self):
        """The device holding this array, or its sharding if it spans several devices."""
        device_set = self.sharding.device_set
        return next(iter(device_set)) if len(device_set) == 1 else self.sharding

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device holding a part of this array belongs to this process."""
        local = set(local_devices())
        return all(d in local for d in self.sharding.device_set)

    def addressable_data(self, index: int) -> "Array":
        """The block held by the ``index``-th addressable device."""
        return self.addressable_shards[index].data

    def on_device_size_in_bytes(self) -> int:
        """The bytes one device holds for this array."""
        return self.addressable_shards[0].data.nbytes

    def is_ready(self) -> bool:
        return True  # values are computed eagerly

    def copy_to_host_async(self) -> None:
        """Nothing to do: values already live in host memory."""

    def tobytes(self, order="C") -> bytes:
        return self._value.tobytes(order)

    def __dlpack__(self, **kwargs):
        """Export through DLPack: a read-only view of the host buffer, or a copy for a
        consumer whose DLPack version cannot mark a buffer read-only."""
        try:
            return np.asarray(self).__dlpack__(**kwargs)
        except BufferError:
            return np.array(self._value).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and dtype != self._value.dtype:
            return self._value.astype(dtype)
        if copy:
            return self._value.copy()
        view = self._value.view()
        view.flags.writeable = False
        return view

    def block_until_ready(self):
        return self

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def __bool__(self):
        check_bool_conversion(self.shape)
        return bool(self._value)

    def __int__(self):
        check_scalar_conversion(self.shape, "int")
        return int(self._value)

    def __float__(self):
        check_scalar_conversion(self.shape, "float")
        return float(self._value)

    def __index__(self):
        check_index_conversion(self.shape, self.dtype)
        return int(self._value)

    def __complex__(self):
        check_scalar_conversion(self.shape, "complex")
        return complex(self._value)

    def __len__(self):
        if self._value.ndim == 0:
            raise located(TypeError("len() of unsized object (a 0-d Array)"), user_frame())
        return len(self._value)

    def __hash__(self):
        raise located(TypeError("unhashable type: 'Array' (use a tuple or a numpy scalar as a "
                                "key)"), user_frame())

    def __repr__(self):
        """JAX's form: the values, then always the dtype (and weak_type when set)."""
        prefix = "Array("
        dtype = f"dtype={self._value.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        if self._value.size == 0:
            body = f"[], shape={self._value.shape}"
        else:
            body = np.array2string(self._value, prefix=prefix, suffix=",", separator=", ")
        width = np.get_printoptions()["linewidth"]
        last_line = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last_line + len(dtype) + 2 > width else " "
        return f"{prefix}{body},{sep}{dtype})"

    def __str__(self):
        return str(self._value)

    def __format__(self, spec):
        # as JAX: a scalar formats as its numpy scalar (np.float32 with "" prints the float's
        # shortest float64 repr, 0.9092974066734314); arrays as numpy arrays
        if self._value.ndim == 0:
            return format(self._value[()], spec)
        return format(self._value, spec)

    def __reduce__(self):
        return (Array, (self._value, self.weak_type))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self
