"""User-defined derivatives and rematerialization: ``custom_jvp``, ``custom_vjp``,
``checkpoint``/``remat``.

Each call traces the function to a body IR and binds one call primitive (ops/calls.py) whose
params carry the body and the user's rules as flat functions. The rules are traced to IR at
the call, while the values they close over are alive (they become extra operands of the
call), and validated there; evaluating those IRs later, inside jvp/transpose/vmap, is then
safe. The autodiff and vmap tables give these primitives their meaning.

Eagerly (outside jit), custom_jvp/custom_vjp bodies and rules are traced concretely, so they
may use Python control flow on values as in JAX: the body on its arguments' values, the jvp
rule and fwd on the primal values, bwd on the residuals' values (computed only if bwd asks);
tangents and cotangents stay abstract. A checkpoint body is traced abstractly (as in JAX).
"""
from __future__ import annotations

import functools
import inspect
import os
import threading

from ptojax.errors import CustomRuleError
from ptojax.ir.core import IR, ClosedIR, Var, consts_as_args
from ptojax.eval.leaves import leaf_type
from ptojax.autodiff import calls
from ptojax.eval.interpreter import eval_ir
from ptojax.source_info import user_frame
from ptojax.trace import (ABSTRACT, KNOWN, Deferred, arg_states, concrete_value,
                           eager_sources, trace_flat)
from ptojax.ops.broadcast import zeros
from ptojax.ops.convert import convert_element_type
from ptojax.ops.tangents import differentiable
from ptojax.autodiff.api import trace_pytree_fn
from ptojax.pytree import (keystr, tree_flatten, tree_flatten_with_path, tree_map,
                              tree_structure, tree_unflatten)
from ptojax.public import add_examples as _add_examples


def _split_nondiff(args, nondiff_argnums):
    nondiff = tuple(args[i] for i in nondiff_argnums)
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return nondiff, diff


def _merge(nondiff, diff, nondiff_argnums):
    out, nd, d = [], iter(nondiff), iter(diff)
    for i in range(len(nondiff) + len(diff)):
        out.append(next(nd) if i in nondiff_argnums else next(d))
    return out


def _check_leaves(what, leaves, tree, expected_tree, expected_types):
    if tree != expected_tree:
        raise CustomRuleError(f"{what} has structure {tree}, expected {expected_tree}",
                              user_frame(4))
    for i, (leaf, t) in enumerate(zip(leaves, expected_types)):
        got = leaf_type(leaf)
        if tuple(got.shape) != tuple(t.shape) or (differentiable(t) and got.dtype != t.dtype):
            raise CustomRuleError(f"{what}: leaf {i} is {got}, expected {t}", user_frame(4))


class _RulesBeingTraced(threading.local):
    def __init__(self):
        self.owners: set = set()


_being_traced = _RulesBeingTraced()


def _closure_converted(owner, fn, in_types, name, sources, states):
    """Trace the flat rule ``fn`` now, while the values it closes over (tracers of the
    function being traced, nondiff arguments) are alive: (the const-free rule IR taking those
    values first, the values). None for a call made while ``owner``'s rules are being traced
    (a rule calling its own function): that call keeps its rules as Python functions.
    ``sources``/``states``: the arguments' values, for an eager trace (``trace_flat``)."""
    if id(owner) in _being_traced.owners:
        return None
    _being_traced.owners.add(id(owner))
    try:
        return consts_as_args(trace_flat(fn, list(in_types), name, sources, states))
    finally:
        _being_traced.owners.discard(id(owner))


def _deferred_outputs(ir, inputs, first):
    """The values of ``ir``'s outputs from ``first`` on, applied to ``inputs``, as Deferreds
    computed (all at once) only if asked for; their states (abstract unless every input is
    known)."""
    n = len(ir.out_types) - first
    if any(s == ABSTRACT for s in arg_states(inputs)):
        return [None] * n, [ABSTRACT] * n
    outputs = Deferred(lambda: eval_ir(ir, [concrete_value(x) for x in inputs]))
    return ([Deferred(lambda i=i: outputs.value()[first + i]) for i in range(n)],
            [KNOWN] * n)


def _with_unused_inputs(body, position, types):
    """``body`` taking extra, ignored inputs of ``types`` at ``position``."""
    ir = body.ir
    invars = (*ir.invars[:position], *[Var(t) for t in types], *ir.invars[position:])
    return ClosedIR(IR((), invars, ir.eqns, ir.outvars))


def _last(values, n):
    values = list(values)
    return values[len(values) - n:]


