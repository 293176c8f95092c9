"""PTO IR: ``Var``, ``Literal``, ``Eqn``, ``IR`` and ``ClosedIR``. All immutable.

An IR is a straight-line list of equations in single-assignment form. ``constvars`` are inputs
bound to the ``consts`` of a ``ClosedIR`` (hoisted large constants and values a traced
function closed over); ``invars`` are the function's arguments.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ptojax.ir.types import TensorType


class Var:
    """A typed SSA name. Identity-hashed: two Vars are the same only if they are one object."""
    __slots__ = ("type",)

    def __init__(self, type):
        self.type = type

    def __repr__(self):
        return f"Var({self.type})"


class Literal:
    """A scalar constant with its type, written inline in equations."""
    __slots__ = ("value", "type", "_hash")

    def __init__(self, value, type: TensorType):
        self.value = np.asarray(value, dtype=type.dtype)[()]
        self.type = type
        self._hash = hash((self.value.item() if self.value.dtype.kind != "V" else 0,
                           type.dtype))

    aval = property(lambda self: self.type)
    shape = property(lambda self: ())
    ndim = property(lambda self: 0)
    size = property(lambda self: 1)
    dtype = property(lambda self: self.type.dtype)
    weak_type = property(lambda self: self.type.weak_type)

    def __eq__(self, other):
        if type(other) is not Literal or self.type != other.type:
            return False
        a, b = self.value, other.value
        return bool(a == b) or bool(a != a and b != b)  # NaN literals are equal to each other

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"Literal({self.value!r}:{self.type})"


Atom = Any  # Var | Literal


class Params:
    """Immutable, hashable mapping of an equation's parameters (read like a dict)."""
    __slots__ = ("_items", "_dict", "_hash")

    def __init__(self, mapping=None, **items):
        d = dict(mapping or {}, **items)
        self._dict = d
        self._items = tuple(sorted(d.items()))
        self._hash = None

    def __getitem__(self, k):
        return self._dict[k]

    def get(self, k, default=None):
        return self._dict.get(k, default)

    def __contains__(self, k):
        return k in self._dict

    def __iter__(self):
        return iter(self._dict)

    def __len__(self):
        return len(self._dict)

    def items(self):
        return self._dict.items()

    def keys(self):
        return self._dict.keys()

    def values(self):
        return self._dict.values()

    def as_dict(self) -> dict:
        return dict(self._dict)

    def replace(self, **updates) -> "Params":
        return Params({**self._dict, **updates})

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._items)
        return self._hash

    def __eq__(self, other):
        return isinstance(other, Params) and self._items == other._items

    def __repr__(self):
        return f"Params({self._dict!r})"


class Eqn:
    """``outputs = prim[params](*inputs)``, remembering the user's source line."""
    __slots__ = ("prim", "inputs", "outputs", "params", "source")

    def __init__(self, prim, inputs, outputs, params: Params, source=None):
        self.prim = prim
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.params = params if isinstance(params, Params) else Params(params)
        self.source = source

    def replace(self, **changes) -> "Eqn":
        fields = dict(prim=self.prim, inputs=self.inputs, outputs=self.outputs,
                      params=self.params, source=self.source)
        fields.update(changes)
        return Eqn(**fields)

    def __repr__(self):
        from ptojax.ir.printer import print_eqn
        return print_eqn(self)


class IR:
    """A function in PTO IR: ``constvars``, ``invars`` → ``eqns`` → ``outvars``."""
    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = tuple(constvars)
        self.invars = tuple(invars)
        self.eqns = tuple(eqns)
        self.outvars = tuple(outvars)

    in_types = property(lambda self: [v.type for v in self.invars])
    out_types = property(lambda self: [v.type for v in self.outvars])

    def __str__(self):
        from ptojax.ir.printer import print_ir
        return print_ir(self)

    __repr__ = __str__

    def _repr_html_(self):
        from ptojax.ir.html import ir_to_html
        return ir_to_html(self)


class ClosedIR:
    """An IR together with the values of its constvars."""
    __slots__ = ("ir", "consts")

    def __init__(self, ir: IR, consts=()):
        if len(consts) != len(ir.constvars):
            raise ValueError(f"ClosedIR: {len(ir.constvars)} constvars but {len(consts)} consts")
        self.ir = ir
        self.consts = tuple(consts)

    in_types = property(lambda self: self.ir.in_types)
    out_types = property(lambda self: self.ir.out_types)
    eqns = property(lambda self: self.ir.eqns)
    invars = property(lambda self: self.ir.invars)
    outvars = property(lambda self: self.ir.outvars)

    def __str__(self):
        from ptojax.ir.printer import print_ir
        return print_ir(self.ir)

    __repr__ = __str__

    def pretty(self, source: bool = False) -> str:
        """The IR as text; ``source=True`` appends each equation's user file:line."""
        from ptojax.ir.printer import print_ir
        return print_ir(self.ir, source=source)

    def _repr_html_(self):
        from ptojax.ir.html import ir_to_html
        return ir_to_html(self.ir)

    def __call__(self, *args):
        """Evaluate with the numpy interpreter (or into the active trace)."""
        from ptojax.eval.interpreter import eval_ir
        return eval_ir(self, args)


def sub_irs(params) -> list:
    """The IRs/ClosedIRs held in an equation's params (bodies, branches, kernels)."""
    out = []
    for v in params.values():
        if isinstance(v, (IR, ClosedIR)):
            out.append(v)
        elif isinstance(v, tuple):
            out.extend(x for x in v if isinstance(x, (IR, ClosedIR)))
    return out


def as_ir(x) -> IR:
    return x.ir if isinstance(x, ClosedIR) else x



def consts_as_args(closed: ClosedIR) -> tuple:
    """(ClosedIR without consts whose leading invars are the former constvars, the consts):
    the form sub-IRs take in equation params, where every input is an explicit operand."""
    ir = closed.ir
    if not ir.constvars:
        return closed, ()
    return ClosedIR(IR((), (*ir.constvars, *ir.invars), ir.eqns, ir.outvars)), closed.consts
