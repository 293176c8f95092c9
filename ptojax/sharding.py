"""Meshes and shardings: ``Mesh``, ``PartitionSpec`` (``P``), ``NamedSharding``,
``SingleDeviceSharding``.

A ``Mesh`` arranges devices in an n-d grid with named axes. A ``PartitionSpec`` says, for each
dimension of an array, which mesh axes split it (``P('data', None)``: dimension 0 is split
over the 'data' axis, dimension 1 is whole; ``P(('x', 'y'))``: dimension 0 is split over
x-major then y). Mesh axes a spec does not name replicate the array.

Inside the partitioner a spec is used in its normalized form, ``Dims``: one tuple of axis names
per array dimension (``(('data',), ())``).
"""
from __future__ import annotations

import enum
import functools
import math
import threading
from typing import Iterable, NamedTuple

import numpy as np

from ptojax.devices import devices as all_devices, local_devices, process_index
from ptojax.errors import ShardingError
from ptojax.public import add_examples, dir_function

Dims = tuple  # tuple[tuple[str, ...], ...]: mesh axes splitting each array dimension


class PartitionSpec:
    """How each dimension of an array is split over mesh axes: ``P('data', None)``.

    Entries are ``None`` (whole), an axis name, or a tuple of axis names (split over their
    product, the first one major). Dimensions past the end of the spec are whole."""
    __slots__ = ("_parts",)

    def __init__(self, *parts):
        self._parts = tuple(_normalize_part(p) for p in parts)

    def __iter__(self):
        return iter(self._parts)

    def __len__(self):
        return len(self._parts)

    def __getitem__(self, i):
        return self._parts[i]

    def __eq__(self, other):
        return isinstance(other, PartitionSpec) and self.dims() == other.dims()

    def __hash__(self):
        return hash(self.dims())

    def dims(self, ndim: int | None = None) -> Dims:
        """The normalized form, padded with whole dimensions to ``ndim``."""
        dims = tuple(() if p is None else (p,) if isinstance(p, str) else p
                     for p in self._parts)
        while dims and ndim is None and dims[-1] == ():
            dims = dims[:-1]
        if ndim is not None:
            dims = dims + ((),) * (ndim - len(dims))
        return dims

    def __repr__(self):
        return "P" + repr(tuple(self._parts))   # JAX's: P('x',), P('x', None), P()


P = PartitionSpec


def _normalize_part(part):
    if part is None or isinstance(part, str):
        return part
    if isinstance(part, (tuple, list)) and all(isinstance(a, str) for a in part):
        part = tuple(part)
        return None if not part else part[0] if len(part) == 1 else part
    raise ShardingError(f"a PartitionSpec entry must be None, a mesh axis name or a tuple of "
                        f"names, got {part!r}")


def spec_of_dims(dims: Dims) -> PartitionSpec:
    """The PartitionSpec of normalized dims (trailing whole dimensions left out)."""
    dims = tuple(dims)
    while dims and not dims[-1]:
        dims = dims[:-1]
    return PartitionSpec(*(None if not axes else axes[0] if len(axes) == 1 else axes
                           for axes in dims))


def format_dims(dims: Dims) -> str:
    return repr(spec_of_dims(dims))


