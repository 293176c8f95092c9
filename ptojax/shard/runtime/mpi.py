"""Collectives between processes, through MPI (mpi4py).

When a collective's group spans processes, the last of this process's members to arrive
(``collectives._Rendezvous``) calls ``MPITransport.combine`` with the operands of all local
members. The transport first checks, with an ``Iallgather`` of a short description, that every
process of the group is executing the same collective; then it exchanges the data with one
MPI call per collective over a communicator of the group's processes:

    psum / pmax / pmin   local reduction, then ``Iallreduce``
    all_gather           ``Iallgather`` of the local members' operands
    psum_scatter         local sum, then ``Ireduce_scatter_block`` (blocks ordered by process)
    all_to_all           ``Ialltoall`` of the blocks between local and remote members
    ppermute             ``Isend``/``Irecv`` pairs

Every request is completed by polling with a deadline, so a process that called a different
collective or died produces a ``CollectiveError`` instead of a hang. Each process must own the
same number of devices of every group (``devices()`` is process-major, so meshes built with
``make_mesh`` are). Types MPI cannot reduce (bfloat16, float16, float8) are reduced in
float32; data is moved as raw bytes.
"""
from __future__ import annotations

import time

import numpy as np

from ptojax import dtypes
from ptojax.errors import CollectiveError
from ptojax.shard.runtime.in_process import combine_all
from ptojax.shard.runtime.in_process import Group
import pickle

_SIGNATURE_BYTES = 160


class MPITransport:
    """Runs the inter-process part of collectives over ``comm`` (a duplicate of
    COMM_WORLD)."""

    def __init__(self, comm):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self._comms: dict = {}     # (mesh, group key) -> communicator of its processes
        self._visited: set = set()  # every group prepared so far, member or not

    # communicators per group ------------------------------------------------------------------
    def prepare(self, mesh, axes_sets, timeout: float) -> None:
        """Create the communicators of every group over ``axes_sets`` that spans processes.
        Every process calls this for the same programs in the same order. Creating a
        communicator blocks, so a nonblocking barrier with a deadline first makes sure every
        process got here (a stuck or dead one gives a CollectiveError, not a hang); groups are
        then created in one global order, which cannot deadlock."""
        new = []
        for axes in sorted(set(axes_sets)):
            for device in mesh.devices.flat:
                group = Group(mesh, axes, device)
                key = (mesh, group.key)
                if key not in self._visited:
                    self._visited.add(key)  # its visit number is the same in every process
                    new.append((key, sorted({d.process_index for d in group.members}),
                                len(self._visited)))
        if not new:
            return
        self._wait([self.comm.Ibarrier()], f"setting up the collectives of a program on {mesh}",
                   timeout, self.comm)
        for key, ranks, tag in new:
            if len(ranks) > 1 and self.rank in ranks:
                self._comms[key] = self._create(ranks, tag)

    def _create(self, ranks, tag):
        group = self.comm.Get_group().Incl(ranks)
        try:
            return self.comm.Create_group(group, tag)
        finally:
            group.Free()

    def _comm_for(self, mesh, group):
        comm = self._comms.get((mesh, group.key))
        if comm is None:
            raise CollectiveError(f"no MPI communicator for the group {group.key} of {mesh}; "
                                  f"the program was not prepared on every process")
        return comm

    # one collective -------------------------------------------------------------------------
    def combine(self, mesh, kind, group, operands: dict, params, sig: str,
                timeout: float) -> dict:
        comm = self._comm_for(mesh, group)
        members = _members_by_process(group, comm)
        self._check_signatures(comm, sig, timeout)
        local = sorted(operands)
        if kind in ("psum", "pmax", "pmin"):
            total = self._allreduce(comm, kind, [operands[m] for m in local], sig, timeout)
            return {m: total for m in local}
        if kind == "all_gather":
            xs = self._allgather(comm, [operands[m] for m in local], members, sig, timeout)
            out = combine_all(kind, xs, params)
            return {m: out[m] for m in local}
        if kind == "psum_scatter":
            return self._reduce_scatter(comm, operands, local, members, params, sig, timeout)
        if kind == "all_to_all":
            return self._all_to_all(comm, operands, local, members, params, sig, timeout)
        if kind == "ppermute":
            return self._ppermute(comm, operands, group, params, sig, timeout)
        raise CollectiveError(f"unknown collective {kind!r}")

    def _check_signatures(self, comm, sig, timeout):
        mine = np.zeros(_SIGNATURE_BYTES, np.uint8)
        encoded = sig.encode()[:_SIGNATURE_BYTES]
        mine[:len(encoded)] = np.frombuffer(encoded, np.uint8)
        everyone = np.empty((comm.Get_size(), _SIGNATURE_BYTES), np.uint8)
        self._wait([comm.Iallgather(mine, everyone)], sig, timeout, comm)
        texts = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in everyone]
        if len(set(texts)) > 1:
            listing = "; ".join(f"process {r}: {t}" for r, t in enumerate(texts))
            raise CollectiveError(f"mismatched collectives across processes: {listing}")

    def _wait(self, requests, sig, timeout, comm):
        deadline = time.monotonic() + timeout
        pause = 0.0
        while not self.MPI.Request.Testall(requests):
            if time.monotonic() > deadline:
                raise CollectiveError(
                    f"{sig} timed out after {timeout:g} s waiting for the other processes of "
                    f"its group (size {comm.Get_size()}): a process called a different "
                    f"collective, or it died")
            time.sleep(pause)
            pause = min(max(pause * 2, 1e-5), 1e-3)

    # data exchanges ---------------------------------------------------------------------------
    def _allreduce(self, comm, kind, xs, sig, timeout):
        op = {"psum": self.MPI.SUM, "pmax": self.MPI.MAX, "pmin": self.MPI.MIN}[kind]
        dtype = xs[0].dtype
        local = combine_all(kind, xs, {})[0]
        work = _contiguous(_reducible(local))
        out = np.empty_like(work)
        self._wait([comm.Iallreduce(work, out, op)], sig, timeout, comm)
        return out.astype(dtype, copy=False)

    def _allgather(self, comm, xs, members, sig, timeout):
        """Every member's operand, in member order."""
        mine = _contiguous(np.stack(xs))
        everyone = np.empty((comm.Get_size(), *mine.shape), mine.dtype)
        self._wait([comm.Iallgather(_raw(mine), _raw(everyone))], sig, timeout, comm)
        ordered = [None] * sum(len(m) for m in members)
        for p, process_members in enumerate(members):
            for i, m in enumerate(process_members):
                ordered[m] = everyone[p, i]
        return ordered

    def _reduce_scatter(self, comm, operands, local, members, params, sig, timeout):
        n = sum(len(m) for m in members)
        dtype = operands[local[0]].dtype
        total = combine_all("psum", [operands[m] for m in local], {})[0]
        blocks = _blocks(total, n, params["dim"], params["tiled"])
        send = _contiguous(_reducible(np.stack([blocks[m] for pm in members
                                                         for m in pm])))
        recv = np.empty((len(local), *send.shape[1:]), send.dtype)
        self._wait([comm.Ireduce_scatter_block(send, recv, self.MPI.SUM)], sig, timeout,
                   comm)
        return {m: recv[i].astype(dtype, copy=False) for i, m in enumerate(local)}

    def _all_to_all(self, comm, operands, local, members, params, sig, timeout):
        n = sum(len(m) for m in members)
        split, tiled = params["split_dim"], params["tiled"]
        pieces = {a: _blocks(operands[a], n, split, tiled) for a in local}
        send = _contiguous(np.stack([np.stack([pieces[a][b] for a in local])
                                              for pm in members for b in pm]))
        recv = np.empty_like(send)
        self._wait([comm.Ialltoall(_raw(send), _raw(recv))], sig, timeout, comm)
        k = len(local)
        received = {}  # (source member, my member) -> block
        for p, pm in enumerate(members):
            for i, b in enumerate(local):
                for a_pos, a in enumerate(pm):
                    received[(a, b)] = recv[p * k + i, a_pos]
        concat = params["concat_dim"]
        join = np.concatenate if tiled else np.stack
        return {b: join([received[(a, b)] for a in range(n)], axis=concat) for b in local}

    def _ppermute(self, comm, operands, group, params, sig, timeout):
        process_rank = _process_ranks(group, comm)
        results = {m: np.zeros(x.shape, x.dtype) for m, x in operands.items()}
        requests = []
        for src, dst in params["perm"]:
            if src in operands and dst in operands:
                results[dst] = operands[src]
            elif src in operands:
                requests.append(comm.Isend(_raw(_contiguous(operands[src])),
                                           dest=process_rank[dst], tag=dst))
            elif dst in operands:
                requests.append(comm.Irecv(_raw(results[dst]), source=process_rank[src],
                                           tag=dst))
        if requests:
            self._wait(requests, sig, timeout, comm)
        return results

    def allgather_objects(self, obj, timeout: float) -> list:
        """Every process's ``obj`` (pickled), in rank order."""
        mine = np.frombuffer(pickle.dumps(obj), np.uint8)
        sizes = np.empty(self.comm.Get_size(), np.int64)
        what = "gathering an output's blocks from every process"
        self._wait([self.comm.Iallgather(np.array([mine.size], np.int64), sizes)], what,
                   timeout, self.comm)
        everyone = np.empty(int(sizes.sum()), np.uint8)
        self._wait([self.comm.Iallgatherv(mine, (everyone, sizes))], what, timeout, self.comm)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        return [pickle.loads(everyone[a:b].tobytes()) for a, b in zip(offsets, offsets[1:])]

    def barrier(self, timeout: float) -> None:
        self._wait([self.comm.Ibarrier()], "barrier", timeout, self.comm)


