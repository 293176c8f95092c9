"""Global arrays built from per-device data, as JAX's ``make_array_from_callback``,
``make_array_from_single_device_arrays`` and ``make_array_from_process_local_data``, on
ptojax's shardings (``NamedSharding`` gives a ``ShardedArray``, a single-device sharding an
ordinary ``Array``)."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShardingError
from ptojax.eval.array import Array
from ptojax.ir.types import TensorType
from ptojax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding, named_sharding
from ptojax.shard.runtime.arrays import ShardedArray, device_put
from ptojax.source_info import user_frame


def _named(sharding, what: str):
    """``sharding`` as a NamedSharding, or None for a single-device one."""
    if isinstance(sharding, PartitionSpec):
        return named_sharding(sharding, what)
    if isinstance(sharding, NamedSharding):
        return sharding
    if isinstance(sharding, SingleDeviceSharding):
        return None
    raise ShardingError(f"{what}: sharding must be a NamedSharding or a SingleDeviceSharding, "
                        f"got {type(sharding).__name__}", user_frame(3))


def _device_indices(shape, sharding) -> list:
    """(device, index) for each local device: the index is a tuple of slices, ``slice(None)``
    where the block spans the whole dimension (as JAX's ``addressable_devices_indices_map``)."""
    if sharding is None:
        return [(None, (slice(None),) * len(shape))]
    return [(d, tuple(slice(None) if (s.start, s.stop) == (0, n) else s
                      for s, n in zip(sharding.device_indices(d, shape), shape)))
            for d in sharding.mesh.local_devices]


def _block_shape(shape, index) -> tuple:
    return tuple(len(range(*s.indices(n))) for s, n in zip(index, shape))


def _check_dtype(dtype, block_dtype, fn: str):
    if dtype is not None and dtypes.canonical_dtype(dtype) != block_dtype:
        raise ValueError(f"If `dtype` is provided to `jax.{fn}`, it must match the dtype of "
                         f"the addressable shards. Got dtype={np.dtype(dtype)} and shard "
                         f"dtype={block_dtype}`.")


def _build(shape, sharding, blocks, indices, fn: str, dtype):
    """The global array from one numpy block per local device, their shapes checked."""
    if not blocks:
        raise ValueError(f"If the Array has no addressable shards, `dtype` must be provided "
                         f"via the `dtype` argument to `jax.{fn}`.")
    block_dtype = blocks[0].dtype
    _check_dtype(dtype, block_dtype, fn)
    for block, (_, index) in zip(blocks, indices):
        expected = _block_shape(shape, index)
        if block.shape != expected or block.dtype != block_dtype:
            raise ValueError(f"Expected shard shape {expected} doesn't match the single device "
                             f"array shape {block.shape} ({block.dtype}) in {fn}, for an array "
                             f"of shape {tuple(shape)} with sharding {sharding}")
    weak = False
    aval = TensorType(tuple(shape), block_dtype, weak)
    if sharding is None:
        return Array(blocks[0], weak)
    return ShardedArray(blocks, aval, sharding)


def make_array_from_callback(shape, sharding, data_callback: Callable, dtype=None):
    """The array of ``shape`` placed as ``sharding`` says, each device's block being
    ``data_callback(index)`` for its index (a tuple of slices into the global array).

    Raises:
      ValueError: a block of the wrong shape, or a ``dtype`` other than the blocks'.

    Example:
      >>> data = np.arange(8.0).reshape(4, 2)
      >>> mesh = pto.make_mesh((2,), ("x",))
      >>> a = pto.make_array_from_callback((4, 2), pto.NamedSharding(mesh, pto.P("x")),
      ...                                  lambda index: data[index])
      >>> a.addressable_shards[1].data
      Array([[4., 5.],
             [6., 7.]], dtype=float32)
    """
    named = _named(sharding, "make_array_from_callback")
    indices = _device_indices(tuple(shape), named)
    blocks = [dtypes.canonical_value(np.asarray(data_callback(index))) for _, index in indices]
    return _build(shape, named, blocks, indices, "make_array_from_callback", dtype)


def make_array_from_single_device_arrays(shape, sharding, arrays: Sequence, *, dtype=None):
    """The array of ``shape`` placed as ``sharding`` says from one ptojax ``Array`` per local
    device (in the order of the mesh's local devices), each the block that device holds.

    Raises:
      TypeError: an element of ``arrays`` is not a ptojax Array.
      ValueError: a block of the wrong shape or dtype, or the wrong number of blocks.

    Example:
      >>> mesh = pto.make_mesh((2,), ("x",))
      >>> pto.make_array_from_single_device_arrays(
      ...     (4,), pto.NamedSharding(mesh, pto.P("x")), [pnp.zeros(2), pnp.ones(2)])
      Array([0., 0., 1., 1.], dtype=float32)
    """
    named = _named(sharding, "make_array_from_single_device_arrays")
    indices = _device_indices(tuple(shape), named)
    arrays = list(arrays)
    for a in arrays:
        if not isinstance(a, Array) or isinstance(a, ShardedArray):
            raise TypeError(f"Unsupported type for elements in `arrays`: {type(a)}")
    if arrays and len(arrays) != len(indices):
        raise ValueError(f"make_array_from_single_device_arrays: {len(arrays)} arrays given "
                         f"for {len(indices)} local devices of {sharding}")
    blocks = [np.asarray(a) for a in arrays]
    return _build(shape, named, blocks, indices, "make_array_from_single_device_arrays", dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The global array from this process's data, placed as ``sharding`` says. ptojax runs
    one process, so ``local_data`` is the whole array (``global_shape`` None or its shape).

    Raises:
      ValueError: ``global_shape`` differs from ``local_data``'s shape.

    Example:
      >>> mesh = pto.make_mesh((2,), ("x",))
      >>> a = pto.make_array_from_process_local_data(pto.NamedSharding(mesh, pto.P("x")),
      ...                                            np.arange(4.0))
      >>> a.addressable_shards[1].data
      Array([2., 3.], dtype=float32)
    """
    local_data = np.asarray(local_data) if not isinstance(local_data, Array) else local_data
    if global_shape is not None and tuple(global_shape) != tuple(local_data.shape):
        raise ValueError(f"When calling `make_array_from_process_local_data` on a single "
                         f"process, global_shape should be None or equal to local_data.shape."
                         f"Got global_shape={tuple(global_shape)} and local_data.shape="
                         f"{tuple(local_data.shape)}.")
    return device_put(local_data, sharding)
