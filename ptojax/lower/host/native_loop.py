"""Loops over small arrays compiled whole: every step of a loop in one C++ function.

A loop whose body works on small arrays -- a hidden Markov model's forward pass over a
25-state vector, an RNN cell, a sampler's step, an ODE solver's adaptive steps -- spends its
time in the executor, not in arithmetic: each step runs the body's equations one by one
through their numpy impls (a 2000-step HMM forward pass of JAX's ``examples/hmm_em.py``: 88 us
a step, 176 ms, where JAX's compiled loop takes 2.1 ms). XLA compiles such a loop into native
code, and so does the cpu backend: the kernel library of a host program holding the loop also
compiles it (``loop_source``) as one C++ function, run by one call (``native_loop_runners``):

- a scan's steps are a C++ ``for``, a while's a ``for`` that breaks when its condition
  fails (or at ``max_steps``); each body equation is a loop nest over its static shape
  (``loop_forms.py``), a loop or ``cond`` inside the body is emitted inline;
- the carries live in two buffers swapped after each step; each step reads its slice of
  every ``xs`` and writes its slice of every ``ys`` in place.

Which loops (``compiles_whole``): static lengths and shapes; bodies (and conditions, branches,
inner loops) without effects or consts whose equations all have a form in
``loop_forms.FORMS`` (or a ``host`` fact), over float32, int32, uint32, int16, int8, uint8
and bool; every value at most ``MAX_ELEMENTS`` elements and every product at most
``MAX_PRODUCT_WORK`` multiply-adds -- a body of larger arrays spends its time in arithmetic,
which its own kernels and BLAS do better than these plain loops.
"""
from __future__ import annotations

import numpy as np

from ptojax.control_flow.cond import cond_p
from ptojax.control_flow.scan import scan_p
from ptojax.control_flow.while_loop import while_p
from ptojax.ir.symbolic import has_symbols
from ptojax.lower.host.build import EntryPoint
from ptojax.lower.host.loop_forms import FORMS, Form, LoopFunction, erf_inv_source, ir_compiles

NAMESPACE = "ptojax_loops"


# --- which loops -------------------------------------------------------------------------------
def compiles_whole(eqn) -> bool:
    """Whether loop equation ``eqn`` runs as one compiled function (module docstring)."""
    if eqn.prim not in (scan_p, while_p) or has_symbols(tuple(eqn.params.values())):
        return False
    return all(ir_compiles(c.ir) and not c.consts for c in loop_irs(eqn))


# --- C++ of one loop ------------------------------------------------------------------------------
def loop_source(index: int, eqn) -> str:
    """The C++ function ``loop_<index>(args)`` running loop ``eqn`` whole. ``args`` are its
    operands, then its results, each a C-contiguous buffer (its sub-IRs hold no consts:
    ``compiles_whole``)."""
    fn = LoopFunction()
    operands, outs = fn.arguments(eqn.inputs), fn.arguments(eqn.outputs)
    (_scan if eqn.prim is scan_p else _while)(fn, eqn, operands, outs)
    return fn.source(f"loop_{index}")


def loop_irs(eqn) -> list:
    """The ClosedIRs of loop ``eqn``: a while's cond and body, a scan's body."""
    return [eqn.params["cond"], eqn.params["body"]] if eqn.prim is while_p else \
        [eqn.params["body"]]


def _scan(fn, eqn, operands, outs):
    """Scan ``eqn`` over the buffers named ``operands`` into those named ``outs``."""
    p = eqn.params
    body = p["body"].ir
    nc, ncarry, length = p["num_consts"], p["num_carry"], int(p["length"])
    fn.bind_all(body.invars[:nc], operands[:nc])
    carries = body.invars[nc:nc + ncarry]
    current, following = fn.carry_buffers(carries, operands[nc:nc + ncarry])
    step, i = fn.fresh(), fn.fresh()
    fn.lines.append(f"for (long long {step} = 0; {step} < {length}; ++{step}) {{")
    fn.lines.append(f"  const long long {i} = "
                    f"{f'{length - 1} - {step}' if p['reverse'] else step};")
    fn.bind_all(carries, current)
    for v, base in zip(body.invars[nc + ncarry:], operands[nc + ncarry:]):
        fn.bind(v, f"({base} + {i} * {v.type.size})")
    fn.body(body)
    for v, dest in zip(body.outvars[:ncarry], following):
        fn.store(dest, v)
    for v, base in zip(body.outvars[ncarry:], outs[ncarry:]):
        fn.store(f"({base} + {i} * {v.type.size})", v)
    fn.swap(current, following)
    fn.lines.append("}")
    fn.finish(carries, current, outs)


