"""``jit``: trace once per input signature, optimize, compile to a straight-line function,
cache. ``make_ir`` shows the traced IR."""
from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from typing import Any, Callable, NamedTuple

import numpy as np

from ptojax.config import jit_disabled
from ptojax import dtypes
from ptojax.dtypes import x64_enabled
from ptojax.errors import NonArrayLeafError, PtoError, located
from ptojax.ir.core import ClosedIR
from ptojax.eval.array import Array
from ptojax.source_info import user_frame
from ptojax.eval import profiler, transfers
from ptojax.eval.dynamic_shapes import DynamicShapes
from ptojax.eval.executable import failed_equation_source
from ptojax.eval.eager import clear_eager_caches
from ptojax.eval.nonfinite import invalid_kind, invalid_value_error
from ptojax.eval.fast_arguments import fast_arguments
from ptojax.eval.leaves import (ShapeDtypeStruct, argument_type, describe_path, leaf_type,
                                leaf_value)
from ptojax.ops.convert import python_float_view
from ptojax.trace import Tracer, inlined_jit, trace_flat, tracing
from ptojax.optimize import optimize
from ptojax.scoped_options import (DEBUG_INFS as _INFS, DEBUG_NANS as _NANS, ENABLE_CHECKS,
                                   EXPLAIN_CACHE_MISSES, LOG_COMPILES, NO_TRACING)
from ptojax.ir.verify import verify
from ptojax.pytree import tree_flatten, tree_flatten_with_path, tree_map, unflattener
from ptojax.lower.host.executables import make_executable
from ptojax.lower.lowered import TileLowering
from ptojax.shard.explicit import mesh_of_sharded, partitioned, spec_of_leaf
from ptojax.jit_shardings import PlacedJit
from ptojax.jit_nested import Traced as NestedTrace, cached_trace, replay, trace_nested
from ptojax.aot_signature import Signature
from ptojax.jit_static import index_tuple, normalize_static, split_static
from ptojax.tools.flops import count_flops
from ptojax.public import add_examples as _add_examples

log = logging.getLogger("ptojax.jit")


class _Signature(NamedTuple):
    in_tree: Any
    in_types: tuple
    statics: tuple
    python_floats: tuple  # positions of Python float leaves (traced at full precision)
    x64: bool             # x64 mode: the same arguments trace to other dtypes


def trace_to_ir(fn, args, kwargs, static_argnums=frozenset(), static_argnames=frozenset(),
                name=None, dynamic=None):
    """Trace ``fn(*args, **kwargs)``: returns (ClosedIR, in_tree, out_tree). ``dynamic`` (a
    ``DynamicShapes``) makes its declared dimensions symbolic."""
    dyn_args, dyn_kwargs, statics = split_static(None, args, kwargs, static_argnums,
                                                  static_argnames)
    pairs, in_tree = tree_flatten_with_path((tuple(dyn_args), dyn_kwargs))
    in_types = [argument_type(x, p) for p, x in pairs]
    if dynamic is not None:
        in_types = dynamic.abstract([p for p, _ in pairs], in_types,
                                    _dynamic_positions(len(args), static_argnums))
    floats = [type(x) is float for _, x in pairs]
    out_tree_box = []

    def flat_fn(*leaves):
        leaves = [python_float_view(x) if f else x for x, f in zip(leaves, floats)]
        a, kw = in_tree.unflatten(leaves)
        a, kw = _merge_static(a, kw, args, kwargs, static_argnums, static_argnames)
        out = fn(*a, **kw)
        out_leaves, out_tree = tree_flatten(out)
        out_tree_box.append(out_tree)
        for x in out_leaves:
            _check_output_leaf(x)
        return out_leaves

    closed = trace_flat(flat_fn, in_types, name or getattr(fn, "__name__", "fn"))
    return closed, in_tree, out_tree_box[0]


def _dynamic_positions(n_args, static_argnums) -> list:
    """The original position of each non-static positional argument."""
    return [i for i in range(n_args) if i not in static_argnums]


def _check_output_leaf(x):
    if not isinstance(x, (Array, Tracer, np.ndarray, np.generic, int, float, bool)):
        raise NonArrayLeafError(f"the function returned a {type(x).__name__} ({x!r:.60}) "
                                f"where arrays are expected", user_frame(4))


