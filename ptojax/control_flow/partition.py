"""The ``pto.shard`` facts of the control-flow primitives (``SCAN``, ``WHILE``, ``COND``, set
where each primitive is defined): the bodies are partitioned as per-device sub-programs, so a
split dimension stays local through a loop or a branch.

Which split each sub-IR input/output gets (the *dims*, as everywhere in ``pto.shard``):

- scan: consts keep their operands' dims; an xs operand loses any split of its scanned
  axis 0 (it is gathered once, before the loop) and its slice has the other dims; a carry
  has the same dims on entry and exit of the body — a fixpoint: start from the initial
  value's dims, add the splits the body gives the carry output where the carry is whole
  (once), then *meet* the carry with the body's carry output (drop the splits they disagree
  on) until nothing changes. ys are the body's y slices with axis 0 whole.
- while: the same carry fixpoint over ``body``; ``cond`` reads the same carry dims. The
  predicate is a scalar, hence the same on every device (a predicate computed from split data
  is combined by the body's own collectives: ``pmax`` of a split max, ``psum`` of a split sum).
- cond: every branch gets the operands' dims; an output keeps a split the branches that
  split it agree on (a branch computing it whole slices its block locally, for free) — not
  the meet, which would make the splitting branches gather. The index is a scalar, hence the
  same on every device.

A const or xs operand also takes the splits the body would like for it (its consumers' splits
propagated backward inside the body): a replicated operand is then sliced once before the
loop rather than at every step.

Partial sums (pending psums) never cross the boundary: partial operands are summed before the
equation and partial sub-IR outputs inside the sub-IR (so a carry's contracted split costs a
psum per iteration, inside the body). The same dims functions serve propagation
(``body_dims``: splits flow forward through a loop to its results and backward into its
operands) and partitioning (``local`` forms, on the operands' actual dims).

Fallback: when a body cannot be partitioned (it holds something ``pto.shard`` does not
partition, e.g. a tile kernel), the equation runs whole on every device instead: operands
gathered to replicated values, the original equation, replicated results.
"""
from __future__ import annotations

from ptojax.control_flow.common import groups, join_consts
from ptojax.errors import UnsupportedError
from ptojax.ir.core import ClosedIR, consts_as_args
from ptojax.ops.sharding_rules import Local, ShardRule
from ptojax.shard.partition import partition_with
from ptojax.shard.propagate import BodyDims, Propagation, propagate_body, replicated
from ptojax.trace import bind


# dims algebra ---------------------------------------------------------------------------------
def meet(a: tuple, b: tuple) -> tuple:
    """The splits two dims agree on (others whole)."""
    return tuple(x if x == y else () for x, y in zip(a, b))


def meet_all(dims_list) -> tuple:
    out = dims_list[0]
    for d in dims_list[1:]:
        out = meet(out, d)
    return out


def refine(a: tuple, b: tuple) -> tuple:
    """``a`` with ``b``'s splits added where ``a`` is whole and their mesh axes are free."""
    used = {m for ax in a for m in ax}
    out = list(a)
    for d, (x, y) in enumerate(zip(a, b)):
        if not x and y and not used.intersection(y):
            out[d] = y
            used.update(y)
    return tuple(out)


def agree(dims_list) -> tuple:
    """Dims for a value several branches compute: a dimension keeps the split of the branches
    that split it when they all agree (a branch computing it whole slices its block for free),
    else it is whole."""
    out, used = [], set()
    for per_dim in zip(*dims_list):
        splits = {ax for ax in per_dim if ax}
        ax = splits.pop() if len(splits) == 1 else ()
        if used.intersection(ax):
            ax = ()
        out.append(ax)
        used.update(ax)
    return tuple(out)


def carry_dims(init: list, carry_out_of) -> list:
    """Dims of loop carries that hold on entry and exit of the body. ``carry_out_of(carry)``
    gives the dims of the body's carry outputs for carries entering as ``carry``."""
    carry = [refine(c, o) for c, o in zip(init, carry_out_of(init))]
    while True:
        met = [meet(c, o) for c, o in zip(carry, carry_out_of(carry))]
        if met == carry:
            return carry
        carry = met


