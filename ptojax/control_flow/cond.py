"""``cond`` and ``switch``: one primitive, ``cond``, running one of several branches.

    d:f32[3] = cond[branches=(
        { lambda ; a:f32[3] b:f32[3]. let c:f32[3] = sub a b in (c) }
        { lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b in (c) }
      )] i x y

The first operand is an int32 scalar index in ``0..len(branches)-1`` (``switch`` clamps its
index; ``cond`` converts its predicate, so branch 0 is ``false_fun``). The other operands go
to the chosen branch. Branches are const-free ClosedIRs with equal input and output types;
values a branch captures are leading operands, shared by all branches (each ignores the
others').

Rules (all registered here):

- jvp: a cond of the branches' JVPs; an output has a tangent if it has one in any branch.
- partial eval: a known cond and a linear cond. Each known branch returns its residuals in
  *slots* shared by type across branches (zeros in the slots it does not use); the linear cond
  reads the slots, each linear branch its own.
- transpose: a cond of the transposed branches; index and residuals are not linear.
- vmap: with an unbatched index, a cond of the batched branches. With a batched index every
  branch runs on every lane and a ``select`` per lane picks the results.
- dce: unused outputs leave every branch, then operands no branch reads leave the cond.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import ControlFlowError, UnsupportedError
from ptojax.ir.core import IR, ClosedIR, Eqn, Params, Var, consts_as_args
from ptojax.eval.leaves import leaf_type
from ptojax.ir.types import TensorType
from ptojax.ops.checks import fmt_types
from ptojax.eval.interpreter import eval_ir
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Unsupported, trace_flat
from ptojax.ops.arithmetic import clamp
from ptojax.ops.broadcast import broadcast_in_dim, to_front, zeros
from ptojax.ops.convert import convert_element_type
from ptojax.ops.logic import eq, ne, select
from ptojax.ops.tangents import Zero, is_undefined, is_zero
from ptojax.autodiff.partial_eval import partial_eval
from ptojax.batching.vmap import vmap_ir
from ptojax.control_flow import partition
from ptojax.eval import axis_env
from ptojax.control_flow.common import (as_index, check_structure, compiled, flat_types,
                                        fn_name, join_consts, keep_inputs, leaf_paths,
                                        new_eqn, same_shape_dtype, scalar_dtype_ok,
                                        select_by, strong, trace_sub_ir)
from ptojax.control_flow.sub_ir import (batch_sub_ir, dce_sub_ir, jvp_sub_ir,
                                        partial_eval_sub_ir, transpose_sub_ir)
from ptojax.public import add_examples as _add_examples


# the primitive --------------------------------------------------------------------------------
def _cond_abstract(index, *operands, branches):
    if index.shape != () or index.dtype != dtypes.int32:
        raise ControlFlowError(f"cond: the branch index must be an int32 scalar, got {index}")
    first = branches[0].out_types
    for k, branch in enumerate(branches):
        ins = branch.in_types
        if len(ins) != len(operands) or not all(map(same_shape_dtype, ins, operands)):
            raise ControlFlowError(f"cond: branch {k} takes ({fmt_types(ins)}) but the "
                                   f"operands are ({fmt_types(operands)})")
        outs = branch.out_types
        if len(outs) != len(first) or not all(map(same_shape_dtype, outs, first)):
            raise ControlFlowError(f"cond: branch {k} returns ({fmt_types(outs)}) but branch "
                                   f"0 returns ({fmt_types(first)})")
    return [TensorType(t.shape, t.dtype, all(b.out_types[i].weak_type for b in branches))
            for i, t in enumerate(first)]


def _cond_impl(index, *operands, branches):
    chosen = min(max(as_index(index), 0), len(branches) - 1)
    return compiled(branches[chosen])(*operands)


cond_p = Primitive("cond", _cond_abstract, _cond_impl, multiple_results=True, linear=True)


# the API --------------------------------------------------------------------------------------
def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    Both functions are traced (to the branches of one ``cond`` equation) and must return
    pytrees of the same structure, shapes and dtypes; ``pred`` is a scalar bool (a number
    counts as ``pred != 0``). Under ``vmap`` with a batched ``pred`` both run and each lane
    selects its result."""
    source = user_frame()
    index = _predicate_index(pred, source)
    return _emit_cond(index, (false_fun, true_fun), ("false_fun", "true_fun"), operands,
                      "cond", source)