def _merge_static(dyn_args, dyn_kwargs, args, kwargs, static_argnums, static_argnames):
    it = iter(dyn_args)
    full = [args[i] if i in static_argnums else next(it) for i in range(len(args))]
    kw = {k: (kwargs[k] if k in static_argnames else dyn_kwargs[k]) for k in kwargs}
    return full, kw


# ---------------------------------------------------------------------------------------------
class _Entry(NamedTuple):
    executable: Any  # runtime.executable.Executable
    out_tree: Any
    out_weak: tuple
    closed: ClosedIR
    name: str
    build_outputs: Callable  # the output leaves -> the output pytree (out_tree's unflattener)
    passes_inputs: bool      # some output is an input, returned as it came


_live_jitted: "weakref.WeakSet[Jitted]" = weakref.WeakSet()   # for clear_caches
# fn -> {options: (cache, fast, traces)}: every jit of one function with the same options
# shares its traces and compiled programs, as in JAX (``jit(f)(x)`` in a loop traces ``f``
# once; a global it read keeps its traced value until the signature changes, JAX's "impure
# function" sharp bit)
_shared: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _shared_caches(fn, options) -> tuple:
    """The (cache, fast, traces) dicts of ``fn`` compiled with ``options``; fresh ones if
    ``fn`` cannot be a weak dictionary key (no weak references, unhashable)."""
    try:
        return _shared.setdefault(fn, {}).setdefault(options, ({}, {}, {}))
    except TypeError:
        return {}, {}, {}


