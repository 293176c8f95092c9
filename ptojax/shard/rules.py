"""The shard rule table: how each primitive's dimensions may be split across devices.

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
                  fall in its block and the results are summed (vocab-parallel embedding
                  lookup)
    scatter       an indexed operand axis of scatter: each device applies the updates whose
                  indices fall in its block (indices shifted; the others fall out of bounds)

Each dimension maps to a tuple of factors, major first (several for a dimension merged by a
reshape; only the major one may be split), or to ``()`` when the op needs that dimension whole
(a sort dimension, a partial slice, ...). Rules are functions ``eqn -> OpRule``.

An entry may also carry:
- ``localize(params, in_shapes, out_shapes)``: the params of the per-device equation when they
  hold shapes (broadcast_in_dim, reshape, iota, slice, dynamic_slice);
- ``linear``: which operands may stay *partial* (pending psum) because the op is linear in
  them: "unary" (operand 0 only), "one" (exactly one operand), "all" (every operand, equally;
  zero literals count as partial), "select" (the two branches, equally), or a function of the
  equation returning one of those;
- ``local``: a special per-device form (iota offsets, gather/scatter on a split indexed axis,
  rev and rotations via ppermute, sub-IRs), defined in ``shard_local.py``.

The engine that uses the table is ``shard_propagate.py`` (choosing each value's sharding) and
``shard_partition.py`` (emitting the per-device program and its collectives).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.ops import elementwise as ew, indexing as ix, linalg, random_bits
from ptojax.ops import reductions as red, shape as sh, sorting


class OpRule(NamedTuple):
    operands: tuple   # per operand, per dimension: tuple of factor ids (major first)
    results: tuple    # per result, per dimension
    sizes: tuple      # per factor
    kinds: tuple      # per factor: pass | sum | max | min | gather | scatter


class ShardRule(NamedTuple):
    factors: Callable                    # eqn -> OpRule
    localize: Optional[Callable] = None  # (params, in_shapes, out_shapes) -> params
    linear: object = None                # None | "unary" | "one" | "all" | eqn -> one of them
    local: Optional[Callable] = None     # special per-device form (shard_local.py)


shard_rules: dict = {}


class _Factors:
    """Allocates the factors of one rule."""

    def __init__(self):
        self.sizes, self.kinds = [], []

    def new(self, size: int, kind: str = "pass") -> tuple:
        """A dimension of ``size`` backed by a fresh factor (``()`` for sizes 0 and 1)."""
        if size <= 1:
            return ()
        self.sizes.append(size)
        self.kinds.append(kind)
        return (len(self.sizes) - 1,)

    def rule(self, operands, results) -> OpRule:
        return OpRule(tuple(tuple(o) for o in operands), tuple(tuple(r) for r in results),
                      tuple(self.sizes), tuple(self.kinds))


def _shape(atom):
    return atom.type.shape


# elementwise and friends ---------------------------------------------------------------------
def elementwise_rule(eqn) -> OpRule:
    f = _Factors()
    dims = [f.new(n) for n in _shape(eqn.outputs[0])]
    operands = [dims if len(_shape(a)) else () for a in eqn.inputs]
    return f.rule(operands, [dims] * len(eqn.outputs))


def _reduction_kind(eqn, kind):
    return "" if eqn.inputs[0].type.dtype == dtypes.bool_ else kind


def reduce_rule(kind: str):
    """Reduced dims of kind ``kind`` ("" = they must be whole), kept dims pass through."""
    def rule(eqn) -> OpRule:
        f = _Factors()
        axes = eqn.params["axes"]
        k = _reduction_kind(eqn, kind)
        operand = [(f.new(n, k) if k else ()) if d in axes else f.new(n)
                   for d, n in enumerate(_shape(eqn.inputs[0]))]
        return f.rule([operand], [[x for d, x in enumerate(operand) if d not in axes]])
    return rule


def along_axis_rule(param: str):
    """Ops that need one dimension whole (argmax, cumulative ops, sort); the rest pass."""
    def rule(eqn) -> OpRule:
        f = _Factors()
        axis = eqn.params[param]
        dims = [() if d == axis else f.new(n) for d, n in enumerate(_shape(eqn.inputs[0]))]
        kept = [x for d, x in enumerate(dims) if d != axis]
        results = [dims if len(_shape(o)) == len(dims) else kept for o in eqn.outputs]
        return f.rule([dims] * len(eqn.inputs), results)
    return rule


# shapes -----------------------------------------------------------------------------------------
def _broadcast_rule(eqn) -> OpRule:
    f = _Factors()
    shape, bdims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    in_shape = _shape(eqn.inputs[0])
    out = [None] * len(shape)
    operand = []
    for i, d in enumerate(bdims):
        if in_shape[i] == shape[d]:
            out[d] = f.new(shape[d])
            operand.append(out[d])
        else:
            operand.append(())
    out = [f.new(n) if x is None else x for x, n in zip(out, shape)]
    return f.rule([operand], [out])


def reshape_factors(in_shape, out_shape, f: _Factors) -> tuple:
    """Dims of a reshape as factors: one-to-one dims share a factor; a dim split into several
    is the tuple of their factors (major first); merged dims likewise. Many-to-many groups
    (e.g. (2, 3) -> (3, 2)) must be whole."""
    ins, outs = [()] * len(in_shape), [()] * len(out_shape)
    if 0 in in_shape or 0 in out_shape:
        return ins, outs
    i = j = 0
    while i < len(in_shape) and j < len(out_shape):
        gi, gj = [i], [j]
        pi, pj = in_shape[i], out_shape[j]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi <= pj:
                pi *= in_shape[i]
                gi.append(i)
                i += 1
            else:
                pj *= out_shape[j]
                gj.append(j)
                j += 1
        big_in = [d for d in gi if in_shape[d] > 1]
        big_out = [d for d in gj if out_shape[d] > 1]
        if len(big_in) == 1:
            for d in big_out:
                outs[d] = f.new(out_shape[d])
            ins[big_in[0]] = tuple(x for d in big_out for x in outs[d])
        elif len(big_out) == 1:
            for d in big_in:
                ins[d] = f.new(in_shape[d])
            outs[big_out[0]] = tuple(x for d in big_in for x in ins[d])
    return ins, outs


def _reshape_rule(eqn) -> OpRule:
    f = _Factors()
    ins, outs = reshape_factors(_shape(eqn.inputs[0]), eqn.params["new_sizes"], f)
    return f.rule([ins], [outs])


def _transpose_rule(eqn) -> OpRule:
    f = _Factors()
    dims = [f.new(n) for n in _shape(eqn.inputs[0])]
    return f.rule([dims], [[dims[p] for p in eqn.params["permutation"]]])


def _squeeze_like_rule(eqn) -> OpRule:
    """squeeze / expand_dims: the size-1 dims come and go, the others keep their order."""
    f = _Factors()
    in_shape, out_shape = _shape(eqn.inputs[0]), _shape(eqn.outputs[0])
    big = [f.new(n) for n in in_shape if n != 1]
    it = iter(big)
    operand = [() if n == 1 else next(it) for n in in_shape]
    it = iter(big)
    result = [() if n == 1 else next(it) for n in out_shape]
    return f.rule([operand], [result])


def _slice_rule(eqn) -> OpRule:
    f = _Factors()
    p = eqn.params
    strides = p["strides"] or (1,) * len(p["start_indices"])
    dims = [f.new(n) if (lo, hi, st) == (0, n, 1) else ()
            for n, lo, hi, st in zip(_shape(eqn.inputs[0]), p["start_indices"],
                                     p["limit_indices"], strides)]
    return f.rule([dims], [dims])


def _pad_rule(eqn) -> OpRule:
    f = _Factors()
    dims = [f.new(n) if tuple(c) == (0, 0, 0) else ()
            for n, c in zip(_shape(eqn.inputs[0]), eqn.params["padding_config"])]
    return f.rule([dims, ()], [dims])


def _concatenate_rule(eqn) -> OpRule:
    f = _Factors()
    d0 = eqn.params["dimension"]
    dims = [() if d == d0 else f.new(n) for d, n in enumerate(_shape(eqn.outputs[0]))]
    return f.rule([dims] * len(eqn.inputs), [dims])


def _iota_rule(eqn) -> OpRule:
    f = _Factors()
    return f.rule([], [[f.new(n) for n in _shape(eqn.outputs[0])]])


def _dynamic_slice_rule(eqn) -> OpRule:
    f = _Factors()
    operand = eqn.inputs[0]
    dims = [f.new(n) if k == n else () for n, k in zip(_shape(operand),
                                                        eqn.params["slice_sizes"])]
    return f.rule([dims] + [()] * (len(eqn.inputs) - 1), [dims])


def _dynamic_update_slice_rule(eqn) -> OpRule:
    f = _Factors()
    x, update = eqn.inputs[:2]
    dims = [f.new(n) if k == n else () for n, k in zip(_shape(x), _shape(update))]
    return f.rule([dims, dims] + [()] * (len(eqn.inputs) - 2), [dims])


# linear algebra ---------------------------------------------------------------------------------
def _dot_general_rule(eqn) -> OpRule:
    f = _Factors()
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = _shape(eqn.inputs[0]), _shape(eqn.inputs[1])
    contract = _reduction_kind(eqn, "sum")
    ldims, rdims = [None] * len(lhs), [None] * len(rhs)
    batch = []
    for a, b in zip(lb, rb):
        ldims[a] = rdims[b] = f.new(lhs[a])
        batch.append(ldims[a])
    for a, b in zip(lc, rc):
        ldims[a] = rdims[b] = f.new(lhs[a], contract) if contract else ()
    lfree = [d for d in range(len(lhs)) if ldims[d] is None]
    rfree = [d for d in range(len(rhs)) if rdims[d] is None]
    for d in lfree:
        ldims[d] = f.new(lhs[d])
    for d in rfree:
        rdims[d] = f.new(rhs[d])
    out = batch + [ldims[d] for d in lfree] + [rdims[d] for d in rfree]
    return f.rule([ldims, rdims], [out])


# indexing ---------------------------------------------------------------------------------------
def _gather_like_dims(eqn, f: _Factors, indexed_kind: str):
    """Shared dims of gather and scatter: (operand dims, indices dims, updates/result dims)."""
    p = eqn.params
    operand, indices = _shape(eqn.inputs[0]), _shape(eqn.inputs[1])
    nbatch, axes = p["nbatch"], p["axes"]
    batch = [f.new(n) for n in operand[:nbatch]]
    o_dims = [f.new(n, indexed_kind) if indexed_kind and i in axes else
              () if i in axes else f.new(n) for i, n in enumerate(operand[nbatch:])]
    i_dims = [f.new(n) for n in indices[nbatch:-1]]
    rest = [x for i, x in enumerate(o_dims) if i not in axes]
    return batch + o_dims, batch + i_dims + [()], batch + i_dims + rest, i_dims


def _gather_rule(eqn) -> OpRule:
    f = _Factors()
    splittable = eqn.inputs[0].type.dtype != dtypes.bool_
    operand, indices, result, _ = _gather_like_dims(eqn, f, "gather" if splittable else "")
    return f.rule([operand, indices], [result])


def _scatter_rule(eqn) -> OpRule:
    f = _Factors()
    operand, indices, updates, i_dims = _gather_like_dims(eqn, f, "scatter")
    if eqn.params["mode"] == "add":
        for x in i_dims:  # updates split along their index dims add up: a partial sum
            if x:
                f.kinds[x[0]] = "sum"
    else:
        updates = [() if x in i_dims else x for x in updates]
        indices = [() if x in i_dims else x for x in indices]
    return f.rule([operand, indices, updates], [operand])


# localized params -------------------------------------------------------------------------------
def _out_shape_param(name):
    def localize(params, in_shapes, out_shapes):
        return params.replace(**{name: tuple(out_shapes[0])})
    return localize


def _slice_localize(params, in_shapes, out_shapes):
    limits = tuple(hi if n_out == hi - lo else lo + n_out
                   for lo, hi, n_out in zip(params["start_indices"], params["limit_indices"],
                                            out_shapes[0]))
    return params.replace(limit_indices=limits)


# the table --------------------------------------------------------------------------------------
def _convert_linear(eqn):
    """Converting between float types is linear; rounding to integers is not."""
    return "unary" if dtypes.is_float(eqn.params["new_dtype"]) else None


_LINEARITY = {ew.neg_p: "unary", ew.copy_p: "unary", ew.stop_gradient_p: "unary",
              ew.div_p: "unary", ew.add_p: "all", ew.sub_p: "all", ew.mul_p: "one",
              ew.select_p: "select", ew.convert_element_type_p: _convert_linear}

for _p in ew.ELEMENTWISE.values():
    shard_rules[_p] = ShardRule(elementwise_rule, linear=_LINEARITY.get(_p))
shard_rules[random_bits.threefry2x32_p] = ShardRule(elementwise_rule)

shard_rules[red.reduce_sum_p] = ShardRule(reduce_rule("sum"), linear="unary")
shard_rules[red.reduce_max_p] = ShardRule(reduce_rule("max"))
shard_rules[red.reduce_min_p] = ShardRule(reduce_rule("min"))
for _p in (red.reduce_prod_p, red.reduce_and_p, red.reduce_or_p):
    shard_rules[_p] = ShardRule(reduce_rule(""))
shard_rules[red.argmax_p] = ShardRule(along_axis_rule("axis"))
shard_rules[red.argmin_p] = ShardRule(along_axis_rule("axis"))
for _p in red.CUMULATIVE.values():
    shard_rules[_p] = ShardRule(along_axis_rule("axis"),
                                linear="unary" if _p is red.cumsum_p else None)
shard_rules[sorting.sort_p] = ShardRule(along_axis_rule("dimension"))

shard_rules[sh.broadcast_in_dim_p] = ShardRule(_broadcast_rule, _out_shape_param("shape"),
                                               linear="unary")
shard_rules[sh.reshape_p] = ShardRule(_reshape_rule, _out_shape_param("new_sizes"),
                                      linear="unary")
shard_rules[sh.transpose_p] = ShardRule(_transpose_rule, linear="unary")
shard_rules[sh.squeeze_p] = ShardRule(_squeeze_like_rule, linear="unary")
shard_rules[sh.expand_dims_p] = ShardRule(_squeeze_like_rule, linear="unary")
shard_rules[sh.rev_p] = ShardRule(elementwise_rule, linear="unary")
shard_rules[sh.slice_p] = ShardRule(_slice_rule, _slice_localize, linear="unary")
shard_rules[sh.pad_p] = ShardRule(_pad_rule)
shard_rules[sh.concatenate_p] = ShardRule(_concatenate_rule, linear="all")
shard_rules[sh.iota_p] = ShardRule(_iota_rule, _out_shape_param("shape"))

shard_rules[ix.dynamic_slice_p] = ShardRule(_dynamic_slice_rule,
                                            _out_shape_param("slice_sizes"), linear="unary")
shard_rules[ix.dynamic_update_slice_p] = ShardRule(_dynamic_update_slice_rule)
shard_rules[ix.gather_p] = ShardRule(_gather_rule, linear="unary")
shard_rules[ix.scatter_p] = ShardRule(_scatter_rule)
shard_rules[linalg.dot_general_p] = ShardRule(_dot_general_rule, linear="one")



def _not_supported(reason: str):
    def local(ctx, eqn, operands, targets):
        raise UnsupportedError(f"pto.shard cannot partition `{eqn.prim.name}`: {reason}",
                               eqn.source)
    return ShardRule(None, local=local)


def _register_unsupported():
    from ptojax.autodiff import calls
    from ptojax.shard import collectives
    from ptojax.tile import ops as tile
    from ptojax.shard.map import shard_map_p
    for prim in collectives.COLLECTIVES.values():
        shard_rules[prim] = _not_supported(
            "collectives name mesh axes, which only exist per device; call them inside "
            "pto.shard_map, and write pto.shard functions on whole arrays")
    shard_rules[shard_map_p] = _not_supported(
        "the function already contains a per-device program (pto.shard_map or pto.shard); "
        "nesting them is not supported")
    shard_rules[calls.custom_lin_p] = _not_supported(
        "it only exists inside a JVP being transposed")
    shard_rules[tile.tile_kernel_p] = _not_supported(
        "tile kernels are per-device code: shard first, then tile the per-device program")


_register_unsupported()
from ptojax.shard import local as shard_local  # noqa: E402,F401  (registers the special forms)
