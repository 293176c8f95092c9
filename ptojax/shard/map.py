"""``shard_map``: a per-device program over a mesh, as one equation of the global IR.

    outs = shard_map[body mesh in_specs out_specs] args

``body`` is a per-device ClosedIR (local shapes, collectives by axis name, no consts);
``in_specs``/``out_specs`` are PartitionSpecs saying how each global argument is split into
the body's local inputs and how the local outputs form the global results. Both the manual
``pto.shard_map`` and the automatic ``pto.shard`` (whose body comes from the partitioner)
produce this equation, so both compose with every transform through its rows here:

- jvp: the JVP of the body, in a shard_map whose tangents are split like their primals;
- partial eval: the body's known and linear parts as two shard_maps; a residual travels between
  them as a device-varying value (local ``(1, ...)``, split over every mesh axis);
- transpose: the transposed body. Cotangents of outputs replicated over some mesh axes are
  divided by the number of replicas, and cotangents of inputs replicated over some axes are
  summed over them (``psum``) — JAX's rule with ``check_vma=False``;
- vmap: the batched body, with the batch dimension whole.

Executing the equation runs the body on every device (``runtime/spmd.py``).
"""
from __future__ import annotations

import functools
import math
from collections import OrderedDict

from ptojax import dtypes
from ptojax.autodiff.jvp import jvp_ir
from ptojax.autodiff.partial_eval import partial_eval
from ptojax.autodiff.transpose import backward_pass
from ptojax.batching.vmap import vmap_ir
from ptojax.errors import ShapeError, ShardingError
from ptojax.eval import axis_env
from ptojax.eval.interpreter import eval_ir
from ptojax.eval.leaves import leaf_type
from ptojax.ir.core import IR, ClosedIR, Eqn, Var, consts_as_args
from ptojax.ops.arithmetic import div
from ptojax.ops.broadcast import instantiate
from ptojax.ops.shape import expand_dims, reshape
from ptojax.ops.tangents import Zero, is_undefined, is_zero
from ptojax.shard.collectives import psum_p
from ptojax.shard.replication import replicated_axes
from ptojax.shard.runtime.arrays import global_aval, local_aval
from ptojax.shard.runtime.spmd import SpmdProgram
from ptojax.sharding import (Mesh, PartitionSpec, check_dims, format_dims, spec_dims,
                             spec_of_dims)
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Unsupported, trace_flat, tracing
from ptojax.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_structure
from ptojax.public import add_examples as _add_examples


# the primitive ---------------------------------------------------------------------------------
def _dims(specs, types):
    return [s.dims(len(t.shape)) for s, t in zip(specs, types)]


def _abstract_eval(*in_types, body, mesh, in_specs, out_specs):
    for i, (t, d, local) in enumerate(zip(in_types, _dims(in_specs, in_types),
                                         body.in_types)):
        expected = local_aval(t, d, mesh)
        if (expected.shape, expected.dtype) != (local.shape, local.dtype):
            raise ShapeError(f"shard_map: argument {i} is {t}, split as {in_specs[i]} it is "
                             f"{expected} per device, but the body takes {local}")
    return [global_aval(t, d, mesh) for t, d in zip(body.out_types,
                                                    _dims(out_specs, body.out_types))]


_PROGRAMS: OrderedDict = OrderedDict()
_PROGRAM_CACHE_SIZE = 64


def program(body, mesh, in_specs, out_specs) -> SpmdProgram:
    """The compiled SPMD program of a shard_map equation (cached)."""
    key = (id(body), mesh, in_specs, out_specs)
    entry = _PROGRAMS.get(key)
    if entry is None or entry[0] is not body:
        prog = SpmdProgram(body, mesh, _dims(in_specs, body.in_types),
                           _dims(out_specs, body.out_types))
        entry = _PROGRAMS[key] = (body, prog)
        while len(_PROGRAMS) > _PROGRAM_CACHE_SIZE:
            _PROGRAMS.popitem(last=False)
    return entry[1]


