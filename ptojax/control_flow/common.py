"""Shared pieces of the control-flow primitives: tracing user functions into const-free
sub-IRs, checking that branch/carry types agree (``ControlFlowError`` naming both types and
the user's line), small IR surgery (reordering, dropping and adding inputs, joining the
captured values of several sub-IRs, inlining) and the cache of compiled sub-IRs the numpy
impls run.
"""
from __future__ import annotations

import functools

import numpy as np

from ptojax import dtypes
from ptojax.errors import ControlFlowError
from ptojax.ir.core import IR, ClosedIR, Eqn, Var, consts_as_args
from ptojax.ir.types import TensorType
from ptojax.eval.leaves import leaf_type
from ptojax.ops.convert import copy_p
from ptojax.eval.executable import Executable
from ptojax.trace import trace_flat
from ptojax.pytree import keystr, tree_flatten, tree_flatten_with_path


# tracing user functions ----------------------------------------------------------------------
def trace_sub_ir(fn, in_tree, in_types, name: str) -> tuple:
    """Trace ``fn(*in_tree.unflatten(leaves))`` on leaves of ``in_types``: (const-free
    ClosedIR taking the captured values first, the captured values, the output treedef)."""
    out_trees = []

    def flat_fn(*leaves):
        out_leaves, out_tree = tree_flatten(fn(*in_tree.unflatten(leaves)))
        out_trees.append(out_tree)
        return out_leaves

    body, consts = consts_as_args(trace_flat(flat_fn, list(in_types), name))
    return body, consts, out_trees[0]


def flat_types(tree) -> tuple:
    """(leaves, treedef, leaf types) of a pytree of arrays and scalars."""
    leaves, treedef = tree_flatten(tree)
    return leaves, treedef, [leaf_type(x) for x in leaves]


def fn_name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


# type agreement ------------------------------------------------------------------------------
def leaf_paths(treedef, root: str) -> list:
    """``root['a'][0]``-style names of the leaves of ``treedef``."""
    pairs, _ = tree_flatten_with_path(treedef.unflatten(range(treedef.num_leaves)))
    return [root + keystr(path) for path, _ in pairs]


def same_shape_dtype(a, b) -> bool:
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def check_structure(what, expected_tree, got_tree, expected_name, got_name, source) -> None:
    if expected_tree != got_tree:
        raise ControlFlowError(f"{what}: {got_name} has structure {got_tree} but "
                               f"{expected_name} has structure {expected_tree}; they must "
                               f"match", source)


def type_mismatches(expected_types, got_types) -> list:
    """Indices where shape or dtype differ."""
    return [i for i, (e, g) in enumerate(zip(expected_types, got_types))
            if not same_shape_dtype(e, g)]


def mismatch_error(what, paths, expected_types, got_types, expected_name, got_name,
                   source, hint="") -> ControlFlowError:
    lines = [f"  {paths[i]}: {expected_types[i]} in {expected_name} but {got_types[i]} in "
             f"{got_name}" for i in type_mismatches(expected_types, got_types)]
    return ControlFlowError(f"{what}: {got_name} and {expected_name} types differ:\n"
                            + "\n".join(lines) + hint, source)


def promoted_carry(init, out):
    """The type a weakly typed initial carry (a Python scalar) is converted to when the body
    returns ``out`` for it: their promotion (JAX's rule), or None when that cannot help."""
    if not init.weak_type or tuple(init.shape) != tuple(out.shape):
        return None
    dtype, weak = dtypes.promote(((init.dtype, True), (out.dtype, out.weak_type)))
    return None if dtype == init.dtype else TensorType(init.shape, dtype, weak)


def strong(t):
    return t.strip_weak()


def carry_fixpoint(flags, step) -> list:
    """Grow the carry ``flags`` until ``step(flags)`` (the flags of the body's carry outputs)
    adds nothing: a property of a carry on entry must hold on exit, and vice versa."""
    flags = list(flags)
    while True:
        grown = [a or b for a, b in zip(flags, step(flags))]
        if grown == flags:
            return flags
        flags = grown


# IR surgery -----------------------------------------------------------------------------------
def reorder(closed: ClosedIR, in_order, out_order) -> ClosedIR:
    """``closed`` (const-free) with invars ``in_order`` (indices) and outvars ``out_order``."""
    ir = closed.ir
    return ClosedIR(IR((), [ir.invars[i] for i in in_order], ir.eqns,
                       [ir.outvars[i] for i in out_order]))


