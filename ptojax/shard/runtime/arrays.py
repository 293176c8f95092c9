"""Sharded arrays: one buffer per device.

``ShardedArray`` is an ``Array`` whose value lives as per-device blocks (``_shards``, one per
local device of its mesh, in mesh order). It behaves like any Array: converting it to numpy
(or using it where a whole value is needed) assembles the global value once and caches it.
``pto.shard``-compiled programs take and return the blocks directly, so a training loop never
assembles its parameters. Under MPI only the local devices' blocks are here; assembling a value
whose blocks live partly in other processes raises ``ShardingError``.
"""
from __future__ import annotations


import numpy as np

from ptojax import dtypes
from ptojax.errors import ShardingError, is_masked_array, masked_array_error
from ptojax.source_info import user_frame
from ptojax.ir.types import TensorType
from ptojax.eval.array import Array, default_device_sharding
from ptojax.eval import transfers
from ptojax.trace import Tracer
from ptojax.devices import Device
from ptojax.pytree import tree_broadcast, tree_flatten, tree_leaves, tree_map
from ptojax.sharding import (NamedSharding, PartitionSpec, Shard, SingleDeviceSharding,
                             block_index, local_shape, named_sharding, single_device_sharding,
                             spec_dims, spec_of_dims)


def split(value: np.ndarray, dims, mesh, devices) -> list:
    """The block of ``value`` each of ``devices`` holds under ``dims`` (views, no copies)."""
    return [value[block_index(value.shape, dims, mesh, mesh.coords(d))] for d in devices]


def assemble(shards, dims, mesh, devices, aval) -> np.ndarray:
    """The global value from the blocks held by ``devices``."""
    out = np.empty(aval.shape, aval.dtype)
    covered = set()
    for shard, device in zip(shards, devices):
        index = block_index(aval.shape, dims, mesh, mesh.coords(device))
        key = tuple((s.start, s.stop) for s in index)
        if key not in covered:
            covered.add(key)
            out[index] = shard
    blocks = mesh.size // _replicas(dims, mesh)
    if len(covered) < blocks:
        raise ShardingError(
            f"this array ({aval}, spec {NamedSharding(mesh, _spec(dims)).spec}) is split over "
            f"devices of other processes; only {len(covered)} of its {blocks} blocks are "
            f"here. Read its addressable_shards, or give the value a replicated spec (P())")
    return out


def _replicas(dims, mesh) -> int:
    used = {a for axes in dims for a in axes}
    return mesh.axis_size([a for a in mesh.axis_names if a not in used])


def _spec(dims):
    return spec_of_dims(dims)


class ShardedArray(Array):
    """An Array held as one block per device of ``sharding.mesh``."""
    __slots__ = ("_shards", "_dims")

    def __init__(self, shards, aval: TensorType, sharding: NamedSharding):
        self._shards = tuple(shards)
        self._dims = sharding.dims(len(aval.shape))
        self._aval = aval
        self.weak_type = aval.weak_type
        self._sharding = sharding

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))
    size = property(lambda self: self._aval.size)
    nbytes = property(lambda self: self._aval.nbytes)
    itemsize = property(lambda self: self._aval.dtype.itemsize)

    def __getattr__(self, name):
        if name != "_value":
            raise AttributeError(name)
        mesh = self._sharding.mesh
        value = assemble(self._shards, self._dims, mesh, mesh.local_devices, self._aval)
        self._value = value
        return value

    @property
    def addressable_shards(self) -> list:
        mesh = self._sharding.mesh
        return [Shard(d, block_index(self.shape, self._dims, mesh, mesh.coords(d)),
                      Array(s, self.weak_type))
                for d, s in zip(mesh.local_devices, self._shards)]

    def shards_for(self, sharding: NamedSharding):
        """This array's blocks laid out as ``sharding`` says (its own, or resplit)."""
        if sharding == self._sharding:
            return self._shards
        mesh = sharding.mesh
        return split(self._value, sharding.dims(self.ndim), mesh, mesh.local_devices)


def shards_of(x, sharding: NamedSharding) -> list:
    """The per-local-device blocks of ``x`` (any array-like) under ``sharding``."""
    if isinstance(x, ShardedArray):
        return list(x.shards_for(sharding))
    value = x._value if isinstance(x, Array) else dtypes.canonical_value(x)
    mesh = sharding.mesh
    return split(value, sharding.dims(value.ndim), mesh, mesh.local_devices)


