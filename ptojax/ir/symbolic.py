"""Symbolic dimensions: array sizes known only at run time, within a declared range.

``Dim("seq", 1, 4096)`` is a symbol; arithmetic on symbols and ints gives a ``DimExpr``, a
polynomial with integer coefficients (``seq+1``, ``2*seq``, ``64*seq``), kept in a normal
form so that equal sizes compare equal (``seq*64 == 64*seq``). Shapes in the IR hold ints
and DimExprs; a program traced with them serves every size in the range, its sizes computed
from the arguments' shapes when it runs (``evaluate``).

Questions whose answer depends on the size (``seq < 8``, ``seq // 3``) raise
``InconclusiveDimensionOperation``; those every size in the range answers alike are decided
from the ranges. Equality is decided on the normal form, as JAX's: ``seq == 1`` is False
(broadcasting never stretches a symbolic dimension), ``seq + 1 == 1 + seq`` is True, and
``bool(seq - 1)`` is True (``seq - 1 != 0``): code taking a shortcut for empty arrays takes
the general path, which numpy runs correctly at size 0 too.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from ptojax import dtypes

from ptojax.errors import ConcretizationError, InconclusiveDimensionOperation, UnsupportedError
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


class Symbol(NamedTuple):
    """A named size with its range ``lo..hi`` (``hi`` None: unbounded)."""
    name: str
    lo: int
    hi: int | None


class DimExpr:
    """A polynomial over symbols: ``terms`` maps a monomial (sorted tuple of symbol names, a
    name repeated for a power) to its coefficient; ``()`` is the constant term."""
    __slots__ = ("terms", "symbols", "_hash")
    __array_ufunc__ = None   # numpy defers to our reflected operators

    def __init__(self, terms: dict, symbols: dict):
        self.terms = terms
        self.symbols = symbols
        self._hash = hash(frozenset(terms.items()))

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def _make(terms: dict, symbols: dict):
        terms = {m: c for m, c in terms.items() if c}
        if not terms or set(terms) == {()}:
            return terms.get((), 0)
        return DimExpr(terms, symbols)

    def _coerce(self, other):
        if isinstance(other, DimExpr):
            return other
        if isinstance(other, bool) or not _is_int(other):
            return None
        return DimExpr({(): int(other)}, {})

    def _symbols_with(self, other) -> dict:
        merged = dict(self.symbols)
        for name, sym in other.symbols.items():
            if merged.setdefault(name, sym) != sym:
                raise InconclusiveDimensionOperation(
                    f"two different dimensions are both named {name!r} ({merged[name]} and "
                    f"{sym}); give them different names")
        return merged

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, other):
        other = self._coerce(other)
        if other is None:
            return NotImplemented
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms.get(m, 0) + c
        return DimExpr._make(terms, self._symbols_with(other))

    __radd__ = __add__

    def __neg__(self):
        return DimExpr._make({m: -c for m, c in self.terms.items()}, self.symbols)

    def __sub__(self, other):
        other = self._coerce(other)
        return NotImplemented if other is None else self + (-other)

    def __rsub__(self, other):
        other = self._coerce(other)
        return NotImplemented if other is None else other + (-self)

    def __mul__(self, other):
        other = self._coerce(other)
        if other is None:
            return NotImplemented
        terms: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = tuple(sorted(m1 + m2))
                terms[m] = terms.get(m, 0) + c1 * c2
        return DimExpr._make(terms, self._symbols_with(other))

    __rmul__ = __mul__

    def __floordiv__(self, other):
        quotient = self.divide_exactly(other)
        if quotient is None:
            raise self._inconclusive(f"{self} // {other}", "is not a whole number for every "
                                     "size in the range")
        return quotient

    def __mod__(self, other):
        if self.divide_exactly(other) is None:
            raise self._inconclusive(f"{self} % {other}", "depends on the size")
        return 0

    def divide_exactly(self, other):
        """``self / other`` when it is a polynomial with integer coefficients, else None."""
        if isinstance(other, DimExpr):
            if other == self:
                return 1
            if len(other.terms) != 1 or () in other.terms:
                return None
            (mono, coeff), = other.terms.items()
            terms = {}
            for m, c in self.terms.items():
                rest = _remove(m, mono)
                if rest is None or c % coeff:
                    return None
                terms[rest] = c // coeff
            return DimExpr._make(terms, self.symbols)
        if not _is_int(other) or other == 0:
            return None
        if any(c % other for c in self.terms.values()):
            return None
        return DimExpr._make({m: c // other for m, c in self.terms.items()}, self.symbols)

    # -- comparisons ----------------------------------------------------------------------
    def __eq__(self, other):
        other = self._coerce(other)
        if other is None:
            return NotImplemented
        return self.terms == other.terms

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return self._hash

    def _compare(self, other, op: str):
        other = self._coerce(other)
        if other is None:
            return NotImplemented
        diff = self - other
        lo, hi = diff.bounds() if type(diff) is DimExpr else (diff, diff)
        decided = {"<": (hi < 0, lo >= 0), "<=": (hi <= 0, lo > 0),
                   ">": (lo > 0, hi <= 0), ">=": (lo >= 0, hi < 0)}[op]
        if decided[0]:
            return True
        if decided[1]:
            return False
        raise self._inconclusive(f"{self} {op} {other}", "depends on the size")

    def __lt__(self, other):
        return self._compare(other, "<")

    def __le__(self, other):
        return self._compare(other, "<=")

    def __gt__(self, other):
        return self._compare(other, ">")

    def __ge__(self, other):
        return self._compare(other, ">=")

    def __bool__(self):   # ``self != 0`` on the normal form, as ``==`` (a DimExpr is never 0)
        return True

    # -- conversions that need a concrete size ---------------------------------------------
    def __index__(self):
        raise ConcretizationError(
            f"the symbolic dimension `{self}` is used where a concrete int is needed (an "
            f"index, a Python loop, a numpy call); {self._declared()}. Use array operations "
            f"on it (they run with the size of each call), or make the dimension static",
            user_frame())

    __int__ = __index__

    def __float__(self):
        self.__index__()

    def _declared(self) -> str:
        ranges = ", ".join(_describe(s) for s in self.symbols.values())
        return f"its size is known only when the function runs ({ranges})"

    def _inconclusive(self, question: str, why: str):
        return InconclusiveDimensionOperation(
            f"cannot decide `{question}` for symbolic dimensions: it {why}; "
            f"{self._declared()}", user_frame())

    # -- facts ----------------------------------------------------------------------------
    def bounds(self) -> tuple:
        """(lo, hi) of the value over the symbols' ranges (hi may be math.inf)."""
        lo = hi = 0
        for mono, coeff in self.terms.items():
            m_lo = math.prod(self.symbols[n].lo for n in mono)
            m_hi = math.prod(_hi(self.symbols[n]) for n in mono)
            lo += coeff * (m_lo if coeff > 0 else m_hi)
            hi += coeff * (m_hi if coeff > 0 else m_lo)
        return lo, hi

    def evaluate(self, sizes) -> int:
        """The value with each symbol's size taken from ``sizes`` (name -> int)."""
        total = 0
        for mono, coeff in self.terms.items():
            value = coeff
            for name in mono:
                value *= sizes[name]
            total += value
        return total

    def __str__(self):
        parts = []
        for mono in sorted(self.terms, key=lambda m: (-len(m), m)):
            coeff = self.terms[mono]
            factors = [_power(n, mono.count(n)) for n in sorted(set(mono))]
            if not factors:
                text = str(abs(coeff))
            elif abs(coeff) == 1:
                text = "*".join(factors)
            else:
                text = "*".join([str(abs(coeff)), *factors])
            sign = "-" if coeff < 0 else ("+" if parts else "")
            parts.append(sign + text)
        return "".join(parts)

    def __repr__(self):
        return str(self)

    def __reduce__(self):
        return DimExpr, (self.terms, self.symbols)


