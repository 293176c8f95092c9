"""``pto.tools.check_numerics(fn, *args, reference="interpreter" | "jax")``: run ``fn``'s
program after every stage of the pipeline and find the first equation whose result diverges.
``pto.tools.check_nonfinite(fn, *args)``: run it once and report where infinities (overflow)
and NaNs first appear, equation by equation, with the user's lines.

Stages, in order:

- **trace** — ``fn``'s traced IR run equation by equation through the primitives' numpy
  impls. When ``fn`` is built by transforms that take its own arguments (``grad``,
  ``value_and_grad``, ``jacfwd``, ``jacrev``, ``hessian``, ``checkpoint``; ``jit`` is looked
  through), the user's function and the program after each transform are stages of their
  own, innermost first (transform names come from Python 3.11's ``co_qualname``).
- **optimize** — the IR ``jit`` runs (constant folding, CSE, DCE, simplification).
- **tile** — the IR tiled for ``target`` (default ``targets.host_jit``, what ``jit``'s cpu
  backend runs; pass ``targets.ascend910b`` to check the Ascend tiling) and ``tile_config``,
  each ``tile_kernel`` run by the numpy tile interpreter.
- **host kernels** — the same tiled IR with its kernels compiled for the CPU as ``jit``
  builds them (fused loop nests unless ``$PTOJAX_HOST_KERNELS`` says ``pto``; skipped when
  there is no C++ compiler or no kernel).

The reference is the traced IR evaluated equation by equation by the numpy impls, so with
``reference="interpreter"`` the trace stages *are* the reference. With ``"jax"`` each trace
stage is first checked equation by equation against ``jax.numpy``/``jax.lax`` equivalents
(``tools/jax_reference.py``; JAX is imported only then); the later stages are still compared
with the numpy impls, which that check has just vouched for, so a later stage is charged only
for what it changes — not for the last-bit differences between numpy's and XLA's math
functions, which cancellation inside a fused kernel can amplify.

A stage is compared on every value it shares with the reference — the same IR variable:
passes keep the variables of the equations they keep, and a kernel's outputs are the
variables of the values it computes — in the stage's order, then on the outputs. The
reference replays each equation on the stage's own values of its inputs, so a divergence
is reported where a stage introduces it, not at everything downstream.

A value diverges when its error exceeds its dtype's tolerance (``TOLERANCES``: relative
1e-5 for float32, 1e-3 for float16, 1e-2 for bfloat16; integers and bools must be equal).
The error of an element is ``|actual - expected| / max(|expected|, rms(expected))``: relative,
except that values smaller than their array's root-mean-square (such as cancellation
leftovers) are measured against that scale. NaN and infinities must match exactly.
"""
from __future__ import annotations

import html
import math
import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ptojax.ir.core import ClosedIR, Var, sub_irs
from ptojax.ir.core import print_order_namer
from ptojax.ir.core import print_eqn
from ptojax.targets import host_jit
from ptojax.jit import Jitted
from ptojax.jit import make_ir
from ptojax.lower.host.compiler import compiler_or_none
from ptojax.lower.host.backend import CpuBackend
from ptojax.lower.host.program import HostProgram, kernel_eqns
from ptojax.optimize import optimize
from ptojax.tile.api import tile_ir
from ptojax.tile.kernel import tile_kernel_p
from ptojax.eval.ieee import quietly
from ptojax.eval.leaves import leaf_value
from ptojax.targets import get_target
from ptojax.pytree import tree_flatten
from ptojax.tools.jax_reference import JaxEquations
from ptojax.public import add_examples as _add_examples

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOLERANCES = {"float64": 1e-12, "float32": 1e-5, "float16": 1e-3, "bfloat16": 1e-2,
              "float8_e4m3fn": 0.125, "float8_e5m2": 0.25, "complex128": 1e-12,
              "complex64": 1e-5}

REFERENCE_NAMES = {"interpreter": "the numpy interpreter", "jax": "JAX"}

# transforms whose function takes the same arguments as the function they transform
SAME_ARGUMENTS = frozenset({"grad", "value_and_grad", "jacfwd", "jacrev", "checkpoint"})


def tolerance(dtype) -> float:
    """The largest relative error accepted for values of ``dtype`` (0: must be equal)."""
    return TOLERANCES.get(np.dtype(dtype).name, 0.0)


