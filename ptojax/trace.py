"""Python function → PTO IR.

There is one kind of tracer. ``trace_flat`` pushes a ``Trace`` (which owns an ``IRBuilder``),
calls the function on ``Tracer`` arguments and collects the equations every ``bind`` adds.
While any trace is active, every primitive application is staged into the innermost one; a
tracer of an enclosing trace is captured as a constvar of the inner IR (a closure), so
transforms nest. With no trace active, ``bind`` runs the primitive's numpy impl eagerly.

Transforms are IR → IR functions; evaluating their result while an outer trace is active
emits its equations there, so ``jit(vmap(grad(f)))`` is trace, rewrite, rewrite, compile.
"""
from __future__ import annotations

import threading

import numpy as np

from ptojax import dtypes
from ptojax.errors import (ConcretizationError, NonArrayLeafError, PtoError,
                           UnsupportedError)
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Params, Var
from ptojax.ir.types import TensorType
from ptojax.eval.array import Array
from ptojax.eval.eager import apply_eager, leaked_tracer_error
from ptojax.source_info import user_frame


PRIMITIVES: dict = {}  # name -> Primitive, every primitive ever defined

# The facts a primitive may have beyond its abstract eval and impl: who reads each one, and
# its form. A primitive's facts are set where it is defined (``Primitive.define``); a fact it
# deliberately lacks is ``Unsupported(reason)``, which the reader turns into a clear error.
FACTS = {
    "jvp": "autodiff/jvp.py: rule(primals, tangents, **params) -> (out, tangent out)",
    "transpose": "autodiff/transpose.py: rule(cts, *inputs, **params) -> input cotangents "
                 "(linear primitives; a linear input arrives as UndefinedPrimal)",
    "partial_eval": "autodiff/partial_eval.py: rule(eqn, unknown inputs) -> (known eqns, "
                    "unknown eqns, unknown outputs), for primitives that split themselves",
    "batch": "batching/vmap.py: rule(args, dims, **params) -> (out, out dim)",
    "shard": "shard/: a ShardRule (ops/sharding_rules.py) or a sub-program rule",
    "tile": "tile/rules.py: a TileForm (ops/tile_forms.py): how the op sits in a tile kernel",
    "pto": "lower/pto_ops.py: recipe(eqn, dst, srcs) -> [Instr] (ir/pto.py) of its tile op",
    "host": "lower/host/: the C++ function computing one element in fused host kernels",
    "cost": "tools/flops.py: eqn -> floating-point operations",
    "reference": "tools/jax_reference.py: (jnp, lax) -> fn(*args, **params) with JAX",
    "dce": "optimize.py: rule(eqn, used outputs) -> eqn without the unused ones",
}


class Unsupported:
    """A fact a primitive deliberately lacks, with the reason a user is told."""
    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self):
        return f"Unsupported({self.reason!r})"


class Primitive:
    """A named operation: abstract eval (types -> types), impl (numpy) and its other facts
    (``FACTS``), all set beside its definition.

    Properties: ``elementwise`` (same-shaped operands, or scalars, map to the output
    elementwise), ``ufunc`` (the numpy ufunc computing it, for buffer reuse), ``call_like`` (it
    evaluates the sub-IR in its ``body`` param), ``collective`` (it communicates over the named
    axes in its ``axes`` param), ``binds_axes`` (its sub-IRs bind mesh axis names of their own,
    shadowing any outside), ``linear`` (linear in its inputs that may carry tangents).
    """

    def __init__(self, name: str, abstract_eval, impl, multiple_results: bool = False, *,
                 elementwise=False, ufunc=None, call_like=False, collective=False,
                 binds_axes=False, linear=False):
        if name in PRIMITIVES:
            raise ValueError(f"a primitive named {name!r} already exists")
        PRIMITIVES[name] = self
        self.name = name
        self.abstract_eval = abstract_eval
        self.impl = impl
        self.multiple_results = multiple_results
        self.elementwise = elementwise
        self.ufunc = ufunc
        self.call_like = call_like
        self.collective = collective
        self.binds_axes = binds_axes
        self.linear = linear
        self.facts: dict = {}

    def define(self, **facts) -> "Primitive":
        """Set facts (each once: a fact is never silently replaced)."""
        for fact, value in facts.items():
            if fact not in FACTS:
                raise ValueError(f"{self.name}: unknown fact {fact!r} (known: {sorted(FACTS)})")
            if fact in self.facts:
                raise ValueError(f"{self.name}: fact {fact!r} is already defined")
            self.facts[fact] = value
        return self

    def fact(self, fact: str):
        """The fact's value, or None when it is absent or Unsupported."""
        value = self.facts.get(fact)
        return None if type(value) is Unsupported else value

    def rule(self, fact: str, what: str, source=None):
        """The fact, or an UnsupportedError saying ``what`` of this primitive is not supported
        (and why, when the primitive says)."""
        value = self.facts.get(fact)
        if value is None or type(value) is Unsupported:
            reason = f": {value.reason}" if type(value) is Unsupported else ""
            raise UnsupportedError(f"{what} of `{self.name}` is not supported{reason}", source)
        return value

    def out_types(self, in_types, params) -> list:
        out = self.abstract_eval(*in_types, **params)
        return list(out) if self.multiple_results else [out]

    def bind(self, *args, **params):
        return bind(self, args, params)

    def __repr__(self):
        return self.name


# ---------------------------------------------------------------------------------------------
class _State(threading.local):
    def __init__(self):
        self.stack: list[Trace] = []


