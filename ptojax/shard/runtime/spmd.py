"""Running a per-device (SPMD) program on the devices of a mesh.

``SpmdProgram`` compiles the per-device IR once (optimize, then the straight-line executor)
and runs it once per local device: inline for one device, else on a thread pool with one
thread per device. Each thread runs under a ``DeviceContext`` so the program's collectives
meet their peers (``runtime/collectives.py``). When a device fails, the others are woken with
a ``CollectiveError`` and the first real error is raised to the caller.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ptojax.errors import CollectiveError, ShardingError
from ptojax.ir.core import ClosedIR, sub_irs
from ptojax.shard.runtime.in_process import (Communicator, DeviceContext, default_timeout,
                                        device_context, process_transport)
from ptojax.shard.runtime.arrays import ShardedArray, assemble, global_aval, split
from ptojax.sharding import NamedSharding, block_index, spec_of_dims
from ptojax.eval.executable import Executable
from ptojax.optimize import optimize
from ptojax.shard.runtime.arrays import shards_of


class _Pool:
    """One worker thread per local device; runs are serialized so that every device of a run
    has its thread (two interleaved runs could otherwise starve each other's collectives)."""

    def __init__(self):
        self._executor = None
        self._workers = 0
        self.lock = threading.Lock()

    def executor(self, workers: int) -> ThreadPoolExecutor:
        if self._executor is None or self._workers < workers:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            self._executor = ThreadPoolExecutor(workers, thread_name_prefix="ptojax-device")
            self._workers = workers
        return self._executor


_pool = _Pool()


class SpmdProgram:
    """``body`` (a per-device ClosedIR without consts) on the devices of ``mesh``; input ``i``
    is split as ``in_dims[i]``, output ``j`` as ``out_dims[j]``."""

    def __init__(self, body: ClosedIR, mesh, in_dims, out_dims, timeout=None):
        self.body = optimize(body)
        self.executable = Executable(self.body)
        self.mesh = mesh
        self.in_dims = tuple(in_dims)
        self.out_dims = tuple(out_dims)
        self.out_avals = [global_aval(t, d, mesh) for t, d in zip(body.out_types,
                                                                   self.out_dims)]
        self.devices = mesh.local_devices
        self.timeout = timeout
        transport = process_transport()
        if transport is not None:
            transport.prepare(mesh, collective_axes(self.body),
                              default_timeout() if timeout is None else timeout)

    # per-device blocks in, per-device blocks out --------------------------------------------
    def run_shards(self, inputs) -> list:
        """``inputs[i][k]``: input i on local device k. Returns ``outputs[j][k]``."""
        communicator = Communicator(self.mesh, process_transport(), self.timeout)
        if len(self.devices) == 1:
            per_device = [self._run_device(communicator, 0, inputs)]
        else:
            per_device = self._run_threads(communicator, inputs)
        return [list(outs) for outs in zip(*per_device)] if per_device[0] else \
            [[] for _ in self.out_dims]

    def _run_device(self, communicator, k, inputs):
        with device_context(DeviceContext(communicator, self.devices[k])):
            return self.executable.run(*[blocks[k] for blocks in inputs])

    def _run_threads(self, communicator, inputs):
        def task(k):
            try:
                return self._run_device(communicator, k, inputs)
            except BaseException as e:
                communicator.abort(f"device {self.devices[k].id} failed: "
                                   f"{type(e).__name__}: {e}")
                return e

        with _pool.lock:
            executor = _pool.executor(len(self.devices))
            results = list(executor.map(task, range(len(self.devices))))
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise _root_cause(errors)
        return results

    # whole arrays in, sharded or whole arrays out --------------------------------------------
    def run_sharded(self, args) -> list:
        """Run on ``args`` (Arrays, ShardedArrays, numpy): ShardedArray outputs."""
        inputs = [shards_of(a, NamedSharding(self.mesh, spec_of_dims(d)))
                  for a, d in zip(args, self.in_dims)]
        outputs = self.run_shards(inputs)
        return [ShardedArray(blocks, aval, NamedSharding(self.mesh, spec_of_dims(d)))
                for blocks, aval, d in zip(outputs, self.out_avals, self.out_dims)]

    def run_global(self, *args) -> list:
        """Run on whole numpy values: whole numpy outputs (blocks of other processes are
        fetched through the process transport)."""
        inputs = [split(np.asarray(a), d, self.mesh, self.devices)
                  for a, d in zip(args, self.in_dims)]
        outputs = self.run_shards(inputs)
        return [self._assemble(blocks, d, aval)
                for blocks, d, aval in zip(outputs, self.out_dims, self.out_avals)]

    def _assemble(self, blocks, dims, aval):
        try:
            return assemble(blocks, dims, self.mesh, self.devices, aval)
        except ShardingError:
            transport = process_transport()
            if transport is None:
                raise
            pieces = [(block_index(aval.shape, dims, self.mesh, self.mesh.coords(d)), b)
                      for d, b in zip(self.devices, blocks)]
            out = np.empty(aval.shape, aval.dtype)
            timeout = default_timeout() if self.timeout is None else self.timeout
            for process_pieces in transport.allgather_objects(pieces, timeout):
                for index, block in process_pieces:
                    out[index] = block
            return out


def collective_axes(closed) -> set:
    """The axes tuples the collectives of a per-device IR (and its sub-IRs) run over."""
    out = set()
    for eqn in closed.ir.eqns if isinstance(closed, ClosedIR) else closed.eqns:
        if getattr(eqn.prim, "collective", False) and eqn.prim.name != "axis_index":
            out.add(tuple(eqn.params["axes"]))
        for sub in sub_irs(eqn.params):
            out |= collective_axes(sub)
    return out


def _root_cause(errors):
    """The error that made a run fail (not the CollectiveErrors of the devices it woke)."""
    for e in errors:
        if not (isinstance(e, CollectiveError) and "was abandoned because" in str(e)):
            return e
    return errors[0]