def Dim(name: str, lo: int = 1, hi: int | None = None) -> DimExpr:
    """A symbolic dimension named ``name`` taking sizes ``lo..hi`` (inclusive; ``hi`` None for
    no upper bound). Sizes are at least 1, as in JAX's shape polymorphism."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"Dim: the name must be an identifier, got {name!r}")
    if not _is_int(lo) or lo < 1:
        raise ValueError(f"Dim {name!r}: the lower bound must be an int >= 1, got {lo!r}")
    if hi is not None and (not _is_int(hi) or hi < lo):
        raise ValueError(f"Dim {name!r}: the upper bound must be an int >= lo ({lo}) or None, "
                         f"got {hi!r}")
    sym = Symbol(name, int(lo), None if hi is None else int(hi))
    return DimExpr({(name,): 1}, {name: sym})


def is_symbolic(d) -> bool:
    return type(d) is DimExpr


def is_symbolic_shape(shape) -> bool:
    return any(type(d) is DimExpr for d in shape)


def symbol_of(d) -> tuple | None:
    """``(symbol, c)`` when ``d`` is ``c`` times one symbol (``seq``, ``2*seq``), else None."""
    if type(d) is DimExpr and len(d.terms) == 1:
        (mono, coeff), = d.terms.items()
        if coeff >= 1 and len(mono) == 1:
            return d.symbols[mono[0]], coeff
    return None


def size_readers(ir) -> dict:
    """symbol name -> ``(argument index, axis, c)``: where a call of ``ir`` gives each symbol's
    size (``shape[axis] // c`` of that argument, the first whose dimension is ``c`` times the
    symbol); raises UnsupportedError for a symbol no argument's dimension gives."""
    wanted = symbols_of([v.type.shape for v in ir.invars])
    wanted.update(symbols_of([v.type.shape for e in ir.eqns for v in e.outputs]))
    found: dict = {}
    for i, v in enumerate(ir.invars):
        for axis, d in enumerate(v.type.shape):
            scaled = symbol_of(d)
            if scaled is not None and scaled[0].name not in found:
                found[scaled[0].name] = (i, axis, scaled[1])
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise UnsupportedError(f"the sizes of the symbolic dimensions {missing} cannot be read "
                               f"from the arguments' shapes (each must be some argument's "
                               f"whole dimension, or a multiple of it)")
    return found


