"""Shard facts: how each dimension of a primitive's operands and results may be split across
devices, read by ``ptojax/shard``.

A primitive's rule describes its operands' and results' dimensions in terms of shared
**factors** (as GSPMD/Shardy do). A factor is one logical iteration dimension of the op with a
size and a kind:

    pass          appears in results (and maybe operands): splitting it splits the work; the
                  result keeps the split (elementwise dims, dot_general free/batch dims, kept
                  dims of a reduction, new dims of broadcast_in_dim/iota)
    sum/max/min   appears only in operands (contracting dims of dot_general, reduced dims):
                  each device reduces its block and the per-device results are combined by
                  psum (deferred: the result is *partial*) or pmax/pmin
    gather        an indexed operand axis of gather: each device looks up the indices that
                  fall in its block and the results are summed (vocab-parallel embedding)
    scatter       an indexed operand axis of scatter: each device applies the updates whose
                  indices fall in its block (indices shifted; the others fall out of bounds)

Each dimension maps to a tuple of factors, major first (several for a dimension merged by a
reshape; only the major one may be split), or to ``()`` when the op needs that dimension whole
(a sort dimension, a partial slice, ...).

A ``ShardRule`` holds ``factors(eqn) -> OpRule`` and may carry:
- ``localize(params, in_shapes, out_shapes)``: the params of the per-device equation when they
  hold shapes (broadcast_in_dim, reshape, iota, slice, dynamic_slice);
- ``linear``: which operands may stay *partial* (pending psum) because the op is linear in
  them: "unary" (operand 0 only), "one" (exactly one operand), "all" (every operand, equally;
  zero literals count as partial), "select" (the two branches, equally), or a function of the
  equation returning one of those;
- ``local(ctx, eqn, operands, targets) -> [Local]``: a special per-device form (iota offsets,
  a lookup in a split table, rotations, sub-programs), written against the partitioner's
  context ``ctx`` (``shard/partition.py``: ``plan``, ``emit_planned``, ``generic``,
  ``reshard``, ``device_index``, ``ppermute``, ``inline``, ``partition_body``);
- ``body_dims``: for primitives with sub-IRs, how splits flow through their bodies.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from ptojax import dtypes


class OpRule(NamedTuple):
    operands: tuple   # per operand, per dimension: tuple of factor ids (major first)
    results: tuple    # per result, per dimension
    sizes: tuple      # per factor
    kinds: tuple      # per factor: pass | sum | max | min | gather | scatter


class ShardRule(NamedTuple):
    factors: Optional[Callable]          # eqn -> OpRule
    localize: Optional[Callable] = None  # (params, in_shapes, out_shapes) -> params
    linear: object = None                # None | "unary" | "one" | "all" | "select" | fn
    local: Optional[Callable] = None     # special per-device form
    body_dims: object = None             # BodyDims (shard/propagate.py) of sub-IR primitives


class Local(NamedTuple):
    """A per-device value: the traced local block, the mesh axes splitting each dimension
    and the mesh axes over which it is a pending sum."""
    value: object
    dims: tuple
    partial: tuple = ()


def project(fdims, axes) -> tuple:
    """The dims of one value given the mesh axes of each factor."""
    return tuple(axes[fd[0]] if fd else () for fd in fdims)


class Factors:
    """Allocates the factors of one rule."""

    def __init__(self):
        self.sizes, self.kinds = [], []

    def new(self, size: int, kind: str = "pass") -> tuple:
        """A dimension of ``size`` backed by a fresh factor (``()`` for sizes 0 and 1)."""
        if size == 0 or size == 1:   # (a symbolic size is neither: ir/symbolic.py)
            return ()
        self.sizes.append(size)
        self.kinds.append(kind)
        return (len(self.sizes) - 1,)

    def rule(self, operands, results) -> OpRule:
        return OpRule(tuple(tuple(o) for o in operands), tuple(tuple(r) for r in results),
                      tuple(self.sizes), tuple(self.kinds))


def shape_of(atom) -> tuple:
    return atom.type.shape


def elementwise_factors(eqn) -> OpRule:
    f = Factors()
    dims = [f.new(n) for n in shape_of(eqn.outputs[0])]
    operands = [dims if len(shape_of(a)) else () for a in eqn.inputs]
    return f.rule(operands, [dims] * len(eqn.outputs))


def reduction_kind(eqn, kind: str) -> str:
    """Bool reductions have no collective: their dims must be whole ("")."""
    return "" if eqn.inputs[0].type.dtype == dtypes.bool_ else kind


def reduce_factors(kind: str):
    """Reduced dims of kind ``kind`` ("" = they must be whole), kept dims pass through."""
    def rule(eqn) -> OpRule:
        f = Factors()
        axes = eqn.params["axes"]
        k = reduction_kind(eqn, kind)
        operand = [(f.new(n, k) if k else ()) if d in axes else f.new(n)
                   for d, n in enumerate(shape_of(eqn.inputs[0]))]
        return f.rule([operand], [[x for d, x in enumerate(operand) if d not in axes]])
    return rule


def along_axis_factors(param: str):
    """Ops that need one dimension whole (argmax, cumulative ops, sort); the rest pass."""
    def rule(eqn) -> OpRule:
        f = Factors()
        axis = eqn.params[param]
        dims = [() if d == axis else f.new(n) for d, n in enumerate(shape_of(eqn.inputs[0]))]
        kept = [x for d, x in enumerate(dims) if d != axis]
        results = [dims if len(shape_of(o)) == len(dims) else kept for o in eqn.outputs]
        return f.rule([dims] * len(eqn.inputs), results)
    return rule


def out_shape_param(name: str):
    """``localize`` for a param holding the result's shape."""
    def localize(params, in_shapes, out_shapes):
        return params.replace(**{name: tuple(out_shapes[0])})
    return localize


def elementwise(linear=None) -> ShardRule:
    return ShardRule(elementwise_factors, linear=linear)
