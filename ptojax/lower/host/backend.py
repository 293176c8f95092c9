"""The ``cpu`` backend of ``pto.jit``: fused tile kernels compiled for the host, tiered.

``make_executable(optimized_ir, backend)`` (``lower/host/executables.py``) is what ``jit``
runs a traced function with:

- ``"interpreter"``: the numpy executor (``runtime/executable.py``), the reference.
- ``"cpu"`` (the default, ``None``) or a ``CpuBackend``: a ``HostExecutable``. Its first calls
  run the numpy executor; when the first one returns, a background worker looks its library
  up in the disk cache and loads it at once if it is there. If not, once the function has
  proven hot (its numpy-tier calls took ``$PTOJAX_BUILD_AFTER`` seconds: ``hotness.py``),
  the worker finds the compiler, tiles the IR for the host target, emits its kernels — fused
  loop nests by default, or the PTO C++ instruction stream (``CpuBackend(kernels=...)``,
  ``$PTOJAX_HOST_KERNELS``) —, builds them and then switches ``run`` to the compiled
  program — so compile latency never reaches the user's calls.
  Functions whose tensors are all small (``min_elements``) stay on numpy: a kernel launch
  costs more than it saves there. Without a C++ compiler, or if tiling or building fails,
  the function keeps running on numpy and one warning says why.

Once compiled, the two tiers race: the next calls alternate between them (``TRIAL_CALLS``
each) and ``run`` keeps whichever measured faster, so compiling never makes a function
slower than the numpy executor (status ``compiled`` or ``numpy: ... measured faster``). A race
the numpy executor wins is run again after ``RERACE_AFTER`` calls (then 8x as many, at most
``RERACES`` times): on a busy machine a few calls of either tier can stall, and one unlucky
race must not keep a function off its compiled kernels for good. No call is timed while the
background worker has jobs (its Python work holds the GIL): those run the compiled program.

Compiled kernels and numpy agree up to float rounding (sums are reassociated, exp/log/tanh/
logistic are the header's own polynomials), so a tiered function's results can differ in the
last bits between its first calls and later ones. ``CpuBackend(tiered=False)`` compiles before the
first call instead (and raises ``CompileError`` rather than warning).
"""
from __future__ import annotations

import _thread
import atexit
import contextlib
import functools
import hashlib
import itertools
import os
import queue
import sys
import threading
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Optional

from ptojax.errors import CompileError, ConfigError, TileError, UnsupportedError
from ptojax.ir.symbolic import bounds, has_symbolic_shapes, has_symbols
from ptojax.control_flow.scan import run_scan, scan_p
from ptojax.control_flow.while_loop import run_while, while_p
from ptojax.control_flow.common import compiled
from ptojax.ir.core import ClosedIR
from ptojax.lower.host.accumulate import accumulating_products
from ptojax.lower.host import exit_handoff, hotness, program_record
from ptojax.lower.host.build import ABI_VERSION, NotCached, wait_for_detached_preludes
from ptojax.lower.host.carries import CarrySteps, donated_carries
from ptojax.lower.host.cache import (CacheEntry, checked_root, program_hint, read_program_hint,
                                     write_atomic)
from ptojax.lower.host.compiler import compiler_or_none
from ptojax.lower.host.inline import inline_calls
from ptojax.targets import Target, get_target, host_jit
from ptojax.eval.executable import Executable
from ptojax.eval.machine_load import building, machine_busy
from ptojax.tile.planner import TileConfig
from ptojax.lower.host.program import KERNEL_BUILDS, HostProgram, kernel_eqns, whole_loops
from ptojax.tile.api import tile_ir