def _impl(*args, body, mesh, in_specs, out_specs):
    return program(body, mesh, in_specs, out_specs).run_global(*args)


shard_map_p = Primitive("shard_map", _abstract_eval, _impl, multiple_results=True,
                        binds_axes=True, linear=True)


def bind_shard_map(args, body: ClosedIR, mesh, in_specs, out_specs) -> list:
    """Emit (or run) ``shard_map`` of ``body``; the body's consts become replicated leading
    operands."""
    body, consts = consts_as_args(body)
    return shard_map_p.bind(*consts, *args, body=body, mesh=mesh,
                            in_specs=(PartitionSpec(),) * len(consts) + tuple(in_specs),
                            out_specs=tuple(out_specs))


def apply_shard_map(args, body: ClosedIR, mesh, in_specs, out_specs) -> list:
    """Under a trace, emit the equation; else run the program directly: sharded arguments
    are used block by block and the outputs are ShardedArrays (nothing is assembled)."""
    if tracing():
        return bind_shard_map(args, body, mesh, in_specs, out_specs)
    body, consts = consts_as_args(body)
    specs = (PartitionSpec(),) * len(consts) + tuple(in_specs)
    return program(body, mesh, specs, tuple(out_specs)).run_sharded([*consts, *args])


def per_device_program(closed: ClosedIR) -> ClosedIR:
    """The body of a program that is one shard_map equation (``jit(shard(f))``), which is
    what each device runs; any other program unchanged."""
    ir = closed.ir
    if len(ir.eqns) != 1 or ir.eqns[0].prim is not shard_map_p:
        return closed
    eqn = ir.eqns[0]
    if list(eqn.outputs) != list(ir.outvars):
        return closed
    return eqn.params["body"]


# pytrees of specs ------------------------------------------------------------------------------
def specs_for_leaves(specs, tree, what: str) -> list:
    """One PartitionSpec per leaf of ``tree``: ``specs`` is a pytree prefix of it whose leaves
    are PartitionSpecs (a single spec applies to everything)."""
    is_spec = lambda x: isinstance(x, PartitionSpec) or x is None  # noqa: E731
    if is_spec(specs):
        return [specs or PartitionSpec()] * len(tree_flatten(tree)[0])
    prefix = tree_structure(specs, is_leaf=is_spec)
    try:
        subtrees = prefix.flatten_up_to(tree)
    except ValueError as e:
        raise ShardingError(f"{what} {specs!r} is not a pytree prefix of the structure "
                            f"{tree_structure(tree)}: {e}", user_frame(4)) from None
    out = []
    for spec, sub in zip(tree_flatten(specs, is_leaf=is_spec)[0], subtrees):
        if not is_spec(spec):
            raise ShardingError(f"{what} entries must be PartitionSpecs (pto.P(...)), got "
                                f"{spec!r}", user_frame(4))
        out += [spec or PartitionSpec()] * len(tree_flatten(sub)[0])
    return out


def check_mesh(mesh, what):
    if not isinstance(mesh, Mesh):
        raise ShardingError(f"{what} needs mesh=pto.Mesh(...) (or pto.make_mesh), got "
                            f"{type(mesh).__name__}", user_frame(3))


def leaf_dims(pairs, specs, mesh, what) -> list:
    """Validated dims of each (path, leaf) for its spec; errors name the argument."""
    dims = []
    for (path, x), spec in zip(pairs, specs):
        t = leaf_type(x)
        try:
            dims.append(spec_dims(spec, t.shape, mesh, f"{what} {keystr(path) or ''} "
                                                       f"{t}".replace("  ", " ")))
        except ShardingError as e:
            raise e.with_source(user_frame(3)) from None
    return dims


