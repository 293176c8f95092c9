"""``jax_check_tracer_leaks``: when an outermost abstract trace (``jit``, ``make_jaxpr``) ends,
each of its tracers still held by user code — a module global, a user function's closure or
frame variable, an object of a user class, reached through containers — is a leak
(``LeakedTracerError``), as JAX's leak checker. The walk up the referrers does not enter
ptojax's own objects: its IRs hold the tracers nested IRs close over, and some of its caches
keep rules that close over them (these are not the user's leaks)."""
from __future__ import annotations

import gc
import sys
import types

from ptojax.errors import LeakedTracerError
from ptojax.ir.core import IR, ClosedIR
from ptojax.source_info import user_frame


def _is_ptojax(obj) -> bool:
    """Whether ``obj`` (a function, a frame, an instance) belongs to ptojax's own code."""
    if isinstance(obj, types.FrameType):
        return obj.f_globals.get("__name__", "").startswith("ptojax")
    if isinstance(obj, types.FunctionType):
        return (obj.__module__ or "").startswith("ptojax")
    return type(obj).__module__.startswith("ptojax")


def _user_holder(obj, module_dicts) -> str | None:
    """What ``obj`` is when it is a place user code keeps values (a module's globals, a user
    function's closure or frame, an instance of a user class), else None."""
    if isinstance(obj, dict) and id(obj) in module_dicts:
        name = module_dicts[id(obj)]
        return None if name.startswith("ptojax") else f"a global of module {name}"
    if isinstance(obj, types.FrameType):
        return None if _is_ptojax(obj) else f"a local variable of {obj.f_code.co_name}"
    if isinstance(obj, types.FunctionType):
        return None if _is_ptojax(obj) else f"the closure of {obj.__qualname__}"
    if isinstance(obj, (list, tuple, dict, set, types.CellType)) or _is_ptojax(obj):
        return None
    return f"an object of class {type(obj).__qualname__}"


def _leak_holder(tracer, ignore: set, module_dicts: dict) -> str | None:
    """Where user code still holds ``tracer``: a short walk up its referrers through
    containers, a level at a time (one heap scan each), not into ptojax's own objects (its
    IRs keep the tracers nested IRs close over; some of its caches keep rules), or None."""
    seen, level = set(ignore), (tracer,)
    for _ in range(6):
        above = []
        seen.add(id(above))
        for r in gc.get_referrers(_MARK, *level):
            if id(r) in seen or isinstance(r, (ClosedIR, IR)) or _is_arguments(r):
                continue
            seen.add(id(r))
            holder = _user_holder(r, module_dicts)
            if holder is not None:
                return holder
            if not (_is_ptojax(r) or id(r) in module_dicts or
                    isinstance(r, (types.FrameType, types.ModuleType))):
                above.append(r)
        if not above:
            return None
        level = tuple(above[:200])
    return None


_MARK = object()   # the first argument of each get_referrers call, to know its argument tuple


def _is_arguments(r) -> bool:
    """``r`` is the argument tuple of the ``get_referrers(_MARK, *level)`` call itself."""
    return type(r) is tuple and len(r) > 0 and r[0] is _MARK


def check_no_leaks(trace) -> None:
    """``jax_check_tracer_leaks``: raise ``LeakedTracerError`` if a tracer of the ended
    ``trace`` is still held by user code (a global, a closure, a frame's variable, an
    object), as JAX's leak checker."""
    gc.collect()
    kept = {id(t) for t in trace.full_precision.values()}   # the trace's own (jit's scalars)
    candidates = [r for r in gc.get_referrers(trace)
                  if getattr(r, "_trace", None) is trace and id(r) not in kept]
    ignore = {id(candidates), id(sys._getframe())}
    module_dicts = {id(m.__dict__): n for n, m in list(sys.modules.items())
                    if getattr(m, "__dict__", None) is not None}
    leaks = []
    for tracer in candidates:
        holder = _leak_holder(tracer, ignore, module_dicts)
        if holder is not None:
            leaks.append(f"  Traced<{tracer.aval}>, held by {holder}")
    if leaks:
        raise LeakedTracerError(
            f"Leaked trace `{trace.name}`: {len(leaks)} of its tracers are still referenced "
            f"after it ended (jax_check_tracer_leaks):\n" + "\n".join(leaks[:5]) +
            "\nReturn traced values from the function instead of storing them outside it.",
            user_frame())