@dataclass(frozen=True)
class CpuBackend:
    """Options of the cpu backend: ``tiered`` (numpy until the kernels are compiled, else
    compile before the first call), ``check_sync`` (build kernels with the set/wait flag
    checker), ``min_elements`` (largest tensor below which a function stays on numpy), the
    tiling ``target``, an explicit ``tile_config`` (``pto.TileConfig``; None plans
    automatically) and ``kernels``, the host build of the tile kernels: ``"fused"`` (each
    kernel one loop nest, its chain computed in registers: the fastest) or ``"pto"`` (the
    emitted PTO C++ instruction stream, one pass per instruction, as on the NPU; the build
    ``check_sync`` checks). None: ``$PTOJAX_HOST_KERNELS`` if set, else ``"fused"`` (``"pto"``
    with ``check_sync``). ``buckets``, for programs with symbolic dimensions
    (``lower/host/symbolic.py``): a function from a size to the size of its bucket (None: the
    next power of two), or False for one program only."""
    tiered: bool = True
    check_sync: bool = False
    min_elements: int = 1 << 15
    target: Target = host_jit
    tile_config: Optional[TileConfig] = None
    kernels: Optional[str] = None
    buckets: object = None

    def __post_init__(self):
        for name in ("tiered", "check_sync"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"CpuBackend.{name} must be True or False, got "
                                  f"{getattr(self, name)!r}")
        if isinstance(self.min_elements, bool) or not isinstance(self.min_elements, int) \
                or self.min_elements < 0:
            raise ConfigError(f"CpuBackend.min_elements must be an integer >= 0, got "
                              f"{self.min_elements!r}")
        try:
            object.__setattr__(self, "target", get_target(self.target))
        except ValueError as e:
            raise ConfigError(f"CpuBackend.target: {e}") from None
        if self.tile_config is not None and not isinstance(self.tile_config, TileConfig):
            raise ConfigError(f"CpuBackend.tile_config must be a pto.TileConfig or None, got "
                              f"{self.tile_config!r}")
        if self.kernels is not None:
            _check_kernels(self.kernels, "CpuBackend.kernels")
        if not (self.buckets is None or self.buckets is False or callable(self.buckets)):
            raise ConfigError(f"CpuBackend.buckets must be None (powers of two), False (no "
                              f"buckets) or a function from a size to its bucket's size, got "
                              f"{self.buckets!r}")
        if self.kernels == "fused" and self.check_sync:
            raise ConfigError("CpuBackend(check_sync=True) checks the set/wait flags of the PTO "
                              "instruction stream, which fused kernels do not run: use "
                              "kernels='pto' (or leave kernels unset) with check_sync")

    def kernel_build(self) -> str:
        """The host build the kernels are compiled as (see the class docstring)."""
        if self.check_sync:
            return "pto"
        if self.kernels is not None:
            return self.kernels
        return _check_kernels(os.environ.get(KERNELS_ENV, "fused"), f"${KERNELS_ENV}")


KERNELS_ENV = "PTOJAX_HOST_KERNELS"


def _check_kernels(value, where) -> str:
    if value not in KERNEL_BUILDS:
        raise ConfigError(f"{where} must be one of {', '.join(map(repr, KERNEL_BUILDS))} (the "
                         f"host build of tile kernels), got {value!r}")
    return value



BACKENDS = ("cpu", "interpreter")
TRIAL_CALLS = 3  # calls per tier before choosing the faster one
RERACE_AFTER = 64  # numpy calls before a race numpy won is run again (x8 each time)
RERACES = 2


def largest_tensor(closed: ClosedIR) -> int:
    ir = closed.ir
    sizes = [v.type.size for v in (*ir.invars, *ir.outvars) if hasattr(v, "type")]
    sizes += [v.type.size for e in ir.eqns for v in e.outputs]
    return max((bounds(s)[1] for s in sizes), default=0)   # symbolic: the largest size