class Jitted:
    """A function compiled once per input signature."""

    def __init__(self, fn, static_argnums=(), static_argnames=(), donate_argnums=(),
                 backend=None, dynamic=None):
        _live_jitted.add(self)
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._name = getattr(fn, "__name__", "fn")   # a functools.partial has none
        self._static_argnums, self._static_argnames = normalize_static(
            fn, static_argnums, static_argnames, donate_argnums)
        self._dynamic = None if dynamic is None else DynamicShapes(fn, dynamic,
                                                                    self._static_argnums)
        self._donate_argnums = index_tuple("donate_argnums", donate_argnums)
        self._backend = backend
        # full signature -> _Entry (and sharded callables); fast_arguments key -> _Entry;
        # (signature, bound axes) -> Traced (see jit_nested.py)
        options = (self._static_argnums, self._static_argnames, self._donate_argnums, backend)
        self._cache, self._fast, self._traces = ({}, {}, {}) if dynamic is not None \
            else _shared_caches(fn, options)
        self._lock = threading.Lock()
        self._last_signature = None

    def __get__(self, obj, objtype=None):  # jit on a method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if tracing():  # under an outer trace: its cached trace replayed (jit_nested.py)
            return self._call_nested(args, kwargs)
        if jit_disabled():  # jax_disable_jit: run op by op
            return self._fn(*args, **kwargs)
        if transfers.guarded():   # jax_transfer_guard: host arguments are transfers
            self._check_transfers(args, kwargs)
        try:   # the hot path: one walk, one lookup (see eval/fast_arguments.py)
            key, values = fast_arguments(args, kwargs, self._static_argnums,
                                         self._static_argnames)
            key = (x64_enabled(), key)
            entry = self._fast.get(key)
        except Exception:   # no fast key: the full path decides (and raises the errors)
            key = entry = None
        if entry is not None:
            out = _run(entry, values)
        else:
            out = self._call_full(key, args, kwargs)
        if _NANS.active or _INFS.active:   # jax_debug_nans / jax_debug_infs
            self._check_outputs(out, args, kwargs)
        return out

    def _check_outputs(self, out, args, kwargs):
        """With ``jax_debug_nans``/``jax_debug_infs``: if an output holds a NaN (inf), run
        the function again op by op, whose first invalid operation raises naming itself (as
        JAX, which prints where ptojax logs a warning on ``ptojax.jit``)."""
        kind = invalid_kind(tree_flatten(out)[0])
        if kind is None:
            return
        log.warning("invalid %s value encountered in the output of `%s` (jit); running it "
                    "op by op to find the operation", kind, self._name)
        args, kwargs = self._numpy_leaves_as_arrays(args, kwargs)
        try:
            self._fn(*args, **kwargs)
        except (FloatingPointError, ZeroDivisionError) as e:
            raise e from None
        raise invalid_value_error(
            kind, f"jit({self._name}); jax_debug_nans/jax_debug_infs ran the function op by "
            f"op (as without jit) to find the operation, but op by op it produced no "
            f"invalid value: jit's optimizations produced it, or it is a NaN/inf input or "
            f"constant returned as it is", user_frame())

    def _call_nested(self, args, kwargs):
        """A call under an outer trace: the trace of its signature replayed into it; inlined
        (its Python run again) with dynamic shapes, sharded arguments or jit disabled."""
        if self._dynamic is None and not jit_disabled():
            signature, leaves = self._signature(args, kwargs)
            if mesh_of_sharded(leaves) is None:
                return replay(cached_trace(self._traces, signature,
                                           lambda: self._trace(args, kwargs, nested=True)),
                              leaves)
        args, kwargs = self._numpy_leaves_as_arrays(args, kwargs)
        with inlined_jit(self._name):
            return self._fn(*args, **kwargs)

    def _trace(self, args, kwargs, nested=False) -> NestedTrace:
        """This function traced on ``args``: abstract inside even under a concrete outer
        trace (``nested``)."""
        if NO_TRACING.get():   # jax_no_tracing
            raise NoTracingError(f"re-tracing function {self._name} at "
                                 f"{_definition_site(self._fn)} for `jit`, but 'no_tracing' "
                                 f"is set", user_frame())

        def trace():
            return trace_to_ir(self._fn, args, kwargs, self._static_argnums,
                               self._static_argnames, dynamic=self._dynamic)
        if nested:
            return trace_nested(trace, self._name)
        closed, _, out_tree = trace()
        return NestedTrace(closed, out_tree)

    def _check_transfers(self, args, kwargs):
        """Each host value (numpy, Python scalar) among the non-static arguments is an
        implicit host-to-device transfer, as JAX counts it."""
        dyn_args, dyn_kwargs, _ = split_static(None, args, kwargs, self._static_argnums,
                                                self._static_argnames)
        transfers.check_host_leaves(tree_flatten((tuple(dyn_args), dyn_kwargs))[0])

    def _numpy_leaves_as_arrays(self, args, kwargs):
        """An inlined call's numpy leaves as ptojax Arrays (of the dtype jit would trace them
        at), so the function sees arrays, as under jit; static arguments stay as given."""
        def convert(tree):
            return tree_map(lambda x: Array(np.asarray(x, leaf_type(x).dtype))
                            if isinstance(x, (np.ndarray, np.generic)) else x, tree)
        args = tuple(a if i in self._static_argnums else convert(a) for i, a in enumerate(args))
        kwargs = {k: v if k in self._static_argnames else convert(v) for k, v in kwargs.items()}
        return args, kwargs

    def _call_full(self, key, args, kwargs):
        """A fast-path miss: the full signature, compiling on a miss of that too."""
        signature, leaves = self._signature(args, kwargs)
        mesh = mesh_of_sharded(leaves)
        if mesh is not None:  # sharded arguments: partition with pto.shard
            return self._partitioned(signature, mesh, leaves, args, kwargs)(*leaves)
        entry = self._cache.get(signature)
        if entry is None:
            entry = self._compile(signature, args, kwargs)
        if key is not None:
            self._fast[key] = _narrowing(entry) if _narrows(leaves) else entry
        return _run(entry, [leaf_value(x) for x in leaves])

    def _signature(self, args, kwargs):
        dyn_args, dyn_kwargs, statics = split_static(None, args, kwargs,
                                                      self._static_argnums,
                                                      self._static_argnames)
        pairs, in_tree = tree_flatten_with_path((tuple(dyn_args), dyn_kwargs))
        in_types = tuple(leaf_type(x, p) for p, x in pairs)
        if self._dynamic is not None:
            in_types = self._dynamic.abstract(
                [p for p, _ in pairs], in_types,
                _dynamic_positions(len(args), self._static_argnums))
        floats = tuple(i for i, (_, x) in enumerate(pairs) if type(x) is float)
        return _Signature(in_tree, in_types, statics, floats, x64_enabled()), \
            [x for _, x in pairs]

    def _partitioned(self, signature, mesh, leaves, args, kwargs):
        """``pto.shard`` of this function over the flat leaves, split as they arrive."""
        key = ("shard", signature, mesh, tuple(spec_of_leaf(x) for x in leaves))
        sharded = self._cache.get(key)
        if sharded is None:
            def flat_fn(*flat):
                a, kw = signature.in_tree.unflatten(flat)
                a, kw = _merge_static(a, kw, args, kwargs, self._static_argnums,
                                      self._static_argnames)
                return self._fn(*a, **kw)
            flat_fn.__name__ = self._name
            sharded = self._cache[key] = partitioned(flat_fn, mesh, leaves)
        return sharded

    def _compile(self, signature, args, kwargs) -> _Entry:
        with self._lock:
            entry = self._cache.get(signature)
            if entry is not None:
                return entry
            if self._last_signature is not None:
                log.log(logging.WARNING if EXPLAIN_CACHE_MISSES.get() else logging.INFO,
                        "retracing %s: %s", self._name,
                        explain_retrace(self._last_signature, signature))
            if self._dynamic is None:   # a trace made under an outer trace serves too
                closed, out_tree = cached_trace(self._traces, signature,
                                                lambda: self._trace(args, kwargs))
            else:
                closed, out_tree = self._trace(args, kwargs)
            entry = _make_entry(closed, out_tree, self._backend, self._name)
            log.log(logging.WARNING if LOG_COMPILES.get() else logging.INFO,
                    "compiled %s for %s (%d compiled programs)", self._name,
                    ", ".join(map(str, signature.in_types)), self.cache_size() + 1)
            self._cache[signature] = entry
            self._last_signature = signature
            return entry

    def trace(self, *args, **kwargs) -> "Traced":
        """Trace on these arguments without lowering or compiling (``jax.stages.Traced``):
        ``.jaxpr`` (the IR), ``.out_info``, ``.args_info``, ``.lower()``."""
        closed, _, out_tree = trace_to_ir(self._fn, args, kwargs, self._static_argnums,
                                          self._static_argnames, dynamic=self._dynamic)
        signature = Signature(self._fn, args, kwargs, self._static_argnums,
                              self._static_argnames, self._donate_argnums)
        return Traced(closed, out_tree, self._name, self._backend, signature,
                      _concrete_leaves(args, kwargs, self._static_argnums,
                                       self._static_argnames))

    def lower(self, *args, target=None, **kwargs) -> "Lowered":
        """Trace without compiling; ``target`` (e.g. ``pto.targets.ascend910b``) is used for
        the tiled/PTO views (``.tile_ir``, ``.as_text("pto")``, ``.cost()``)."""
        return self.trace(*args, **kwargs).lower(target=target)

    def cache_size(self) -> int:
        return len({id(e) for e in self._cache.values()})

    def clear_cache(self):
        self._cache.clear()
        self._fast.clear()
        self._traces.clear()