def switch(index, branches, *operands):
    """``branches[index](*operands)``, with ``index`` clamped into range (as JAX)."""
    source = user_frame()
    branches = tuple(branches)
    if not branches or not all(callable(b) for b in branches):
        raise ControlFlowError("switch: branches must be a non-empty sequence of functions",
                               source)
    index = _clamped_index(index, len(branches), source)
    if len(branches) == 1:
        return branches[0](*operands)
    names = tuple(f"branches[{k}] ({fn_name(b)})" for k, b in enumerate(branches))
    return _emit_cond(index, branches, names, operands, "switch", source)


def _predicate_index(pred, source):
    t = _scalar_type("cond", "predicate", pred, source)
    if not scalar_dtype_ok(t, ("bool", "int", "float")):
        raise ControlFlowError(f"cond: the predicate must be a scalar bool (or number), got "
                               f"{t}; for an elementwise choice use pnp.where", source)
    if not dtypes.is_bool(t.dtype):
        pred = ne(pred, 0)
    return convert_element_type(pred, dtypes.int32)


def _clamped_index(index, n, source):
    t = _scalar_type("switch", "index", index, source)
    if not scalar_dtype_ok(t, ("int",)):
        raise ControlFlowError(f"switch: the index must be an integer scalar, got {t}", source)
    return clamp(0, convert_element_type(index, dtypes.int32), n - 1)


def _scalar_type(what, name, value, source):
    if value is None or isinstance(value, (tuple, list, dict)):
        raise ControlFlowError(f"{what}: the {name} must be a scalar, got a "
                               f"{type(value).__name__}", source)
    return leaf_type(value)


def _emit_cond(index, fns, names, operands, what, source):
    for fn, name in zip(fns, names):
        if not callable(fn):
            raise ControlFlowError(f"{what}: {name} must be a function, got "
                                   f"{type(fn).__name__}", source)
    leaves, in_tree, in_types = flat_types(operands)
    traced = [trace_sub_ir(fn, in_tree, in_types, fn_name(fn)) for fn in fns]
    out_tree = traced[0][2]
    for (_, _, tree), name in zip(traced[1:], names[1:]):
        check_structure(what, out_tree, tree, f"the output of {names[0]}",
                        f"the output of {name}", source)
    _check_outputs(what, [b for b, _, _ in traced], names, out_tree, source)
    joined, consts = join_consts([(b, c) for b, c, _ in traced])
    outs = cond_p.bind(index, *consts, *leaves, branches=tuple(joined))
    return out_tree.unflatten(outs)


def _check_outputs(what, branches, names, out_tree, source) -> None:
    """Every branch returns the same shapes and dtypes (as in JAX, also when one of them is a
    Python scalar)."""
    columns = list(zip(*[b.out_types for b in branches]))
    bad = ["  " + path + ": " + ", ".join(f"{t} in {n}" for t, n in zip(col, names))
           for path, col in zip(leaf_paths(out_tree, "output"), columns)
           if not all(same_shape_dtype(t, col[0]) for t in col)]
    if bad:
        raise ControlFlowError(f"{what}: the branches return different types:\n"
                               + "\n".join(bad), source)