class HostExecutable:
    """``run(*flat_inputs)``: the numpy executor until the compiled program is ready.

    ``status`` is one of ``numpy`` (stays on numpy: small, no kernels, or no compiler),
    ``compiling`` (also while a cold build waits for the function to be hot: ``hotness.py``;
    ``wait()`` starts it), ``compiled`` or ``failed: <why>``; ``program`` is the ``HostProgram`` once
    compiled and ``ready_after`` the seconds from creation until it took over.
    ``loop_bodies`` are the ``HostExecutable``s of its loops' bodies (``_loop_runners``);
    ``warm`` says whether its library was in the cache when its first call asked (looked up on
    the background worker, ahead of compiles). ``donated``: the
    inputs ``run`` may overwrite (a loop body's carries, ``carries.py``); ``fresh_outputs``
    the results both tiers return as buffers of their own (``Executable.fresh_outputs``).
    """

    def __init__(self, closed: ClosedIR, options: CpuBackend, donated=frozenset()):
        self.given = closed                 # (what a build handed off at exit starts from)
        closed = inline_calls(closed)   # user-derivative calls: a fusion boundary no more
        closed = accumulating_products(closed, donated)   # beta * acc + x @ g: one GEMM
        self.closed = closed
        self.options = options
        self.donated = donated
        self.loops, self.loop_bodies = _loop_runners(closed, options)
        self.numpy = Executable(closed, self.loops, frozenset(self.loops), donated)
        self.fresh_outputs = self.numpy.fresh_outputs
        self.source = self.numpy.source
        self.program = None
        self.unfused = None     # once tiled: the equations left tensor ops (UnfusedOp)
        self.ready_after = None
        self.status = "numpy"
        self._fast = None
        self._trial = None                  # _TierTrial while both tiers are being timed
        self._created = time.perf_counter()
        self.kernels = options.kernel_build()
        self._done = threading.Event()
        self._pending = False               # compile in the background after the first call
        self._pending_lock = threading.Lock()
        self._cold = None                   # hotness.ColdBuild: when a cold build starts
        self.warm = False                   # (set on the worker: _load_or_queue_compile)
        self.library_started = False        # its library's key is known: built or building
        self._fingerprint_text = None
        if largest_tensor(closed) < options.min_elements and not whole_loops(closed):
            self._done.set()
            return
        self.status = "compiling"
        if options.tiered:
            self._pending = True
            self._cold = hotness.ColdBuild(self, HostExecutable._queue_compile,
                                           hotness.build_after())
        else:
            self._build(warn=False)

    def start_compiling(self):
        """Compile in the background now rather than after the first call (or once hot)."""
        if self._cold is not None:
            self._cold.release()
        self._submit_once()

    def run(self, *args):
        fast = self._fast
        if fast is not None:
            return fast(*args)
        trial = self._trial
        if trial is not None:
            return trial.run(self, args)
        cold = self._cold
        if cold is None or not cold.counting:
            out = self.numpy.run(*args)
        else:        # (a loop body's steps count in its own run: a long epoch makes it hot)
            start = time.perf_counter()
            out = self.numpy.run(*args)
            cold.spend(time.perf_counter() - start)
        if self._pending:
            # the first call is done: only now start compiling, so that the background
            # thread's Python work (it holds the GIL) never slows that call down
            self._submit_once()
        return out

    __call__ = run

    def _submit_once(self):
        with self._pending_lock:
            if not self._pending:
                return
            self._pending = False
        # whether the cache has the library is looked up on the worker, ahead of compiles:
        # the lookup prints the program (its fingerprint), a cost the first call need not pay
        _worker().submit(self._load_or_queue_compile, self, first=True)

    def _load_or_queue_compile(self):
        self.warm = self._warm_cache()
        if self.warm:   # only tile, emit and load: ahead of any compile in the queue
            self._cold.settle()
            self._load_in_background()
        else:           # compiled once hot (hotness.py), or at once if asked for
            self._cold.hold(self._fingerprint())

    def _queue_compile(self):
        _worker().submit(self._compile_in_background, self)

    def _fingerprint(self) -> str:
        if self._fingerprint_text is None:
            o = self.options
            text = f"{ABI_VERSION}\0{self.kernels}\0{o.target.name}\0{o.tile_config!r}\0" \
                   f"{o.check_sync}\0{self.closed}"
            self._fingerprint_text = hashlib.sha256(text.encode()).hexdigest()
        return self._fingerprint_text

    def _warm_cache(self) -> bool:
        """Whether this program's library was built before (``cache.program_hint``) and is
        still published: then the worker loads it first, ahead of compiles."""
        try:
            root = checked_root()
            key = read_program_hint(root, self._fingerprint())
            return key is not None and CacheEntry(key, root).published() is not None
        except (OSError, ConfigError, CompileError):
            return False

    def _load_in_background(self):
        with building():
            if not self._build(warn=True, cached_only=True):   # a stale hint: compile after all
                self._build(warn=True)

    def wait(self, timeout=None) -> bool:
        """Block until compiling has finished (or failed); False on timeout. A build held
        until the function is hot (``hotness.py``) starts now, and so do its loop bodies'."""
        for executable in (self, *_all_loop_bodies(self)):
            if executable._cold is not None:
                executable._cold.release()
        return self._done.wait(timeout)

    def _build(self, warn: bool, cached_only: bool = False) -> bool:
        """Find the compiler, tile, emit, build and switch ``run`` to the compiled program.
        Whatever goes wrong leaves a final status; in the background (``warn``) it is
        reported by one warning, else raised. ``cached_only``: False, and nothing changed,
        if the library is not in the cache."""
        finished = True
        try:
            root = checked_root()
            compiler, why = compiler_or_none()
            if compiler is None:
                self.status = "numpy"
                _warn_once(f"ptojax: {why}; pto.jit runs on the numpy executor (install g++ or "
                           f"clang++, or set CXX, for compiled host kernels)")
                return True
            record = program_record.load(root, self._fingerprint())
            if record is not None:    # tiled and emitted by an earlier process
                tiled, self.unfused, emitted = record
            else:
                result = tile_ir(self.closed, self.options.tile_config, self.options.target)
                tiled, self.unfused, emitted = result.ir, result.unfused, None
            if not kernel_eqns(tiled) and not whole_loops(tiled):
                self.status = "numpy"
                return True
            self.program = HostProgram(tiled, self.options.target, self.options.check_sync,
                                       kernels=self.kernels, loops=self.loops,
                                       cached_only=cached_only,
                                       on_key=self._remember_library, donated=self.donated,
                                       emitted=emitted)
            # before the program can run: a loop reads this after each step it ran
            self.fresh_outputs = tuple(a and b for a, b in zip(
                self.numpy.fresh_outputs, self.program.executable.fresh_outputs))
            self.ready_after = time.perf_counter() - self._created
            self.status = "compiled"
            if self.options.tiered:
                self._trial = _TierTrial(self.numpy.run, self.program.run)
            else:
                self._fast = self.program.run
            if record is None:     # (after it took over: the next process's shortcut)
                program_record.save(root, self._fingerprint(), tiled, self.unfused,
                                    self.program.emitted)
        except NotCached:
            finished = False
            return False
        except (CompileError, TileError, UnsupportedError, ConfigError, OSError) as e:
            self.status = f"failed: {e}"
            if not warn:
                raise
            _warn_once(f"ptojax: compiling host kernels failed, this function keeps running "
                       f"on the numpy executor: {e}")
        except Exception as e:           # a bug in ptojax: say where, and keep running
            self.status = f"failed: internal error: {_crash_site(e)}"
            if not warn:
                raise
            _warn_once(f"ptojax: compiling host kernels crashed (a ptojax bug; please report "
                       f"it), this function keeps running on the numpy executor: "
                       f"{_crash_site(e)}")
        finally:
            if finished:
                self._done.set()
        return True

    def _remember_library(self, key: str):
        """Remember (before it is built: a detached build may outlive this process) which
        library this program builds into."""
        self.library_started = True
        with contextlib.suppress(OSError, CompileError):
            root = checked_root()
            if read_program_hint(root, self._fingerprint()) != key:   # (a warm load: it is)
                write_atomic(program_hint(root, self._fingerprint()), key.encode())

    def _compile_in_background(self):
        with building():
            self._build(warn=True)