class NoTracingError(PtoError, RuntimeError):
    """A ``jit`` function traced while ``jax_no_tracing`` is set (JAX raises RuntimeError)."""


def _definition_site(fn) -> str:
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "?"


def _concrete_leaves(args, kwargs, static_argnums, static_argnames) -> list:
    """The flat non-static arguments, each its value if concrete (an array or a Python
    number), else None (a ShapeDtypeStruct, a tracer)."""
    dyn_args, dyn_kwargs, _ = split_static(None, args, kwargs, static_argnums,
                                            static_argnames)
    leaves = tree_flatten((tuple(dyn_args), dyn_kwargs))[0]
    return [x if isinstance(x, (np.ndarray, np.generic, Array, int, float, bool)) and
            not isinstance(x, Tracer) else None for x in leaves]


def _make_entry(closed: ClosedIR, out_tree, backend, name="fn") -> _Entry:
    if ENABLE_CHECKS.get():   # jax_enable_checks
        verify(closed)
    optimized = optimize(closed)
    if ENABLE_CHECKS.get():
        verify(optimized)
    return _Entry(make_executable(optimized, backend), out_tree,
                  tuple(t.weak_type for t in closed.out_types), optimized, name,
                  unflattener(out_tree), bool(set(optimized.ir.invars) & set(optimized.ir.outvars)))


def _narrows(leaves) -> bool:
    """Whether a numpy argument is 64-bit without x64: ``fast_arguments`` passes numpy
    arguments as they come, so the fast-path entry of such a key narrows them first."""
    return not x64_enabled() and any(type(x) is np.ndarray and x.dtype in dtypes.WIDE
                                     for x in leaves)


class _NarrowingExecutable:
    """``executable`` run on its numpy arguments' canonical (32-bit) values."""

    def __init__(self, executable):
        self.executable = executable

    def run(self, *leaves):
        return self.executable.run(*(dtypes.canonical_value(x) if type(x) is np.ndarray
                                     else x for x in leaves))

    def __getattr__(self, name):
        return getattr(self.executable, name)