# the manual API --------------------------------------------------------------------------------
def shard_map(fn=None, *, mesh, in_specs, out_specs, check_rep: bool = True):
    """Run ``fn`` once per device of ``mesh`` on the local blocks of its arguments (split as
    ``in_specs`` say); ``fn`` communicates through ``pto.lax`` collectives by axis name, and
    its per-device results form the global outputs as ``out_specs`` say. With ``check_rep``,
    an output whose spec leaves out a mesh axis must be replicated over that axis."""
    if fn is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs,
                                 out_specs=out_specs, check_rep=check_rep)
    check_mesh(mesh, "shard_map")
    cache: dict = {}

    @functools.wraps(fn)
    def mapped(*args):
        pairs, in_tree = tree_flatten_with_path(args)
        leaves = [x for _, x in pairs]
        dims = leaf_dims(pairs, specs_for_leaves(in_specs, args, "shard_map in_specs"), mesh,
                         "shard_map argument")
        entry = _traced(fn, cache, mesh, leaves, in_tree, dims, out_specs, check_rep,
                        user_frame(2))
        body, in_specs_flat, out_specs_flat, out_tree = entry
        return out_tree.unflatten(apply_shard_map(leaves, body, mesh, in_specs_flat,
                                                  out_specs_flat))

    return mapped


def _traced(fn, cache, mesh, leaves, in_tree, dims, out_specs, check_rep, source):
    types = [leaf_type(x) for x in leaves]
    key = (in_tree, tuple(types), tuple(dims))
    entry = cache.get(key) if not tracing() else None
    if entry is not None:
        return entry
    local_types = [local_aval(t, d, mesh) for t, d in zip(types, dims)]
    trees = {}

    def flat_fn(*xs):
        out = fn(*in_tree.unflatten(xs))
        out_leaves, trees["out"] = tree_flatten(out)
        return out_leaves

    with axis_env.bound_axes(mesh.shape):
        body = trace_flat(flat_fn, local_types, getattr(fn, "__name__", "fn"))
    out_tree = trees["out"]
    out_specs_flat = specs_for_leaves(out_specs, out_tree.unflatten(body.out_types),
                                      "shard_map out_specs")
    out_dims = [out_spec_dims(spec, t, mesh, f"shard_map output {i} {t}", source)
                for i, (t, spec) in enumerate(zip(body.out_types, out_specs_flat))]
    if check_rep:
        check_replication(body, dims, out_dims, mesh, source)
    entry = (body, tuple(spec_of_dims(d) for d in dims), tuple(out_specs_flat), out_tree)
    if not tracing():
        cache[key] = entry
    return entry


def out_spec_dims(spec, local_type, mesh, what, source):
    """Validated dims of an output spec, given the output's per-device type."""
    try:
        if len(spec) > local_type.ndim:
            raise ShardingError(f"{what}: the spec {spec} has {len(spec)} entries but the "
                                f"value has rank {local_type.ndim}")
        dims = spec.dims(local_type.ndim)
        shape = [n * math.prod(mesh.shape.get(a, 1) for a in axes)
                 for n, axes in zip(local_type.shape, dims)]
        return check_dims(dims, shape, mesh, what)
    except ShardingError as e:
        raise e.with_source(source) from None


def check_replication(body: ClosedIR, in_dims, out_dims, mesh, source):
    """Raise ShardingError if an output's spec claims replication over an axis it varies on."""
    axes = frozenset(mesh.axis_names)
    in_reps = [axes - {a for ax in d for a in ax} for d in in_dims]
    reps = replicated_axes(body, in_reps, axes)
    for i, (rep, d) in enumerate(zip(reps, out_dims)):
        claimed = axes - {a for ax in d for a in ax}
        varying = sorted(claimed - rep, key=mesh.axis_names.index)
        if varying:
            a = varying[0]
            raise ShardingError(
                f"shard_map output {i} has out_specs {format_dims(d)}, which says it is "
                f"replicated over mesh axis {a!r}, but the function computes a value that "
                f"varies across {a!r}. Reduce it over {a!r} (pto.lax.psum, pmean or "
                f"all_gather) or name {a!r} in its out_specs.", source)