def groups(seq, *sizes) -> list:
    """Split ``seq`` into consecutive groups of ``sizes`` (the rest is the last group)."""
    out, start = [], 0
    for n in sizes:
        out.append(list(seq[start:start + n]))
        start += n
    out.append(list(seq[start:]))
    return out


def select_by(seq, mask, keep=True) -> list:
    return [x for x, m in zip(seq, mask) if bool(m) == keep]


def join_consts(parts) -> tuple:
    """``parts``: (const-free ClosedIR whose first inputs are its captured values, those
    values) per sub-IR. Returns (sub-IRs all taking the union of the values first, the union):
    a value captured by several sub-IRs is passed once."""
    union, index = [], {}
    for _, consts in parts:
        for c in consts:
            if id(c) not in index:
                index[id(c)] = len(union)
                union.append(c)
    types = [leaf_type(c) for c in union]
    joined = []
    for closed, consts in parts:
        ir = closed.ir
        mine = {index[id(c)]: v for c, v in zip(consts, ir.invars)}
        lead = [mine.get(i) or Var(t) for i, t in enumerate(types)]
        joined.append(ClosedIR(IR((), [*lead, *ir.invars[len(consts):]], ir.eqns,
                                  ir.outvars)))
    return joined, union


def used_inputs(ir: IR) -> list:
    """Whether each invar of ``ir`` is read by an equation or is an output."""
    read = {a for e in ir.eqns for a in e.inputs if type(a) is Var}
    read.update(v for v in ir.outvars if type(v) is Var)
    return [v in read for v in ir.invars]


def keep_inputs(closed: ClosedIR, keep) -> ClosedIR:
    ir = closed.ir
    return ClosedIR(IR((), select_by(ir.invars, keep), ir.eqns, ir.outvars))


def inline(ir: IR, in_atoms, out_vars=None, source=None) -> tuple:
    """Copies of ``ir``'s equations reading ``in_atoms`` for its invars: (equations, output
    atoms). With ``out_vars``, the outputs are defined as those Vars instead (a ``copy``
    equation, attributed to ``source``, where an output is not computed by an equation of
    its own)."""
    rename = dict(zip(ir.invars, in_atoms))
    targets = {}
    if out_vars is not None:
        produced = {v for e in ir.eqns for v in e.outputs}
        for v, target in zip(ir.outvars, out_vars):
            if type(v) is Var and v in produced and v not in targets:
                targets[v] = target
    eqns = []
    for eqn in ir.eqns:
        outs = [targets.get(v) or Var(v.type) for v in eqn.outputs]
        rename.update(zip(eqn.outputs, outs))
        eqns.append(eqn.replace(inputs=[rename.get(a, a) if type(a) is Var else a
                                        for a in eqn.inputs], outputs=outs))
    outs = [rename.get(v, v) if type(v) is Var else v for v in ir.outvars]
    if out_vars is None:
        return eqns, outs
    for atom, target in zip(outs, out_vars):
        if atom is not target:
            eqns.append(Eqn(copy_p, [atom], [target], {}, source))
    return eqns, list(out_vars)


def new_eqn(prim, inputs, params, source, outputs=None) -> Eqn:
    """An equation of ``prim``; ``outputs`` (Vars, or None for fresh ones) may mix given
    Vars and None entries, which get fresh Vars of the inferred type."""
    types = prim.out_types([a.type for a in inputs], params)
    outputs = outputs or [None] * len(types)
    return Eqn(prim, inputs, [v if v is not None else Var(t) for v, t in zip(outputs, types)],
               params, source)


# execution -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def compiled(closed: ClosedIR):
    """The straight-line numpy function of a const-free sub-IR, compiled once per sub-IR
    object (a cache keyed by identity: IRs are immutable, and an equation's params keep the
    same object for as long as a jitted function holds it)."""
    return Executable(closed).run


def as_index(x) -> int:
    return int(np.asarray(x))


def scalar_dtype_ok(t, kinds) -> bool:
    return t.shape == () and ((dtypes.is_bool(t.dtype) and "bool" in kinds)
                              or (dtypes.is_integer(t.dtype) and "int" in kinds)
                              or (dtypes.is_float(t.dtype) and "float" in kinds))

