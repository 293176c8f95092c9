"""Compile an IR to a straight-line Python function over numpy calls.

A cached ``jit`` call runs this function directly: no retracing and no per-equation
interpretation. Elementwise ufunc results reuse the buffer of an operand that dies at that
equation (``np.add(a, b, out=a)``), so long elementwise chains do not allocate per op.

Buffers the function may overwrite (*owned*): those it allocated itself (ufunc results, the
outputs of an ``impls`` override or of a primitive whose impl returns ``fresh_outputs``,
such as ``dot_general``) and the inputs the caller *donated* (a loop's carries,
``lower/host/carries.py``). An override that can write an output over a dying operand (a
host kernel's ``alias_pairs``, ``lower/host/kernel_aliases.py``) is given the owned operands
that die at it (``writing_into``). ``fresh_outputs`` says which results are owned buffers no
other result shares: a loop may donate those to the next step.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.ir.symbolic import DimExpr, has_symbols, size_readers
from ptojax.eval.concurrent import Pair
from ptojax.eval.ieee import quietly
from ptojax.eval.memory import keep_freed_memory
from ptojax.eval.numpy_fast import cast_results, narrow_int_outputs, ufunc_via_f32
from ptojax.source_info import GENERATED_FILE

_FIRST_EQN_LINE = 2  # line 1 of the generated source is ``def run(...)``, then one per eqn


class Executable:
    """``run(*flat_inputs) -> list of numpy arrays`` for one IR, plus its generated source.
    ``impls`` maps equations to callables run in place of their primitive's impl (the host
    backend runs compiled kernels and loops this way); their outputs are fresh buffers later
    operations may overwrite, except those of the equations in ``borrowing`` (a loop may
    return its operands). ``donated``: the indices of the inputs whose buffers ``run`` may
    overwrite. ``fresh_outputs[k]``: whether result ``k`` is a buffer this function owns
    (allocated by it, or donated) that no other result shares. ``pairs``: equations that
    run at once with the equation right after them (``eval/concurrent.py``); both must be
    ``impls`` overrides or primitives with ``fresh_outputs``, and the second writes over
    none of the first's operands."""

    def __init__(self, closed: ClosedIR, impls=None, borrowing=frozenset(),
                 donated=frozenset(), pairs=frozenset()):
        keep_freed_memory()
        self.closed = closed
        self.source, self.run, self.fresh_outputs = _generate(closed, impls or {}, borrowing,
                                                              donated, pairs)

    def __call__(self, *args):
        return self.run(*args)


def _specialize(prim, params):
    if not params:
        return prim.impl
    return functools.partial(prim.impl, **params)


def _last_uses(ir, fresh_impls=frozenset(), pairs=frozenset()):
    """The index of the last equation reading each variable's buffer. An impl other than a
    ufunc or an override in ``fresh_impls`` (which allocate their outputs) may return a view
    of its input (reshape, slice, broadcast_in_dim, ...), so its inputs stay alive as long as
    its outputs do (walked backwards: views of views). An equation in ``pairs`` reads its
    operands until the end of the next equation, which runs at the same time (``i + 1.5``)."""
    last = {}
    for i, eqn in enumerate(ir.eqns):
        end = i + 1.5 if eqn in pairs else i
        for a in eqn.inputs:
            if type(a) is Var:
                last[a] = max(last.get(a, -1), end)
    for v in ir.outvars:
        if type(v) is Var:
            last[v] = len(ir.eqns)
    for eqn in reversed(ir.eqns):
        if (eqn.prim.ufunc is not None and not eqn.params) or eqn in fresh_impls \
                or eqn.prim.fresh_outputs:
            continue
        end = max((last.get(o, -1) for o in eqn.outputs), default=-1)
        for a in eqn.inputs:
            if type(a) is Var and end > last[a]:
                last[a] = end
    return last