def _without_axis0(d: tuple) -> tuple:
    return ((),) + tuple(d[1:])


# per primitive: sub-IR input dims and result dims from operand dims ---------------------------
def scan_dims(mesh, eqn, operand_dims) -> tuple:
    """(body input dims, body output dims, result dims) of a scan."""
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    consts, init, xs = groups(list(operand_dims), nc, nk)
    slices = [tuple(d[1:]) for d in xs]
    body = p["body"]
    carry = carry_dims(init, lambda c: propagate_body(body, mesh, [*consts, *c, *slices])[:nk])
    body_in = [*consts, *carry, *slices]
    ys = propagate_body(body, mesh, body_in)[nk:]
    body_out = [*carry, *ys]
    return body_in, body_out, [*carry, *[((),) + tuple(y) for y in ys]]


def while_dims(mesh, eqn, operand_dims) -> tuple:
    """(cond input dims, body input dims, carry dims) of a while."""
    p = eqn.params
    cond_consts, body_consts, init = groups(list(operand_dims), p["cond_nconsts"],
                                            p["body_nconsts"])
    body = p["body"]
    carry = carry_dims(init, lambda c: propagate_body(body, mesh, [*body_consts, *c]))
    return [*cond_consts, *carry], [*body_consts, *carry], carry


def cond_dims(mesh, eqn, operand_dims) -> list:
    """Result dims of a cond: what its branches agree on."""
    ops = list(operand_dims[1:])
    per_branch = [propagate_body(b, mesh, ops) for b in eqn.params["branches"]]
    return [agree(list(ds)) for ds in zip(*per_branch)]


def _scan_result_dims(mesh, eqn, operand_dims):
    return scan_dims(mesh, eqn, operand_dims)[2]


def _while_result_dims(mesh, eqn, operand_dims):
    return while_dims(mesh, eqn, operand_dims)[2]


# operands a body would like split -------------------------------------------------------------
def wanted_inputs(mesh, closed: ClosedIR, in_dims, free) -> list:
    """The dims of a sub-IR's inputs when those at indices ``free`` may take the splits their
    consumers inside give them (propagated backward); the others stay as ``in_dims``."""
    prop = Propagation(closed.ir, mesh, list(in_dims), free=frozenset(free))
    return [prop.of(v) for v in closed.ir.invars]


def scan_operands(mesh, eqn, operand_dims) -> list:
    """``operand_dims`` plus the splits the body would like for its consts and x slices
    (carries are the fixpoint's business)."""
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    body_in = scan_dims(mesh, eqn, operand_dims)[0]
    free = [*range(nc), *range(nc + nk, len(body_in))]
    wanted = wanted_inputs(mesh, p["body"], body_in, free)
    out = list(operand_dims)
    for i in range(nc):
        out[i] = refine(out[i], wanted[i])
    for i in range(nc + nk, len(out)):
        out[i] = refine(out[i], ((),) + tuple(wanted[i]))
    return out


def while_operands(mesh, eqn, operand_dims) -> list:
    """``operand_dims`` plus the splits cond and body would like for their consts."""
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cond_in, body_in, _ = while_dims(mesh, eqn, operand_dims)
    wanted = [*wanted_inputs(mesh, p["cond"], cond_in, range(ncc))[:ncc],
              *wanted_inputs(mesh, p["body"], body_in, range(nbc))[:nbc]]
    return [refine(d, w) for d, w in zip(operand_dims, wanted)] + \
        list(operand_dims[ncc + nbc:])


def cond_operands(mesh, eqn, operand_dims) -> list:
    """``operand_dims`` plus the splits every branch would like for an operand."""
    ops = list(operand_dims[1:])
    per_branch = [wanted_inputs(mesh, b, ops, range(len(ops)))
                  for b in eqn.params["branches"]]
    return [operand_dims[0]] + [refine(d, meet_all(list(w)))
                                for d, w in zip(ops, zip(*per_branch))]