_state = _State()


def tracing() -> bool:
    """True while some function is being traced on this thread."""
    return bool(_state.stack)


class Trace:
    """One active tracing context: the equations, arguments and captured constants of the
    function being traced."""

    def __init__(self, level: int, name: str = "fn"):
        self.level = level
        self.name = name
        self.active = True
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._captured: dict[int, Var] = {}

    def new_arg(self, type) -> "Tracer":
        var = Var(type)
        self.invars.append(var)
        return Tracer(self, var)

    def to_atom(self, x):
        """The Var or Literal standing for ``x`` in this trace's IR."""
        if type(x) is Tracer:
            if x._trace is self:
                return x.ir_var
            if not x._trace.active:
                raise leaked_tracer_error(x)
            return self._capture(x, x.ir_var.type)
        if type(x) is Literal:
            return x
        if isinstance(x, Array):
            if x.ndim == 0:
                return Literal(x._value, x.aval)
            return self._capture(x, x.aval)
        if isinstance(x, (np.ndarray, np.generic)):
            dt = dtypes.canonicalize(x.dtype)
            if x.ndim == 0:
                return Literal(x, TensorType((), dt))
            return self._capture(x, TensorType(x.shape, dt))
        if isinstance(x, dtypes.PYTHON_SCALARS) and not isinstance(x, np.bool_):
            return Literal(x, TensorType((), dtypes.python_scalar_dtype(x), True))
        raise NonArrayLeafError(f"a value of type {type(x).__name__} cannot be used as an "
                                f"array ({x!r:.60}); pass arrays or Python scalars")

    def _capture(self, x, type) -> Var:
        var = self._captured.get(id(x))
        if var is None:
            var = self._captured[id(x)] = Var(type)
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process(self, prim: Primitive, args, params, source=None):
        atoms = [self.to_atom(a) for a in args]
        if type(params) is not Params:
            params = Params(params)
        source = source or user_frame(3)
        try:
            out_types = prim.out_types([a.type for a in atoms], params)
        except PtoError as e:
            raise e.with_source(source) from None
        outs = [Var(t) for t in out_types]
        self.eqns.append(Eqn(prim, atoms, outs, params, source))
        if prim.multiple_results:
            return [Tracer(self, v) for v in outs]
        return Tracer(self, outs[0])

    def to_ir(self, outputs) -> ClosedIR:
        outvars = [self.to_atom(o) for o in outputs]
        return ClosedIR(IR(self.constvars, self.invars, self.eqns, outvars), self.consts)


def push_trace(name: str = "fn") -> Trace:
    stack = _state.stack
    trace = Trace(len(stack), name)
    stack.append(trace)
    return trace


def pop_trace(trace: Trace) -> None:
    stack = _state.stack
    assert stack and stack[-1] is trace, "trace stack corrupted"
    stack.pop()
    trace.active = False


def trace_flat(fn, in_types, name: str = "fn") -> ClosedIR:
    """Trace ``fn(*args) -> list of outputs`` on arguments of ``in_types`` into a ClosedIR."""
    trace = push_trace(name)
    try:
        args = [trace.new_arg(t) for t in in_types]
        outs = fn(*args)
        return trace.to_ir(outs)
    finally:
        pop_trace(trace)


# ---------------------------------------------------------------------------------------------
def bind(prim: Primitive, args, params, source=None):
    """Apply ``prim``: staged into the innermost active trace, or run eagerly."""
    stack = _state.stack
    if stack:
        return stack[-1].process(prim, args, params, source)
    return apply_eager(prim, args, params)


class Tracer:
    """A value being traced: it stands for ``var`` in the IR its trace is building."""
    __slots__ = ("_trace", "ir_var")
    __array_priority__ = 1000

    def __init__(self, trace: Trace, var: Var):
        self._trace = trace
        self.ir_var = var

    aval = property(lambda self: self.ir_var.type)
    shape = property(lambda self: self.ir_var.type.shape)
    dtype = property(lambda self: self.ir_var.type.dtype)
    ndim = property(lambda self: len(self.ir_var.type.shape))
    size = property(lambda self: self.ir_var.type.size)
    weak_type = property(lambda self: self.ir_var.type.weak_type)

    def _concretization_error(self, what: str):
        return ConcretizationError(
            f"a traced value {self.ir_var.type} was used as {what}, but while tracing "
            f"`{self._trace.name}` its value is unknown. Use pto.lax.cond/pto.lax.switch for "
            f"data-dependent branches, pto.lax.while_loop/fori_loop for data-dependent loops, "
            f"pnp.where for elementwise choice, or mark the argument static "
            f"(static_argnums/static_argnames) if it is a compile-time constant.",
            user_frame(2))

    def __bool__(self):
        raise self._concretization_error("a Python bool (if/while/and/or)")

    def __int__(self):
        raise self._concretization_error("a Python int")

    def __float__(self):
        raise self._concretization_error("a Python float")

    def __index__(self):
        raise self._concretization_error("a Python index")

    def __array__(self, dtype=None, copy=None):
        raise self._concretization_error("a concrete numpy array (np.asarray/np.array)")

    def tolist(self):
        raise self._concretization_error("a Python list (tolist)")

    def item(self):
        raise self._concretization_error("a Python scalar (item)")

    def __hash__(self):
        raise TypeError(f"unhashable type: traced value {self.ir_var.type}")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d traced value")
        return self.shape[0]

    def __repr__(self):
        return f"Traced<{self.ir_var.type}>(trace={self._trace.name})"
