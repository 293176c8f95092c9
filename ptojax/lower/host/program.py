"""A tiled IR executed on the host: its tile kernels compiled, the rest on numpy.

``HostProgram(tiled, target)`` emits every ``tile_kernel`` equation — as a fused loop nest
(``fused.py``, the default) or as the PTO C++ that ``as_text("pto-cpp")`` shows —, builds them
into one shared library (disk-cached), and generates the straight-line executor of
``runtime/executable.py`` with each kernel equation calling its compiled launcher;
tensor-level equations between kernels keep running through their numpy impls, except
``threefry2x32``, which calls the library's compiled loop (``random_bits.py``), float32
products of few rows, which call its GEMM (``few_rows_gemm.py``), and those that
read no input, computed once when the program is built (``input_free.py``). The executor
runs the equations reordered for cache locality (``locality.py``), with independent heavy
ones paired to run at once on two cores (``pairing.py``).

A kernel over a runtime row count or row length (``TileGrid.dynamic_rows`` / ``dynamic_cols``)
reads the sizes from its inputs' shapes when it runs, allocates its outputs at them and passes
that extent of the view after the GM pointers: one library serves every size in the range.

Blocks of a mixed (cube + vector) PTO kernel: the host runs a block's cube core, then its vector
sub-block cores, one after another. When some kernel is mixed, the source is compiled twice
in the library — once as the cube core sees it (``__DAV_CUBE__``), once as the vector cores
do (``__DAV_VEC__``) — so each core's code can run on its own.
"""
from __future__ import annotations

import dataclasses
import math
import time
from types import MappingProxyType

import numpy as np

from ptojax.ir.core import ClosedIR
from ptojax.errors import UnsupportedError
from ptojax.ir.symbolic import is_symbolic, linear_symbol, symbols_of
from ptojax.lower.host.build import BOTH_CORES, EntryPoint, SourceCopy
from ptojax.lower.host import fused
from ptojax.lower.host.few_rows_gemm import EXPORTS as GEMM_EXPORTS, few_rows_runners, \
    runs_few_rows
from ptojax.lower.host.fused_plan import FusedUnsupported
from ptojax.lower.host.input_free import input_free_as_consts
from ptojax.lower.host.kernel_aliases import alias_pairs
from ptojax.lower.host.loader import build_and_load
from ptojax.lower.host.locality import for_locality
from ptojax.lower.host.native_loop import (compiles_whole, entry as loop_entry,
                                           native_loop_runners, program_loops_source)
from ptojax.lower.host.pairing import paired
from ptojax.lower.host.random_bits import threefry_runners
from ptojax.eval.blas import team_installed
from ptojax.lower.host.team_gemm import EXPORTS as TEAM_EXPORTS, team_runners
from ptojax.lower.pto_cpp import cpp_type, program_cpp
from ptojax.lower.program_schedule import schedule_of
from ptojax.targets import get_target
from ptojax.tile import ops as T
from ptojax.tile.kernel import tile_kernel_p
from ptojax.eval.executable import Executable
from ptojax.eval import profiler
from ptojax.eval.machine_load import threads_free
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
    if grid.dynamic_cols:   # the view's row length this call follows the GM pointers
        n = len(sched.params)
        lines.append(f"    const int32_t cols = *static_cast<const int32_t*>(args[{n}]);")
        call = f"{sched.name}({args}, {{{grid.num_tiles}, 1, cols}})"
    elif not grid.dynamic_rows:
        call = f"{sched.name}({args}, {{{grid.num_tiles}, {grid.counts[1]}}})"
    else:   # the view's rows this call follow the GM pointers (_launcher)
        n = len(sched.params)
        lines.append(f"    const int32_t rows = *static_cast<const int32_t*>(args[{n}]);")
        call = (f"{sched.name}({args}, {{(rows + {grid.tile[0] - 1}) / {grid.tile[0]} * "
                f"{grid.grid_cols}, {grid.grid_cols}, rows}})")
    cores = [s.core for s in sched.sections]
    split = any(s.split_subblocks or s.row_split for s in sched.sections)
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
# (eval/machine_load.py) and while two operations run at once (a pair, lower/host/pairing.py).
PARALLEL_MIN_ELEMENTS = 1 << 15