def _process_ranks(group, comm) -> dict:
    """Member index -> the rank of its process in the group's communicator."""
    ranks = sorted({d.process_index for d in group.members})
    return {m: ranks.index(d.process_index) for m, d in enumerate(group.members)}


def _members_by_process(group, comm) -> list:
    """Member indices owned by each rank of the group's communicator, in member order."""
    ranks = _process_ranks(group, comm)
    out = [[] for _ in range(comm.Get_size())]
    for m in range(group.size):
        out[ranks[m]].append(m)
    if len({len(m) for m in out}) != 1:
        raise CollectiveError(f"the group {[d.id for d in group.members]} has different "
                              f"numbers of devices in different processes; build meshes "
                              f"with pto.make_mesh so every process owns equal blocks")
    return out


def _blocks(x, n, dim, tiled) -> list:
    """``x`` cut into ``n`` blocks along ``dim`` (tiled) or indexed along it."""
    if tiled:
        return np.split(x, n, axis=dim)
    return [np.take(x, j, axis=dim) for j in range(n)]


def _reducible(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype MPI can reduce."""
    if x.dtype in (dtypes.bfloat16, dtypes.float16) or x.dtype in dtypes.NARROW_FLOATS:
        return x.astype(np.float32)
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    return x


def _contiguous(x) -> np.ndarray:
    """``x`` in C order, keeping its shape (``np.ascontiguousarray`` makes 0-d arrays 1-d)."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else np.array(x, order="C")


def _raw(x: np.ndarray):
    """A buffer spec moving ``x``'s bytes (any dtype, including ml_dtypes ones)."""
    return x.reshape(-1).view(np.uint8)