def relative_error(actual, expected) -> float:
    """The largest element error of ``actual`` against ``expected`` (see the module doc);
    0 or inf for arrays that are not floating point."""
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape or a.dtype != e.dtype:
        return math.inf
    if np.dtype(e.dtype).name not in TOLERANCES:
        return 0.0 if np.array_equal(a, e) else math.inf
    wide = np.complex128 if e.dtype.kind == "c" else np.float64
    a, e = a.astype(wide), e.astype(wide)
    if a.size == 0:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        if (nan_a != nan_e).any():
            return math.inf
        diff = np.where((a == e) | nan_a, 0.0, np.abs(a - e))
        if np.isinf(diff).any():
            return math.inf
        finite = e[np.isfinite(e)]
        scale = np.sqrt(np.mean(np.abs(finite) ** 2)) if finite.size else 0.0
        magnitude = np.maximum(np.where(np.isfinite(e), np.abs(e), 0.0), scale)
        ratio = diff / np.maximum(magnitude, np.finfo(np.float64).tiny)
        return float(np.max(np.where(diff == 0, 0.0, ratio)))


# --- results ---------------------------------------------------------------------------------
@dataclass
class Divergence:
    """The first value of a stage that differs from the reference beyond tolerance."""
    stage: str
    equation: str                 # the reference IR's equation computing the value
    source: Optional[object]      # its user file:line (SourceInfo)
    error: float
    tolerance: float
    dtype: str
    kernel: Optional[str] = None  # the stage's tile kernel computing it, if any

    def __str__(self):
        where = f" at {self.source.short()}" if self.source is not None else ""
        kernel = f" (in kernel {self.kernel})" if self.kernel else ""
        return (f"{self.stage}: `{self.equation}`{where}{kernel}: error {self.error:.3g} > "
                f"{self.tolerance:g} ({self.dtype})")


@dataclass
class StageResult:
    """One stage: ``status`` is "reference", "ok", "diverged", "skipped" or "error"."""
    name: str
    equations: int
    status: str
    compared: int = 0
    max_error: float = 0.0
    divergence: Optional[Divergence] = None
    note: str = ""


@dataclass
class NumericsReport:
    """What ``check_numerics`` found; prints as a table (``str``) and as HTML in Jupyter."""
    function: str
    reference: str
    stages: list = field(default_factory=list)

    @property
    def first_divergence(self) -> Optional[Divergence]:
        return next((s.divergence for s in self.stages if s.divergence is not None), None)

    @property
    def ok(self) -> bool:
        return all(s.status in ("reference", "ok", "skipped") for s in self.stages)

    def _verdict(self) -> str:
        failed = next((s for s in self.stages if s.status == "error"), None)
        if self.first_divergence is not None:
            return f"first divergence: {self.first_divergence}"
        if failed is not None:
            return f"stage {failed.name!r} failed: {failed.note}"
        return "every stage matches the reference within tolerance"

    def _cells(self, s: StageResult) -> tuple:
        compared = str(s.compared) if s.status in ("ok", "diverged") else "-"
        error = f"{s.max_error:.2e}" if s.status in ("ok", "diverged") else "-"
        status = s.status + (f": {s.note}" if s.note else "")
        return s.name, str(s.equations), compared, error, status

    HEAD = ("stage", "eqns", "compared", "max error", "status")

    def __str__(self):
        rows = [self.HEAD] + [self._cells(s) for s in self.stages]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [f"check_numerics({self.function}) against {self.reference}"]
        for r in rows:
            lines.append("  ".join([r[0].ljust(widths[0])]
                                   + [c.rjust(w) for c, w in zip(r[1:4], widths[1:])]
                                   + [r[4]]))
        lines.append(self._verdict())
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        head = "".join(f"<th>{h}</th>" for h in self.HEAD)
        colors = {"diverged": "#cf222e", "error": "#cf222e", "ok": "#1a7f37"}
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(s)[:4])
            + f"<td style='color:{colors.get(s.status, '#57606a')}'>"
              f"{html.escape(self._cells(s)[4])}</td></tr>" for s in self.stages)
        return (f"<p><b>check_numerics({html.escape(self.function)})</b> against "
                f"{self.reference}</p><table><tr>{head}</tr>{body}</table>"
                f"<p>{html.escape(self._verdict())}</p>")


# --- running a program equation by equation ---------------------------------------------------
@quietly
def run_equation(eqn, inputs) -> list:
    """The outputs of one equation computed by its primitive's numpy impl."""
    out = eqn.prim.impl(*inputs, **eqn.params)
    return list(out) if eqn.prim.multiple_results else [out]


