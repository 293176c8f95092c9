"""Python function → PTO IR.

There is one kind of tracer. ``trace_flat`` pushes a ``Trace`` (which owns an ``IRBuilder``),
calls the function on ``Tracer`` arguments and collects the equations every ``bind`` adds.
While any trace is active, every primitive application is staged into the innermost one; a
tracer of an enclosing trace is captured as a constvar of the inner IR (a closure), so
transforms nest. With no trace active, ``bind`` runs the primitive's numpy impl eagerly.

Transforms are IR → IR functions; evaluating their result while an outer trace is active
emits its equations there, so ``jit(vmap(grad(f)))`` is trace, rewrite, rewrite, compile.

Eager transforms (grad, jvp, vmap... called outside jit on concrete arguments) trace with
*concrete* traces: each tracer also records how concrete its value is (``ABSTRACT``,
``KNOWN``, ``DIFFERENTIATED``), from its inputs. A known value is computed only when Python
asks for it (``if x > 0``, ``int(i)``): the trace evaluates the equations it needs with their
numpy impls, once each. So Python control flow on values works under eager grad, as in JAX,
and the IR is specialized to the path taken. Under jit, in lax control-flow bodies and in
``pto.jit`` functions inlined into a transform, values stay abstract.
"""
from __future__ import annotations

import contextlib
import operator
import threading

import numpy as np

from ptojax import dtypes
from ptojax.errors import (ConcretizationError, NonArrayLeafError, PtoError,
                           TracerArrayConversionError, TracerBoolConversionError,
                           TracerIntegerConversionError, UnsupportedError, is_masked_array,
                           located, masked_array_error, non_array_error)
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Params, Var
from ptojax.ir.types import TensorType
from ptojax.eval.array import Array
from ptojax.eval.eager import apply_eager, leaked_tracer_error, traced_out_types
from ptojax.eval.leaks import check_no_leaks
from ptojax.eval.scalar_conversion import (check_bool_conversion, check_index_conversion,
                                             check_scalar_conversion)
from ptojax.source_info import user_frame
from ptojax.scoped_options import CHECK_TRACER_LEAKS


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
    "cleanups": "optimize.py: Unsupported(why) when its sub-IRs must stay as they are (target "
                "code with buffer semantics); absent: the clean-ups recurse into them",
    "bucket": "lower/bucketing.py: rule(ctx, eqn, *padded args) -> results on arrays padded "
              "to a bucket (ops/bucketing.py); none: elementwise, or the program stays unpadded",
}


