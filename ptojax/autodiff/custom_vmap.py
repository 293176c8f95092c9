"""``custom_vmap``: a function with its own batching rule, as ``jax.custom_batching``.

    @custom_vmap
    def f(x, y): ...
    @f.def_vmap
    def rule(axis_size, in_batched, x, y):   # batched arguments have their batch axis at 0
        return out, out_batched              # out_batched: a bool per output leaf (a pytree)

A call binds ``custom_vmap_call`` (body: the function's IR, const-free, with the values it
closes over as leading operands; rule: the flat rule). Its facts:

- evaluation, jit, pto.shard, the host executor: the body (the executor inlines it);
- vmap: the user's rule, called with the batch size, a bool per argument leaf and the
  arguments (batched ones moved to axis 0); the rule's operations are traced in place, so an
  enclosing vmap batches them as any others (nested vmap calls the rule once, for the
  innermost axis, as JAX does). A batched value the function closes over is refused: pass it
  as an argument;
- jvp: a ``custom_vmap_call`` of the body's JVP whose rule is the JVP of the user's rule
  (tangents batched as their primals), so vmap of jvp still uses the rule, as in JAX;
- reverse mode (grad, vjp, linearize) is refused, as JAX refuses it.
"""
from __future__ import annotations

import functools
import inspect

from ptojax import source_info
from ptojax.errors import BatchingError, CustomRuleError, located
from ptojax.eval import axis_env
from ptojax.ir.core import consts_as_args
from ptojax.ops import sharding_rules as sr
from ptojax.ops.broadcast import broadcast_at, instantiate, to_front
from ptojax.batching.vmap import batch_eval
from ptojax.ir.types import TensorType
from ptojax.trace import trace_flat
from ptojax.ops.tangents import Zero, is_zero
from ptojax.autodiff.api import jvp as jvp_of, trace_pytree_fn
from ptojax.autodiff.calls import (BODY_NOT_TILED, _call_cost, _call_primitive,
                                   _call_reference, _front_args, _inline_local)
from ptojax.autodiff.jvp import jvp_ir
from ptojax.pytree import tree_flatten, tree_unflatten

# custom_vmap_call: params body (const-free), rule (flat: (axis_size, in_batched, args) ->
# (outs, out_batched), over the non-const operands), num_consts
custom_vmap_call_p = _call_primitive("custom_vmap_call")


def _custom_vmap_batch(args, dims, body, rule, num_consts):
    args, dims = _front_args(args, dims)
    if any(d is not None for d in dims[:num_consts]):
        raise BatchingError("vmap of a custom_vmap function that closes over a batched "
                            "value: its rule cannot see that value's batch axis; pass the "
                            "value to the function as an argument instead",
                            source_info.user_frame())
    outs, out_batched = rule(axis_env.batch_axis_size(),
                             [d is not None for d in dims[num_consts:]], args[num_consts:])
    return list(outs), [0 if b else None for b in out_batched]


def _custom_vmap_jvp(primals, tangents, body, rule, num_consts):
    if any(not is_zero(t) for t in tangents[:num_consts]):
        raise CustomRuleError("a custom_vmap function is differentiated with respect to a "
                              "value it closes over; pass that value as an argument instead",
                              source_info.user_frame())
    nonzero = [not is_zero(t) for t in tangents]
    jbody, out_nonzero = jvp_ir(body, nonzero)
    jbody, extra = consts_as_args(jbody)
    nonzero_tangents = [instantiate(t) for t in tangents if not is_zero(t)]
    outs = custom_vmap_call_p.bind(
        *extra, *primals, *nonzero_tangents, body=jbody,
        rule=_jvp_rule(rule, nonzero[num_consts:], out_nonzero),
        num_consts=len(extra) + num_consts)
    n = len(body.ir.outvars)
    touts = iter(outs[n:])
    return outs[:n], [next(touts) if nz else Zero(v.type)
                      for v, nz in zip(body.ir.outvars, out_nonzero)]


def _jvp_rule(rule, nonzero, out_nonzero):
    """The batching rule of the JVP call: the JVP of ``rule``. A primal and its tangent
    both batched are batched for ``rule``; when no pair is (a batch of tangents at one point,
    as ``jacfwd`` makes), ``rule`` runs unbatched and that JVP is vmapped over the batched
    tangents, as JAX does; a mix of the two broadcasts the unbatched member of each pair."""
    n = len(nonzero)
    positions = [i for i, nz in enumerate(nonzero) if nz]

    def jvp_of_rule(axis_size, p_batched, primals, tangents):
        batched_out = []

        def on_differentiated(*diff):
            ps = list(primals)
            for i, v in zip(positions, diff):
                ps[i] = v
            outs, out_b = rule(axis_size, p_batched, ps)
            batched_out[:] = out_b
            return list(outs)

        outs, touts = jvp_of(on_differentiated, [primals[i] for i in positions], tangents)
        touts = [instantiate(t) for t, nz in zip(touts, out_nonzero) if nz]
        return [*outs, *touts], batched_out

    def jrule(axis_size, in_batched, args):
        primals, tangents = list(args[:n]), list(args[n:])
        p_batched, t_batched = list(in_batched[:n]), list(in_batched[n:])
        pairs = [(i, k) for k, i in enumerate(positions)]
        if all(p_batched[i] == t_batched[k] for i, k in pairs):
            outs, batched_out = jvp_of_rule(axis_size, p_batched, primals, tangents)
            return outs, [*batched_out, *(b for b, nz in zip(batched_out, out_nonzero) if nz)]
        if not any(p_batched[i] and t_batched[k] for i, k in pairs):
            return _vmapped_over_extra(jvp_of_rule, axis_size, primals, tangents,
                                       p_batched, t_batched)
        for i, k in pairs:   # a mix: batch both members of every pair
            if p_batched[i] and not t_batched[k]:
                tangents[k] = broadcast_at(tangents[k], 0, axis_size)
            elif t_batched[k] and not p_batched[i]:
                primals[i] = broadcast_at(primals[i], 0, axis_size)
                p_batched[i] = True
        outs, batched_out = jvp_of_rule(axis_size, p_batched, primals, tangents)
        return outs, [*batched_out, *(b for b, nz in zip(batched_out, out_nonzero) if nz)]
    return jrule


