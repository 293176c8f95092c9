"""``pto.ad_checkpoint``: JAX's ``jax.ad_checkpoint`` module: ``checkpoint_policies`` and
``checkpoint_name``, which names a value so the name-based policies
(``save_only_these_names``, ``save_any_names_but_these``,
``save_anything_except_these_names``) can choose to save it (outside a ``pto.checkpoint`` a
name does nothing), and ``print_saved_residuals``: what ``vjp`` keeps for the backward
pass."""
from __future__ import annotations

import inspect

from ptojax import dtypes
from ptojax.autodiff.api import residuals_of
from ptojax.autodiff.checkpoint_policies import checkpoint_policies
from ptojax.ops.convert import name_p
from ptojax.public import add_examples, dir_function
from ptojax.eval.leaves import leaf_value
from ptojax.ir.types import ShapedArray
from ptojax.jit import make_ir
from ptojax.pytree import keystr, tree_flatten_with_path, tree_leaves, tree_map


def saved_residuals(f, *args, **kwargs) -> list:
    """What ``vjp(f, *args, **kwargs)`` saves for the backward pass, as JAX's: a list of
    (``ShapedArray``, where it comes from: ``"from the argument x"``, ``"output of sin from
    file:line (fn)"``, ``"named 'a' from ..."``). ptojax's partial evaluation decides, so the
    list can differ from JAX's for the same function."""
    closed = make_ir(f)(*args, **kwargs)
    flat_args = [x for x in tree_leaves((args, kwargs))]
    known, residuals = residuals_of(closed, [leaf_value(x) for x in flat_args])
    names = _argument_names(f, args, kwargs)
    defined = {v: e for e in known.ir.eqns for v in e.outputs}
    out = []
    for v in residuals:
        aval = ShapedArray.of(v.type) if hasattr(v, "type") else None
        if v in known.ir.invars:
            where = f"from the argument {names[known.ir.invars.index(v)]}"
        elif v in defined:
            where = _describe(defined[v], v)
        else:
            where = "a constant"
        out.append((aval, where))
    return out


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Print ``saved_residuals(f, *args, **kwargs)``, one residual a line."""
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(f"{dtypes.short_name(aval.dtype)}[{','.join(map(str, aval.shape))}] {where}")


def _describe(eqn, var=None) -> str:
    """Where ``var`` (an output of ``eqn``) comes from; inside a checkpoint region, the
    equation of its body that computes it."""
    body = eqn.params.get("body") if eqn.prim.call_like else None
    if body is not None and var is not None:
        inner = body.ir if hasattr(body, "ir") else body
        out = inner.outvars[eqn.outputs.index(var)]
        defined = {v: e for e in inner.eqns for v in e.outputs}
        if out in defined:
            return _describe(defined[out], out)
    src = eqn.source
    at = f" from {src.file}:{src.line} ({src.function})" if src is not None else ""
    if eqn.prim is name_p:
        return f"named '{eqn.params['name']}'{at}"
    return f"output of {eqn.prim.name}{at}"


def _argument_names(f, args, kwargs) -> list:
    """A name per flat leaf of ``(args, kwargs)``: the parameter name and the leaf's path."""
    try:
        params = [p.name for p in inspect.signature(f).parameters.values()]
    except (TypeError, ValueError):
        params = []
    names = []
    for path, _ in tree_flatten_with_path((args, kwargs))[0]:
        if path[0].idx == 0:
            i = path[1].idx
            base = params[i] if i < len(params) else f"args[{i}]"
        else:
            base = str(path[1].key)
        names.append(base + keystr(path[2:]))
    return names


def checkpoint_name(x, name: str):
    """``x`` (a pytree) unchanged, its arrays named ``name`` for ``checkpoint`` policies."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a str, got {name!r}")
    return tree_map(lambda v: name_p.bind(v, name=name), x)


# JAX's public names (``saved_residuals``, used by the print, is not one of them)
__all__ = ["checkpoint_name", "checkpoint_policies", "print_saved_residuals"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
print_saved_residuals:
    >>> from ptojax.ad_checkpoint import print_saved_residuals
    >>> print_saved_residuals(pto.checkpoint(lambda x: pnp.sin(pnp.sin(x))), pnp.ones(3))
    f32[3] from the argument x
checkpoint_name:
    >>> from ptojax.ad_checkpoint import checkpoint_name
    >>> def f(x):
    ...     return pnp.sin(checkpoint_name(pnp.cos(x), "c"))
    >>> saves_c = pto.checkpoint_policies.save_only_these_names("c")
    >>> pto.grad(pto.checkpoint(f, policy=saves_c))(1.0)
    Array(-0.7216062, dtype=float32, weak_type=True)
""")