def _work_elements(eqn) -> int:
    """The elements a kernel's blocks share out: its tiled view, or for a pto.kernel (a
    grid of programs, each a whole block program) the elements of its operands and results."""
    if eqn.params["kind"] == "kernel":
        return sum(math.prod(v.type.shape) for v in [*eqn.inputs, *eqn.outputs])
    grid = eqn.params["grid"]
    return grid.space[0] * grid.space[1]


def _launcher(library, index, eqn, blocks, into=None):
    """Runs kernel ``index`` on numpy inputs: allocates its outputs and workspaces. The
    function's ``alias_pairs`` are the (output, input) positions the kernel can write in
    place (``kernel_aliases.py``) and ``writing_into({output: input})`` is the launcher that
    does (an executor gives it the owned inputs that die at the kernel)."""
    body = eqn.params["bodies"][0]
    _, _, ws_vars = T.kernel_signature(body, len(eqn.inputs))
    zeroed = frozenset(eqn.params.get("accumulate", ()))
    grid = eqn.params["grid"]
    if grid.dynamic:
        return _dynamic_launcher(library, index, eqn, blocks,
                                      [a.type for a in eqn.inputs],
                                      [v.type for v in eqn.outputs], zeroed)
    in_dtypes = [a.type.dtype for a in eqn.inputs]
    outs_made = [(np.zeros if i in zeroed else np.empty, v.type.shape, v.type.dtype)
                 for i, v in enumerate(eqn.outputs)]
    spaces_made = [(v.type.shape, v.type.dtype) for v in ws_vars]
    parallel = _work_elements(eqn) >= PARALLEL_MIN_ELEMENTS
    record = _kernel_recorder(eqn)
    run = library.launcher(index, len(in_dtypes) + len(outs_made) + len(spaces_made))
    empty, contiguous = np.empty, np.ascontiguousarray
    outputs = _in_place_outputs(outs_made, into) if into else None

    def launch(*inputs):
        arrays = [contiguous(x, dtype) for x, dtype in zip(inputs, in_dtypes)]
        if outputs is None:
            outs = [make(shape, dtype) for make, shape, dtype in outs_made]
        else:
            outs = outputs(arrays)
        params = arrays + outs
        if spaces_made:
            params += [empty(shape, dtype) for shape, dtype in spaces_made]
        threads = parallel and threads_free()
        if profiler.active is None:
            run(params, blocks, threads)
        else:
            start = time.perf_counter()
            run(params, blocks, threads)
            record(start, arrays + outs)
        return outs
    launch.alias_pairs = () if into else alias_pairs(eqn)
    launch.writing_into = lambda chosen: _launcher(library, index, eqn, blocks, chosen)
    return launch


def _in_place_outputs(outs_made, into):
    """``arrays -> outputs``: output ``k`` is input ``into[k]``'s array when that one is
    writable and no other input views it, else a fresh buffer."""
    plan = [(make, shape, dtype, into.get(k)) for k, (make, shape, dtype) in enumerate(outs_made)]

    def outputs(arrays):
        outs = []
        for make, shape, dtype, i in plan:
            a = arrays[i] if i is not None else None
            if a is None or not a.flags.writeable or any(
                    x is a or (x.base is not None and np.may_share_memory(x, a))
                    for j, x in enumerate(arrays) if j != i):
                a = make(shape, dtype)
            outs.append(a)
        return outs
    return outputs


def _dynamic_launcher(library, index, eqn, blocks, in_types, out_types, zeroed):
    """``_launcher`` of a kernel whose row count or row length is known per call (a symbolic
    dimension, ``ir/symbolic.py``): the sizes are read from the inputs' shapes, the outputs
    allocated at them, and that extent of the view passed after the GM pointers
    (``_entry``)."""
    grid = eqn.params["grid"]
    readers = {}          # symbol -> (input, axis, dimension linear in it)
    for i, t in enumerate(in_types):
        for axis, d in enumerate(t.shape):
            readers.setdefault(linear_symbol(d), (i, axis, d))
    readers.pop(None, None)
    missing = set(symbols_of([*grid.space, *(t.shape for t in out_types)])) - set(readers)
    if missing:
        raise UnsupportedError(f"kernel {eqn.params['name']}: the sizes {sorted(missing)} "
                               f"cannot be read from its inputs' shapes, so its host "
                               f"launcher cannot size it")
    sizing = _sizing_function(readers, [t.shape for t in out_types], grid)
    allocs = [(np.zeros if i in zeroed else np.empty, t.dtype) for i, t in enumerate(out_types)]
    record = _kernel_recorder(eqn)
    extents: dict = {}    # the extent -> its (never written) int32 argument

    def launch(*inputs):
        arrays = [np.ascontiguousarray(x, t.dtype) for x, t in zip(inputs, in_types)]
        shapes, extent, elements, tiles = sizing(arrays)
        outs = [alloc(shape, dtype) for (alloc, dtype), shape in zip(allocs, shapes)]
        threads = elements >= PARALLEL_MIN_ELEMENTS and threads_free()
        used = min(blocks, max(1, tiles))    # blocks that get a tile
        given = extents.get(extent)
        if given is None:
            given = extents[extent] = np.array([extent], np.int32)
        if profiler.active is None:
            library.launch(index, [*arrays, *outs, given], used, threads)
        else:
            start = time.perf_counter()
            library.launch(index, [*arrays, *outs, given], used, threads)
            record(start, arrays + outs)
        return outs
    return launch


