"""PTO IR: ``Var``, ``Literal``, ``Eqn``, ``IR`` and ``ClosedIR``. All immutable.

An IR is a straight-line list of equations in single-assignment form. ``constvars`` are inputs
bound to the ``consts`` of a ``ClosedIR`` (hoisted large constants and values a traced
function closed over); ``invars`` are the function's arguments.
"""
from __future__ import annotations

import itertools
import os
import string
from typing import Any

import numpy as np

from ptojax import dtypes
from ptojax.ir import pretty
from ptojax.ir.types import ShapedArray, TensorType
from ptojax.public import add_examples as _add_examples


class Var:
    """A typed SSA name. Identity-hashed: two Vars are the same only if they are one object."""
    __slots__ = ("type",)

    def __init__(self, type):
        self.type = type

    # JAX's name: a jaxpr variable's abstract value, as the user's function saw it
    aval = property(lambda self: ShapedArray.of(self.type))

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
    val = property(lambda self: self.value)   # JAX's name (jax.extend.core.Literal.val)
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

    # JAX's names for the same fields (``jax.make_jaxpr(f)(x).eqns[0].primitive.name``)
    primitive = property(lambda self: self.prim)
    invars = property(lambda self: self.inputs)
    outvars = property(lambda self: self.outputs)

    def replace(self, **changes) -> "Eqn":
        fields = dict(prim=self.prim, inputs=self.inputs, outputs=self.outputs,
                      params=self.params, source=self.source)
        fields.update(changes)
        return Eqn(**fields)

    def __repr__(self):
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
        return print_ir(self)

    __repr__ = __str__

    def _repr_html_(self):
        return ir_to_html(self)


class ClosedIR:
    """An IR together with the values of its constvars. Calling it evaluates it with
    ``interpreter`` (``ptojax.eval.interpreter.eval_ir``, which installs itself: evaluation
    sits a layer above the IR's data types)."""
    __slots__ = ("ir", "consts")
    interpreter = None

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
    # JAX's ClosedJaxpr names for the same things
    jaxpr = property(lambda self: self.ir)
    in_avals = property(lambda self: [ShapedArray.of(t) for t in self.ir.in_types])
    out_avals = property(lambda self: [ShapedArray.of(t) for t in self.ir.out_types])
    literals = property(lambda self: self.consts)

    def __str__(self):
        return print_ir(self.ir)

    __repr__ = __str__

    def pretty(self, source: bool = False) -> str:
        """The IR as text; ``source=True`` appends each equation's user file:line."""
        return print_ir(self.ir, source=source)

    def _repr_html_(self):
        return ir_to_html(self.ir)

    def __call__(self, *args):
        """Evaluate with the numpy interpreter (or into the active trace)."""
        return ClosedIR.interpreter(self, args)


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


# the display tree: names in print order, rendered as text or HTML by ir/pretty.py -------------
def _names():
    letters = string.ascii_lowercase
    for size in itertools.count(1):
        for chars in itertools.product(letters, repeat=size):
            yield "".join(chars)


class Namer:
    """Assigns stable names a, b, ..., z, aa, ab, ... in order of first appearance."""

    def __init__(self):
        self._names = {}
        self._gen = _names()

    def __call__(self, var) -> str:
        if isinstance(var, Literal):
            return format_literal(var)
        name = self._names.get(var)
        if name is None:
            name = self._names[var] = next(self._gen)
        return name

    def decl(self, var) -> str:
        return f"{self(var)}:{var.type}"


def format_literal(lit: Literal) -> str:
    v = lit.value
    if lit.type.dtype == dtypes.bool_:
        text = str(bool(v))
    elif dtypes.is_float(lit.type.dtype):
        text = repr(float(v))
    elif dtypes.is_complex(lit.type.dtype):
        text = repr(complex(v))
    else:
        text = str(int(v))
    return f"{text}:{lit.type}"


def _param(value, namer):
    """A param as display text, or as a display Block (a sub-IR) or a tuple holding some."""
    if isinstance(value, (IR, ClosedIR)):
        return display_block(as_ir(value), namer)
    if isinstance(value, tuple) and any(isinstance(v, (IR, ClosedIR)) for v in value):
        return tuple(_param(v, namer) for v in value)
    if isinstance(value, np.dtype):
        return dtypes.short_name(value)
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return repr(value) if isinstance(value, str) else str(value)


def _decl(var, namer) -> pretty.Decl:
    return pretty.Decl(namer(var), str(var.type))


def _atom(a, namer) -> pretty.Atom:
    return pretty.Atom(namer(a), type(a) is Literal)


def _source_text(source) -> str:
    """``file.py:12``, with the ``named_scope`` names when there are: ``file.py:12 (a/b)``."""
    text = f"{os.path.basename(source.file)}:{source.line}"
    scope = source.function.rpartition("/")[0]
    return f"{text} ({scope})" if scope else text


def eqn_line(eqn: Eqn, namer) -> pretty.EqnLine:
    outs = [_decl(v, namer) for v in eqn.outputs]
    params = [(k, _param(v, namer)) for k, v in eqn.params.items() if v is not None]
    source = None if eqn.source is None else _source_text(eqn.source)
    return pretty.EqnLine(outs, eqn.prim.name, params, [_atom(a, namer) for a in eqn.inputs],
                          source)


def display_block(ir: IR, namer) -> pretty.Block:
    consts = [_decl(v, namer) for v in ir.constvars]
    invars = [_decl(v, namer) for v in ir.invars]
    eqns = [eqn_line(e, namer) for e in ir.eqns]
    return pretty.Block(consts, invars, eqns, [_atom(v, namer) for v in ir.outvars])


def print_eqn(eqn: Eqn, namer=None, indent: int = 0, source: bool = False) -> str:
    return pretty.eqn_text(eqn_line(eqn, namer or Namer()), indent, source)


def print_ir(ir, source: bool = False) -> str:
    """The text of ``ir`` (an IR or ClosedIR); ``source`` appends each equation's line."""
    return pretty.to_text(display_block(as_ir(ir), Namer()), 0, source)


def ir_to_html(ir, source: bool = True) -> str:
    """HTML of ``ir`` (an IR or ClosedIR); ``source`` appends each equation's file:line."""
    return pretty.to_html(display_block(as_ir(ir), Namer()), source)


def print_order_namer(ir) -> Namer:
    """A Namer that already holds the names ``str(ir)`` shows for ``ir``'s variables."""
    namer = Namer()
    display_block(as_ir(ir), namer)
    return namer


_add_examples(globals(), """
IR:
    >>> ir = pto.make_ir(lambda x, y: x * y + 1.0)(pnp.ones(2), pnp.ones(2)).ir
    >>> [eqn.prim.name for eqn in ir.eqns]
    ['mul', 'add']
ClosedIR:
    >>> closed = pto.make_ir(lambda x: x + 1.0)(pnp.ones(2))
    >>> closed.ir.invars
    (Var(f32[2]),)
""")