class custom_jvp:
    """A function with a custom JVP rule: ``f.defjvp(lambda primals, tangents: (out, t_out))``
    (with ``nondiff_argnums``, the rule takes those arguments first)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns):
        """One function per argument: ``fn(tangent, primal_out, *primals) -> tangent_out``."""
        def jvp(primals, tangents):
            out = self.fun(*primals)
            total = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                term = fn(t, out, *primals)
                total = term if total is None else tree_map(lambda a, b: a + b, total, term)
            return out, total
        self.jvp = jvp

    def __call__(self, *args):
        name = self.fun.__name__
        if self.jvp is None:
            raise CustomRuleError(f"custom_jvp function {name} has no JVP rule; define one "
                                  f"with .defjvp(rule)", user_frame(2))
        nums = self.nondiff_argnums
        nondiff, diff = _split_nondiff(args, nums)
        flat, in_tree = tree_flatten(diff)
        closed, out_tree, _ = trace_pytree_fn(
            lambda *d: self.fun(*_merge(nondiff, d, nums)), flat, in_tree, name=name,
            differentiated=[False] * len(flat))
        body, body_consts = consts_as_args(closed)
        rule, rule_consts = self._flat_rule(nondiff, in_tree, out_tree, closed, flat)
        body = _with_unused_inputs(body, len(body_consts), [leaf_type(c) for c in rule_consts])
        outs = calls.custom_jvp_call_p.bind(*body_consts, *rule_consts, *flat, body=body,
                                            jvp=rule,
                                            num_consts=len(body_consts) + len(rule_consts))
        return tree_unflatten(out_tree, outs)

    def _flat_rule(self, nondiff, in_tree, out_tree, closed, primals):
        """(rule(consts, primals, tangents) -> outs + tangent outs, the values it closes over,
        passed as the call's last constants)."""
        name, user_rule, out_types = self.fun.__name__, self.jvp, closed.out_types

        def validated(primals, tangents):
            p, t = in_tree.unflatten(primals), in_tree.unflatten(tangents)
            result = user_rule(*nondiff, tuple(p), tuple(t))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise CustomRuleError(f"the custom_jvp rule of {name} must return a pair "
                                      f"(primal_out, tangent_out)", user_frame(3))
            out_leaves, o_tree = tree_flatten(result[0])
            t_leaves, t_tree = tree_flatten(result[1])
            _check_leaves(f"custom_jvp rule of {name}: primal output", out_leaves, o_tree,
                          out_tree, out_types)
            _check_leaves(f"custom_jvp rule of {name}: tangent output", t_leaves, t_tree,
                          out_tree, out_types)
            return [*out_leaves, *t_leaves]

        n = len(closed.in_types)
        converted = _closure_converted(
            self, lambda *a: validated(a[:n], a[n:]),
            [*closed.in_types, *[t.strip_weak() for t in closed.in_types]], f"{name}_jvp",
            *eager_sources(primals, n, plain=True))
        if converted is None:
            return (lambda consts, primals, tangents: validated(primals, tangents)), ()
        rule_ir, rule_consts = converted

        def rule(consts, primals, tangents):
            return eval_ir(rule_ir, [*_last(consts, len(rule_consts)), *primals, *tangents])
        return rule, rule_consts


class custom_vjp:
    """A function with a custom VJP: ``f.defvjp(fwd, bwd)`` where ``fwd(*args) -> (out, res)``
    and ``bwd(res, ct_out) -> tuple of input cotangents`` (nondiff arguments come first in
    bwd's arguments when ``nondiff_argnums`` is given)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        name = self.fun.__name__
        if self.fwd is None:
            raise CustomRuleError(f"custom_vjp function {name} has no VJP rule; define one "
                                  f"with .defvjp(fwd, bwd)", user_frame(2))
        nums = self.nondiff_argnums
        nondiff, diff = _split_nondiff(args, nums)
        flat, in_tree = tree_flatten(diff)
        closed, out_tree, _ = trace_pytree_fn(
            lambda *d: self.fun(*_merge(nondiff, d, nums)), flat, in_tree, name=name,
            differentiated=[False] * len(flat))
        body, body_consts = consts_as_args(closed)
        fwd, bwd = self._validated_rules(args, nondiff, diff, in_tree, out_tree, closed)
        fwd, bwd, rule_consts = self._flat_rules(fwd, bwd, closed, flat)
        body = _with_unused_inputs(body, len(body_consts), [leaf_type(c) for c in rule_consts])
        outs = calls.custom_vjp_call_p.bind(*body_consts, *rule_consts, *flat, body=body,
                                            fwd=fwd, bwd=bwd,
                                            num_consts=len(body_consts) + len(rule_consts),
                                            out_types=tuple(closed.out_types))
        return tree_unflatten(out_tree, outs)

    def _validated_rules(self, args, nondiff, diff, in_tree, out_tree, closed):
        """The user's fwd and bwd on flat lists, checking what they return: ``fwd(primals) ->
        outs + residuals``, ``bwd(residuals, cts) -> a cotangent (or None) per input leaf``."""
        name, nums, user_fwd, user_bwd = self.fun.__name__, self.nondiff_argnums, self.fwd, \
            self.bwd
        res_tree = {}

        def fwd(primals):
            result = user_fwd(*_merge(nondiff, in_tree.unflatten(primals), nums))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise CustomRuleError(f"the custom_vjp fwd of {name} must return a pair "
                                      f"(output, residuals)", user_frame(3))
            out_leaves, o_tree = tree_flatten(result[0])
            _check_leaves(f"custom_vjp fwd of {name}: output", out_leaves, o_tree, out_tree,
                          closed.out_types)
            res_leaves, res_tree["tree"] = tree_flatten(result[1])
            return [*out_leaves, *res_leaves]

        def bwd(res_leaves, cts):
            res = res_tree["tree"].unflatten(res_leaves)
            in_cts = user_bwd(*nondiff, res, out_tree.unflatten(cts))
            names = _argument_names(self.fun, len(args), nums)
            return _flatten_input_cts(_rule_name("custom_vjp bwd", name, user_bwd), in_cts,
                                      diff, names)
        return fwd, bwd

    def _flat_rules(self, fwd, bwd, closed, primals):
        """(fwd(consts, primals) -> outs + residuals, bwd(residuals, cts) -> input cts, the
        values the rules close over, passed as the call's last constants). The values bwd
        closes over travel with the residuals."""
        name, in_types, out_types = self.fun.__name__, closed.in_types, closed.out_types
        converted_fwd = _closure_converted(self, lambda *p: fwd(p), in_types, f"{name}_fwd",
                                           *eager_sources(primals, plain=True))
        if converted_fwd is None:
            return (lambda consts, primals: fwd(primals)), bwd, ()
        fwd_ir, fwd_consts = converted_fwd
        n_res = len(fwd_ir.out_types) - len(out_types)
        differentiated = [differentiable(t) for t in in_types]

        def diff_cts(*res_and_cts):
            cts = bwd(res_and_cts[:n_res], res_and_cts[n_res:])
            return [c for c, d in zip(cts, differentiated) if d]

        res_sources, res_states = _deferred_outputs(fwd_ir, [*fwd_consts, *primals],
                                                    len(out_types))
        bwd_ir, bwd_consts = _closure_converted(
            self, diff_cts, [*fwd_ir.out_types[len(out_types):],
                             *[t.strip_weak() for t in out_types]], f"{name}_bwd",
            [*res_sources, *[None] * len(out_types)], [*res_states, *[ABSTRACT] * len(out_types)])
        n_fwd, n_bwd = len(fwd_consts), len(bwd_consts)

        def flat_fwd(consts, primals):
            consts = _last(consts, n_fwd + n_bwd)
            return [*eval_ir(fwd_ir, [*consts[:n_fwd], *primals]), *consts[n_fwd:]]

        def flat_bwd(residuals, cts):
            residuals = list(residuals)
            values, bwd_closure = residuals[:n_res], residuals[n_res:]
            in_cts = iter(eval_ir(bwd_ir, [*bwd_closure, *values, *cts]))
            return [next(in_cts) if d else None for d in differentiated]
        return flat_fwd, flat_bwd, (*fwd_consts, *bwd_consts)


def _rule_name(kind, fun_name, rule) -> str:
    """``custom_vjp bwd `bwd` of f (file.py:12)``: which user rule, and where it is."""
    code = getattr(rule, "__code__", None)
    where = f" ({os.path.basename(code.co_filename)}:{code.co_firstlineno})" if code else ""
    return f"the {kind} `{getattr(rule, '__name__', rule)}`{where} of {fun_name}"


def _argument_names(fun, nargs, nondiff_argnums) -> list:
    """How to name each differentiable argument in messages: ``argument 1 (y)``."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(nargs):
        if i in nondiff_argnums:
            continue
        names.append(f"argument {i}" + (f" (`{params[i]}`)" if i < len(params) else ""))
    return names


def _flatten_input_cts(rule, in_cts, diff, names):
    """The flat input cotangents ``rule`` (a custom_vjp bwd) returned, checked against the
    differentiable arguments ``diff``: one entry per argument, each shaped like it."""
    if not isinstance(in_cts, (tuple, list)) or len(in_cts) != len(diff):
        got = (f"a {type(in_cts).__name__} of length {len(in_cts)}"
               if isinstance(in_cts, (tuple, list)) else f"a {type(in_cts).__name__}")
        raise CustomRuleError(f"{rule} must return a tuple with one cotangent per "
                              f"differentiable argument ({len(diff)}), got {got}",
                              user_frame(4))
    out = []
    for ct, arg, name in zip(in_cts, diff, names):
        for path, sub_ct, leaf in _pair_with_leaves(rule, ct, arg, name):
            out.append(_checked_ct(rule, sub_ct, leaf_type(leaf), name + keystr(path)))
    return out


def _pair_with_leaves(rule, ct, arg, name):
    """(path, cotangent, primal leaf) for each leaf of ``arg``; a None anywhere in ``ct``
    stands for zeros of the whole subtree it replaces (as in JAX)."""
    ct_tree = tree_structure(ct, is_leaf=lambda x: x is None)
    try:
        subtrees = ct_tree.flatten_up_to(arg)
    except ValueError:
        raise CustomRuleError(f"{rule} returned a cotangent for {name} with structure "
                              f"{tree_structure(ct)}, but the argument has structure "
                              f"{tree_structure(arg)}", user_frame(5)) from None
    ct_leaves = tree_flatten(ct, is_leaf=lambda x: x is None)[0]
    prefix_paths = [p for p, _ in tree_flatten_with_path(ct, is_leaf=lambda x: x is None)[0]]
    pairs = []
    for prefix, sub_ct, subtree in zip(prefix_paths, ct_leaves, subtrees):
        leaves = tree_flatten_with_path(subtree)[0]
        if sub_ct is not None and (len(leaves) != 1 or leaves[0][0]):
            raise CustomRuleError(f"{rule} returned a leaf for {name}{keystr(prefix)}, where "
                                  f"the argument has the subtree {tree_structure(subtree)}",
                                  user_frame(5))
        pairs += [(prefix + path, sub_ct, leaf) for path, leaf in leaves]
    return pairs


def _zero_ct(t):
    return zeros(t.strip_weak()) if differentiable(t) else None


def _checked_ct(rule, ct, t, name):
    """``ct`` as the cotangent of an input of type ``t`` (in its dtype), or an error naming
    the input."""
    if ct is None:
        return _zero_ct(t)
    got = leaf_type(ct)
    if tuple(got.shape) != tuple(t.shape):
        raise CustomRuleError(f"{rule} returned a cotangent of shape {tuple(got.shape)} for "
                              f"{name}, whose shape is {tuple(t.shape)}", user_frame(5))
    if not differentiable(t):
        return None
    if got.dtype != t.dtype:
        ct = convert_element_type(ct, t.dtype)
    return ct


def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """``fun`` whose intermediates are recomputed in the backward pass instead of saved,
    except those ``policy`` (see ``pto.checkpoint_policies``) saves. The recomputation is
    visible in the gradient's IR as a second ``checkpoint`` region."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be callable (see pto.checkpoint_policies), "
                        f"got {policy!r}")
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args):
        static, dynamic = _split_nondiff(args, nums)
        flat, in_tree = tree_flatten(dynamic)
        closed, out_tree, _ = trace_pytree_fn(
            lambda *d: fun(*_merge(static, d, nums)), flat, in_tree, name=fun.__name__)
        body, consts = consts_as_args(closed)
        outs = calls.checkpoint_p.bind(*consts, *flat, body=body, prevent_cse=prevent_cse,
                                       **calls.policy_param(policy))
        return tree_unflatten(out_tree, outs)

    return wrapped


remat = checkpoint


_add_examples(globals(), """
checkpoint:
    >>> pto.grad(pto.checkpoint(lambda x: pnp.sin(x) ** 2))(1.0)
    Array(0.9092974, dtype=float32, weak_type=True)
custom_jvp:
    >>> @pto.custom_jvp
    ... def f(x):
    ...     return pnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 2.0 * t
    >>> pto.grad(f)(0.0)
    Array(2., dtype=float32, weak_type=True)
custom_vjp:
    >>> @pto.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (pnp.clip(g, -1.0, 1.0),))
    >>> pto.grad(lambda x: 5.0 * clip_gradient(x))(2.0)
    Array(1., dtype=float32, weak_type=True)
""")