def interpret(closed: ClosedIR, args, launchers=None) -> dict:
    """Var -> numpy value of every input and equation result of ``closed`` run equation by
    equation through the numpy impls; ``launchers`` (equation -> function returning the list
    of outputs) replace some equations, e.g. compiled host kernels."""
    ir = closed.ir
    env = {v: np.asarray(c) for v, c in zip(ir.constvars, closed.consts)}
    env.update(zip(ir.invars, args))
    launchers = launchers or {}
    for eqn in ir.eqns:
        inputs = [env[a] if type(a) is Var else a.value for a in eqn.inputs]
        launcher = launchers.get(eqn)
        outs = launcher(*inputs) if launcher is not None else run_equation(eqn, inputs)
        env.update((v, np.asarray(o)) for v, o in zip(eqn.outputs, outs))
    return env


def _outputs(closed: ClosedIR, values: dict) -> list:
    return [values[v] if type(v) is Var else np.asarray(v.value, v.type.dtype)
            for v in closed.ir.outvars]


def _eqn_text(eqn, namer) -> str:
    """The equation as printed in its IR; one line for equations holding sub-IRs."""
    if not sub_irs(eqn.params):
        return print_eqn(eqn, namer)
    outs = " ".join(namer.decl(v) for v in eqn.outputs)
    name = eqn.params.get("name")
    ins = " ".join(namer(a) for a in eqn.inputs)
    return f"{outs} = {eqn.prim.name}{f'[name={name}]' if name else ''} {ins}"


class Reference:
    """A traced IR and the reference evaluator of its equations (``evaluate(eqn, inputs) ->
    outputs``: numpy impls or JAX)."""

    def __init__(self, closed: ClosedIR, args, evaluate):
        self.closed = closed
        self.args = args
        self.evaluate = evaluate
        self.producers = {v: e for e in closed.ir.eqns for v in e.outputs}
        self.namer = print_order_namer(closed.ir)

    def replay(self, seeds: dict) -> dict:
        """The reference values, each equation evaluated on the stage's values of its inputs
        where the stage has them (``seeds``), so that a stage is charged only for the error
        it adds at each value, not again for everything downstream of an earlier one."""
        ir = self.closed.ir
        env = {v: np.asarray(c) for v, c in zip(ir.constvars, self.closed.consts)}
        env.update(zip(ir.invars, self.args))
        for eqn in ir.eqns:
            inputs = [(seeds[a] if a in seeds else env[a]) if type(a) is Var else a.value
                      for a in eqn.inputs]
            env.update((v, np.asarray(o)) for v, o in zip(eqn.outputs,
                                                          self.evaluate(eqn, inputs)))
        return env

    def origin(self, var):
        """(text, source) of the reference equation computing ``var``, or None."""
        eqn = self.producers.get(var)
        if eqn is None:
            return None
        return _eqn_text(eqn, self.namer), eqn.source


def compare(name: str, closed: ClosedIR, values: dict, reference: Reference) -> StageResult:
    """Compare a stage's values with the reference (shared variables, then the outputs)."""
    result = StageResult(name, len(closed.ir.eqns), "ok")
    expected = reference.replay(values)
    checks = [(v, eqn, values[v], expected[v])
              for eqn in closed.ir.eqns for v in eqn.outputs if v in expected]
    producers = {v: e for e in closed.ir.eqns for v in e.outputs}
    for v, ref_out, ref_value in zip(closed.ir.outvars, reference.closed.ir.outvars,
                                     _outputs(reference.closed, expected)):
        actual = values[v] if type(v) is Var else np.asarray(v.value, v.type.dtype)
        checks.append((ref_out, producers.get(v), actual, ref_value))
    namer = print_order_namer(closed.ir)
    for var, eqn, actual, wanted in checks:
        error = relative_error(actual, wanted)
        result.compared += 1
        result.max_error = max(result.max_error, error)
        tol = tolerance(np.asarray(wanted).dtype)
        if error > tol and result.divergence is None:
            result.status = "diverged"
            result.divergence = _divergence(name, var, eqn, namer, reference, error, tol,
                                            np.asarray(wanted).dtype)
    return result


def _divergence(stage, var, eqn, namer, reference, error, tol, dtype) -> Divergence:
    origin = reference.origin(var) if type(var) is Var else None
    if origin is None:
        text, source = (_eqn_text(eqn, namer), eqn.source) if eqn is not None else \
            ("an output passed through unchanged", None)
    else:
        text, source = origin
    kernel = eqn.params.get("name") if eqn is not None and eqn.prim is tile_kernel_p \
        else None
    return Divergence(stage, text, source, error, tol, np.dtype(dtype).name, kernel)