def _sizing_function(readers, out_shapes, grid):
    """``arrays -> (output shapes, the view's runtime extent (its rows, or with a runtime row
    length its columns), its elements, tiles)`` of one call, generated: each symbol read from
    the input dimension linear in it (``readers``: symbol -> (input, axis, dimension)), then
    the shapes' polynomials."""
    lines = ["def sizing(a):"]
    for name, (i, axis, d) in readers.items():
        lines.append(f"    s_{name} = (a[{i}].shape[{axis}] - ({d.terms.get((), 0)})) // "
                     f"{d.terms[(name,)]}")
    shapes = ", ".join("(" + "".join(f"{_polynomial(d)}, " for d in shape) + ")"
                       for shape in out_shapes)
    r, gc = grid.tile[0], grid.grid_cols
    lines.append(f"    rows = {_polynomial(grid.space[0])}")
    lines.append(f"    cols = {_polynomial(grid.space[1])}")
    extent = "cols" if grid.dynamic_cols else "rows"
    lines.append(f"    return [{shapes}], {extent}, rows * cols, -(-rows // {r}) * {gc}")
    env: dict = {}
    exec("\n".join(lines), env)
    return env["sizing"]


def _polynomial(d) -> str:
    """Python for dimension ``d`` over the variables ``s_<symbol>``."""
    if not is_symbolic(d):
        return str(int(d))
    return " + ".join(f"({c}{''.join(f' * s_{n}' for n in mono)})"
                      for mono, c in d.terms.items())


def _kernel_recorder(eqn):
    """Records one ``pto.profile`` event per run of kernel ``eqn``, with the target cost
    model's estimate (computed on the first profiled run)."""
    estimate_us = None

    def record(start, arrays):
        nonlocal estimate_us
        duration = time.perf_counter() - start
        if estimate_us is None:
            estimate_us = kernel_cost(eqn).us
        profiler.record(eqn.params["name"], "kernel", start, duration,
                        sum(a.nbytes for a in arrays), estimate_us)
    return record


def _pto_build(tiled: ClosedIR, target, check_sync: bool) -> dict:
    """The PTO-faithful build: the emitted PTO C++ against pto_host.h."""
    scheds = [schedule_of(e) for e in kernel_eqns(tiled)]
    split_cores = any(s.mixed for s in scheds)
    copies = (CUBE_COPY, VECTOR_COPY) if split_cores else BOTH_CORES
    if split_cores and any(s.kind == "kernel" for s in scheds):
        copies += (BOTH_COPY,)
    return dict(kernel_source=program_cpp(tiled, target.name),
                entries=[_entry(i, e, s, split_cores)
                         for i, (e, s) in enumerate(zip(kernel_eqns(tiled), scheds))],
                check_sync=check_sync, copies=copies)


def _fused_build(tiled: ClosedIR) -> dict:
    """The fused build: each kernel one loop nest (lower/host/fused.py), and each scan of
    small arrays one function (native_loop.py), launched after the kernels."""
    kernels, loops = kernel_eqns(tiled), whole_loops(tiled)
    return dict(kernel_source=fused.program_source(kernels) + program_loops_source(loops),
                entries=fused.entries(kernels) + [loop_entry(i, len(kernels) + i)
                                                  for i in range(len(loops))],
                bodies_at_o1=False)


