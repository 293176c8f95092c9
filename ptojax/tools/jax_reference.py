"""Evaluate PTO IR equation by equation with ``jax.numpy``/``jax.lax`` — the independent
reference of ``check_numerics(..., reference="jax")``.

JAX is imported only when a ``JaxEquations`` is made (ptojax itself never needs it). Each
primitive's ``reference`` fact maps it to its JAX counterpart with JAX's (XLA's) semantics,
64-bit types enabled; sub-IRs (scan, cond, while, calls) become ``lax.scan``/``lax.switch``/
``lax.while_loop`` over the JAX evaluation of their bodies (the fact's ``run`` argument).
Primitives without a JAX counterpart (gather/scatter in ptojax's point-indexing form,
threefry, collectives, tile kernels) run through their own numpy impl;
``JaxEquations.fallbacks`` names them, since those equations are not checked independently.
"""
from __future__ import annotations

import numpy as np

from ptojax.control_flow import cond_p, scan_p, while_p
from ptojax.errors import UnsupportedError
from ptojax.eval.ieee import quietly
from ptojax.ir.core import Literal, as_ir, sub_irs

# their bodies run inside lax.scan/switch/while_loop, where a numpy fallback cannot
TRACED_BODIES = frozenset({cond_p, scan_p, while_p})


def import_jax():
    """``(jax, jax.numpy, jax.lax)``, or an error saying how to get them."""
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        raise UnsupportedError("check_numerics(reference='jax') needs JAX installed (pip install "
                               "jax; the CPU build is enough); reference='interpreter' needs "
                               "nothing extra") from None
    return jax, jnp, lax


def _x64(jax):
    """A context enabling 64-bit types (explicit float64/int64 IR values stay 64-bit)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64
    return enable_x64()


class JaxEquations:
    """``evaluate(eqn, inputs)``: one equation's outputs computed by JAX from numpy inputs.
    ``fallbacks`` names the primitives that ran through their numpy impl instead."""

    def __init__(self):
        self._jax, self._jnp, self._lax = import_jax()
        self.fallbacks: set = set()
        self._functions: dict = {}    # primitive -> its JAX function

    def evaluate(self, eqn, inputs) -> list:
        jnp = self._jnp
        with _x64(self._jax):
            outs = self._apply(eqn, [jnp.asarray(x) for x in inputs])
            return [np.asarray(o) for o in outs]

    def _function(self, prim):
        """The primitive's JAX function, or None when it has no JAX counterpart."""
        if prim not in self._functions:
            reference = prim.fact("reference")
            self._functions[prim] = None if reference is None else \
                reference(self._jnp, self._lax)
        return self._functions[prim]

    def _untranslatable(self, ir) -> set:
        """Names of the primitives in ``ir`` (sub-IRs included) without a JAX function."""
        names = set()
        for eqn in as_ir(ir).eqns:
            if self._function(eqn.prim) is None:
                names.add(eqn.prim.name)
            for sub in sub_irs(eqn.params):
                names |= self._untranslatable(sub)
        return names

    def _fallback_name(self, eqn):
        """None if JAX can evaluate ``eqn``, else how to name it among the fallbacks."""
        if self._function(eqn.prim) is None:
            return eqn.prim.name
        if eqn.prim in TRACED_BODIES:
            inner = set().union(*(self._untranslatable(b) for b in sub_irs(eqn.params)))
            if inner:
                return f"{eqn.prim.name} (its body has {', '.join(sorted(inner))})"
        return None

    def _apply(self, eqn, inputs) -> list:
        jnp = self._jnp
        fallback = self._fallback_name(eqn)
        if fallback is not None:
            self.fallbacks.add(fallback)
            out = quietly(eqn.prim.impl)(*[np.asarray(x) for x in inputs], **eqn.params)
            outs = out if eqn.prim.multiple_results else [out]
            return [jnp.asarray(np.asarray(o)) for o in outs]
        params = dict(eqn.params.items())
        if sub_irs(eqn.params):
            params["run"] = self._body_fn
        out = self._function(eqn.prim)(*inputs, **params)
        outs = list(out) if eqn.prim.multiple_results else [out]
        return [jnp.asarray(o, v.type.dtype) for o, v in zip(outs, eqn.outputs)]

    def _body_fn(self, sub):
        """A Python function evaluating a sub-IR with JAX (traceable by lax.scan and
        friends)."""
        ir = as_ir(sub)

        def run(*args):
            env = dict(zip(ir.invars, args))
            for eqn in ir.eqns:
                env.update(zip(eqn.outputs,
                               self._apply(eqn, [self._read(env, a) for a in eqn.inputs])))
            return [self._read(env, v) for v in ir.outvars]
        return run

    def _read(self, env, atom):
        if type(atom) is Literal:
            return self._jnp.asarray(np.asarray(atom.value, atom.type.dtype))
        return env[atom]