# --- the stages --------------------------------------------------------------------------------
def _transform_name(fn) -> Optional[str]:
    """'grad' for the function ``pto.grad`` returns, etc.; None for other functions."""
    code = getattr(fn, "__code__", None)
    qualname = getattr(code, "co_qualname", "")
    if code is None or not code.co_filename.startswith(_PACKAGE_DIR):
        return None
    return qualname.split(".<locals>.")[0] if ".<locals>." in qualname else None


def transform_layers(fn) -> list:
    """[(stage name, function)]: the user's function, then each argument-preserving transform
    applied to it, ending with ``fn`` itself (``jit`` is looked through)."""
    layers = []
    while True:
        if isinstance(fn, Jitted):
            fn = fn.__wrapped__
            continue
        name = _transform_name(fn)
        layers.append((name or f"trace {getattr(fn, '__name__', 'fn')}", fn))
        if name not in SAME_ARGUMENTS:
            return layers[::-1]
        fn = fn.__wrapped__


def _trace_stage(name, fn, args, leaves, jax_equations):
    """(StageResult, Reference) of one traced IR; against JAX when ``jax_equations``."""
    closed = make_ir(fn)(*args)
    if jax_equations is None:
        return (StageResult(name, len(closed.ir.eqns), "reference"),
                Reference(closed, leaves, run_equation))
    reference = Reference(closed, leaves, jax_equations.evaluate)
    already = set(jax_equations.fallbacks)
    result = compare(name, closed, interpret(closed, leaves), reference)
    skipped = jax_equations.fallbacks - already
    if skipped:
        result.note = f"not checked (no JAX equivalent): {', '.join(sorted(skipped))}"
    return result, reference


def _pipeline_stages(reference: Reference, leaves, target, tile_config) -> list:
    results = []
    optimized = optimize(reference.closed)
    results.append(compare("optimize", optimized, interpret(optimized, leaves), reference))
    tile_stage = f"tile ({target.name})"
    try:
        tiled = tile_ir(reference.closed, tile_config, target).ir
    except Exception as e:  # a failing stage is a finding, not a crash of the checker
        return results + [StageResult(tile_stage, 0, "error", note=f"{type(e).__name__}: {e}")]
    results.append(compare(tile_stage, tiled, interpret(tiled, leaves), reference))
    compiler, why = compiler_or_none()
    if compiler is None or not kernel_eqns(tiled):
        note = why if compiler is None else "no tile kernels to compile"
        return results + [StageResult("host kernels", len(tiled.ir.eqns), "skipped",
                                      note=note)]
    try:
        program = HostProgram(tiled, target, kernels=CpuBackend().kernel_build())
        values = interpret(tiled, leaves, program.launchers)
    except Exception as e:
        return results + [StageResult("host kernels", len(tiled.ir.eqns), "error",
                                      note=f"{type(e).__name__}: {e}")]
    return results + [compare("host kernels", tiled, values, reference)]


# --- where infinities and NaNs first appear -----------------------------------------------------
@dataclass
class NonfiniteEvent:
    """An equation that makes infinities or NaNs out of values that had none there."""
    equation: str
    source: Optional[object]      # the user's file:line (SourceInfo)
    dtype: str
    infs: int                     # new infinities (overflow, division by zero, log(0))
    nans: int                     # new NaNs (inf - inf, 0/0, sqrt of a negative, ...)
    size: int

    @property
    def kind(self) -> str:
        return " and ".join(k for k, n in (("overflow", self.infs), ("NaN", self.nans)) if n)

    def __str__(self):
        where = f" at {self.source.short()}" if self.source is not None else ""
        counts = ", ".join(f"{n} new {w}" for w, n in (("inf", self.infs), ("NaN", self.nans))
                           if n)
        return f"{self.kind}: `{self.equation}`{where}: {counts} of {self.size} ({self.dtype})"


@dataclass
class NonfiniteReport:
    """What ``check_nonfinite`` found: every equation that introduces infinities or NaNs,
    in program order (``first`` is where they first appear)."""
    function: str
    equations: int
    events: list = field(default_factory=list)

    @property
    def first(self) -> Optional[NonfiniteEvent]:
        return self.events[0] if self.events else None

    @property
    def ok(self) -> bool:
        return not self.events

    def __str__(self):
        head = f"check_nonfinite({self.function}): {self.equations} equation" + \
            ("s" if self.equations != 1 else "")
        if self.ok:
            return f"{head}; no equation produces an inf or a NaN"
        lines = [f"{head}; {len(self.events)} introduce infinities or NaNs, first:",
                 f"  {self.events[0]}"]
        lines += [f"  then {e}" for e in self.events[1:]]
        return "\n".join(lines)

    __repr__ = __str__