def whole_loops(closed: ClosedIR) -> list:
    """The scans of ``closed`` compiled whole (``native_loop.py``), in order."""
    return [e for e in closed.ir.eqns if compiles_whole(e)]


def emit(tiled: ClosedIR, target, check_sync: bool = False, kernels: str = "fused") -> tuple:
    """(the build used, why not the fused one or None, the library's build options: its
    kernel source and entry points) — ``HostProgram``'s ``emitted``, which a program loaded
    from the cache passes instead of emitting again (``program_record.py``)."""
    build, fused_error = "pto" if check_sync else kernels, None
    if build == "fused":
        try:
            options = _fused_build(tiled)
        except FusedUnsupported as e:
            build, fused_error = "pto", str(e)
    if build == "pto":
        options = _pto_build(tiled, target, check_sync)
    # (every library has the team GEMM: the first one loaded installs it, team_gemm.py)
    few_rows = GEMM_EXPORTS if any(runs_few_rows(e) for e in tiled.ir.eqns) else ()
    options["exports"] = few_rows + TEAM_EXPORTS
    return build, fused_error, options


class HostProgram:
    """``run(*flat_inputs)`` for a tiled IR, its kernels compiled for the host.

    ``kernels`` is the build: ``"fused"`` (each kernel one loop nest computing its chain in
    registers, ``lower/host/fused.py``) or ``"pto"`` (the emitted PTO C++ instruction stream
    against ``pto_host.h``, which a ``check_sync`` build always is); a kernel the fused
    emitter has no form for makes the program use the PTO build (``fused_error`` says why).
    ``source`` is the compiled kernel source; ``build`` says where the library came from
    (compiled now or found in the disk cache) and how long compiling took; ``launchers`` maps
    each ``tile_kernel`` equation to the function running its compiled kernel on numpy arrays,
    ``tensor_runners`` the tensor-level equations run by compiled code (``random_bits.py``, ``few_rows_gemm.py``);
    ``loops`` maps loop equations to the runners the backend made for them; ``cached_only``
    raises ``build.NotCached`` rather than compiling; ``on_key`` is told the library's key;
    ``donated`` are the inputs ``run`` may overwrite (``Executable``); ``emitted`` what
    ``emit`` returned for ``tiled``, if it is known (emitted when None).
    """

    def __init__(self, tiled: ClosedIR, target, check_sync: bool = False, name: str = "fn",
                 kernels: str = "fused", loops=None, cached_only: bool = False,
                 on_key=None, donated=frozenset(), emitted=None):
        if kernels not in KERNEL_BUILDS:
            raise ValueError(f"unknown host kernel build {kernels!r}; available: "
                             f"{', '.join(KERNEL_BUILDS)}")
        if emitted is None:
            emitted = emit(tiled, target, check_sync, kernels)
        self.emitted = emitted
        self.kernels, self.fused_error, options = emitted
        self.entries = options["entries"]
        self.source = options["kernel_source"]
        self.check_sync = check_sync
        self.library, self.build = build_and_load(target=_arena_target(target, tiled),
                                                  name=name, cached_only=cached_only,
                                                  on_key=on_key, **options)
        self.launchers = {e: _launcher(self.library, i, e, e.params["grid"].blocks)
                          for i, e in enumerate(kernel_eqns(tiled))}
        loops = loops or {}   # loop equations -> runners of their bodies' own programs
        if self.kernels == "fused":           # (scans compiled whole replace their runners)
            loops = {e: run for e, run in loops.items() if not compiles_whole(e)}
        team = team_runners(tiled.ir.eqns)
        self.tensor_runners = {**threefry_runners(self.library, tiled.ir.eqns), **team,
                               **few_rows_runners(self.library, tiled.ir.eqns, team)}
        if self.kernels == "fused":
            self.tensor_runners.update(native_loop_runners(
                self.library, whole_loops(tiled), len(self.launchers)))
        # input-free arrays computed once; last uses in cache; two at once, unless products
        # run on the kernels' threads (team_gemm.py): then each product runs on all of them
        ordered = for_locality(input_free_as_consts(tiled))
        ordered, pairs = (ordered, frozenset()) if team_installed() else paired(ordered)
        self.executable = Executable(ordered,
                                     {**self.launchers, **self.tensor_runners, **loops},
                                     frozenset(loops), donated, pairs)
        self.run = self.executable.run
