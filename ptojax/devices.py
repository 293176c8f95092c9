"""Virtual host devices.

One process owns ``PTOJAX_NUM_DEVICES`` devices (default 8), numbered from 0. Under
``ptojax.distributed.initialize()`` every process of an MPI job owns that many devices and
``devices()`` lists all of them, process-major: device ``p * local_count + i`` is local device
``i`` of process ``p``.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

from ptojax.env import env_int
from ptojax.public import add_examples as _add_examples



class Device:
    """A virtual host device: ``id`` in the job, the process owning it, its index there
    (``jax.Device``).

    Example:
      >>> isinstance(pto.devices()[0], pto.Device), pto.devices()[0].platform
      (True, 'cpu')
    """
    __slots__ = ("id", "process_index", "local_index")
    platform = "cpu"
    device_kind = "virtual host device"

    def __init__(self, id: int, process_index: int, local_index: int):
        self.id = id
        self.process_index = process_index
        self.local_index = local_index

    def __eq__(self, other):
        return isinstance(other, Device) and self.id == other.id

    def __hash__(self):
        return hash(("device", self.id))

    def __repr__(self):
        return f"VirtualDevice(id={self.id}, process={self.process_index})"


class Topology(NamedTuple):
    process_index: int
    process_count: int
    local_count: int


def configured_local_count() -> int:
    """Devices per process from PTOJAX_NUM_DEVICES (default 8), validated."""
    return env_int("PTOJAX_NUM_DEVICES", 8)


_topology: list = []  # [Topology] once known


def topology() -> Topology:
    if not _topology:
        _topology.append(Topology(0, 1, configured_local_count()))
    return _topology[0]


def topology_known() -> bool:
    """Whether the device topology has been fixed (devices were used or
    ``distributed.initialize`` ran)."""
    return bool(_topology)


def set_topology(process_index: int, process_count: int, local_count: int) -> None:
    """Called once by ``ptojax.distributed.initialize``, before any device is used."""
    _topology[:] = [Topology(process_index, process_count, local_count)]
    devices.cache_clear()


def default_backend() -> str:
    """The platform of the default device: ``"cpu"`` (ptojax's devices are virtual host
    devices; an Ascend target is chosen per compilation, see ``ptojax.targets``)."""
    return Device.platform


@functools.lru_cache(maxsize=None)
def devices() -> tuple:
    """Every device of the job (all processes), process-major."""
    t = topology()
    return tuple(Device(p * t.local_count + i, p, i)
                 for p in range(t.process_count) for i in range(t.local_count))


def local_devices() -> tuple:
    me = topology().process_index
    return tuple(d for d in devices() if d.process_index == me)


def device_count() -> int:
    return len(devices())


def local_device_count() -> int:
    return topology().local_count


def process_index() -> int:
    return topology().process_index


def process_count() -> int:
    return topology().process_count


_add_examples(globals(), """
device_count: The number of devices of the platform in use, over all processes.
    >>> pto.device_count() == len(pto.devices())
    True
local_device_count: The number of devices this process drives.
    >>> pto.local_device_count() == len(pto.local_devices())
    True
local_devices: The devices this process drives, a tuple.
    >>> pto.local_devices()[0] in pto.devices()
    True
process_count: The number of processes of a multi-process run (1 when single-process).
    >>> pto.process_count()
    1
process_index: The index of this process among ``process_count()`` (0 when single-process).
    >>> pto.process_index()
    0
devices:
    >>> len(pto.devices()) == pto.device_count()
    True
default_backend:
    >>> pto.default_backend()
    'cpu'
""")