# transform rules -------------------------------------------------------------------------------
def _unmentioned(spec: PartitionSpec, mesh) -> tuple:
    used = {a for axes in spec.dims() for a in axes}
    return tuple(a for a in mesh.axis_names if a not in used)


def _jvp_rule(primals, tangents, body, mesh, in_specs, out_specs):
    nonzeros = [not is_zero(t) for t in tangents]
    jbody, out_nz = jvp_ir(body, nonzeros)
    nz_tangents = [t for t in tangents if not is_zero(t)]
    t_specs = [s for s, nz in zip(in_specs, nonzeros) if nz]
    t_out_specs = [s for s, nz in zip(out_specs, out_nz) if nz]
    outs = bind_shard_map([*primals, *nz_tangents], jbody, mesh, (*in_specs, *t_specs),
                          (*out_specs, *t_out_specs))
    n = len(out_specs)
    touts = iter(outs[n:])
    return outs[:n], [next(touts) if nz else Zero(o.aval) for o, nz in zip(outs[:n], out_nz)]


def _residual_spec(mesh) -> PartitionSpec:
    return PartitionSpec(tuple(mesh.axis_names))


def _partial_eval_rule(eqn, unknown_inputs):
    """Known part and linear part as two shard_maps; residuals as device-varying values."""
    p = eqn.params
    known_body, linear_ir, n_res, out_unknown = partial_eval(p["body"], unknown_inputs)
    known = known_body.ir
    n_known_outs = len(known.outvars) - n_res
    res_local = [v.type for v in known.outvars[n_known_outs:]]
    known_body = _stack_residuals(known, n_known_outs)
    linear_body = _unstack_residuals(linear_ir, res_local)
    res_global = [r.update(shape=(p["mesh"].size, *r.shape), weak_type=False)
                  for r in res_local]
    res_vars = [Var(t) for t in res_global]
    known_in = [a for a, u in zip(eqn.inputs, unknown_inputs) if not u]
    unknown_in = [a for a, u in zip(eqn.inputs, unknown_inputs) if u]
    known_out = [v for v, u in zip(eqn.outputs, out_unknown) if not u]
    unknown_out = [v for v, u in zip(eqn.outputs, out_unknown) if u]
    spec_in = lambda flag: tuple(s for s, u in zip(p["in_specs"], unknown_inputs)  # noqa
                                 if u == flag)
    spec_out = lambda flag: tuple(s for s, u in zip(p["out_specs"], out_unknown)  # noqa
                                  if u == flag)
    rspecs = (_residual_spec(p["mesh"]),) * n_res
    known_eqn = Eqn(shard_map_p, known_in, [*known_out, *res_vars],
                    p.replace(body=known_body, in_specs=spec_in(False),
                              out_specs=spec_out(False) + rspecs), eqn.source)
    unknown_eqn = Eqn(shard_map_p, [*res_vars, *unknown_in], unknown_out,
                      p.replace(body=linear_body, in_specs=rspecs + spec_in(True),
                                out_specs=spec_out(True)), eqn.source)
    return [known_eqn], [unknown_eqn], unknown_out


def _stack_residuals(known: IR, n_outs: int) -> ClosedIR:
    def fn(*args):
        outs = eval_ir(ClosedIR(known), list(args))
        return [*outs[:n_outs], *[expand_dims(r, (0,)) for r in outs[n_outs:]]]
    return trace_flat(fn, [v.type for v in known.invars], "shard_map_known")


def _unstack_residuals(linear: IR, res_local) -> ClosedIR:
    n = len(res_local)

    def fn(*args):
        res = [reshape(r, t.shape) for r, t in zip(args[:n], res_local)]
        return eval_ir(ClosedIR(linear), [*res, *args[n:]])
    types = [t.update(shape=(1, *t.shape), weak_type=False) for t in res_local]
    return trace_flat(fn, [*types, *[v.type for v in linear.invars[n:]]], "shard_map_linear")


