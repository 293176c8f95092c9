"""A tiled IR executed on the host: its tile kernels compiled, the rest on numpy.

``HostProgram(tiled, target)`` emits every ``tile_kernel`` equation — as a fused loop nest
(``fused.py``, the default) or as the PTO C++ that ``as_text("pto-cpp")`` shows —, builds them
into one shared library (disk-cached), and generates the straight-line executor of
``runtime/executable.py`` with each kernel equation calling its compiled launcher;
tensor-level equations between kernels keep running through their numpy impls.

Blocks of a mixed (cube + vector) PTO kernel: the host runs a block's cube core, then its vector
sub-block cores, one after another. When some kernel is mixed, the source is compiled twice
in the library — once as the cube core sees it (``__DAV_CUBE__``), once as the vector cores
do (``__DAV_VEC__``) — so each core's code can run on its own.
"""
from __future__ import annotations

import dataclasses
import time
from types import MappingProxyType

import numpy as np

from ptojax.ir.core import ClosedIR
from ptojax.errors import UnsupportedError
from ptojax.ir.symbolic import evaluate, linear_symbol, solve_sizes, symbols_of
from ptojax.lower.host.build import BOTH_CORES, EntryPoint, SourceCopy
from ptojax.lower.host import fused
from ptojax.lower.host.fused_plan import FusedUnsupported
from ptojax.lower.host.loader import build_and_load
from ptojax.lower.pto_cpp import cpp_type, program_cpp
from ptojax.lower.program_schedule import schedule_of
from ptojax.targets import get_target
from ptojax.tile import ops as T
from ptojax.tile.kernel import tile_kernel_p
from ptojax.eval.executable import Executable
from ptojax.eval import profiler
from ptojax.eval.machine_load import machine_busy
from ptojax.lower.cost import kernel_cost

KERNEL_BUILDS = ("fused", "pto")
CUBE_COPY = SourceCopy("ptojax_aic", ("__DAV_CUBE__",))
VECTOR_COPY = SourceCopy("ptojax_aiv", ("__DAV_VEC__",))
BOTH_COPY = SourceCopy("ptojax_both", ("__DAV_CUBE__", "__DAV_VEC__"))


def _arena_target(target, tiled):
    """``target`` with buffers large enough for every kernel (a pto.kernel keeps the buffer
    plan of the chip it was written for)."""
    buffers = dict(target.buffers)
    for e in kernel_eqns(tiled):
        for space, n in get_target(e.params["target"]).buffers.items():
            buffers[space] = max(buffers.get(space, 0), n)
    return dataclasses.replace(target, buffers=MappingProxyType(buffers))


def kernel_eqns(closed: ClosedIR) -> list:
    return [e for e in closed.ir.eqns if e.prim is tile_kernel_p]


def _entry(index, eqn, sched, split_cores: bool) -> EntryPoint:
    """The launcher of one kernel: per block, its cube core then its vector core(s)."""
    args = ", ".join(f"static_cast<{cpp_type(p.type.dtype)}*>(args[{i}])"
                     for i, p in enumerate(sched.params))
    grid = sched.grid
    lines = []
    if not grid.dynamic_rows:
        call = f"{sched.name}({args}, {{{grid.num_tiles}, {grid.counts[1]}}})"
    else:   # the view's rows this call follow the GM pointers (_launcher)
        n = len(sched.params)
        lines.append(f"    const int32_t rows = *static_cast<const int32_t*>(args[{n}]);")
        call = (f"{sched.name}({args}, {{(rows + {grid.tile[0] - 1}) / {grid.tile[0]} * "
                f"{grid.grid_cols}, {grid.grid_cols}, rows}})")
    cores = [s.core for s in sched.sections]
    split = any(s.split_subblocks for s in sched.sections)
    vector_cores = sched.target.vector_cores_per_cube if split else 1
    if "kernel" in cores:       # a pto.kernel: both cores' code in program order, one thread
        prefix = f"{BOTH_COPY.namespace}::" if split_cores else ""
        lines.append(f"    pto::host::on_core(pto::host::kFirstVectorCore, "
                     f"[&] {{ {prefix}{call}; }});")
    if "cube" in cores:
        prefix = f"{CUBE_COPY.namespace}::" if split_cores else ""
        lines.append(f"    pto::host::on_core(pto::host::kCubeCore, [&] {{ {prefix}{call}; }});")
    if "vector" in cores:
        prefix = f"{VECTOR_COPY.namespace}::" if split_cores else ""
        for sub in range(vector_cores):
            lines.append(f"    pto::host::on_core(pto::host::kFirstVectorCore + {sub}, "
                         f"[&] {{ {prefix}{call}; }});")
    return EntryPoint(f"ptojax_launch_{index}", sched.name, "\n".join(lines), vector_cores)


