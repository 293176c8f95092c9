"""``kernel_call``: the equation a ``pto.kernel`` call adds to a program, with every fact.

Params: ``name``, ``grid`` (program ids), ``windows`` (each operand's ``Window``, inputs then
outputs), ``regions`` (ragged-edge groups of programs) and one body per region (``bodies``:
ClosedIRs ``(*program ids, *input refs, *output refs) -> output refs``), ``num_inputs``,
``accumulate`` (outputs that start at zero: atomic-add targets), ``target`` (the chip the
kernel is written for: its buffers bound the blocks) and ``kernel`` (the ``KernelDef`` it was
traced from, which ``vmap`` re-traces with a new grid axis).

Evaluating the equation runs the block program itself, program by program, with numpy (the
reference semantics); ``pto.tile`` and ``pto.jit``'s cpu backend lower it to a ``tile_kernel``
(``kernel/lower.py``), which the tile interpreter and the host build run.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShapeError
from ptojax.kernel.primitives import run_body
from ptojax.kernel.spec import grid_points, region_of
from ptojax.ops.tile_forms import TileForm
from ptojax.ops.sharding_rules import OpRule, ShardRule
from ptojax.trace import Primitive, Unsupported


def out_types_of(bodies) -> list:
    return list(bodies[0].ir.out_types)


def _abstract(*in_types, name, grid, windows, regions, bodies, num_inputs, accumulate,
              target, kernel=None, num_primals=None):
    for t, w in zip(in_types, windows[:num_inputs]):
        if tuple(t.shape) != w.shape:
            raise ShapeError(f"kernel {name}: operand {w.name} is {t}, but the kernel was "
                             f"traced for shape {w.shape}")
    if len(in_types) != num_inputs or len(bodies) != len(regions):
        raise ShapeError(f"kernel {name}: {len(in_types)} operands for {num_inputs} inputs")
    return [t.strip_weak() for t in out_types_of(bodies)]


def initial_outputs(out_types, accumulate) -> list:
    """Output arrays before the programs run: zeros for accumulated outputs; NaN (floats) or
    zeros elsewhere, so that elements no program writes are visible."""
    outs = []
    for i, t in enumerate(out_types):
        fill = 0 if i in accumulate or not dtypes.is_float(t.dtype) else np.nan
        outs.append(np.full(t.shape, fill, t.dtype))
    return outs


def run_kernel(inputs, *, grid, regions, bodies, accumulate, **_):
    """The reference semantics: every program's block program, in grid order, on numpy."""
    inputs = [np.asarray(x) for x in inputs]
    outs = initial_outputs(out_types_of(bodies), accumulate)
    for point in grid_points(grid):
        body = bodies[region_of(regions, point)]
        outs = run_body(body.ir, [*(np.int32(p) for p in point), *inputs, *outs], body.consts)
    return outs


def _cost(eqn, body_counts):
    """Each region's body flops times its number of programs."""
    p = eqn.params
    counts = [0] * len(p["regions"])
    for point in grid_points(p["grid"]):
        counts[region_of(p["regions"], point)] += 1
    total: dict = {}
    for n, body in zip(counts, body_counts):
        for k, v in body.items():
            total[k] = total.get(k, 0) + n * v
    return total


def _replicated_factors(eqn):
    """Every dimension needed whole: a kernel's windows address whole arrays, so pto.shard
    gathers its operands (inside shard_map the kernel runs on each shard's arrays)."""
    return OpRule(tuple(((),) * len(a.type.shape) for a in eqn.inputs),
                  tuple(((),) * len(v.type.shape) for v in eqn.outputs), (), ())


NO_REFERENCE = ("a kernel's semantics are its body run program by program "
                "(kernel/call.py run_kernel); JAX has no such primitive")

kernel_call_p = Primitive("kernel_call", _abstract,
                          lambda *inputs, **params: run_kernel(inputs, **params),
                          multiple_results=True)
# jvp (kernel/autodiff.py) and batch (a new grid axis, re-tracing the body: kernel/api.py) are
# defined with the machinery they need
kernel_call_p.define(
    tile=TileForm("kernel"), cost=_cost, shard=ShardRule(_replicated_factors),
    reference=Unsupported(NO_REFERENCE))

# The tangent of a kernel call: linear in its inputs after the first ``num_primals`` (its
# body is the JVP of the block program); transposed in kernel/autodiff.py
kernel_linear_call_p = Primitive("kernel_linear_call", _abstract,
                                 lambda *inputs, **params: run_kernel(inputs, **params),
                                 multiple_results=True, linear=True)
kernel_linear_call_p.define(
    tile=TileForm("kernel"), cost=_cost, shard=ShardRule(_replicated_factors),
    reference=Unsupported(NO_REFERENCE),
    jvp=Unsupported("higher-order derivatives of kernels are not implemented"))
# its batch rule (rewriting the bodies) is in kernel/api.py, with kernel_call's