def _transpose_rule(cts, *invals, body, mesh, in_specs, out_specs):
    linear = [is_undefined(x) for x in invals]
    known = [x for x in invals if not is_undefined(x)]
    ct_values = [instantiate(c, t.strip_weak()) if is_zero(c) else c
                 for c, t in zip(cts, [global_aval(t, s.dims(t.ndim), mesh)
                                       for t, s in zip(body.out_types, out_specs)])]
    known_local = [t for t, lin in zip(body.in_types, linear) if not lin]
    ct_local = [t.strip_weak() for t in body.out_types]

    def transposed(*args):
        k, cs = args[:len(known_local)], args[len(known_local):]
        cs = [_scale_replicated(c, spec, mesh) for c, spec in zip(cs, out_specs)]
        it = iter(k)
        full = [None if lin else next(it) for lin in linear]
        in_cts = backward_pass(body.ir, (), full, linear, cs)
        return [_sum_replicated(instantiate(c, t.strip_weak()), spec, mesh)
                for c, t, spec, lin in zip(in_cts, body.in_types, in_specs, linear) if lin]

    tbody = trace_flat(transposed, [*known_local, *ct_local], "shard_map_transpose")
    k_specs = tuple(s for s, lin in zip(in_specs, linear) if not lin)
    lin_specs = tuple(s for s, lin in zip(in_specs, linear) if lin)
    outs = iter(bind_shard_map([*known, *ct_values], tbody, mesh, (*k_specs, *out_specs),
                               lin_specs))
    return [next(outs) if lin else None for lin in linear]


def _scale_replicated(ct, spec, mesh):
    n = mesh.axis_size(_unmentioned(spec, mesh))
    return ct if n == 1 or not _is_inexact(ct) else div(ct, n)


def _sum_replicated(ct, spec, mesh):
    axes = _unmentioned(spec, mesh)
    return ct if not axes or not _is_inexact(ct) else psum_p.bind(ct, axes=axes)


def _is_inexact(x) -> bool:
    return dtypes.is_inexact(x.dtype)


def _batch_rule(args, dims, body, mesh, in_specs, out_specs):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    name = axis_env.innermost_batch_name()
    bbody, out_dims = vmap_ir(body, dims, size, name)
    b_in = tuple(_insert_whole(s, d, a.ndim - 1) for s, d, a in zip(in_specs, dims, args))
    b_out = tuple(_insert_whole(s, d, t.ndim) for s, d, t in zip(out_specs, out_dims,
                                                                 body.out_types))
    return bind_shard_map(args, bbody, mesh, b_in, b_out), out_dims


def _insert_whole(spec: PartitionSpec, dim, ndim):
    if dim is None:
        return spec
    parts = list(spec.dims(ndim))
    parts.insert(dim, ())
    return spec_of_dims(tuple(parts))


def _shard_map_cost(eqn, body_counts):
    """The flops of the per-device program (what one device runs)."""
    return body_counts[0]


shard_map_p.define(
    jvp=_jvp_rule, partial_eval=_partial_eval_rule, transpose=_transpose_rule,
    batch=_batch_rule,
    shard=Unsupported("the function already contains a per-device program (pto.shard_map or "
                      "pto.shard); nesting them is not supported"),
    tile=Unsupported("a per-device program runs between kernels; tile its body instead"),
    cost=_shard_map_cost,
    reference=Unsupported("per-device programs run through the device runtime"))


_add_examples(globals(), """
shard_map:
    >>> mesh = pto.make_mesh((4,), ('i',))
    >>> total = lambda block: pto.lax.psum(pnp.sum(block), 'i')
    >>> f = pto.shard_map(total, mesh=mesh, in_specs=pto.P('i'), out_specs=pto.P())
    >>> f(pnp.arange(8.0))
    Array(28., dtype=float32)
""")