def _nonfinite_masks(value):
    """(inf mask, NaN mask) of a floating-point value; None for other dtypes."""
    a = np.asarray(value)
    if np.dtype(a.dtype).name not in TOLERANCES:
        return None
    with np.errstate(invalid="ignore"):
        a = a.astype(np.float64)
    return np.isinf(a), np.isnan(a)


def _introduced(eqn, inputs, outputs):
    """(new infs, new NaNs, size, dtype) of ``eqn``'s outputs that its inputs do not explain:
    elementwise, per element (an inf or NaN input at the same place explains it); otherwise
    any non-finite input explains everything."""
    in_masks = [_nonfinite_masks(v) for v in inputs]
    in_masks = [m for m in in_masks if m is not None]
    new_infs = new_nans = size = 0
    dtype = None
    for out in outputs:
        masks = _nonfinite_masks(out)
        if masks is None or not (masks[0].any() or masks[1].any()):
            continue
        infs, nans = masks
        if eqn.prim.elementwise:
            seen_inf = np.zeros(infs.shape, bool)
            seen_nan = np.zeros(infs.shape, bool)
            for i_inf, i_nan in in_masks:
                seen_inf |= np.broadcast_to(i_inf, infs.shape)
                seen_nan |= np.broadcast_to(i_nan, infs.shape)
            infs = infs & ~seen_inf & ~seen_nan
            nans = nans & ~seen_nan & ~seen_inf
        elif any(m[0].any() or m[1].any() for m in in_masks):
            continue
        new_infs += int(infs.sum())
        new_nans += int(nans.sum())
        size += infs.size
        dtype = dtype or np.asarray(out).dtype.name
    return new_infs, new_nans, size, dtype


def check_nonfinite(fn, *args) -> NonfiniteReport:
    """Run ``fn(*args)``'s traced IR equation by equation (the numpy impls) and report every
    equation that introduces an inf (overflow, division by zero) or a NaN, with the user's
    line, in program order. Equations holding sub-IRs (loops, conds) are reported as one."""
    closed = make_ir(fn)(*args)
    leaves = [leaf_value(x) for x in tree_flatten((tuple(args), {}))[0]]
    ir = closed.ir
    env = {v: np.asarray(c) for v, c in zip(ir.constvars, closed.consts)}
    env.update(zip(ir.invars, leaves))
    namer = print_order_namer(ir)
    report = NonfiniteReport(getattr(fn, "__name__", "fn"), len(ir.eqns))
    for eqn in ir.eqns:
        inputs = [env[a] if type(a) is Var else a.value for a in eqn.inputs]
        outputs = [np.asarray(o) for o in run_equation(eqn, inputs)]
        env.update(zip(eqn.outputs, outputs))
        infs, nans, size, dtype = _introduced(eqn, inputs, outputs)
        if infs or nans:
            report.events.append(NonfiniteEvent(_eqn_text(eqn, namer), eqn.source, dtype,
                                                infs, nans, size))
    return report


def check_numerics(fn, *args, reference: str = "interpreter", target=host_jit,
                   tile_config=None) -> NumericsReport:
    """Run ``fn(*args)`` after each pipeline stage; report the first equation whose result
    diverges from ``reference`` ("interpreter" or "jax") beyond its dtype's tolerance."""
    if reference not in REFERENCE_NAMES:
        raise ValueError(f"reference must be 'interpreter' or 'jax', got {reference!r}")
    leaves = [leaf_value(x) for x in tree_flatten((tuple(args), {}))[0]]
    jax_equations = None
    if reference == "jax":
        jax_equations = JaxEquations()
    report = NumericsReport(getattr(fn, "__name__", "fn"), REFERENCE_NAMES[reference])
    traced = None
    for name, layer in transform_layers(fn):
        result, traced = _trace_stage(name, layer, args, leaves, jax_equations)
        report.stages.append(result)
    interpreted = Reference(traced.closed, leaves, run_equation)
    report.stages.extend(_pipeline_stages(interpreted, leaves, get_target(target),
                                          tile_config))
    return report


_add_examples(globals(), """
check_numerics:
    >>> report = pto.tools.check_numerics(lambda x: pnp.tanh(x) * 2.0, pnp.ones(4))
    >>> report.ok
    True
check_nonfinite:
    >>> report = pto.tools.check_nonfinite(lambda x: pnp.log(x) * 0.0, pnp.array([1.0, 0.0]))
    >>> len(report.events) >= 1
    True
""")