def _loop_runners(closed: ClosedIR, options: CpuBackend):
    """({scan/while equation of ``closed``: its loop with the body run by the body's own
    ``HostExecutable``}, [those executables]). A body is tiered and compiled like a jitted
    function, so a loop's steps (a ``fori_loop`` epoch of train steps) run compiled kernels,
    not the numpy executor; its large carries are donated to it, so it updates them in place
    (``carries.py``)."""
    runners, bodies = {}, []
    for eqn in closed.ir.eqns:
        p = eqn.params
        if eqn.prim in (scan_p, while_p) and (has_symbols(tuple(p.values()))
                                              or has_symbolic_shapes(p["body"].ir)):
            continue     # sizes known per call: the numpy executor runs the loop
        if eqn.prim is scan_p:
            first = p["num_consts"]
            donated = donated_carries(p["body"].in_types, first, p["num_carry"])
            bodies.append(HostExecutable(p["body"], options, donated))
            runners[eqn] = functools.partial(_run_scan, _stepper(bodies[-1], donated, first),
                                             p["body"], p["num_consts"], p["num_carry"],
                                             p["length"], p["reverse"])
        elif eqn.prim is while_p:
            first = p["body_nconsts"]
            body = p["body"]
            donated = donated_carries(body.in_types, first, len(body.in_types) - first)
            bodies.append(HostExecutable(body, options, donated))
            runners[eqn] = functools.partial(_run_while, compiled(p["cond"]),
                                             _stepper(bodies[-1], donated, first),
                                             p["cond_nconsts"], p["body_nconsts"],
                                             p["max_steps"])
    return runners, bodies


def _stepper(body: "HostExecutable", donated, first: int):
    """``() -> step`` for one run of a loop: the body's ``run``, or a ``CarrySteps`` when it
    has donated carries."""
    if not donated:
        return lambda: body.run
    return lambda: CarrySteps(body, donated, first)