# partitioning ---------------------------------------------------------------------------------
def partition_sub_ir(mesh, closed: ClosedIR, in_dims, out_dims) -> tuple:
    """(const-free local sub-IR taking its captured values first, those values): ``closed``
    partitioned with inputs split as ``in_dims``, outputs resharded to ``out_dims``."""
    prop = Propagation(closed.ir, mesh, list(in_dims), list(out_dims))
    return consts_as_args(partition_with(closed.ir, mesh, prop, list(in_dims), list(out_dims)))


def _resharded(ctx, operands, dims) -> list:
    """The operands' blocks resharded to ``dims`` (partial sums resolved)."""
    return [ctx.reshard(x, d).value for x, d in zip(operands, dims)]


def _scan_local(ctx, eqn, operands, targets):
    p = eqn.params
    n_lead = p["num_consts"] + p["num_carry"]
    dims = [x.dims for x in operands[:n_lead]] + \
        [_without_axis0(x.dims) for x in operands[n_lead:]]
    dims = scan_operands(ctx.mesh, eqn, dims)
    body_in, body_out, out_dims = scan_dims(ctx.mesh, eqn, dims)
    body, captured = partition_sub_ir(ctx.mesh, p["body"], body_in, body_out)
    dims[p["num_consts"]:n_lead] = out_dims[:p["num_carry"]]
    outs = eqn.prim.bind(*captured, *_resharded(ctx, operands, dims),
                       **p.replace(body=body, num_consts=len(captured) + p["num_consts"])
                       .as_dict())
    return [Local(o, d) for o, d in zip(outs, out_dims)]


def _while_local(ctx, eqn, operands, targets):
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    dims = while_operands(ctx.mesh, eqn, [x.dims for x in operands])
    cond_in, body_in, carry = while_dims(ctx.mesh, eqn, dims)
    cond, cond_captured = partition_sub_ir(ctx.mesh, p["cond"], cond_in, [()])
    body, body_captured = partition_sub_ir(ctx.mesh, p["body"], body_in, carry)
    cond_consts, body_consts, init = groups(
        _resharded(ctx, operands, [*cond_in[:ncc], *body_in[:nbc], *carry]), ncc, nbc)
    outs = eqn.prim.bind(*cond_captured, *cond_consts, *body_captured, *body_consts, *init,
                        **p.replace(cond=cond, body=body,
                                    cond_nconsts=len(cond_captured) + ncc,
                                    body_nconsts=len(body_captured) + nbc).as_dict())
    return [Local(o, d) for o, d in zip(outs, carry)]


def _cond_local(ctx, eqn, operands, targets):
    dims = cond_operands(ctx.mesh, eqn, [x.dims for x in operands])
    out_dims = cond_dims(ctx.mesh, eqn, dims)
    parts = [partition_sub_ir(ctx.mesh, b, dims[1:], out_dims)
             for b in eqn.params["branches"]]
    branches, captured = join_consts(parts)
    index, *ops = _resharded(ctx, operands, dims)
    outs = eqn.prim.bind(index, *captured, *ops, branches=tuple(branches))
    return [Local(o, d) for o, d in zip(outs, out_dims)]


def _replicated_local(ctx, eqn, operands, targets) -> list:
    whole = [ctx.reshard(x, replicated(a)) for x, a in zip(operands, eqn.inputs)]
    outs = bind(eqn.prim, [x.value for x in whole], eqn.params)
    return [Local(o, replicated(v)) for o, v in zip(outs, eqn.outputs)]


def _with_fallback(local):
    """``local``, or the replicated form when a body cannot be partitioned. Bodies are
    partitioned in their own traces before anything is emitted here, so a failure leaves no
    trace behind."""
    def rule(ctx, eqn, operands, targets):
        try:
            return local(ctx, eqn, operands, targets)
        except UnsupportedError:
            return _replicated_local(ctx, eqn, operands, targets)
    return rule


def _rule(local, result_dims, operand_dims) -> ShardRule:
    return ShardRule(None, local=_with_fallback(local),
                     body_dims=BodyDims(result_dims, operand_dims))


SCAN = _rule(_scan_local, _scan_result_dims, scan_operands)
WHILE = _rule(_while_local, _while_result_dims, while_operands)
COND = _rule(_cond_local, cond_dims, cond_operands)