def _narrowing(entry: _Entry) -> _Entry:
    return entry._replace(executable=_NarrowingExecutable(entry.executable))


def _run(entry: _Entry, leaves):
    try:
        if profiler.active is None:
            outs = entry.executable.run(*leaves)
        else:
            start = time.perf_counter()
            outs = entry.executable.run(*leaves)
            nbytes = sum(getattr(x, "nbytes", 0) for x in (*leaves, *outs))
            profiler.record(entry.name, "jit", start, time.perf_counter() - start, nbytes)
    except PtoError as e:
        raise e.with_source(failed_equation_source(e.__traceback__) or user_frame())
    except Exception as e:  # numpy's errors at run time name the operation's line
        raise located(e, failed_equation_source(e.__traceback__) or user_frame(),
                      f"running `{entry.name}` (jit)")
    passes = entry.passes_inputs
    return entry.build_outputs([
        Array(_not_aliasing(o, leaves) if passes or getattr(o, "base", None) is not None
              else o, w) for o, w in zip(outs, entry.out_weak)])


def _not_aliasing(out, inputs):
    """``out``, copied if it is (a view of) one of the caller's numpy ``inputs``: an Array
    owns its buffer, and numpy inputs are passed to the executable uncopied."""
    if type(out) is np.ndarray and any(type(x) is np.ndarray and np.may_share_memory(out, x)
                                       for x in inputs):
        return out.copy()
    return out


def explain_retrace(old: _Signature, new: _Signature) -> str:
    if old.x64 != new.x64:
        return f"x64 mode (jax_enable_x64) changed from {old.x64} to {new.x64}"
    if old.statics != new.statics:
        return f"static arguments changed from {old.statics} to {new.statics}"
    if old.in_tree != new.in_tree:
        return f"the argument structure changed from {old.in_tree} to {new.in_tree}"
    if old.python_floats != new.python_floats:
        return f"the Python float arguments changed from positions {old.python_floats} " \
               f"to {new.python_floats}"
    paths = [p for p, _ in tree_flatten_with_path(new.in_tree.unflatten(new.in_types))[0]]
    for path, a, b in zip(paths, old.in_types, new.in_types):
        if a != b:
            where = describe_path(path)
            return f"{where} changed from {a}{' (weak)' if a.weak_type else ''} to " \
                   f"{b}{' (weak)' if b.weak_type else ''}"
    return "the signature changed"


def _out_info(closed: ClosedIR, out_tree):
    """The pytree of ``ShapeDtypeStruct`` of a traced function's outputs."""
    return out_tree.unflatten([ShapeDtypeStruct(v.type.shape, v.type.dtype, v.type.weak_type)
                               for v in closed.ir.outvars])


class _StageInfo:
    """What every stage tells of its arguments and results (JAX's stage attributes), from
    its ``_signature`` (``aot_signature.Signature``), ``out_tree`` and IR."""

    in_tree = property(lambda self: self._signature.in_tree if self._signature else None)
    in_avals = property(lambda self: self._signature.in_avals())
    args_info = property(lambda self: self._signature.args_info())
    donate_argnums = property(lambda self: self._signature.donate_argnums)
    out_info = property(lambda self: _out_info(self.ir, self.out_tree))


class Traced(_StageInfo):
    """A function traced for one signature, not yet lowered (``jit(f).trace(...)``, as
    ``jax.stages.Traced``): ``.jaxpr`` (ptojax's IR), ``.out_info``, ``.args_info``,
    ``.lower()``.

    Example:
      >>> traced = pto.jit(lambda x: pnp.sin(x) * 2).trace(pnp.ones(3))
      >>> [e.primitive.name for e in traced.jaxpr.eqns], traced.out_info
      (['sin', 'mul'], ShapeDtypeStruct(shape=(3,), dtype=float32))
    """

    def __init__(self, closed: ClosedIR, out_tree, name, backend, signature, values):
        self.jaxpr = self.ir = closed
        self.out_tree = out_tree
        self.fun_name = name
        self._backend = backend
        self._signature = signature
        self._values = values

    @property
    def out_avals(self):
        """The pytree of the outputs' types."""
        return self.out_tree.unflatten([v.type for v in self.ir.ir.outvars])

    def lower(self, *, target=None) -> "Lowered":
        return Lowered(self.ir, self.out_tree, self._backend, target, self._signature,
                       self._values)