def primitive_named(name: str) -> "Primitive":
    """The primitive called ``name`` (``KeyError`` if no module imported so far defines it)."""
    return PRIMITIVES[name]


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
    shadowing any outside), ``linear`` (linear in its inputs that may carry tangents),
    ``effectful`` (running it does something besides computing its results, e.g. a host
    callback: it is never removed, merged, folded or moved out of a loop), ``fresh_outputs``
    (its impl returns newly allocated arrays, never views of its inputs, which the executor may
    then overwrite), ``in_place`` (an impl writing its result into its first operand's buffer
    and returning it: the executor uses it when that buffer is its own and dead after).
    """

    def __init__(self, name: str, abstract_eval, impl, multiple_results: bool = False, *,
                 elementwise=False, ufunc=None, call_like=False, collective=False,
                 binds_axes=False, linear=False, effectful=False, fresh_outputs=False,
                 in_place=None):
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
        self.effectful = effectful
        self.fresh_outputs = fresh_outputs
        self.in_place = in_place
        self.facts: dict = {}

    def __reduce__(self):
        """Pickled by name (its rules are functions of the modules that define it): an IR
        unpickles in another process that has imported them (``lower/host/exit_handoff.py``)."""
        return primitive_named, (self.name,)

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
        self.jit_inlined: list[str] = []  # names of pto.jit functions being inlined
        self.compile_time_eval = 0        # depth of ensure_compile_time_eval blocks


_state = _State()

# How concrete a tracer's value is (tracked only by concrete traces, see the module doc).
ABSTRACT = 0        # unknown while tracing: Python cannot use it
KNOWN = 1           # computable from concrete values: Python may use it
DIFFERENTIATED = 2  # known, but it carries a derivative: bool/int/index/item() may use it;
                    # float(), np.asarray() and tolist() refuse, as JAX does (they would
                    # silently drop the derivative)


def tracing() -> bool:
    """True while some function is being traced on this thread."""
    return bool(_state.stack)


class Trace:
    """One active tracing context: the equations, arguments and captured constants of the
    function being traced."""

    def __init__(self, level: int, name: str = "fn", concrete: bool = False,
                 abstract_why: str = ""):
        self.level = level
        self.name = name
        self.active = True
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._captured: dict[int, tuple] = {}   # id(x) -> (its constvar, x: kept alive)
        # Var of a narrowed Python-scalar argument -> the tracer of its full value (jit)
        self.full_precision: dict[Var, "Tracer"] = {}
        self.concrete = concrete          # tracks how concrete each value is
        self.abstract_why = abstract_why  # why an argument may be abstract (for messages)
        self._values: dict = {}           # Var -> concrete value, computed on demand
        self._sources: dict = {}          # argument/constvar -> the value it stands for
        self._producers: dict = {}        # Var -> the equation computing it
        self._indexed = 0                 # equations entered in _producers so far

    def new_arg(self, type, source=None, state=ABSTRACT) -> "Tracer":
        var = Var(type)
        self.invars.append(var)
        if state != ABSTRACT:
            self._sources[var] = source
        return Tracer(self, var, state)

    def to_atom(self, x, op: str = "an operation"):
        """The Var or Literal standing for ``x`` in this trace's IR (``op`` names the
        operation ``x`` is given to, in errors)."""
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
        if isinstance(x, (np.ndarray, np.generic)):   # 32-bit without x64, as JAX
            if type(x) is not np.ndarray and is_masked_array(x):
                raise masked_array_error(op)
            if isinstance(x, np.ndarray) and type(x) is not np.ndarray:
                x = np.asarray(x)   # a subclass (np.matrix, np.memmap): its base array
            dt = dtypes.canonical_dtype(x.dtype)
            if x.ndim == 0:
                return Literal(dtypes.canonical_value(x), TensorType((), dt))
            return self._capture(x, TensorType(x.shape, dt), dtypes.canonical_value(x))
        if isinstance(x, dtypes.PYTHON_SCALARS) and not isinstance(x, np.bool_):
            return Literal(x, TensorType((), dtypes.python_scalar_dtype(x),
                                         dtypes.python_scalar_is_weak(x)))
        raise non_array_error(x, op)

    def _capture(self, x, type, value=None) -> Var:
        """The constvar of ``x`` (one per object), whose value is ``value`` (a numpy array of
        the type's dtype: a float64 one is float32 without x64) or ``x`` itself."""
        held = self._captured.get(id(x))
        if held is None:
            var = Var(type)
            self._captured[id(x)] = (var, x)   # (x alive while traced: its id stays its own)
            self.constvars.append(var)
            self.consts.append(x if value is None else value)
            if self.concrete:
                self._sources[var] = x if value is None else value
            return var
        return held[0]

    def process(self, prim: Primitive, args, params, source=None):
        try:
            atoms = [self.to_atom(a, prim.name) for a in args]
        except NonArrayLeafError as e:
            raise e.with_source(source or user_frame(3)) from None
        if type(params) is not Params:
            params = Params(params)
        source = source or user_frame(3)
        try:
            out_types = traced_out_types(prim, [a.type for a in atoms], params)
        except PtoError as e:
            raise e.with_source(source) from None
        except Exception as e:
            raise located(e, source, prim.name)
        outs = [Var(t) for t in out_types]
        self.eqns.append(Eqn(prim, atoms, outs, params, source))
        if not self.concrete:
            if prim.multiple_results:
                return [Tracer(self, v) for v in outs]
            return Tracer(self, outs[0])
        # a collective's result depends on the other examples/devices: never known here
        in_state = ABSTRACT if prim.collective else _combined_state(args)
        if prim.multiple_results:
            return [Tracer(self, v, _out_state(prim, in_state, v)) for v in outs]
        return Tracer(self, outs[0], _out_state(prim, in_state, outs[0]))

    def value_of(self, var: Var):
        """The concrete value of ``var`` (whose tracer is known): the equations it needs are
        evaluated with their impls, each once, as if no trace were active."""
        values = self._values
        if var in values:
            return values[var]
        producers = self._index_producers()
        saved, _state.stack = _state.stack, []
        try:
            pending = [var]
            while pending:
                v = pending[-1]
                if v in values:
                    pending.pop()
                    continue
                eqn = producers.get(v)
                if eqn is None:  # an argument or a captured value
                    values[v] = concrete_value(self._sources[v])
                    pending.pop()
                    continue
                missing = [a for a in eqn.inputs if type(a) is Var and a not in values]
                if missing:
                    pending.extend(missing)
                    continue
                out = apply_eager(eqn.prim, [values[a] if type(a) is Var else a
                                             for a in eqn.inputs], eqn.params)
                values.update(zip(eqn.outputs, out if eqn.prim.multiple_results else [out]))
                pending.pop()
        finally:
            _state.stack = saved
        return values[var]

    def _index_producers(self) -> dict:
        producers, eqns = self._producers, self.eqns
        for eqn in eqns[self._indexed:]:
            for v in eqn.outputs:
                producers[v] = eqn
        self._indexed = len(eqns)
        return producers

    def to_ir(self, outputs) -> ClosedIR:
        outvars = [self.to_atom(o) for o in outputs]
        return ClosedIR(IR(self.constvars, self.invars, self.eqns, outvars), self.consts)


def full_precision(x):
    """The full-precision value behind ``x`` when ``x`` is a Python float argument of ``jit``
    as its function sees it (a weak float32 narrowed from a float64 carrier), else None.
    Promotion converts from it, so such a float next to float64 loses no bit (as eagerly)."""
    if type(x) is Tracer:
        return x._trace.full_precision.get(x.ir_var)
    return None


def concrete_value(x):
    """The concrete value of a known tracer or a Deferred, or the value itself."""
    if type(x) is Tracer:
        return x._trace.value_of(x.ir_var)
    if type(x) is Deferred:
        return x.value()
    return x


class Deferred:
    """A value an argument of a concrete trace stands for, computed only if Python asks for
    it (``compute()`` runs with no trace active), then kept."""
    __slots__ = ("_compute", "_value")

    def __init__(self, compute):
        self._compute = compute
        self._value = None

    def value(self):
        if self._compute is not None:
            self._value, self._compute = self._compute(), None
        return self._value


def _combined_state(args) -> int:
    """ABSTRACT if any input is, else DIFFERENTIATED if any input is, else KNOWN."""
    state = KNOWN
    for a in args:
        if type(a) is Tracer:
            s = a._known
            if s == ABSTRACT:
                return ABSTRACT
            if s == DIFFERENTIATED:
                state = DIFFERENTIATED
    return state


def _out_state(prim, in_state, var) -> int:
    """An output carries a derivative when an input does, it is a float (or complex) and the
    primitive's derivative is not identically zero (comparisons, floor, stop_gradient...)."""
    if in_state != DIFFERENTIATED:
        return in_state
    if not dtypes.is_inexact(var.type.dtype):
        return KNOWN
    return KNOWN if getattr(prim.facts.get("jvp"), "zero_derivative", False) else DIFFERENTIATED


def state_of(x) -> int:
    """How concrete ``x`` is: a tracer's own state (ABSTRACT once its trace ended), KNOWN for
    any other value."""
    if type(x) is not Tracer:
        return KNOWN
    return x._known if x._trace.active else ABSTRACT


def is_concrete(x) -> bool:
    """Whether Python may read ``x``'s value now (``int(x)``, ``bool(x)``...): any value that
    is not a tracer, or a known tracer outside an inlined pto.jit function."""
    if type(x) is not Tracer:
        return True
    return x._known != ABSTRACT and x._trace.active and not _state.jit_inlined


def eager_context() -> bool:
    """Traces opened now may track values: nothing is traced, or the innermost trace tracks
    them too (an eager transform's), and no pto.jit function is being inlined."""
    stack = _state.stack
    return not _state.jit_inlined and (not stack or stack[-1].concrete)


def push_trace(name: str = "fn", concrete: bool = False, abstract_why: str = "") -> Trace:
    stack = _state.stack
    if concrete and not abstract_why and stack:  # its abstract values come from outside
        abstract_why = stack[-1].abstract_why
    trace = Trace(len(stack), name, concrete, abstract_why)
    stack.append(trace)
    return trace


def pop_trace(trace: Trace) -> None:
    stack = _state.stack
    assert stack and stack[-1] is trace, "trace stack corrupted"
    stack.pop()
    trace.active = False
    trace._values = trace._sources = trace._producers = None


def trace_flat(fn, in_types, name: str = "fn", sources=None, states=None,
               abstract_why: str = "") -> ClosedIR:
    """Trace ``fn(*args) -> list of outputs`` on arguments of ``in_types`` into a ClosedIR.

    An eager transform passes the values the arguments stand for (``sources``) and how
    concrete each is (``states``, see ``arg_states``): outside jit the trace then tracks
    concrete values, so Python may branch on them. ``abstract_why`` tells the user why an
    abstract argument is abstract."""
    concrete = sources is not None and eager_context()
    trace = push_trace(name, concrete, abstract_why)
    try:
        if concrete:
            args = [trace.new_arg(t, x, s) for t, x, s in zip(in_types, sources, states)]
        else:
            args = [trace.new_arg(t) for t in in_types]
        outs = fn(*args)
        closed = trace.to_ir(outs)
    finally:
        pop_trace(trace)
    if CHECK_TRACER_LEAKS.active and not concrete and not _state.stack and \
            CHECK_TRACER_LEAKS.get():   # an outermost abstract trace (jit, make_jaxpr)
        del args, outs
        check_no_leaks(trace)
    return closed


def arg_states(sources, differentiated=None) -> list:
    """The state of each argument of a concrete trace: its value's own (``state_of``),
    raised to DIFFERENTIATED where ``differentiated`` says the transform differentiates it."""
    states = [state_of(x) for x in sources]
    if differentiated is not None:
        states = [DIFFERENTIATED if d and s != ABSTRACT else s
                  for s, d in zip(states, differentiated)]
    return states


def eager_sources(values, n_abstract: int = 0, plain: bool = False) -> tuple:
    """(sources, states) for ``trace_flat`` of a function taking ``values`` (each as concrete
    as it is; ``plain``: carrying no derivative, as JAX hands primals to user rules) then
    ``n_abstract`` abstract arguments (tangents, cotangents)."""
    states = arg_states(values)
    if plain:
        states = [ABSTRACT if s == ABSTRACT else KNOWN for s in states]
    return [*values, *[None] * n_abstract], [*states, *[ABSTRACT] * n_abstract]


@contextlib.contextmanager
def inlined_jit(name: str):
    """A pto.jit function inlined into an enclosing trace: values stay abstract inside it
    (as under jit; its outputs are concrete again once it returns, as in JAX)."""
    _state.jit_inlined.append(name)
    try:
        yield
    finally:
        _state.jit_inlined.pop()


# ---------------------------------------------------------------------------------------------
def bind(prim: Primitive, args, params, source=None):
    """Apply ``prim``: staged into the innermost active trace, or run eagerly (also inside a
    trace, under ``ensure_compile_time_eval``, when no operand is traced)."""
    stack = _state.stack
    if stack and not (_state.compile_time_eval and
                      not any(isinstance(a, Tracer) for a in args)):
        return stack[-1].process(prim, args, params, source)
    return apply_eager(prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside the block, operations whose operands are all concrete (not traced) run at once,
    even under ``jit`` or a transform, giving concrete arrays Python can branch on; those on
    traced values are traced as usual. As JAX's ``jax.ensure_compile_time_eval``.

    Example:
        >>> @pto.jit
        ... def f(x):
        ...     with pto.ensure_compile_time_eval():
        ...         n = pnp.arange(4).sum()     # a concrete Array, even under jit
        ...         big = bool(n > 5)
        ...     return x * n if big else x
        >>> f(2.0)
        Array(12., dtype=float32, weak_type=True)
    """
    _state.compile_time_eval += 1
    try:
        yield
    finally:
        _state.compile_time_eval -= 1


class Tracer:
    """A value being traced: it stands for ``var`` in the IR its trace is building. ``_known``
    says how concrete its value is (ABSTRACT unless its trace tracks values)."""
    __slots__ = ("_trace", "ir_var", "_known")
    __array_priority__ = 1000

    def __init__(self, trace: Trace, var: Var, known: int = ABSTRACT):
        self._trace = trace
        self.ir_var = var
        self._known = known

    aval = property(lambda self: self.ir_var.type)
    shape = property(lambda self: self.ir_var.type.shape)
    dtype = property(lambda self: self.ir_var.type.dtype)
    ndim = property(lambda self: len(self.ir_var.type.shape))
    size = property(lambda self: self.ir_var.type.size)
    weak_type = property(lambda self: self.ir_var.type.weak_type)

    def _value(self, what: str, differentiated_ok: bool = True,
               error=ConcretizationError) -> np.ndarray:
        """The concrete value Python asked for as ``what``, or a ConcretizationError (of the
        class JAX raises for that use, ``error``) saying why it is not available (naming the
        user's line: two frames up)."""
        if not is_concrete(self):
            raise self._concretization_error(what, error)
        if self._known == DIFFERENTIATED and not differentiated_ok:
            raise ConcretizationError(
                f"a traced value {self.ir_var.type} that is being differentiated was used as "
                f"{what}, which would silently drop its derivative. Use x.astype(dtype) to "
                f"change its dtype, or pto.lax.stop_gradient(x) if no derivative should flow "
                f"through this use", user_frame(3))
        return np.asarray(self._trace.value_of(self.ir_var))

    def _concretization_error(self, what: str, error=ConcretizationError):
        trace = self._trace
        if _state.jit_inlined and trace.active:
            where = (f"`{_state.jit_inlined[-1]}` is traced for pto.jit (inlined into the "
                     f"enclosing transform), where values are abstract")
        elif trace.concrete and trace.active and trace.abstract_why:
            where = f"while tracing `{trace.name}` its value is unknown: {trace.abstract_why}"
        else:
            where = f"while tracing `{trace.name}` its value is unknown"
        return error(
            f"a traced value {self.ir_var.type} was used as {what}, but {where}. Use "
            f"pto.lax.cond/pto.lax.switch for data-dependent branches, "
            f"pto.lax.while_loop/fori_loop for data-dependent loops, pnp.where for elementwise "
            f"choice, or mark the argument static (static_argnums/static_argnames) if it is a "
            f"compile-time constant.", user_frame(3))

    def __bool__(self):
        check_bool_conversion(self.shape)
        return bool(self._value("a Python bool (if/while/and/or)",
                                error=TracerBoolConversionError))

    def __int__(self):
        check_scalar_conversion(self.shape, "int")
        return int(self._value("a Python int", error=TracerIntegerConversionError))

    def __float__(self):
        check_scalar_conversion(self.shape, "float")
        return float(self._value("a Python float", differentiated_ok=False))

    def __complex__(self):
        check_scalar_conversion(self.shape, "complex")
        return complex(self._value("a Python complex", differentiated_ok=False))

    def __index__(self):
        check_index_conversion(self.shape, self.dtype)
        return operator.index(self._value("a Python index",
                                          error=TracerIntegerConversionError)[()])

    def __array__(self, dtype=None, copy=None):
        value = self._value("a concrete numpy array (np.asarray/np.array)",
                            differentiated_ok=False, error=TracerArrayConversionError)
        return value if dtype is None else value.astype(dtype)

    def tolist(self):
        return self._value("a Python list (tolist)", differentiated_ok=False).tolist()

    def item(self, *args):
        return self._value("a Python scalar (item)").item(*args)

    def __hash__(self):
        raise located(TypeError(f"unhashable type: traced value {self.ir_var.type}"),
                      user_frame())

    def __len__(self):
        if not self.shape:
            raise located(TypeError("len() of unsized object (a 0-d traced value)"),
                          user_frame())
        return self.shape[0]

    def __repr__(self):
        return f"Traced<{self.ir_var.type}>(trace={self._trace.name})"
