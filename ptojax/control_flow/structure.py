"""How a control-flow equation's operands and results meet the inputs and outputs of its
sub-IRs: what a pass that recurses into bodies (sharding, tiling) needs to carry a fact about
a value (its split across devices, its tile layout) across the boundary, without knowing each
primitive's operand layout.

    for binding in sub_ir_bindings(eqn):
        binding.param             # the params key holding the sub-IR ("body", "branches"...)
        binding.ir                # the sub-IR (a const-free ClosedIR)
        binding.inputs[i]         # Port(role, index) of its input i
        binding.outputs[j]        # Port(role, index) of its output j

Roles of an input:
  ``operand``  operand ``index`` of the equation itself (cond operands, loop consts)
  ``carry``    operand ``index`` on the first iteration, the body's carry output ``index``
               on the next ones (the same index numbers the carry's result)
  ``slice``    one slice of operand ``index`` along its axis 0 (scan xs)
Roles of an output:
  ``result``   result ``index`` of the equation (cond)
  ``carry``    the next iteration's carry ``index``; result ``index`` after the last one
  ``stacked``  one slice along axis 0 of result ``index`` (scan ys)
  ``predicate`` whether the loop runs another iteration (index None)

A fact that must hold for every iteration (a carry's split) is a fixpoint over the
``carry`` ports, as in the transforms' rules.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from ptojax.control_flow.cond import cond_p
from ptojax.control_flow.scan import scan_p
from ptojax.control_flow.while_loop import while_p


class Port(NamedTuple):
    role: str
    index: Optional[int]


class Binding(NamedTuple):
    param: str     # the params key ("branches" holds a tuple: one Binding per branch)
    ir: object     # the sub-IR
    inputs: tuple  # Port per sub-IR input
    outputs: tuple  # Port per sub-IR output


def sub_ir_bindings(eqn) -> list:
    """The Bindings of ``eqn``'s sub-IRs (an empty list for other primitives)."""
    rule = _BINDINGS.get(eqn.prim)
    return rule(eqn) if rule is not None else []


def _ports(role, indices) -> tuple:
    return tuple(Port(role, i) for i in indices)


def _cond(eqn) -> list:
    n_in, n_out = len(eqn.inputs), len(eqn.outputs)
    return [Binding("branches", branch, _ports("operand", range(1, n_in)),
                    _ports("result", range(n_out)))
            for branch in eqn.params["branches"]]


def _scan(eqn) -> list:
    p = eqn.params
    nc, nk, n_in = p["num_consts"], p["num_carry"], len(eqn.inputs)
    inputs = (*_ports("operand", range(nc)), *_ports("carry", range(nk)),
              *_ports("slice", range(nc + nk, n_in)))
    outputs = (*_ports("carry", range(nk)), *_ports("stacked", range(nk, len(eqn.outputs))))
    return [Binding("body", p["body"], inputs, outputs)]


def _while(eqn) -> list:
    p = eqn.params
    ncc, nbc, nk = p["cond_nconsts"], p["body_nconsts"], len(eqn.outputs)
    carries = _ports("carry", range(nk))
    return [Binding("cond", p["cond"], (*_ports("operand", range(ncc)), *carries),
                    (Port("predicate", None),)),
            Binding("body", p["body"], (*_ports("operand", range(ncc, ncc + nbc)), *carries),
                    carries)]


_BINDINGS = {cond_p: _cond, scan_p: _scan, while_p: _while}
