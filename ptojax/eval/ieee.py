"""IEEE special cases without warnings, locally.

numpy reports log(0), x/0, overflow and invalid operations as RuntimeWarnings; ptojax, like
JAX, returns the IEEE result (inf, nan) silently. ``quietly(fn)`` runs ``fn`` under
``np.errstate(all="ignore")``: the setting holds for that call on that thread only, so the
user's own numpy code keeps its warnings, and no warning filter is installed that could hide
ptojax's own warnings (no compiler, a failed build). Every place that runs primitive impls
(eager ops, the compiled executor, constant folding, the tile interpreter) goes through it.
"""
from __future__ import annotations

import functools

import numpy as np

# numpy >= 2 decorates with a per-call, per-thread (contextvar) state; older numpy's
# ContextDecorator would share one saved state between nested calls, so wrap explicitly.
_ERRSTATE_DECORATES_PER_CALL = "__call__" in vars(np.errstate)


def quietly(fn):
    """``fn`` with numpy's floating-point warnings off while it runs."""
    if _ERRSTATE_DECORATES_PER_CALL:
        return np.errstate(all="ignore")(fn)

    @functools.wraps(fn)
    def quiet(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return quiet