class Lowered(_StageInfo):
    """A traced function before compilation: ``.ir``, ``.tile_ir``, ``.as_text()``,
    ``.cost()``, ``.unfused()``, ``.compile()``. Tiling and PTO lowering are delegated to
    ``ptojax.lower.lowered``; the PTO output is untested on Ascend hardware.

    Example:
      >>> lowered = pto.jit(lambda x: x @ x).lower(pnp.ones((4, 4)))
      >>> lowered.cost_analysis(), lowered.args_info
      ({'flops': 128.0}, ((ArgInfo(_aval=f32[4,4], donated=False),), {}))
    """

    def __init__(self, closed: ClosedIR, out_tree, backend=None, target=None,
                 signature=None, values=None):
        self.ir = closed
        self.out_tree = out_tree
        self._values = values      # the call's concrete argument leaves (None: abstract)
        self._backend = backend
        self.target = target
        self._signature = signature

    def cost_analysis(self) -> dict:
        """``{"flops": n}``: the floating-point operations of the program as ptojax counts
        them (``pto.tools.count_flops``; loop bodies once per known trip), as JAX's
        ``cost_analysis`` reports its compiler's estimate."""
        return {"flops": float(count_flops(self.ir))}

    @functools.cached_property
    def optimized_ir(self) -> ClosedIR:
        return optimize(self.ir)

    @functools.cached_property
    def _tiling(self):
        return TileLowering(self.ir, self.target)

    @property
    def tile_ir(self) -> ClosedIR:
        """The tiled IR (the function's own kernels if it is pto.tile-d, else auto-tiled)."""
        return self._tiling.ir

    def as_text(self, dialect: str = "ir") -> str:
        if dialect == "ir":
            return str(self.ir)
        if dialect == "optimized":
            return str(self.optimized_ir)
        if dialect in ("pto", "pto-cpp", "fused-cpp"):
            return self._tiling.as_text(dialect)
        raise ValueError(f"unknown dialect {dialect!r}; available: 'ir', 'optimized', "
                         f"'pto', 'pto-cpp', 'fused-cpp'")

    def cost(self, trip_count=None):
        """Per-kernel cycle/time estimates on the target (a model, not a measurement).
        A pto.kernel loop whose bounds come from a scalar operand runs as many steps as the
        arguments ``lower`` was called with say; ``trip_count`` is the number of steps
        assumed for such loops when those arguments were abstract."""
        return self._tiling.cost(self._values, trip_count)

    def unfused(self):
        """The tensor-level equations left between tile kernels, with reasons."""
        return self._tiling.unfused()

    def compile(self) -> "Compiled":
        return Compiled(_make_entry(self.ir, self.out_tree, self._backend), self._signature)


class Compiled(_StageInfo):
    """A lowered function compiled for one signature (``jit(f).lower(...).compile()``): it
    takes the non-static arguments only, of the lowered shapes and dtypes (else JAX's
    ``TypeError``), and cannot be transformed (see ``ptojax.aot_signature``).

    Example:
      >>> compiled = pto.jit(lambda x, n: x * n, static_argnums=1).lower(pnp.ones(2), 3).compile()
      >>> compiled(pnp.arange(2.0))
      Array([0., 3.], dtype=float32)
    """

    def __init__(self, entry: _Entry, signature=None):
        self._entry = entry
        self._signature = signature
        self.ir = entry.closed
        self.out_tree = entry.out_tree

    def __call__(self, *args, **kwargs):
        if self._signature is None:
            leaves, _ = tree_flatten((args, kwargs))
        else:
            leaves = self._signature.check(args, kwargs)
        return _run(self._entry, [leaf_value(x) for x in leaves])

    def call(self, *args, **kwargs):
        """Call the compiled function (as calling it)."""
        return self(*args, **kwargs)

    def cost_analysis(self) -> dict:
        """``{"flops": n}`` of the optimized program (see ``Lowered.cost_analysis``)."""
        return {"flops": float(count_flops(self.ir))}

    def as_text(self) -> str:
        return self._entry.executable.source