def _generate(closed: ClosedIR, impls, borrowing=frozenset(), donated=frozenset(),
              pairs=frozenset()):
    ir = closed.ir
    names: dict = {}
    counter = itertools.count()
    env = {"__name__": "ptojax.runtime.generated", "np": np,
           "__eqn_sources__": [eqn.source for eqn in ir.eqns]}

    def name_of(v):
        if type(v) is Literal:
            key = f"k{next(counter)}"
            env[key] = v.value
            return key
        return names[v]

    def fresh(v, prefix="v"):
        names[v] = f"{prefix}{next(counter)}"
        return names[v]

    args = [fresh(v, "a") for v in ir.invars]
    for v, c in zip(ir.constvars, closed.consts):
        env[fresh(v, "c")] = np.asarray(c)
    _check_pairs(ir, pairs, impls, borrowing)
    fresh_impls = frozenset(e for e in impls if e not in borrowing)
    last = _last_uses(ir, fresh_impls, pairs)
    alone = _last_uses(ir, fresh_impls) if pairs else last   # a pair's first: its own reads
    pending = None       # (first equation's line parts) until its pair's second is generated
    # vars whose buffers were allocated by this function, or donated, and may be overwritten
    owned = {ir.invars[i] for i in donated}
    lines = _bind_sizes(ir, args)
    implicit = _implicit_broadcasts(ir, impls)
    for eqn in implicit:   # the operand's buffer lives as long as its unbroadcast alias
        operand = eqn.inputs[0]
        for uses in {id(last): last, id(alone): alone}.values():
            uses[operand] = max(uses.get(operand, -1), uses.get(eqn.outputs[0], -1))
    for i, eqn in enumerate(ir.eqns):
        fn = f"f{i}"
        ins = [name_of(a) for a in eqn.inputs]
        outs = [fresh(v) for v in eqn.outputs]
        ufunc = eqn.prim.ufunc
        if eqn in implicit:   # numpy's own broadcasting in the consuming ufuncs does it
            expanded = implicit[eqn]
            if expanded is None:
                lines.append(f"    {outs[0]} = {ins[0]}")
            else:             # a view with the output's rank, size 1 where it broadcasts
                lines.append(f"    {outs[0]} = {ins[0]}.reshape({expanded})")
            continue
        note = ""
        narrow = narrow_int_outputs(eqn.outputs)
        if eqn in impls:  # an override allocates its outputs: later ops may reuse them
            chosen = _written_in_place(impls[eqn], eqn, i, owned,
                                       alone if eqn in pairs else last)
            env[fn] = impls[eqn].writing_into(chosen) if chosen else impls[eqn]
            if chosen:
                note = "  # in place: " + ", ".join(f"{outs[o]} over {ins[k]}"
                                                    for o, k in chosen.items())
            if eqn not in borrowing:
                owned.update(eqn.outputs)
        elif ufunc is not None and not eqn.params and eqn.outputs[0].type.ndim > 0 \
                and not narrow:
            out_type = eqn.outputs[0].type
            env[fn] = ufunc_via_f32(ufunc, eqn.inputs[0].type.dtype) or ufunc
            reusable = [a for a in eqn.inputs if a in owned and last.get(a) == i
                        and a.type.shape == out_type.shape and a.type.dtype == out_type.dtype]
            call = f"{fn}({', '.join(ins)}" + (f", out={names[reusable[0]]})" if reusable
                                               else ")")
            lines.append(f"    {outs[0]} = {call}")
            owned.add(eqn.outputs[0])
            continue
        elif eqn.prim.in_place is not None and eqn.inputs[0] in owned \
                and last.get(eqn.inputs[0]) == i:
            # the operand's buffer is ours and dead after this: update it, not a copy
            fn = f"{fn}_in_place"
            env[fn] = functools.partial(eqn.prim.in_place, **eqn.params)
            owned.add(eqn.outputs[0])
        elif has_symbols(tuple(eqn.params.values())):  # sizes computed inline per call
            static = {k: v for k, v in eqn.params.items() if not has_symbols(v)}
            env[fn] = functools.partial(eqn.prim.impl, **static) if static else eqn.prim.impl
            ins += [f"{k}={_size_code(v)}" for k, v in eqn.params.items() if k not in static]
        else:
            env[fn] = _specialize(eqn.prim, eqn.params)
            if narrow:   # int4 & co: ml_dtypes' loops answer in int8; cast back (wrapping)
                env[fn] = cast_results(env[fn], narrow, eqn.prim.multiple_results)
            if eqn.prim.fresh_outputs:
                owned.update(eqn.outputs)
        if eqn in pairs:     # generated with the next equation, which runs beside it
            pending = (fn, ins, _targets(outs, eqn), note)
            continue
        if pending is not None:   # the first's line starts both; this one's waits for it
            first_fn, first_ins, first_outs, first_note = pending
            pending = None
            env[f"pair_{i}"] = Pair()
            lines.append(f"    {first_outs}, pair{i} = pair_{i}({first_fn}, "
                         f"({''.join(a + ', ' for a in first_ins)}), {fn}, "
                         f"({''.join(a + ', ' for a in ins)})){first_note}")
            lines.append(f"    {_targets(outs, eqn)} = pair{i}(){note}")
            continue
        call = f"{fn}({', '.join(ins)})"
        if not outs:   # an equation run for its effect
            lines.append(f"    {call}")
            continue
        lines.append(f"    {', '.join(outs)}{',' if len(outs) == 1 and eqn.prim.multiple_results else ''}"
                     f" = {call}{note}")
    results = [name_of(v) for v in ir.outvars]
    lines.append(f"    return [{', '.join(results)}]")
    source = f"def run({', '.join(args)}):\n" + "\n".join(lines) + "\n"
    exec(compile(source, GENERATED_FILE, "exec"), env)
    fresh = tuple(type(v) is Var and v in owned and ir.outvars.count(v) == 1
                  for v in ir.outvars)
    return source, quietly(env["run"]), fresh


