"""Collectives at run time: each device thread runs the per-device program under a
``DeviceContext``; a collective's impl asks that context to exchange data with the other
members of its group.

A group is the set of mesh devices that differ only along the collective's axes; its members
are numbered with the first axis major. The members of a group that live in this process meet
at a ``_Rendezvous`` (a condition variable): each deposits its operand and a signature of the
collective it is executing; the last to arrive checks that all signatures agree (else every
member gets a ``CollectiveError`` naming what each device called), combines the operands —
with numpy when the whole group is local, through the process transport (MPI, see
``collectives_mpi.py``) when it spans processes — and hands every member its result. A member
that waits longer than the timeout, or whose peer failed, raises ``CollectiveError`` instead
of hanging.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import time

import numpy as np

from ptojax.env import env_seconds, positive_seconds
from ptojax.errors import CollectiveError
from ptojax.shard.runtime.cost import bytes_sent
from ptojax.sharding import linear_index


_timeout: list = []  # [seconds] set by ptojax.distributed.initialize(timeout=...)


def default_timeout() -> float:
    """Seconds a collective waits for its peers before raising CollectiveError."""
    return _timeout[0] if _timeout else configured_timeout()


def configured_timeout() -> float:
    """PTOJAX_COLLECTIVE_TIMEOUT in seconds (default 60), validated."""
    return env_seconds("PTOJAX_COLLECTIVE_TIMEOUT", 60.0)


def set_default_timeout(seconds: float) -> None:
    _timeout[:] = [positive_seconds(seconds, "the collective timeout")]


_transport: list = []  # [the process transport] once ptojax.distributed is initialized


def set_process_transport(transport) -> None:
    _transport[:] = [transport]


def process_transport():
    """The transport to other processes (MPI), or None in a single-process run."""
    return _transport[0] if _transport else None


# the device a thread is running as -------------------------------------------------------------
class DeviceContext:
    """The device a thread runs the per-device program for, and its communicator."""

    def __init__(self, communicator: "Communicator", device):
        self.communicator = communicator
        self.device = device

    def run(self, kind, *args, **params):
        return self.communicator.run(self.device, kind, args[0] if args else None, params)


class _Current(threading.local):
    context = None


_current = _Current()


def current_context(kind: str, axes) -> DeviceContext:
    ctx = _current.context
    if ctx is None:
        raise CollectiveError(f"{kind} over axes {axes} was executed outside a sharded "
                              f"computation; collectives run inside pto.shard_map/pto.shard")
    return ctx


@contextlib.contextmanager
def device_context(ctx: DeviceContext):
    previous, _current.context = _current.context, ctx
    try:
        yield ctx
    finally:
        _current.context = previous


# counting what is communicated -----------------------------------------------------------------
class CommunicationLog:
    """Bytes sent by the devices of this process while it is active (``with`` block), per
    collective kind; totals under the ring model of ``collectives_cost.bytes_sent``."""
    _active: list = []
    _lock = threading.Lock()

    def __init__(self):
        self.bytes_by_kind: dict = {}
        self.calls_by_kind: dict = {}

    total_bytes = property(lambda self: sum(self.bytes_by_kind.values()))

    def __enter__(self):
        with self._lock:
            self._active.append(self)
        return self

    def __exit__(self, *exc):
        with self._lock:
            self._active.remove(self)

    @classmethod
    def record(cls, kind: str, nbytes: int) -> None:
        if not cls._active:
            return
        with cls._lock:
            for log in cls._active:
                log.bytes_by_kind[kind] = log.bytes_by_kind.get(kind, 0) + nbytes
                log.calls_by_kind[kind] = log.calls_by_kind.get(kind, 0) + 1


# groups ------------------------------------------------------------------------------------------
class Group:
    """The devices that take part in one collective with ``device``: ``members`` in member
    order; ``local`` maps this process's member indices to devices."""

    def __init__(self, mesh, axes, device):
        coords = mesh.coords(device)
        fixed = {a: c for a, c in coords.items() if a not in axes}
        members = [d for d in mesh.devices.flat
                   if all(mesh.coords(d)[a] == c for a, c in fixed.items())]
        members.sort(key=lambda d: linear_index(axes, mesh.coords(d), mesh))
        self.key = (tuple(axes), tuple(sorted(fixed.items())))
        self.members = members
        self.size = len(members)
        me = device.process_index
        self.local = {m: d for m, d in enumerate(members) if d.process_index == me}
        self.is_local = len(self.local) == self.size


# combining the operands of a group -------------------------------------------------------------
def _split(x, n, dim):
    return np.split(x, n, axis=dim)


def combine_all(kind, xs, params) -> list:
    """The result of collective ``kind`` for every member, given every member's operand."""
    n = len(xs)
    if kind == "psum":
        total = functools.reduce(np.add, xs)
        return [total] * n
    if kind in ("pmax", "pmin"):
        total = functools.reduce(np.maximum if kind == "pmax" else np.minimum, xs)
        return [total] * n
    if kind == "all_gather":
        dim = params["dim"]
        out = np.concatenate(xs, axis=dim) if params["tiled"] else np.stack(xs, axis=dim)
        return [out] * n
    if kind == "psum_scatter":
        total, dim = functools.reduce(np.add, xs), params["dim"]
        if params["tiled"]:
            return _split(total, n, dim)
        return [np.take(total, m, axis=dim) for m in range(n)]
    if kind == "all_to_all":
        return all_to_all_blocks(xs, params)
    if kind == "ppermute":
        out = [np.zeros_like(xs[0]) for _ in range(n)]
        for src, dst in params["perm"]:
            out[dst] = xs[src]
        return out
    raise CollectiveError(f"unknown collective {kind!r}")


