"""``jit``'s static arguments: which positions and names are static (``normalize_static``,
checked against the function's signature as JAX checks them) and the split of a call's
arguments into traced and static ones (``split_static``, static values checked hashable)."""
from __future__ import annotations

import inspect
import operator

import numpy as np

from ptojax.errors import StaticArgumentError
from ptojax.source_info import user_frame


def split_static(fn_sig, args, kwargs, static_argnums, static_argnames):
    """(dynamic args, dynamic kwargs, static values) with static values checked hashable."""
    statics = []
    dyn_args = []
    for i, a in enumerate(args):
        if i in static_argnums:
            statics.append(("arg", i, _check_hashable(a, f"positional argument {i}")))
        else:
            dyn_args.append(a)
    dyn_kwargs = {}
    for k, v in kwargs.items():
        if k in static_argnames:
            statics.append(("kw", k, _check_hashable(v, f"argument {k!r}")))
        else:
            dyn_kwargs[k] = v
    return dyn_args, dyn_kwargs, tuple(statics)


def _check_hashable(value, what):
    try:
        hash(value)
    except TypeError:
        raise StaticArgumentError(
            f"static {what} must be hashable, got an unhashable {type(value).__name__} "
            f"({value!r:.60}); pass a tuple instead of a list, or make it a traced argument",
            user_frame(4)) from None
    return value


def normalize_static(fn, static_argnums, static_argnames, donate_argnums=()):
    """(static positions, static names), each completed from the other and checked against
    ``fn``'s signature as JAX does: a position or name the function cannot take raises."""
    static_argnums = index_tuple("static_argnums", static_argnums)
    static_argnames = (static_argnames,) if isinstance(static_argnames, str) else \
        tuple(static_argnames or ())
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no signature (some builtins): nothing to check
        return frozenset(static_argnums), frozenset(static_argnames)
    _check_argnums(params, static_argnums, "static_argnums")
    _check_argnums(params, index_tuple("donate_argnums", donate_argnums), "donate_argnums")
    _check_argnames(params, static_argnames)
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    nums, names = set(static_argnums), set(static_argnames)
    for name in static_argnames:  # a static name also covers its positional slot
        if name in positional:
            nums.add(positional.index(name))
    for i in static_argnums:
        i = i + len(positional) if i < 0 else i
        nums.add(i)
        if i < len(positional) and params[i].kind == params[i].POSITIONAL_OR_KEYWORD:
            names.add(positional[i])
    return frozenset(n for n in nums if n >= 0), frozenset(names)


def index_tuple(what, value) -> tuple:
    try:
        return tuple(int(operator.index(v)) for v in (
            (value,) if isinstance(value, (int, np.integer)) else value or ()))
    except TypeError:
        raise StaticArgumentError(f"jit: {what} must be an int or a sequence of ints, got "
                                  f"{value!r:.60}", user_frame()) from None


def _check_argnums(params, argnums, what):
    """As JAX: unless the function takes *args, every position must be one it has."""
    if not argnums or any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if -min(argnums) > n or max(argnums) >= n:
        raise StaticArgumentError(f"jit: {what}={argnums}, but the function only accepts {n} "
                                  f"positional arguments", user_frame())


def _check_argnames(params, argnames):
    """As JAX: a name must be a parameter that can be passed by keyword (any name, given
    **kwargs), never a positional-only one."""
    positional_only = {p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                            p.VAR_POSITIONAL)}
    keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
    bad = set(argnames) & positional_only or (set() if takes_any else set(argnames) - keyword)
    if bad:
        raise StaticArgumentError(f"jit: static_argnames has invalid names {sorted(bad)}: the "
                                  f"function does not take them as keyword arguments "
                                  f"(parameters: {[p.name for p in params]})", user_frame())