def _check_pairs(ir, pairs, impls, borrowing):
    """Each equation in ``pairs`` and the next one are calls returning fresh buffers: an
    override, or a primitive with ``fresh_outputs`` and static sizes."""
    if not pairs:
        return
    index = {e: i for i, e in enumerate(ir.eqns)}
    for first in pairs:
        i = index.get(first)
        if i is None or i + 1 >= len(ir.eqns):
            raise ValueError("a pair's first equation must be followed by its second")
        for e in (first, ir.eqns[i + 1]):
            call = e in impls and e not in borrowing or e.prim.fresh_outputs \
                and e.prim.ufunc is None and e.prim.in_place is None \
                and not has_symbols(tuple(e.params.values()))
            if not call or not e.outputs or e.prim.effectful:
                raise ValueError(f"equation {e.prim.name} cannot run in a pair")
        if ir.eqns[i + 1] in pairs:
            raise ValueError("a pair's second equation cannot start another pair")


def _targets(outs, eqn) -> str:
    """The assignment target of an equation's results, as one expression."""
    if len(outs) == 1 and not eqn.prim.multiple_results:
        return outs[0]
    return f"({', '.join(outs)},)"


def _written_in_place(impl, eqn, index, owned, last) -> dict:
    """{output: input} positions override ``impl`` writes in place at equation ``index``:
    among its ``alias_pairs`` (those it can), the operands this function owns that die
    there, each written over at most once."""
    chosen = {}
    for out, inp in getattr(impl, "alias_pairs", ()):
        a = eqn.inputs[inp]
        if type(a) is Var and a in owned and last.get(a) == index and out not in chosen \
                and inp not in chosen.values() and eqn.inputs.count(a) == 1:
            chosen[out] = inp
    return chosen


def _bind_sizes(ir, args) -> list:
    """The generated lines reading each symbol's size (``ir/symbolic.py``) from the arguments'
    shapes into a local ``s_<name>``; none for an IR without symbolic dimensions."""
    return [f"    s_{name} = {args[i]}.shape[{axis}]" + ("" if c == 1 else f" // {c}")
            for name, (i, axis, c) in size_readers(ir).items()]


def _size_code(value) -> str:
    """Python source computing ``value`` (a dim, or nested tuples/lists of them) from the
    ``s_<name>`` locals."""
    if type(value) is DimExpr:
        return "(" + " + ".join("*".join([str(c), *(f"s_{n}" for n in mono)])
                                for mono, c in value.terms.items()) + ")"
    if isinstance(value, tuple):
        return "(" + "".join(f"{_size_code(v)}, " for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_size_code(v) for v in value) + "]"
    return repr(value)


def _implicit_broadcasts(ir, impls) -> dict:
    """The ``broadcast_in_dim`` equations whose every use is a plain ufunc of their output's
    shape with a full-shape operand: numpy broadcasts their operand itself, so the executor
    skips them (a bias added to a batch, a row maximum or sum subtracted from or dividing its
    rows: ``np.broadcast_to`` costs more than the ufunc on small arrays). Each maps to None
    when the operand broadcasts as it is (it fills the trailing dimensions), else to the
    shape of the operand's view with the output's rank (size 1 where it broadcasts)."""
    users: dict = {}
    for eqn in ir.eqns:
        for a in eqn.inputs:
            if type(a) is Var:
                users.setdefault(a, []).append(eqn)
    outvars = {v for v in ir.outvars if type(v) is Var}
    broadcast = {e.outputs[0] for e in ir.eqns if e.prim.name == "broadcast_in_dim"}
    found = {}
    for eqn in ir.eqns:
        if eqn.prim.name != "broadcast_in_dim" or eqn in impls or type(eqn.inputs[0]) is not Var:
            continue
        out, n = eqn.outputs[0], eqn.inputs[0].type.ndim
        if out in outvars:
            continue
        uses = users.get(out, ())
        if not uses or not all(_broadcasts_itself(u, out.type.shape, broadcast, impls)
                               for u in uses):
            continue
        dims = tuple(eqn.params["broadcast_dimensions"])
        if dims == tuple(range(out.type.ndim - n, out.type.ndim)):
            found[eqn] = None
        elif not has_symbols(eqn.inputs[0].type.shape):   # sizes known when generated
            expanded = [1] * out.type.ndim
            for size, d in zip(eqn.inputs[0].type.shape, dims):
                expanded[d] = size
            found[eqn] = tuple(expanded)
    return found


def _broadcasts_itself(use, shape, broadcast_outputs, impls) -> bool:
    """``use`` is a plain ufunc with an operand of the full ``shape`` that is not itself a
    broadcast: its result has that shape without the broadcast."""
    return use.prim.ufunc is not None and not use.params and use not in impls \
        and use.outputs[0].type.shape == shape \
        and any(type(a) is Var and a not in broadcast_outputs and a.type.shape == shape
                for a in use.inputs)


def failed_equation_source(traceback):
    """The user's source of the equation whose generated line raised (the innermost generated
    function in ``traceback``), or None."""
    source = None
    while traceback is not None:
        frame = traceback.tb_frame
        if frame.f_code.co_filename == GENERATED_FILE:
            sources = frame.f_globals.get("__eqn_sources__", ())
            k = traceback.tb_lineno - _FIRST_EQN_LINE
            if 0 <= k < len(sources) and sources[k] is not None:
                source = sources[k]
        traceback = traceback.tb_next
    return source