class AxisType(enum.Enum):
    """How a mesh axis is used (JAX's ``jax.sharding.AxisType``). ``Explicit`` (the default of
    ``make_mesh``, as in JAX 0.10) and ``Auto`` axes are both partitioned by ``pto.shard``'s
    propagation (ptojax does not type-check shardings, so programs JAX's explicit mode rejects
    as ambiguous still run); ``Manual`` axes are those a ``shard_map`` body sees."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class Mesh:
    """Devices in an n-d grid with named axes: ``Mesh(np.array(devices).reshape(4, 2),
    ('data', 'model'))``, optionally with an ``AxisType`` per axis (default Explicit)."""

    def __init__(self, devices, axis_names, axis_types=None):
        devices = np.asarray(devices, dtype=object)
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        self.axis_types = _axis_types(axis_types, len(axis_names))
        if devices.ndim != len(axis_names):
            raise ShardingError(f"Mesh: a {devices.ndim}-d device array needs "
                                f"{devices.ndim} axis names, got {axis_names}")
        if len(set(axis_names)) != len(axis_names) or \
                not all(isinstance(a, str) for a in axis_names):
            raise ShardingError(f"Mesh: axis names must be distinct strings, got {axis_names}")
        ids = [d.id for d in devices.flat]
        if len(set(ids)) != len(ids):
            raise ShardingError("Mesh: a device appears more than once")
        self.devices = devices
        self.axis_names = axis_names
        self.shape = dict(zip(axis_names, devices.shape))
        self._key = (axis_names, devices.shape, tuple(ids), self.axis_types)
        self._coords = {d.id: dict(zip(axis_names, idx))
                        for idx, d in np.ndenumerate(devices)}

    size = property(lambda self: self.devices.size)
    device_list = property(lambda self: list(self.devices.flat))

    @property
    def local_devices(self) -> list:
        me = process_index()
        return [d for d in self.devices.flat if d.process_index == me]

    def coords(self, device) -> dict:
        """The position of ``device`` along each mesh axis."""
        return self._coords[device.id]

    def axis_size(self, axes: Iterable[str]) -> int:
        return math.prod(self.shape[a] for a in axes)

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        axes = ', '.join(f'{a!r}: {n}' for a, n in self.shape.items())
        if all(t is AxisType.Explicit for t in self.axis_types):
            return f"Mesh({axes})"
        return f"Mesh({axes}, axis_types={self.axis_types})"

    def __enter__(self):
        """``with mesh:`` is ``with pto.set_mesh(mesh):``."""
        self._context = set_mesh(self)
        return self

    def __exit__(self, *exc):
        self._context.__exit__(*exc)


def _axis_types(axis_types, n: int) -> tuple:
    if axis_types is None:
        return (AxisType.Explicit,) * n
    if isinstance(axis_types, AxisType):
        axis_types = (axis_types,) * n
    axis_types = tuple(axis_types)
    if len(axis_types) != n or not all(isinstance(t, AxisType) for t in axis_types):
        raise ShardingError(f"Mesh: axis_types must be {n} pto.sharding.AxisType values (one "
                            f"per axis), got {axis_types!r}")
    return axis_types


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A mesh of ``axis_shapes`` over the first ``prod(axis_shapes)`` devices (process-major,
    so the innermost axes stay within a process).

    Args:
      axis_shapes: the size of each mesh axis.
      axis_names: the name of each axis.
      axis_types: an ``AxisType`` per axis (default ``Explicit``, as JAX 0.10).
      devices: the devices to use (default ``pto.devices()``).

    Returns:
      A ``Mesh``.

    Example:
      >>> pto.make_mesh((2, 2), ("data", "model"), axis_types=(pto.sharding.AxisType.Auto,) * 2)
      Mesh('data': 2, 'model': 2, axis_types=(Auto, Auto))
    """
    axis_shapes = (axis_shapes,) if isinstance(axis_shapes, int) else tuple(axis_shapes)
    devices = list(all_devices() if devices is None else devices)
    needed = math.prod(axis_shapes)
    if needed > len(devices):
        raise ShardingError(f"make_mesh: a mesh of shape {axis_shapes} needs {needed} devices "
                            f"but only {len(devices)} are available (set PTOJAX_NUM_DEVICES "
                            f"for more virtual devices)")
    grid = np.empty(needed, dtype=object)
    grid[:] = devices[:needed]
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types)


class _MeshContext(threading.local):
    def __init__(self):
        self.mesh = None


_context = _MeshContext()


def get_mesh():
    """The mesh set by ``set_mesh`` on this thread, or None."""
    return _context.mesh