# jvp ------------------------------------------------------------------------------------------
def _cond_jvp(primals, tangents, branches):
    index, operands = primals[0], primals[1:]
    nonzeros = [not is_zero(t) for t in tangents[1:]]
    n_out = len(branches[0].outvars)
    out_nz = [False] * n_out
    for branch in branches:
        out_nz = [a or b for a, b in zip(out_nz, jvp_sub_ir(branch, nonzeros, out_nz)[2])]
    joined, consts = join_consts([jvp_sub_ir(b, nonzeros, out_nz)[:2] for b in branches])
    outs = cond_p.bind(index, *consts, *operands, *select_by(tangents[1:], nonzeros),
                       branches=tuple(joined))
    touts = iter(outs[n_out:])
    return outs[:n_out], [next(touts) if nz else Zero(strong(v.type))
                          for v, nz in zip(branches[0].outvars, out_nz)]


# partial evaluation ---------------------------------------------------------------------------
def _cond_partial_eval(eqn, unknowns):
    branches = eqn.params["branches"]
    if unknowns[0]:  # an unknown index: nothing can be decided ahead
        return [], [eqn], list(eqn.outputs)
    op_unknown = unknowns[1:]
    out_unknown = [False] * len(eqn.outputs)
    for branch in branches:
        out_unknown = [a or b for a, b in
                       zip(out_unknown, partial_eval(branch, op_unknown)[3])]
    splits = [partial_eval_sub_ir(b, op_unknown, out_unknown) for b in branches]
    residual_types = [[v.type for v in known.ir.outvars[len(known.ir.outvars) - n_res:]]
                      for known, _, n_res, _ in splits]
    slot_types, placements = _residual_slots(residual_types)
    known_parts = [_known_branch(known, n_res, slot_types, place)
                   for (known, _, n_res, _), place in zip(splits, placements)]
    known_branches, known_consts = join_consts(known_parts)
    linear_branches = [_linear_branch(linear, n_res, slot_types, place)
                       for (_, linear, n_res, _), place in zip(splits, placements)]
    index, operands = eqn.inputs[0], eqn.inputs[1:]
    known_out = select_by(eqn.outputs, out_unknown, keep=False)
    known_eqn = new_eqn(cond_p, [index, *known_consts, *select_by(operands, op_unknown,
                                                                   keep=False)],
                        Params(branches=tuple(known_branches)), eqn.source,
                        [*known_out, *[None] * len(slot_types)])
    slots = known_eqn.outputs[len(known_out):]
    unknown_out = select_by(eqn.outputs, out_unknown)
    unknown_eqn = Eqn(cond_p, [index, *slots, *select_by(operands, op_unknown)], unknown_out,
                      Params(branches=tuple(linear_branches)), eqn.source)
    return [known_eqn], [unknown_eqn], unknown_out


def _residual_slots(residual_types) -> tuple:
    """Slots for every branch's residuals, shared across branches by shape and dtype:
    (slot types, per branch the slot of each of its residuals)."""
    slot_types, placements = [], []
    for types in residual_types:
        taken, place = set(), []
        for t in types:
            k = next((j for j, s in enumerate(slot_types)
                      if j not in taken and same_shape_dtype(s, t)), None)
            if k is None:
                slot_types.append(strong(t))
                k = len(slot_types) - 1
            taken.add(k)
            place.append(k)
        placements.append(place)
    return slot_types, placements


def _known_branch(known, n_res, slot_types, place) -> tuple:
    """The known branch returning its outputs, then every slot (its residuals in theirs,
    zeros elsewhere)."""
    n_known = len(known.ir.outvars) - n_res

    def fn(*args):
        outs = eval_ir(known, list(args))
        slots = [None] * len(slot_types)
        for k, r in zip(place, outs[n_known:]):
            slots[k] = r
        return [*outs[:n_known], *[zeros(t) if s is None else s
                                   for s, t in zip(slots, slot_types)]]

    return consts_as_args(trace_flat(fn, known.in_types, "cond"))