def symbols_of(values) -> dict:
    """name -> Symbol of every symbol in ``values`` (dims, shapes, nested tuples)."""
    found: dict = {}
    stack = [values]
    while stack:
        v = stack.pop()
        if type(v) is DimExpr:
            found.update(v.symbols)
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
    return found


def evaluate(value, sizes):
    """``value`` (a dim, or nested tuples/lists of dims) with every DimExpr evaluated."""
    if type(value) is DimExpr:
        return value.evaluate(sizes)
    if isinstance(value, tuple):
        return tuple(evaluate(v, sizes) for v in value)
    if isinstance(value, list):
        return [evaluate(v, sizes) for v in value]
    return value


def has_symbols(value) -> bool:
    if type(value) is DimExpr:
        return True
    if isinstance(value, (tuple, list)):
        return any(has_symbols(v) for v in value)
    return False


def slice_indices(s: slice, n) -> tuple:
    """``(start, stop, step, count)`` of ``s`` over a dimension of size ``n`` (an int or a
    DimExpr), as ``slice.indices`` and ``len(range(...))``; a bound that is not the same for
    every size in the range raises ``InconclusiveDimensionOperation``."""
    if type(n) is not DimExpr and not any(type(b) is DimExpr for b in (s.start, s.stop)):
        start, stop, step = s.indices(n)
        return start, stop, step, len(range(start, stop, step))
    step = 1 if s.step is None else s.step
    if step not in (1, -1):
        raise InconclusiveDimensionOperation(
            f"a slice with step {step} of a symbolic dimension of size `{n}` has a size that "
            f"depends on the size's remainder; slice with step 1, or reshape first")
    if step == 1:
        start = 0 if s.start is None else _clamp(s.start, n, 0, n)
        stop = n if s.stop is None else _clamp(s.stop, n, 0, n)
        count = stop - start
    else:
        start = n - 1 if s.start is None else _clamp(s.start, n, -1, n - 1)
        stop = -1 if s.stop is None else _clamp(s.stop, n, -1, n - 1)
        count = start - stop
    return start, stop, step, (0 if count < 0 else count)