class set_mesh:
    """Set the current mesh (of this thread): as a statement, from now on; as a context
    manager, inside the ``with`` block. With a mesh set, sharding arguments may be bare
    PartitionSpecs (``pto.device_put(x, P('data'))``, ``pto.reshard(x, P())``).

    Args:
      mesh: a ``Mesh``, or None to clear it.

    Example:
      >>> mesh = pto.make_mesh((2,), ("data",))
      >>> with pto.set_mesh(mesh):
      ...     x = pto.device_put(pnp.arange(4.0), pto.P("data"))
      >>> x.sharding.spec
      P('data',)
    """

    def __init__(self, mesh):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ShardingError(f"set_mesh needs a Mesh (pto.make_mesh) or None, got "
                                f"{type(mesh).__name__}")
        self.mesh = mesh
        self.previous = _context.mesh
        _context.mesh = mesh

    def __enter__(self):
        return self.mesh

    def __exit__(self, *exc):
        _context.mesh = self.previous


use_mesh = set_mesh


def reshard(xs, out_shardings):
    """``xs`` resplit as ``out_shardings``: see ``ptojax.shard.explicit.reshard``, which
    installs itself here (it needs the partitioner, a layer above; as
    ``ClosedIR.interpreter``)."""
    raise ShardingError("reshard is installed by ptojax.shard.explicit; import ptojax first")


def named_sharding(sharding, what: str) -> "NamedSharding":
    """``sharding`` as a NamedSharding: a PartitionSpec takes the mesh of ``set_mesh``."""
    if isinstance(sharding, NamedSharding):
        return sharding
    if isinstance(sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise ShardingError(f"{what}: a bare PartitionSpec {sharding} needs a mesh; use "
                                f"pto.NamedSharding(mesh, spec) or set one with "
                                f"pto.set_mesh(mesh)")
        return NamedSharding(mesh, sharding)
    raise ShardingError(f"{what}: expected a NamedSharding or a PartitionSpec, got "
                        f"{sharding!r}")


class NamedSharding:
    """An array split over ``mesh`` as ``spec`` says."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec = PartitionSpec()):
        if not isinstance(mesh, Mesh):
            raise ShardingError(f"NamedSharding needs a Mesh, got {type(mesh).__name__}")
        self.mesh = mesh
        self.spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)

    def dims(self, ndim: int) -> Dims:
        return self.spec.dims(ndim)

    def shard_shape(self, global_shape) -> tuple:
        return local_shape(global_shape, self.dims(len(global_shape)), self.mesh)

    def device_indices(self, device, global_shape) -> tuple:
        """The block of the global array that ``device`` holds, as a tuple of slices."""
        return block_index(global_shape, self.dims(len(global_shape)), self.mesh,
                           self.mesh.coords(device))

    @property
    def device_set(self) -> set:
        return set(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        """Every device holds the whole array (a property, as JAX's)."""
        return not any(self.spec.dims())

    @property
    def is_fully_addressable(self) -> bool:
        """Every device of the mesh belongs to this process."""
        local = set(local_devices())
        return all(d in local for d in self.mesh.devices.flat)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec})"


class SingleDeviceSharding:
    """An array held whole by one device."""

    def __init__(self, device):
        self.device = device

    device_set = property(lambda self: {self.device})

    is_fully_replicated = property(lambda self: True)
    is_fully_addressable = property(lambda self: True)

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and self.device == other.device

    def __hash__(self):
        return hash(self.device)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device})"