def device_put(x, sharding=None):
    """``x`` (an array or a pytree of them) placed as ``sharding`` says (a pytree prefix of
    ``x``): a ``NamedSharding`` (or a PartitionSpec, on the mesh of ``pto.set_mesh``) splits a
    value into per-device blocks; None, a device or a single-device sharding gives an
    ordinary Array.

    Example:
      >>> mesh = pto.make_mesh((2,), ("data",))
      >>> x = pto.device_put(pnp.arange(4.0), pto.NamedSharding(mesh, pto.P("data")))
      >>> [s.data for s in x.addressable_shards]
      [Array([0., 1.], dtype=float32), Array([2., 3.], dtype=float32)]
    """
    leaves, treedef = tree_flatten(x)
    if treedef.is_leaf:
        return _put_leaf(x, sharding)
    shardings = treedef.flatten_up_to(tree_broadcast(sharding, x, is_leaf=_is_sharding))
    return treedef.unflatten(_put_leaf(leaf, s) for leaf, s in zip(leaves, shardings))


def _is_sharding(x) -> bool:
    return x is None or isinstance(x, (NamedSharding, PartitionSpec, SingleDeviceSharding,
                                       Device))


def _put_leaf(x, sharding):
    if is_masked_array(x):
        raise masked_array_error("device_put", user_frame())
    if isinstance(sharding, PartitionSpec):
        sharding = named_sharding(sharding, "device_put")
    if not isinstance(sharding, NamedSharding):
        return _put_on_device(x, _device_of(sharding))
    aval = _aval_of(x)
    spec_dims(sharding.spec, aval.shape, sharding.mesh, f"device_put of {aval}")
    return ShardedArray(shards_of(x, sharding), aval, sharding)


def _device_of(sharding):
    """The device a single-device ``sharding`` (None, a Device, a SingleDeviceSharding)
    names; None: the default device."""
    if isinstance(sharding, SingleDeviceSharding):
        return sharding.device
    return sharding


def _put_on_device(x, device):
    """``x`` as an Array on ``device`` (committed to it, as JAX's ``device_put(x, device)``),
    or, without a device, ``x`` itself if it is an Array, else a new Array on the default
    device. The transfer guards see an explicit host-to-device (a host value) or
    device-to-device (an Array onto another device) transfer. A traced value stays as it is
    (as under JAX's jit, where placement is the compiler's)."""
    if isinstance(x, Tracer):
        return x
    if type(x) is Array:
        if device is None or device in x.devices():
            return x
        destination = SingleDeviceSharding(device)
        if transfers.guarded():
            transfers.device_to_device(x.aval, destination)
        return Array(x._value, x.weak_type, destination)
    value = dtypes.canonical_value(x)   # 32-bit without x64, as JAX
    destination = None if device is None else SingleDeviceSharding(device)
    if transfers.guarded():
        transfers.host_to_device(TensorType(value.shape, dtypes.canonical_dtype(value.dtype)),
                                 destination or default_device_sharding()
                                 or single_device_sharding(), explicit=True)
    return Array(value.astype(dtypes.canonicalize(value.dtype), copy=False),
                 sharding=destination)


def device_get(x):
    """``x`` (a pytree) with every array replaced by a numpy array holding its value (sharded
    arrays are assembled); other leaves are returned as they are.

    Example:
      >>> pto.device_get({"w": pnp.ones(2)})
      {'w': array([1., 1.], dtype=float32)}
    """
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


def block_until_ready(x):
    """Wait until every array in the pytree ``x`` is computed, and return ``x``. ptojax
    computes values eagerly (and jit calls return finished arrays), so this only checks
    nothing is left to wait for.

    Example:
      >>> pto.block_until_ready(pnp.ones(2))
      Array([1., 1.], dtype=float32)
    """
    for leaf in tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None:
            wait()
    return x


def _aval_of(x) -> TensorType:
    if isinstance(x, Array):
        return x.aval
    value = np.asarray(x)
    return TensorType(value.shape, dtypes.canonical_dtype(value.dtype))


def global_aval(local: TensorType, dims, mesh) -> TensorType:
    return local.update(shape=tuple(n * mesh.axis_size(axes)
                                    for n, axes in zip(local.shape, dims)))


def local_aval(aval: TensorType, dims, mesh) -> TensorType:
    return aval.update(shape=local_shape(aval.shape, dims, mesh))