def _while(fn, eqn, operands, outs):
    """While loop ``eqn`` over the buffers named ``operands`` into those named ``outs``."""
    p = eqn.params
    cond, body = p["cond"].ir, p["body"].ir
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    fn.bind_all(cond.invars[:ncc], operands[:ncc])
    fn.bind_all(body.invars[:nbc], operands[ncc:ncc + nbc])
    carries = body.invars[nbc:]
    current, following = fn.carry_buffers(carries, operands[ncc + nbc:])
    limit, step = p["max_steps"], fn.fresh()
    fn.lines.append(f"for (long long {step} = 0;" +
                    (f" {step} < {int(limit)};" if limit is not None else ";") + f" ++{step}) {{")
    fn.bind_all(cond.invars[ncc:], current)
    fn.body(cond)
    fn.lines.append(f"  if (!{fn.element(cond.outvars[0], '0')}) break;")
    fn.bind_all(carries, current)
    fn.body(body)
    for v, dest in zip(body.outvars, following):
        fn.store(dest, v)
    fn.swap(current, following)
    fn.lines.append("}")
    fn.finish(carries, current, outs)


def entry(index: int, kernel_index: int) -> EntryPoint:
    """The exported launcher of loop ``index``, numbered after the program's kernels."""
    return EntryPoint(f"ptojax_launch_{kernel_index}", f"loop_{index}",
                      f"    {NAMESPACE}::loop_{index}(args);")


def program_loops_source(loops) -> str:
    """The C++ of a program's whole-compiled loops (``loops``: their equations, in order)."""
    if not loops:
        return ""
    return (f"#include <algorithm>\n#include <cmath>\n#include <cstring>\n#include <limits>\n#include <memory>\n"
            f"namespace {NAMESPACE} {{\nusing namespace pto;\nusing namespace pto::host;\n"
            + erf_inv_source() + "\n".join(loop_source(i, e) for i, e in enumerate(loops))
            + f"}}  // namespace {NAMESPACE}\n")


class _Loop(Form):
    """A loop inside a loop's body: its code inline, on buffers of its own."""

    def accepts(self, eqn) -> bool:
        return compiles_whole(eqn)

    def emit(self, fn, eqn):
        outs = [fn.value(v) for v in eqn.outputs]
        (_scan if eqn.prim is scan_p else _while)(fn, eqn, fn.operand_buffers(eqn.inputs), outs)


class _Cond(Form):
    """``cond``/``switch``: the chosen branch's equations in an ``if`` chain, each writing
    the results' buffers (the index clamped, as ``lax.switch`` clamps)."""

    def accepts(self, eqn) -> bool:
        return all(ir_compiles(b.ir) and not b.consts for b in eqn.params["branches"])

    def emit(self, fn, eqn):
        index, operands = eqn.inputs[0], eqn.inputs[1:]
        branches = eqn.params["branches"]
        outs = [fn.value(v) for v in eqn.outputs]
        names = fn.operand_buffers(operands)
        chosen = fn.fresh()
        fn.lines.append(f"  const long long {chosen} = std::min<long long>(std::max<long long>("
                        f"{fn.element(index, '0')}, 0), {len(branches) - 1});")
        for k, branch in enumerate(branches):
            fn.lines.append(f"  {'if' if k == 0 else 'else if'} ({chosen} == {k}) {{")
            fn.bind_all(branch.ir.invars, names)
            fn.body(branch.ir)
            for v, dest in zip(branch.ir.outvars, outs):
                fn.store(dest, v)
            fn.lines.append("  }")


FORMS.update({scan_p: _Loop(), while_p: _Loop(), cond_p: _Cond()})


# --- running them ---------------------------------------------------------------------------------
def native_loop_runners(library, loops, first_entry: int) -> dict:
    """{scan equation: the function running it whole with ``library``'s compiled loop}."""
    return {eqn: _runner(library, eqn, first_entry + i) for i, eqn in enumerate(loops)}


def _runner(library, eqn, index):
    in_dtypes = [a.type.dtype for a in eqn.inputs]
    out_made = [(v.type.shape, v.type.dtype) for v in eqn.outputs]
    launch = library.launcher(index, len(in_dtypes) + len(out_made))
    contiguous, empty = np.ascontiguousarray, np.empty

    def run(*args):
        arrays = [contiguous(x, dtype) for x, dtype in zip(args, in_dtypes)]
        outs = [empty(shape, dtype) for shape, dtype in out_made]
        launch([*arrays, *outs], 1, False)
        return outs
    return run