def _vmapped_over_extra(jvp_of_rule, axis_size, primals, tangents, p_batched, t_batched):
    """``jvp_of_rule`` with the rule unbatched, vmapped over the batched primals and
    tangents: (outputs, batched flags), batched outputs at 0."""
    n = len(primals)
    dims = [0 if b else None for b in (*p_batched, *t_batched)]
    args = [*primals, *tangents]
    per_example = [TensorType(a.shape[1:], a.dtype, a.aval.weak_type) if d == 0 else a.aval
                   for a, d in zip(args, dims)]

    def flat(*values):
        return jvp_of_rule(axis_size, [False] * n, list(values[:n]), list(values[n:]))[0]

    closed = trace_flat(flat, per_example, "custom_vmap_jvp")
    outs, out_dims = batch_eval(closed, args, dims, axis_size, axis_env.batch_axis_name())
    return ([o if d is None else to_front(o, d) for o, d in zip(outs, out_dims)],
            [d is not None for d in out_dims])


def _refuse_reverse_mode(eqn, unknown_inputs):
    if not any(unknown_inputs):
        return [eqn], [], [False] * len(eqn.outputs)
    raise located(ValueError(
        "reverse-mode differentiation (grad, vjp, linearize) of a custom_vmap function is "
        "not supported, as in JAX: its batching rule has no transpose. Use forward mode "
        "(jvp, jacfwd), or define the function's derivative with custom_vjp"),
        eqn.source or source_info.user_frame())


custom_vmap_call_p.define(
    jvp=_custom_vmap_jvp, batch=_custom_vmap_batch, partial_eval=_refuse_reverse_mode,
    shard=sr.ShardRule(None, local=_inline_local), tile=BODY_NOT_TILED, cost=_call_cost,
    reference=_call_reference)


class custom_vmap:
    """A function with a custom batching rule (``jax.custom_batching.custom_vmap``): define
    it with ``f.def_vmap(rule)``, ``rule(axis_size, in_batched, *args) -> (out,
    out_batched)``, where ``in_batched`` is a list with a pytree of bools per argument and
    ``out_batched`` a pytree of bools matching ``out``. Batched arguments arrive with their
    batch axis first; batched outputs must have it first.

    Example:
      >>> @pto.custom_batching.custom_vmap
      ... def f(x):
      ...     return pnp.sin(x)
      >>> @f.def_vmap
      ... def rule(axis_size, in_batched, x):
      ...     return pnp.cos(x), in_batched[0]       # a different rule, to show it is used
      >>> f(0.0), pto.vmap(f)(pnp.zeros(2))
      (Array(0., dtype=float32, weak_type=True), Array([1., 1.], dtype=float32))
    """

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        """Set the batching rule (returned, so this works as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "fun")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 f"using def_vmap.")
        if kwargs:
            args = _positional(self.fun, args, kwargs)
        flat, in_tree = tree_flatten(args)
        closed, out_tree, _ = trace_pytree_fn(lambda *a: self.fun(*a), flat, in_tree,
                                              name=name, differentiated=[False] * len(flat))
        body, consts = consts_as_args(closed)
        rule = _flat_rule(self.vmap_rule, name, in_tree, out_tree, closed.out_types)
        outs = custom_vmap_call_p.bind(*consts, *flat, body=body, rule=rule,
                                       num_consts=len(consts))
        return tree_unflatten(out_tree, outs)


def _positional(fun, args, kwargs) -> tuple:
    """``(args, kwargs)`` as positional arguments of ``fun`` (its defaults filled in)."""
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _flat_rule(user_rule, name, in_tree, out_tree, out_types):
    """The user's rule over flat leaves, with its result checked: (outs, out_batched)."""
    def rule(axis_size, in_batched, args):
        result = user_rule(axis_size, list(in_tree.unflatten(in_batched)),
                           *in_tree.unflatten(args))
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise CustomRuleError(f"the custom_vmap rule of {name} must return a pair "
                                  f"(output, output batched)", source_info.user_frame())
        out, out_batched = result
        leaves, tree = tree_flatten(out)
        flags, flags_tree = tree_flatten(out_batched)
        if tree != flags_tree:
            raise located(ValueError(
                f"structure of output value and output batching specification returned by "
                f"custom vmap rule ({getattr(user_rule, '__name__', 'rule')}) do not match.\n"
                f"Output values: {tree}\nBatching spec: {flags_tree}"), source_info.user_frame())
        if tree != out_tree:
            raise CustomRuleError(f"the custom_vmap rule of {name} returned outputs of "
                                  f"structure {tree}; the function returns {out_tree}",
                                  source_info.user_frame())
        for leaf, batched, t in zip(leaves, flags, out_types):
            want = ((axis_size,) if batched else ()) + tuple(t.shape)
            if tuple(getattr(leaf, "shape", ())) != want:
                raise CustomRuleError(
                    f"the custom_vmap rule of {name} returned an output of shape "
                    f"{tuple(getattr(leaf, 'shape', ()))} marked "
                    f"{'batched' if batched else 'unbatched'}; expected {want}",
                    source_info.user_frame())
        return leaves, [bool(b) for b in flags]
    return rule