def _run_scan(stepper, body, num_consts, num_carry, length, reverse, *args):
    return run_scan(stepper(), args, body, num_consts, num_carry, length, reverse)


def _run_while(test, stepper, cond_nconsts, body_nconsts, max_steps, *args):
    return run_while(test, stepper(), args, cond_nconsts, body_nconsts, max_steps)


class _TierTrial:
    """Alternate calls between the numpy executor and the compiled program, then keep the
    faster (by best time over ``TRIAL_CALLS`` calls each); ``reraces`` more races if numpy
    wins, the next after ``rerace_after`` numpy calls. While ``ready()`` is false — the
    background worker has jobs: its tiling and emitting hold the GIL and its compiler takes
    a core — calls run the compiled program untimed: timed then, either tier's calls stall
    at random, and a loop body raced while the rest of its program was tiled lost to numpy
    (15 ms vs 21 ms for a VAE step that runs 2.5x faster compiled). While the machine is
    ``busy()`` (``machine_busy``: kernels and BLAS then run on the calling thread), the tiers
    are compared by the calling thread's CPU time: wall times then mostly measure how long
    the scheduler kept the thread waiting, and a race of a VAE step decided by them went
    either way (9.42 vs 9.45 ms; 7.8 vs 6.5 ms of CPU)."""

    def __init__(self, numpy_run, compiled_run, reraces: int = RERACES,
                 rerace_after: int = RERACE_AFTER, ready=None, busy=None):
        self.runs = (numpy_run, compiled_run)
        self.times = ([], [])      # per tier: (wall seconds, this thread's CPU seconds)
        self.calls = 1  # the compiled tier goes first
        self.lock = threading.Lock()
        self.reraces, self.rerace_after = reraces, rerace_after
        self.ready = ready or _worker_idle
        self.busy = busy or machine_busy

    def run(self, owner: HostExecutable, args):
        if not self.ready():
            return self.runs[1](*args)
        with self.lock:
            tier = self.calls % 2
            self.calls += 1
        start, cpu = time.perf_counter(), time.thread_time()
        out = self.runs[tier](*args)
        elapsed = (time.perf_counter() - start, time.thread_time() - cpu)
        with self.lock:
            self.times[tier].append(elapsed)
            if owner._fast is None and all(len(t) >= TRIAL_CALLS for t in self.times):
                clock = 1 if self.busy() else 0
                numpy_best, compiled_best = (min(t[clock] for t in times)
                                             for times in self.times)
                if compiled_best <= numpy_best:
                    owner._fast = self.runs[1]
                    owner.status = "compiled"
                else:
                    owner._fast = self._numpy_until_rerace(owner)
                    owner.status = (f"numpy: the numpy executor measured faster "
                                    f"({numpy_best * 1e3:.3f} ms vs compiled "
                                    f"{compiled_best * 1e3:.3f} ms"
                                    f"{' of CPU time' if clock else ''})")
                owner._trial = None
        return out

    def _numpy_until_rerace(self, owner: HostExecutable):
        """The numpy executor, which after ``rerace_after`` calls starts the next race."""
        numpy_run = self.runs[0]
        if self.reraces <= 0:
            return numpy_run
        left = self.rerace_after

        def run(*args):
            nonlocal left
            left -= 1
            if left <= 0 and owner._fast is run:      # once, also with concurrent callers
                owner._trial = _TierTrial(*self.runs, self.reraces - 1, 8 * self.rerace_after,
                                          self.ready, self.busy)
                owner._fast = None
            return numpy_run(*args)
        return run


# --- the background worker -------------------------------------------------------------------
class _Worker:
    """One thread compiling in submission order; never delays interpreter exit (a thread of
    ``_thread``'s, which the interpreter does not wait for, as a daemon thread)."""

    def __init__(self):
        self._jobs: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()
        self._idle = threading.Condition()
        self._pending = 0
        self._owners: dict = {}         # HostExecutable -> its jobs queued or running
        # not threading.Thread: its start() waits until the thread runs, which the first call
        # (that starts the worker) paid for: 0.2 ms typically, up to 6 ms on a busy machine
        _thread.start_new_thread(self._loop, ())

    def submit(self, job, owner=None, first: bool = False):
        """Queue ``job`` (of the executable ``owner``, if any); ``first`` jobs (loads from
        the cache) run before the others."""
        with self._idle:
            self._pending += 1
            if owner is not None:
                self._owners[owner] = self._owners.get(owner, 0) + 1
        self._jobs.put((0 if first else 1, next(self._order), (job, owner)))

    def waiting_owners(self) -> list:
        """The executables with a job queued or running, in submission order."""
        with self._idle:
            return list(self._owners)

    def idle(self) -> bool:
        return self._pending == 0

    def wait_idle(self, timeout=None) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _loop(self):
        while True:
            *_, (job, owner) = self._jobs.get()
            try:
                with _prompt_gil_handoff():
                    job()
            except Exception as e:     # a bug must not kill the worker; report it
                _warn_once(f"ptojax: host kernel compilation crashed: {_crash_site(e)}")
            finally:
                with self._idle:
                    self._pending -= 1
                    if owner is not None:
                        self._owners[owner] -= 1
                        if not self._owners[owner]:
                            del self._owners[owner]
                    job = owner = None      # (not kept alive while waiting for the next job)
                    self._idle.notify_all()