def all_to_all_blocks(xs, params) -> list:
    n, split, concat = len(xs), params["split_dim"], params["concat_dim"]
    if params["tiled"]:
        blocks = [_split(x, n, split) for x in xs]
        return [np.concatenate([blocks[i][j] for i in range(n)], axis=concat)
                for j in range(n)]
    return [np.stack([np.take(xs[i], j, axis=split) for i in range(n)], axis=concat)
            for j in range(n)]


def signature(kind, x, params) -> str:
    shown = {k: v for k, v in params.items() if k != "axes"}
    operand = "" if x is None else f" {np.asarray(x).dtype}{list(np.shape(x))}"
    return f"{kind}[axes={params['axes']}{''.join(f' {k}={v}' for k, v in shown.items())}]" \
           f"{operand}"


# the meeting point of a group's local members --------------------------------------------------
class _Rendezvous:
    def __init__(self, communicator, group: Group):
        self.communicator = communicator
        self.group = group
        self.cond = threading.Condition()
        self.generation = 0
        self.arrived: dict = {}   # member -> (operand, signature)
        self.outcomes: dict = {}  # generation -> [results by member or exception, readers left]

    def exchange(self, member, operand, sig, combine):
        with self.cond:
            generation = self.generation
            self.arrived[member] = (operand, sig)
            if len(self.arrived) == len(self.group.local):
                arrived, self.arrived = self.arrived, {}
                self.generation += 1
                try:
                    outcome = combine(arrived)
                except Exception as e:  # every member learns of the failure
                    outcome = e
                self.outcomes[generation] = [outcome, len(self.group.local)]
                self.cond.notify_all()
            else:
                self._wait_for(generation, sig)
            entry = self.outcomes[generation]
            entry[1] -= 1
            if entry[1] == 0:
                del self.outcomes[generation]
        if isinstance(entry[0], Exception):
            raise entry[0]
        return entry[0][member]

    def _wait_for(self, generation, sig):
        timeout = self.communicator.timeout
        deadline = time.monotonic() + timeout
        while generation not in self.outcomes:
            failure = self.communicator.failure
            if failure is not None:
                raise CollectiveError(f"{sig} was abandoned because {failure}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                missing = [self.group.local[m].id for m in self.group.local
                           if m not in self.arrived]
                raise CollectiveError(
                    f"{sig} timed out after {timeout:g} s waiting for device(s) {missing} of "
                    f"its group {[d.id for d in self.group.members]}: the devices called "
                    f"different collectives, or one of them stopped")
            self.cond.wait(min(remaining, 0.5))


class Communicator:
    """Collectives among the devices of ``mesh`` for one run of a per-device program."""

    def __init__(self, mesh, transport=None, timeout: float | None = None):
        self.mesh = mesh
        self.transport = transport
        self.timeout = default_timeout() if timeout is None else timeout
        self.failure = None
        self._groups: dict = {}
        self._rendezvous: dict = {}
        self._lock = threading.Lock()

    def abort(self, reason: str) -> None:
        """Wake every waiting member with a CollectiveError (a device failed)."""
        self.failure = self.failure or reason
        for rendezvous in list(self._rendezvous.values()):
            with rendezvous.cond:
                rendezvous.cond.notify_all()

    def group(self, device, axes) -> Group:
        key = (device.id, axes)
        group = self._groups.get(key)
        if group is None:
            unknown = [a for a in axes if a not in self.mesh.shape]
            if unknown:
                raise CollectiveError(f"collective over unknown mesh axis {unknown[0]!r}; the "
                                      f"mesh has axes {self.mesh.axis_names}")
            group = self._groups[key] = Group(self.mesh, axes, device)
        return group

    def run(self, device, kind, x, params):
        axes = params["axes"]
        group = self.group(device, axes)
        member = linear_index(axes, self.mesh.coords(device), self.mesh)
        if kind == "axis_index":
            return np.int32(member)
        x = np.asarray(x)
        CommunicationLog.record(kind, bytes_sent(kind, x.nbytes, group.size, params, member))
        with self._lock:
            rendezvous = self._rendezvous.get(group.key)
            if rendezvous is None:
                rendezvous = self._rendezvous[group.key] = _Rendezvous(self, group)
        return rendezvous.exchange(member, x, signature(kind, x, params),
                                   lambda arrived: self._combine(kind, group, arrived, params))

    def _combine(self, kind, group: Group, arrived: dict, params) -> dict:
        signatures = {m: s for m, (_, s) in arrived.items()}
        if len(set(signatures.values())) > 1:
            listing = "; ".join(f"device {group.members[m].id}: {s}"
                                for m, s in sorted(signatures.items()))
            raise CollectiveError(f"mismatched collectives in one group: {listing}")
        operands = {m: x for m, (x, _) in arrived.items()}
        if group.is_local:
            results = combine_all(kind, [operands[m] for m in range(group.size)], params)
            return dict(enumerate(results))
        if self.transport is None:
            raise CollectiveError(f"{next(iter(signatures.values()))} spans processes but no "
                                  f"process transport is set up; call "
                                  f"pto.distributed.initialize() first")
        return self.transport.combine(self.mesh, kind, group, operands, params,
                                      next(iter(signatures.values())), self.timeout)
