"""``jit(f, dynamic=...)``: which argument dimensions are symbolic, and their sizes per call.

``dynamic`` maps an argument (its name, or its position) to ``{axis: Dim}``: every array
leaf of that argument has that axis symbolic (``{axis: 2*Dim}``: sizes that are multiples of
2, e.g. to split the axis over two devices). A call's sizes are checked against the
declared ranges (and one symbol must take one size across all arguments); the traced types
replace those sizes with the symbols, so every call in range shares one signature, one trace
and one compiled program.
"""
from __future__ import annotations

import inspect

from ptojax.errors import DimensionRangeError, StaticArgumentError
from ptojax.ir.symbolic import DimExpr, Symbol, symbol_of
from ptojax.ir.types import TensorType
from ptojax.source_info import user_frame
from ptojax.pytree import keystr


class DynamicShapes:
    """A checked ``dynamic=`` spec of one function: ``axes[position]`` is ``{axis: Symbol}``."""

    def __init__(self, fn, dynamic: dict, static_argnums=frozenset()):
        if not isinstance(dynamic, dict):
            raise StaticArgumentError(f"jit: dynamic must be a dict from argument names or "
                                      f"positions to {{axis: pto.Dim(...)}}, got "
                                      f"{dynamic!r:.80}", user_frame())
        self.fn_name = getattr(fn, "__name__", "fn")
        self.names, self.keywords, self.varargs = _parameter_names(fn)
        self.axes: dict = {}      # position or keyword name -> {axis: Symbol}
        for arg, dims in dynamic.items():
            self.axes[self._position(arg, static_argnums)] = _checked_dims(arg, dims)

    def _position(self, arg, static_argnums):
        if isinstance(arg, int) and not isinstance(arg, bool):
            position = arg
        elif isinstance(arg, str) and arg in self.names:
            position = self.names.index(arg)
        elif isinstance(arg, str) and (arg in self.keywords or self.keywords is None):
            return arg  # a keyword-only argument (or one passed by **kwargs)
        elif isinstance(arg, str):
            raise StaticArgumentError(f"jit: dynamic names {arg!r}, which {self.fn_name} does "
                                      f"not take (its arguments: {self.names + self.keywords})",
                                      user_frame())
        else:
            raise StaticArgumentError(f"jit: dynamic keys are argument names or positions, got "
                                      f"{arg!r}", user_frame())
        if not self.varargs and not 0 <= position < len(self.names):
            raise StaticArgumentError(f"jit: dynamic names argument {position}, but "
                                      f"{self.fn_name} takes {len(self.names)} positional "
                                      f"arguments", user_frame())
        if position in static_argnums:
            raise StaticArgumentError(f"jit: argument {arg!r} is static; it cannot also have "
                                      f"dynamic dimensions", user_frame())
        return position

    def abstract(self, paths, in_types, dynamic_positions) -> tuple:
        """``in_types`` with the declared dimensions made symbolic; checks each size against
        its range and the sizes of one symbol against each other. ``paths`` are the leaves'
        paths in ``(args, kwargs)`` and ``dynamic_positions`` the original position of each
        non-static positional argument."""
        seen: dict = {}   # symbol name -> (size, where)
        out = []
        for path, t in zip(paths, in_types):
            arg = _argument_of(path, dynamic_positions)
            if isinstance(arg, str) and arg in self.names:
                arg = self.names.index(arg)
            dims = self.axes.get(arg)
            out.append(t if dims is None else self._leaf_type(path, arg, t, dims, seen))
        return tuple(out)

    def _leaf_type(self, path, arg, t: TensorType, dims: dict, seen: dict) -> TensorType:
        shape = list(t.shape)
        name = self.names[arg] if isinstance(arg, int) and arg < len(self.names) else arg
        where = f"{self.fn_name}: argument {name!r}{keystr(path[2:])}"
        for axis, (sym, c) in dims.items():
            if not -len(shape) <= axis < len(shape):
                raise DimensionRangeError(
                    f"{where} has shape {tuple(t.shape)}, with no axis {axis} for the dynamic "
                    f"dimension {sym.name!r}", user_frame())
            size = shape[axis]
            if size % c:
                raise DimensionRangeError(
                    f"{where} has size {size} on axis {axis}, which is not a multiple of {c} "
                    f"as declared ({c}*{sym.name})", user_frame())
            size //= c
            if not sym.lo <= size <= (sym.hi if sym.hi is not None else size):
                raise DimensionRangeError(
                    f"{where} has size {size * c} on axis {axis}, outside the range "
                    f"{_range(sym, c)} declared for the dynamic dimension "
                    f"{'' if c == 1 else f'{c}*'}{sym.name!r}; pass a size in the range or "
                    f"widen it in pto.Dim({sym.name!r}, lo, hi)", user_frame())
            first = seen.setdefault(sym.name, (size, where, axis))
            if first[0] != size:
                raise DimensionRangeError(
                    f"the dynamic dimension {sym.name!r} has size {first[0]} in {first[1]} "
                    f"(axis {first[2]}) but {size} in {where} (axis {axis}); one dimension "
                    f"takes one size per call", user_frame())
            shape[axis] = c * _symbol_expr(sym)
        return t.update(shape=tuple(shape))


def _symbol_expr(sym: Symbol) -> DimExpr:
    return DimExpr({(sym.name,): 1}, {sym.name: sym})


def _range(sym: Symbol, c: int) -> str:
    hi = "" if sym.hi is None else sym.hi * c
    return f"{sym.lo * c}..{hi}" + ("" if c == 1 else f" (multiples of {c})")


def _checked_dims(arg, dims) -> dict:
    if not isinstance(dims, dict):
        raise StaticArgumentError(f"jit: dynamic[{arg!r}] must be a dict {{axis: pto.Dim(...)}}, "
                                  f"got {dims!r:.60}", user_frame())
    out = {}
    for axis, dim in dims.items():
        scaled = symbol_of(dim)
        if not isinstance(axis, int) or isinstance(axis, bool) or scaled is None:
            raise StaticArgumentError(
                f"jit: dynamic[{arg!r}] maps axes (ints) to dimensions made with "
                f"pto.Dim(name, lo, hi), or a multiple of one (2*pto.Dim(...)); got "
                f"{axis!r}: {dim!r:.60}", user_frame())
        out[axis] = scaled
    return out


def _parameter_names(fn) -> tuple:
    """(positional parameter names, keyword-only names or None if it takes **kwargs, whether
    it takes *args); no signature: anything goes."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return [], None, True
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return positional, None, varargs
    return positional, [p.name for p in params if p.kind == p.KEYWORD_ONLY], varargs


def _argument_of(path, dynamic_positions):
    """The original position (or keyword name) of the argument holding the leaf at ``path``."""
    if path[0].idx == 0:
        return dynamic_positions[path[1].idx]
    return path[1].key

