"""JVP rules of the indexing primitives (dynamic slices, gather, scatter in every mode) and
of sort: rows of ``jvp.jvp_rules``, kept here so each file stays readable. Imported by
``jvp.py``, so the table is complete whenever it is used."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.ops import indexing as ix, sorting
from ptojax.ops.tangents import Zero, add_tangents, instantiate, is_zero, zeros_like
from ptojax.autodiff.jvp import _linear_in_first, _ones_like, jvp_rules

jvp_rules[ix.dynamic_slice_p] = _linear_in_first(ix.dynamic_slice_p)


def _gather_rule(primals, tangents, axes, nbatch=0, mode="clip", fill_value=None):
    """Gather the tangent at the same positions; out-of-bounds reads in mode "fill" have a
    zero tangent whatever the primal's fill value."""
    (x, idx), (t, _) = primals, tangents
    params = dict(axes=axes, nbatch=nbatch, mode=mode)
    out = ix.gather_p.bind(x, idx, fill_value=fill_value, **params)
    if is_zero(t):
        return out, Zero(out.aval)
    return out, ix.gather_p.bind(t, idx, fill_value=0 if mode == "fill" else None, **params)


jvp_rules[ix.gather_p] = _gather_rule


def _dynamic_update_slice_rule(primals, tangents):
    (x, upd, *starts), (tx, tu, *_) = primals, tangents
    out = ix.dynamic_update_slice_p.bind(x, upd, *starts)
    if is_zero(tx) and is_zero(tu):
        return out, Zero(out.aval)
    return out, ix.dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *starts)


jvp_rules[ix.dynamic_update_slice_p] = _dynamic_update_slice_rule


def _scatter_rule(primals, tangents, axes, nbatch=0, mode="add"):
    (x, idx, upd), (tx, _, tu) = primals, tangents
    params = dict(axes=axes, nbatch=nbatch)
    out = ix.scatter_p.bind(x, idx, upd, mode=mode, **params)
    if is_zero(tx) and is_zero(tu):
        return out, Zero(out.aval)
    if mode == "add":
        return out, ix.scatter_p.bind(instantiate(tx), idx, instantiate(tu), mode="add",
                                      **params)
    if mode == "set":
        return out, _scatter_set_tangent(x, idx, upd, tx, tu, params)
    if mode == "mul":
        return out, _scatter_mul_tangent(x, idx, upd, tx, tu, params)
    return out, _scatter_extremum_tangent(x, idx, upd, out, tx, tu, params)


def _gather_params(params):
    return dict(axes=params["axes"], nbatch=params["nbatch"], mode="clip", fill_value=None)


def _scatter_set_tangent(x, idx, upd, tx, tu, params):
    """Where several updates write one element the last wins (as the primal); the others
    get a zero tangent, so the transpose sends them no cotangent."""
    tu = instantiate(tu)
    ids = lax.reshape(lax.iota(dtypes.int32, upd.size), upd.shape)
    written = ix.scatter_p.bind(lax.broadcast_in_dim(np.int32(-1), x.shape, ()), idx, ids,
                                mode="set", **params)
    won = lax.eq(ix.gather_p.bind(written, idx, **_gather_params(params)), ids)
    return ix.scatter_p.bind(instantiate(tx), idx, lax.select(won, tu, zeros_like(tu)),
                             mode="set", **params)


def _scatter_mul_tangent(x, idx, upd, tx, tu, params):
    """out = x * prod(updates at each target); exact where updates are zero."""
    tout = Zero(x.aval)
    if not is_zero(tx):
        tout = ix.scatter_p.bind(tx, idx, upd, mode="mul", **params)
    if not is_zero(tu):
        gather = _gather_params(params)
        is_z = lax.eq(upd, 0)
        zero_upd = zeros_like(upd)
        nonzero_upd = lax.select(is_z, _ones_like(upd), upd)
        prod_nz = ix.scatter_p.bind(_ones_like(x), idx, nonzero_upd, mode="mul", **params)
        zeros_at = ix.scatter_p.bind(zeros_like(x), idx,
                                     lax.convert_element_type(is_z, x.dtype), mode="add",
                                     **params)
        p_nz = ix.gather_p.bind(prod_nz, idx, **gather)
        z_at = ix.gather_p.bind(zeros_at, idx, **gather)
        others = lax.select(is_z, lax.select(lax.eq(z_at, 1), p_nz, zero_upd),
                            lax.select(lax.eq(z_at, 0), lax.div(p_nz, nonzero_upd), zero_upd))
        factor = lax.mul(others, ix.gather_p.bind(x, idx, **gather))
        tout = add_tangents(tout, ix.scatter_p.bind(zeros_like(x), idx, lax.mul(tu, factor),
                                                    mode="add", **params))
    return tout


def _scatter_extremum_tangent(x, idx, upd, out, tx, tu, params):
    """Tangent of the winning value; ties share it equally (as reduce_max and JAX)."""
    from_x = lax.convert_element_type(lax.eq(x, out), x.dtype)
    won = lax.convert_element_type(
        lax.eq(ix.gather_p.bind(out, idx, **_gather_params(params)), upd), x.dtype)
    count = ix.scatter_p.bind(from_x, idx, won, mode="add", **params)
    total = lax.mul(instantiate(tx), from_x)
    total = ix.scatter_p.bind(total, idx, lax.mul(instantiate(tu), won), mode="add", **params)
    return lax.div(total, count)


jvp_rules[ix.scatter_p] = _scatter_rule



def _sort_rule(primals, tangents, dimension, num_keys=1):
    """Sort with an extra iota operand; the tangents follow the resulting permutation."""
    x0 = primals[0]
    iota = lax.broadcasted_iota(dtypes.int32, x0.shape, dimension)
    *outs, perm = sorting.sort_p.bind(*primals, iota, dimension=dimension, num_keys=num_keys)
    from ptojax.numpy.indexing import take_along_axis
    touts = [Zero(o.aval) if is_zero(t) else take_along_axis(t, perm, dimension, mode="clip")
             for o, t in zip(outs, tangents)]
    return outs, touts


jvp_rules[sorting.sort_p] = _sort_rule