# The GIL switch interval while the worker runs a job. The worker's tiling and emitting are
# Python (30-40 ms of CPU for an MLP train step); with CPython's default 5 ms interval the
# calling thread, back from a BLAS call or a kernel (which run without the GIL), waited up to
# 5 ms for it each time instead of starting its next GIL-free call alongside the worker.
WORKER_SWITCH_INTERVAL_S = 0.0005


@contextlib.contextmanager
def _prompt_gil_handoff():
    """A short GIL switch interval for the duration (left alone if someone set a shorter one);
    the previous one after, unless it was changed meanwhile."""
    before = sys.getswitchinterval()
    if before <= WORKER_SWITCH_INTERVAL_S:
        yield
        return
    sys.setswitchinterval(WORKER_SWITCH_INTERVAL_S)
    ours = sys.getswitchinterval()      # (as the interpreter stores it)
    try:
        yield
    finally:
        if sys.getswitchinterval() == ours:
            sys.setswitchinterval(before)


_worker_instance = None
_worker_lock = threading.Lock()


def _worker() -> _Worker:
    global _worker_instance
    with _worker_lock:
        if _worker_instance is None:
            _worker_instance = _Worker()
        return _worker_instance


def _worker_idle() -> bool:
    """Whether the background worker has no job queued or running."""
    worker = _worker_instance
    return worker is None or worker.idle()


def wait_for_compiles(timeout=None) -> bool:
    """Block until every queued background compile — and every build held until its function
    is hot (``hotness.py``), started now — has finished, and so has every header
    precompile (``prelude.build_later``) that the detached builders of this process's
    libraries left running after they exited — it takes a core for seconds, so a steady-state
    measurement started before it ends measures it too; False on timeout (seconds, for the
    whole wait)."""
    deadline = None if timeout is None else time.monotonic() + timeout

    def left():
        return None if deadline is None else max(0.0, deadline - time.monotonic())
    hotness.release_all()           # builds held until hot start now
    while True:
        if not _worker().wait_idle(left()):
            return False
        if not hotness.release_all():   # (a program found cold meanwhile: held, released)
            break
    return wait_for_detached_preludes(left())


@atexit.register
def _hand_off_at_exit():
    """Hand the programs whose library build has not started — queued on the worker, or held
    until hot (``hotness.py``) — to a detached builder, which builds them for the next run
    (``exit_handoff.py``)."""
    worker = _worker_instance
    if not exit_handoff.enabled():
        return
    owners = dict.fromkeys([*(worker.waiting_owners() if worker is not None else ()),
                            *hotness.held_owners()])       # (one may be in both, briefly)
    waiting = [e for e in owners if not e.library_started and e.status == "compiling"]
    inside = {id(b) for e in waiting for b in _all_loop_bodies(e)}   # built with their loop
    waiting = [e for e in waiting if id(e) not in inside]
    if waiting:
        exit_handoff.hand_off([exit_handoff.Program(e.given, e.options, e.donated,
                                                    e._fingerprint()) for e in waiting])


def _all_loop_bodies(executable: HostExecutable) -> list:
    return [b for body in executable.loop_bodies for b in (body, *_all_loop_bodies(body))]


_warned = set()
_warned_lock = threading.Lock()


def _warn_once(message: str):
    """One RuntimeWarning per distinct message per process."""
    with _warned_lock:
        if message in _warned:
            return
        _warned.add(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def _crash_site(e: BaseException) -> str:
    """``e`` and the innermost frame it was raised in."""
    frames = traceback.extract_tb(e.__traceback__)
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in " \
            f"{frames[-1].name})" if frames else ""
    return f"{type(e).__name__}: {e}{where}"

