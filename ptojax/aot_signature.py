"""What an ahead-of-time compiled function (``jit(f).lower(...).compile()``) accepts, as
JAX's ``jax.stages.Compiled``: the same pytree structure of non-static arguments as at
lowering, each leaf of the shape and dtype it was lowered for (weak types aside). A call
that differs raises JAX's ``TypeError`` listing every mismatch by argument name; a tracer
argument (``vmap``, ``grad`` or ``jit`` of the compiled function) raises, as compiled
functions are not transformable."""
from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np

from ptojax.eval.leaves import leaf_type
from ptojax.trace import Tracer
from ptojax.pytree import keystr, tree_flatten_with_path


def _fmt(t) -> str:
    return f"{np.dtype(t.dtype).name}[{','.join(map(str, t.shape))}]"


class Signature:
    """The argument structure and leaf types a function was lowered for."""

    def __init__(self, fn, args, kwargs, static_argnums, static_argnames, donate_argnums=()):
        self._params = _parameter_names(fn)
        self._static_argnums = tuple(static_argnums)
        self._static_argnames = tuple(static_argnames)
        pairs, self.in_tree = self._flatten(args, kwargs)
        self.paths = [p for p, _ in pairs]
        self.types = [leaf_type(x).strip_weak() for _, x in pairs]
        self._donated = [path[0].idx == 0 and self._positions[path[1].idx] in donate_argnums
                         for path in self.paths]

    @property
    def donate_argnums(self) -> tuple:
        """The indices of the donated leaves among the flat non-static leaves, as JAX's
        stages give them."""
        return tuple(i for i, d in enumerate(self._donated) if d)

    def in_avals(self):
        """The ``(args, kwargs)`` pytree of the non-static leaves' types."""
        return self.in_tree.unflatten(self.types)

    def args_info(self):
        """The ``(args, kwargs)`` pytree of ``ArgInfo`` (type, donated) of the non-static
        leaves, as JAX's ``args_info``."""
        return self.in_tree.unflatten([ArgInfo(t, d) for t, d in zip(self.types, self._donated)])

    def _flatten(self, args, kwargs):
        dynamic = tuple(a for i, a in enumerate(args) if i not in self._static_argnums)
        positions = [i for i in range(len(args)) if i not in self._static_argnums]
        kw = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        pairs, tree = tree_flatten_with_path((dynamic, kw))
        self._positions = positions
        return pairs, tree

    def check(self, args, kwargs):
        """The flat leaves of a call's ``(args, kwargs)``, after checking them."""
        pairs, tree = tree_flatten_with_path((tuple(args), dict(kwargs)))
        for _, x in pairs:
            if isinstance(x, Tracer):
                raise TypeError("Cannot apply JAX transformations to a function lowered and "
                                "compiled for a particular signature. Detected argument of "
                                f"Tracer type {type(x).__name__}.")
        if tree != self.in_tree:
            raise TypeError(f"Function compiled with input pytree does not match the input "
                            f"pytree it was called with: compiled for {self.in_tree}, "
                            f"called with {tree}")
        mismatches = []
        for (path, x), want in zip(pairs, self.types):
            got = leaf_type(x).strip_weak()
            if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
                mismatches.append(f"Argument '{self._name(path)}' compiled with {_fmt(want)} "
                                  f"and called with {_fmt(got)}")
        if mismatches:
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. Perhaps you are calling the compiled executable "
                            "with a different enable_x64 mode than when it was AOT compiled? "
                            "The mismatches are:\n" + "\n".join(mismatches))
        return [x for _, x in pairs]

    def _name(self, path) -> str:
        if path[0].idx == 0:      # a positional argument
            position = self._positions[path[1].idx] if path[1].idx < len(self._positions) \
                else path[1].idx
            base = self._params[position] if position < len(self._params) \
                else f"args[{position}]"
            return base + keystr(path[2:])
        return f"{path[1].key}" + keystr(path[2:])


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """One argument leaf of a lowered function (``jax.stages.ArgInfo``): its type
    (``_aval``: shape and dtype) and whether it is donated.

    Example:
      >>> f = pto.jit(lambda x, y: x + y, donate_argnums=1)
      >>> [(a.shape, a.dtype, a.donated) for a in f.lower(1.0, pnp.ones(2)).args_info[0]]
      [((), dtype('float32'), False), ((2,), dtype('float32'), True)]
    """
    _aval: Any
    donated: bool

    @property
    def shape(self):
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype


def _parameter_names(fn) -> list:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