def _linear_branch(linear, n_res, slot_types, place):
    """The linear branch reading its residuals from their slots."""
    by_slot = dict(zip(place, linear.invars[:n_res]))
    slots = [by_slot.get(k) or Var(t) for k, t in enumerate(slot_types)]
    return ClosedIR(IR((), [*slots, *linear.invars[n_res:]], linear.eqns, linear.outvars))


# transpose ------------------------------------------------------------------------------------
def _cond_transpose(cts, index, *operands, branches):
    if is_undefined(index):
        raise UnsupportedError("transpose of cond with a linear branch index")
    linear = [is_undefined(o) for o in operands]
    ct_present = [not is_zero(c) for c in cts]
    joined, consts = join_consts([transpose_sub_ir(b, linear, ct_present) for b in branches])
    outs = iter(cond_p.bind(index, *consts, *select_by(operands, linear, keep=False),
                            *select_by(cts, ct_present), branches=tuple(joined)))
    return [None, *[next(outs) if lin else None for lin in linear]]


# vmap -----------------------------------------------------------------------------------------
def _cond_batch(args, dims, branches):
    index, operands = args[0], args[1:]
    op_dims = dims[1:]
    n_out = len(branches[0].outvars)
    if dims[0] is None:
        batched = [False] * n_out
        for branch in branches:
            batched = [a or b for a, b in zip(batched, batch_sub_ir(branch, op_dims,
                                                                    batched)[2])]
        joined, consts = join_consts([batch_sub_ir(b, op_dims, batched)[:2]
                                      for b in branches])
        outs = cond_p.bind(index, *consts, *operands, branches=tuple(joined))
        return outs, [0 if b else None for b in batched]
    index = to_front(index, dims[0])
    results = [_every_lane(b, operands, op_dims) for b in branches]
    outs = results[0]
    for k, branch_outs in enumerate(results[1:], 1):
        hit = eq(index, k)
        outs = [select(broadcast_in_dim(hit, o.shape, (0,)), new, o)
                for new, o in zip(branch_outs, outs)]
    return outs, [0] * n_out


def _every_lane(branch, operands, dims) -> list:
    """The outputs of ``branch`` batched (at 0) over every lane."""
    batched, out_dims = vmap_ir(branch, dims, axis_env.batch_axis_size(), axis_env.batch_axis_name())
    return [to_front(o, d) for o, d in zip(eval_ir(batched, list(operands)), out_dims)]


# dce ------------------------------------------------------------------------------------------
def _cond_dce(eqn, used_outputs):
    pruned = [dce_sub_ir(b, used_outputs) for b in eqn.params["branches"]]
    used = [any(col) for col in zip(*[u for _, u in pruned])]
    branches = tuple(keep_inputs(b, used) for b, _ in pruned)
    return Eqn(cond_p, [eqn.inputs[0], *select_by(eqn.inputs[1:], used)],
               select_by(eqn.outputs, used_outputs), eqn.params.replace(branches=branches),
               eqn.source)


def _cond_cost(eqn, body_counts):
    """A cond costs its costliest branch."""
    return max(body_counts, key=lambda c: sum(c.values()))


def _cond_reference(jnp, lax):
    def run_cond(index, *operands, branches, run):
        return lax.switch(index, [run(b) for b in branches], *operands)
    return run_cond


cond_p.define(jvp=_cond_jvp, partial_eval=_cond_partial_eval, transpose=_cond_transpose,
              batch=_cond_batch, dce=_cond_dce, shard=partition.COND,
              tile=Unsupported("branches stay tensor-level (loop and branch bodies are not "
                               "tiled today)"),
              cost=_cond_cost, reference=_cond_reference)


_add_examples(globals(), """
cond:
    >>> pto.lax.cond(True, lambda x: x + 1, lambda x: x - 1, 10)
    Array(11, dtype=int32, weak_type=True)
switch:
    >>> pto.lax.switch(2, [lambda x: x, lambda x: -x, lambda x: x * 10], 3)
    Array(30, dtype=int32, weak_type=True)
""")