# ---------------------------------------------------------------------------------------------
def local_shape(global_shape, dims: Dims, mesh: Mesh) -> tuple:
    return tuple(n // mesh.axis_size(axes) for n, axes in zip(global_shape, dims))


def linear_index(axes, coords: dict, mesh: Mesh) -> int:
    """The position of a device among the devices that differ only along ``axes`` (the first
    axis major)."""
    index = 0
    for a in axes:
        index = index * mesh.shape[a] + coords[a]
    return index


def block_index(global_shape, dims: Dims, mesh: Mesh, coords: dict) -> tuple:
    out = []
    for n, axes in zip(global_shape, dims):
        size = n // mesh.axis_size(axes)
        start = linear_index(axes, coords, mesh) * size
        out.append(slice(start, start + size))
    return tuple(out)


def check_dims(dims: Dims, shape, mesh: Mesh, what: str) -> Dims:
    """``dims`` validated against an array of ``shape`` on ``mesh`` (errors name ``what``)."""
    seen = set()
    for d, axes in enumerate(dims):
        for a in axes:
            if a not in mesh.shape:
                raise ShardingError(f"{what}: unknown mesh axis {a!r} in its spec; the mesh "
                                    f"has axes {mesh.axis_names}")
            if a in seen:
                raise ShardingError(f"{what}: mesh axis {a!r} is used for more than one "
                                    f"dimension in {format_dims(dims)}")
            seen.add(a)
        n = mesh.axis_size(axes)
        if axes and shape[d] % n:
            raise ShardingError(f"{what}: dimension {d} has size {shape[d]}, which is not "
                                f"divisible by the size {n} of mesh axis "
                                f"{axes[0] if len(axes) == 1 else axes!r}")
    return dims


def spec_dims(spec, shape, mesh: Mesh, what: str) -> Dims:
    """The normalized, validated dims of ``spec`` (a PartitionSpec) for an array of ``shape``."""
    if isinstance(spec, NamedSharding):
        spec = spec.spec
    if not isinstance(spec, PartitionSpec):
        raise ShardingError(f"{what}: expected a PartitionSpec (pto.P(...)), got {spec!r}")
    if len(spec) > len(shape):
        raise ShardingError(f"{what}: the spec {spec} has {len(spec)} entries but the value "
                            f"has rank {len(shape)} (shape {tuple(shape)})")
    return check_dims(spec.dims(len(shape)), shape, mesh, what)


class Shard(NamedTuple):
    """One device's block of an array."""
    device: object
    index: tuple   # the block of the global array, as slices
    data: object


def single_device_sharding() -> "SingleDeviceSharding":
    """The sharding of an ordinary (unsharded) Array: whole on this process's first device."""
    return _single_device_sharding(local_devices()[0])


@functools.lru_cache(maxsize=None)
def _single_device_sharding(device) -> "SingleDeviceSharding":
    return SingleDeviceSharding(device)


__all__ = ["AxisType", "Mesh", "NamedSharding", "P", "PartitionSpec", "SingleDeviceSharding",
           "get_mesh", "reshard", "set_mesh", "use_mesh"]
__dir__ = dir_function(__all__)


add_examples(globals(), """
Mesh:
    >>> mesh = pto.make_mesh((2, 4), ('data', 'model'))
    >>> mesh.shape
    {'data': 2, 'model': 4}
NamedSharding:
    >>> mesh = pto.make_mesh((2, 4), ('data', 'model'))
    >>> sharding = pto.NamedSharding(mesh, pto.P('data', 'model'))
    >>> x = pto.device_put(pnp.zeros((4, 8)), sharding)
    >>> x.sharding.shard_shape(x.shape)
    (2, 2)
PartitionSpec:
    >>> pto.P('data', None)
    P('data', None)
SingleDeviceSharding:
    >>> pto.SingleDeviceSharding(pto.devices()[1]).device_set
    {VirtualDevice(id=1, process=0)}
get_mesh:
    >>> pto.get_mesh() is None
    True
    >>> with pto.set_mesh(pto.make_mesh((2,), ('data',))):
    ...     names = pto.get_mesh().axis_names
    >>> names
    ('data',)
AxisType:
    >>> pto.sharding.AxisType.Explicit
    Explicit
""")