# Kernels over fewer elements than this run their blocks on the calling thread: waking the
# OpenMP threads costs more than it saves there. So do all kernels while the machine is busy
# (eval/machine_load.py).
PARALLEL_MIN_ELEMENTS = 1 << 15


def _launcher(library, index, eqn, blocks):
    """Runs kernel ``index`` on numpy inputs: allocates its outputs and workspaces."""
    body = eqn.params["bodies"][0]
    _, _, ws_vars = T.kernel_signature(body, len(eqn.inputs))
    in_types = [a.type for a in eqn.inputs]
    out_types = [v.type for v in eqn.outputs]
    ws_types = [v.type for v in ws_vars]
    zeroed = frozenset(eqn.params.get("accumulate", ()))
    grid = eqn.params["grid"]
    if grid.dynamic_rows:
        return _dynamic_rows_launcher(library, index, eqn, blocks, in_types, out_types,
                                      zeroed)
    parallel = grid.space[0] * grid.space[1] >= PARALLEL_MIN_ELEMENTS
    record = _kernel_recorder(eqn)

    def launch(*inputs):
        arrays = [np.ascontiguousarray(x, t.dtype) for x, t in zip(inputs, in_types)]
        outs = [(np.zeros if i in zeroed else np.empty)(t.shape, t.dtype)
                for i, t in enumerate(out_types)]
        spaces = [np.empty(t.shape, t.dtype) for t in ws_types]
        threads = parallel and not machine_busy()
        if profiler.active is None:
            library.launch(index, arrays + outs + spaces, blocks, threads)
        else:
            start = time.perf_counter()
            library.launch(index, arrays + outs + spaces, blocks, threads)
            record(start, arrays + outs)
        return outs
    return launch


def _dynamic_rows_launcher(library, index, eqn, blocks, in_types, out_types, zeroed):
    """``_launcher`` of a kernel whose row count is known per call (a symbolic dimension,
    ``ir/symbolic.py``): the sizes are read from the inputs' shapes, the outputs allocated at
    them, and the view's row count passed after the GM pointers (``_entry``)."""
    grid = eqn.params["grid"]
    where = [(i, axis) for i, t in enumerate(in_types) for axis, d in enumerate(t.shape)
             if linear_symbol(d) is not None]
    dims = [in_types[i].shape[axis] for i, axis in where]
    out_shapes = [t.shape for t in out_types]
    missing = set(symbols_of([grid.space[0], *out_shapes])) - {linear_symbol(d) for d in dims}
    if missing:
        raise UnsupportedError(f"kernel {eqn.params['name']}: the sizes {sorted(missing)} "
                               f"cannot be read from its inputs' shapes, so its host "
                               f"launcher cannot size it")
    record = _kernel_recorder(eqn)

    def launch(*inputs):
        arrays = [np.ascontiguousarray(x, t.dtype) for x, t in zip(inputs, in_types)]
        sizes = solve_sizes(dims, [arrays[i].shape[axis] for i, axis in where])
        outs = [(np.zeros if i in zeroed else np.empty)(evaluate(shape, sizes), t.dtype)
                for i, (shape, t) in enumerate(zip(out_shapes, out_types))]
        rows = grid.rows_at(sizes)
        count = np.array([rows], np.int32)
        threads = rows * grid.space[1] >= PARALLEL_MIN_ELEMENTS and not machine_busy()
        start = time.perf_counter()
        library.launch(index, arrays + outs + [count], blocks, threads)
        if profiler.active is not None:
            record(start, arrays + outs)
        return outs
    return launch