def _clamp(i, n, lo, hi):
    """A slice bound counted from the end when negative, then clamped to ``lo..hi``."""
    if i < 0:
        i = i + n
    return lo if i < lo else (hi if i > hi else i)


def linear_symbol(d):
    """The name of the one symbol ``d`` is linear in (``n``, ``n-1``, ``4*n``), else None."""
    if type(d) is not DimExpr:
        return None
    monos = [m for m in d.terms if m != ()]
    return monos[0][0] if len(monos) == 1 and len(monos[0]) == 1 else None


def bounds(d) -> tuple:
    """(lo, hi) of a dimension: its own value twice for an int."""
    return d.bounds() if type(d) is DimExpr else (d, d)


def has_symbolic_shapes(ir) -> bool:
    """Whether an IR's arguments or equation results have symbolic dimensions."""
    return any(is_symbolic_shape(v.type.shape) for v in ir.invars) or any(
        is_symbolic_shape(v.type.shape) for e in ir.eqns for v in e.outputs)


def as_dim(d):
    """``d`` as a dimension: a DimExpr stays, anything else becomes an int (``int(d)``)."""
    return d if type(d) is DimExpr else int(d)


def as_index(d):
    """``operator.index(d)``, but a DimExpr stays (a user-given size: no floats)."""
    return d if type(d) is DimExpr else operator.index(d)


def is_index_scalar(x) -> bool:
    """``x`` is one integer where an argument takes an int (a size, an axis, a count), as JAX
    takes it: a Python or numpy integer (not a bool), a DimExpr, or a 0-d array of an integer
    dtype (read by ``operator.index``: its value when concrete, else a concretization
    error). A sequence of them is not: callers wrap an index scalar into a 1-tuple."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer)) or type(x) is DimExpr:
        return True
    dtype = getattr(x, "dtype", None)
    return (dtype is not None and getattr(x, "shape", None) == ()
            and dtypes.is_integer(dtype))


def divide_exactly(a, b):
    """``a / b`` when it is a whole number (a polynomial) for every size, else None."""
    if type(a) is DimExpr:
        return a.divide_exactly(b)
    if type(b) is DimExpr:
        return None
    return a // b if b and a % b == 0 else None


def _describe(sym: Symbol) -> str:
    return f"`{sym.name}` in {sym.lo}..{'' if sym.hi is None else sym.hi}"


def _hi(sym: Symbol):
    return math.inf if sym.hi is None else sym.hi


def _power(name: str, k: int) -> str:
    return name if k == 1 else f"{name}^{k}"


def _remove(mono: tuple, factor: tuple):
    """``mono`` without the names of ``factor`` (each once), or None if it lacks one."""
    rest = list(mono)
    for n in factor:
        if n not in rest:
            return None
        rest.remove(n)
    return tuple(rest)


def _is_int(x) -> bool:
    try:
        return not isinstance(x, bool) and int(x) == x and hasattr(x, "__index__")
    except (TypeError, ValueError):
        return False


_add_examples(globals(), """
Dim:
    >>> seq = pto.Dim("seq", 1, 4096)
    >>> seq * 64, 2 * seq - 1, seq >= 1
    (64*seq, 2*seq-1, True)
    >>> f = pto.jit(lambda x: pnp.concatenate([x, x]) * 2.0, dynamic={"x": {0: seq}})
    >>> f.lower(pnp.ones((3, 8))).ir.ir.outvars[0].type
    f32[2*seq,8]
    >>> f(pnp.ones((2, 1))).shape, f(pnp.ones((5, 1))).shape, f.cache_size()
    ((4, 1), (10, 1), 1)
""")