def jit(fn: Callable = None, *, static_argnums=(), static_argnames=(), donate_argnums=(),
        backend=None, dynamic=None, in_shardings=None, out_shardings=None):
    """Compile ``fn``; traced once per (structure, shapes, dtypes, weak types, statics).

    ``dynamic={"x": {0: pto.Dim("seq", 1, 4096)}}`` makes axis 0 of every array in argument
    ``x`` symbolic: one trace and one compiled program serve every size in the range (see
    ``ptojax.eval.dynamic_shapes``). ``in_shardings``/``out_shardings`` place the positional
    arguments and the results (see ``ptojax.jit_shardings``)."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, backend=backend,
                                 dynamic=dynamic, in_shardings=in_shardings,
                                 out_shardings=out_shardings)
    jitted = Jitted(fn, static_argnums, static_argnames, donate_argnums, backend, dynamic)
    if in_shardings is None and out_shardings is None:
        return jitted
    return PlacedJit(jitted, in_shardings, out_shardings, jitted._static_argnums)


def clear_caches():
    """Drop every ``jit``-compiled program of this process (each ``jit`` function compiles
    again on its next call) and the cached result types of eager operations, as JAX's
    ``jax.clear_caches``. The on-disk kernel cache is kept."""
    for jitted in list(_live_jitted):
        jitted.clear_cache()
    for per_function in list(_shared.values()):   # also those of jit objects now gone
        for caches in per_function.values():
            for cache in caches:
                cache.clear()
    clear_eager_caches()


def make_ir(fn: Callable, static_argnums=(), static_argnames=()):
    """``make_ir(fn)(*args)`` → the ClosedIR ``fn`` traces to on those arguments."""
    nums, names = normalize_static(fn, static_argnums, static_argnames)

    @functools.wraps(fn)
    def make(*args, **kwargs):
        closed, _, _ = trace_to_ir(fn, args, kwargs, nums, names)
        return closed
    return make


def eval_shape(fun: Callable, *args, **kwargs):
    """The shapes and dtypes ``fun(*args, **kwargs)`` would return, as a pytree of
    ``ShapeDtypeStruct`` (with JAX's weak types), found by tracing alone: nothing is computed
    or compiled. ``args`` may hold arrays, scalars or ``ShapeDtypeStruct``."""
    closed, _, out_tree = trace_to_ir(fun, args, kwargs,
                                      name=getattr(fun, "__name__", "eval_shape"))
    outs = [ShapeDtypeStruct(v.type.shape, v.type.dtype, v.type.weak_type)
            for v in closed.ir.outvars]
    return out_tree.unflatten(outs)


def make_jaxpr(fn: Callable, static_argnums=(), return_shape: bool = False):
    """JAX's name for ``make_ir``: ``make_jaxpr(fn)(*args)`` → the ClosedIR ``fn`` traces to
    (ptojax's IR, printed in its own form rather than as a jaxpr; JAX's field names
    ``.jaxpr``, ``.eqns[i].primitive``, ``.in_avals``, ... are there too). With
    ``return_shape=True``, also the output's pytree of ``ShapeDtypeStruct``."""
    if not return_shape:
        return make_ir(fn, static_argnums)
    nums, names = normalize_static(fn, static_argnums, ())

    @functools.wraps(fn)
    def make(*args, **kwargs):
        closed, _, out_tree = trace_to_ir(fn, args, kwargs, nums, names)
        shapes = [ShapeDtypeStruct(v.type.shape, v.type.dtype, v.type.weak_type)
                  for v in closed.ir.outvars]
        return closed, out_tree.unflatten(shapes)
    return make


_add_examples(globals(), """
jit:
    >>> f = pto.jit(lambda x: pnp.tanh(x) * 2.0)
    >>> f(pnp.array([0.0, 1.0]))
    Array([0.       , 1.5231884], dtype=float32)
make_ir:
    >>> pto.make_ir(lambda x: x * 2.0 + 1.0)(pnp.ones(3))
    { lambda ; a:f32[3]. let
        b:f32[3] = mul a 2.0:f32[]
        c:f32[3] = add b 1.0:f32[]
      in (c) }
clear_caches:
    >>> f = pto.jit(lambda x: x + 1)
    >>> _ = f(1.0); pto.clear_caches(); f.cache_size()
    0
eval_shape:
    >>> pto.eval_shape(lambda x: {"y": x.sum(axis=0)}, pto.ShapeDtypeStruct((2, 3), "float32"))
    {'y': ShapeDtypeStruct(shape=(3,), dtype=float32)}
make_jaxpr:
    >>> pto.make_jaxpr(lambda x: pnp.sin(x) * 2.0)(1.0).ir.outvars
    (Var(f32[]),)
""")
