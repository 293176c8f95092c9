"""The loop API of ``pto.lax``: ``scan``, ``while_loop``, ``fori_loop`` and ``map`` (JAX's
semantics). Each traces the user's function once into the body of a ``scan`` or ``while``
equation (``scan_primitive.py``, ``while_primitive.py``); carries are pytrees whose structure, shapes and
dtypes must come back unchanged from the body — a ``ControlFlowError`` at the call says
which leaf differs and how.

``fori_loop`` with bounds known while tracing (Python ints or concrete arrays) is a ``scan``,
so reverse mode works; with traced bounds it is a ``while``. ``while_loop(max_steps=N)`` is
beyond JAX: at most N iterations, and reverse-mode differentiable.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.ir.symbolic import DimExpr
from ptojax.ops.dimension_size import dimension_size
from ptojax.ops.arithmetic import add
from ptojax.ops.convert import convert_element_type
from ptojax.ops.logic import lt
from ptojax.errors import ControlFlowError
from ptojax.eval.leaves import leaf_type
from ptojax.source_info import user_frame
from ptojax.trace import is_concrete
from ptojax.pytree import tree_flatten, tree_map, tree_unflatten
from ptojax.batching.api import vmap
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import concatenate, slice_in_dim
from ptojax.control_flow.common import (check_structure, flat_types, fn_name, leaf_paths,
                                        mismatch_error, promoted_carry, trace_sub_ir,
                                        type_mismatches)
from ptojax.control_flow.scan import bind_scan, slice_type
from ptojax.control_flow.while_loop import bind_while
from ptojax.public import add_examples as _add_examples


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``, returning the final
    carry and the stacked ``y``s (JAX's ``lax.scan``). ``xs`` may be None with ``length``
    given; ``reverse`` walks the axis backwards (ys stay in xs order). ``unroll`` (a bool or a
    non-negative int) is accepted for compatibility and has no effect on the result."""
    source = user_frame()
    _check_callable("scan", f, "f", source)
    _check_unroll_value("scan", unroll, source)
    return _scan("scan", f, f"{fn_name(f)} (f)", "init", init, xs, length, reverse, source)


def map(f, xs, *, batch_size=None):
    """``f`` applied to each slice along the leading axis of ``xs``, results stacked: a
    ``scan`` without a carry (JAX's ``lax.map``). With ``batch_size``, each scan step applies
    ``vmap(f)`` to ``batch_size`` slices at once, and the remainder is one more ``vmap(f)``."""
    source = user_frame()
    _check_callable("map", f, "f", source)
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ControlFlowError(f"map: batch_size must be a positive int or None, got "
                                   f"{batch_size!r}", source)
        return _map_in_batches(f, xs, batch_size, source)
    _, ys = _scan("map", lambda carry, x: (carry, f(x)), f"{fn_name(f)} (f)", "init", (), xs,
                  None, False, source)
    return ys


def _map_in_batches(f, xs, batch_size, source):
    """``lax.map(f, xs, batch_size=b)``: ``vmap(f)`` over ``b`` slices per scan step, then
    over the ``n mod b`` slices left."""
    leaves, tree = tree_flatten(xs)
    if not leaves:
        raise ControlFlowError("map: xs has no arrays to map over", source)
    n = leaf_type(leaves[0]).shape[0]
    batches, rest = divmod(n, batch_size)
    whole = batches * batch_size
    batched = [reshape(slice_in_dim(x, 0, whole, axis=0),
                       (batches, batch_size, *leaf_type(x).shape[1:])) for x in leaves]
    _, ys = _scan("map", lambda carry, x: (carry, vmap(f)(x)), f"{fn_name(f)} (f)", "init",
                  (), tree_unflatten(tree, batched), None, False, source)
    ys = tree_map(lambda y: reshape(y, (whole, *leaf_type(y).shape[2:])), ys)
    if not rest:
        return ys
    tail = vmap(f)(tree_unflatten(tree, [slice_in_dim(x, whole, n, axis=0) for x in leaves]))
    return tree_map(lambda y, t: concatenate([y, t], 0), ys, tail)


def while_loop(cond_fun, body_fun, init_val, max_steps=None):
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns the final ``val``.

    Forward mode and vmap work as in JAX. Reverse mode needs a bound on the trip count: with
    ``max_steps=N`` the loop stops after at most N iterations and differentiates as a masked
    ``scan`` of N steps (every step is computed, the finished ones masked)."""
    source = user_frame()
    _check_callable("while_loop", cond_fun, "cond_fun", source)
    _check_callable("while_loop", body_fun, "body_fun", source)
    if max_steps is not None and (isinstance(max_steps, bool) or
                                  not isinstance(max_steps, int) or max_steps < 0):
        raise ControlFlowError(f"while_loop: max_steps must be None or a non-negative int, "
                               f"got {max_steps!r}", source)
    leaves, tree, types = flat_types(init_val)
    in_tree = tree_flatten((init_val,))[1]

    def trace_body(carry_types):
        return (*trace_sub_ir(body_fun, in_tree, carry_types, fn_name(body_fun)), None)

    body, body_consts, leaves, carry_types, _ = _trace_carried(
        "while_loop", trace_body, leaves, tree, types, "init_val",
        f"the value {fn_name(body_fun)} (body_fun) returns", source)
    cond, cond_consts, pred_tree = trace_sub_ir(cond_fun, in_tree, carry_types,
                                                fn_name(cond_fun))
    pred = cond.out_types
    if pred_tree.num_leaves != 1 or pred[0].shape != () or not dtypes.is_bool(pred[0].dtype):
        raise ControlFlowError(f"while_loop: cond_fun ({fn_name(cond_fun)}) must return a "
                               f"scalar bool, got {', '.join(str(t) for t in pred) or 'nothing'}",
                               source)
    return tree.unflatten(bind_while(cond_consts, body_consts, leaves, cond, body, max_steps))


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``. Bounds known while
    tracing (Python numbers, or concrete values under an eager transform, as in JAX) make it a
    ``scan`` (reverse-mode differentiable) whose index ``i`` is a weakly typed int, as JAX's
    (it counts from the Python int ``int(lower)``); abstract bounds a ``while`` whose index has
    the bounds' dtype, weak when ``lower`` is (a Python int). ``unroll`` (an int or bool) is
    accepted for static bounds only, as in JAX, and does not change the result."""
    source = user_frame()
    _check_callable("fori_loop", body_fun, "body_fun", source)
    length = None
    if type(lower) is DimExpr or type(upper) is DimExpr:   # symbolic sizes: a scan of them
        length = max(upper - lower, 0)
        lower, upper = (dimension_size(b) if type(b) is DimExpr else b for b in (lower, upper))
    index_dtype = _index_dtype(lower, upper, source)
    static = length is not None or (is_concrete(lower) and is_concrete(upper))
    _check_unroll(unroll, static, source)
    if not static:
        return _fori_while(lower, upper, index_dtype, body_fun, init_val)
    if length is None:
        lower, length = int(lower), max(int(upper) - int(lower), 0)
    else:
        lower = convert_element_type(lower, index_dtype, weak_type=True)

    def step(carry, _):
        i, val = carry
        return (add(i, convert_element_type(1, leaf_type(i).dtype, weak_type=True)),
                body_fun(i, val)), None

    (_, val), _ = _scan("fori_loop", step, f"{fn_name(body_fun)} (body_fun)",
                        "(lower, init_val)", (lower, init_val), None, length, False, source)
    return val


def _fori_while(lower, upper, index_dtype, body_fun, init_val):
    """``fori_loop`` with abstract bounds: a ``while`` over ``(i, val)``. A bound converts to
    the common dtype only when its own differs (so a Python int ``lower`` stays weak)."""
    lower, upper = (b if leaf_type(b).dtype == index_dtype else
                    convert_element_type(b, index_dtype) for b in (lower, upper))
    one = convert_element_type(1, index_dtype, weak_type=leaf_type(lower).weak_type)

    def step(carry):
        i, val = carry
        return add(i, one), body_fun(i, val)

    _, val = while_loop(lambda carry: lt(carry[0], upper), step, (lower, init_val))
    return val


def _check_unroll_value(what, unroll, source):
    """``unroll`` is a bool or a non-negative int (0 and 1 both mean no unrolling), as JAX's."""
    if not isinstance(unroll, (bool, int)) or unroll < 0:
        raise ControlFlowError(f"{what}: unroll must be a bool or a non-negative int, got "
                               f"{unroll!r}", source)


def _check_unroll(unroll, static, source):
    if unroll is None:
        return
    _check_unroll_value("fori_loop", unroll, source)
    if not static:
        raise ControlFlowError("fori_loop: unroll is only allowed when the loop bounds are "
                               "known while tracing (Python ints or concrete values); these "
                               "bounds are traced", source)


# tracing ---------------------------------------------------------------------------------------
def _scan(what, f, f_name, init_name, init, xs, length, reverse, source):
    xs_leaves, xs_tree, xs_types = flat_types(xs)
    length = _scan_length(what, xs_tree, xs_types, length, source)
    init_leaves, init_tree, init_types = flat_types(init)
    in_tree = tree_flatten((init, xs))[1]
    x_types = [slice_type(t) for t in xs_types]

    def trace(carry_types):
        body, consts, out_tree = trace_sub_ir(f, in_tree, [*carry_types, *x_types],
                                              fn_name(f))
        carry_tree, y_tree = _pair(out_tree, what, f_name, source)
        return body, consts, carry_tree, y_tree

    body, consts, init_leaves, _, y_tree = _trace_carried(
        what, trace, init_leaves, init_tree, init_types, init_name,
        f"the carry {f_name} returns", source)
    outs = bind_scan([], init_leaves, xs_leaves, body, length, reverse, consts)
    n = len(init_leaves)
    return init_tree.unflatten(outs[:n]), y_tree.unflatten(outs[n:])


def _trace_carried(what, trace, leaves, tree, types, init_name, out_name, source) -> tuple:
    """Trace ``trace(carry types) -> (body, consts, carry treedef, extra)`` until the carry
    comes back with the types it went in with. An initial value that is a Python scalar (weakly
    typed) is promoted with the type the body gives it, as in JAX; any other difference is an
    error.
    Returns (body, consts, initial carry leaves (converted), carry types, extra)."""
    carry_types = list(types)
    for attempt in (0, 1):
        body, consts, carry_tree, extra = trace(carry_types)
        check_structure(what, tree, carry_tree, init_name, out_name, source)
        out_types = body.out_types[:len(carry_types)]
        bad = type_mismatches(carry_types, out_types)
        if not bad:
            return body, consts, leaves, carry_types, extra
        fixes = [promoted_carry(t, o) for t, o in zip(carry_types, out_types)]
        if attempt or any(fixes[i] is None for i in bad):
            raise mismatch_error(what, leaf_paths(tree, "carry"), carry_types, out_types,
                                 init_name, out_name, source,
                                 "\nthe carry must keep its shape and dtype: convert the "
                                 "initial value (e.g. pnp.float32(0)) or the body's result")
        leaves = [x if f is None else convert_element_type(x, f.dtype, f.weak_type)
                  for x, f in zip(leaves, fixes)]
        carry_types = [t if f is None else f for t, f in zip(carry_types, fixes)]


def _pair(out_tree, what, name, source) -> tuple:
    children = out_tree.child_defs if out_tree.node_type in (tuple, list) else ()
    if len(children) != 2:
        raise ControlFlowError(f"{what}: {name} must return a pair (carry, y), got a value "
                               f"of structure {out_tree}", source)
    return children[0], children[1]


def _scan_length(what, xs_tree, xs_types, length, source) -> int:
    paths = leaf_paths(xs_tree, "xs")
    for path, t in zip(paths, xs_types):
        if not t.shape:
            raise ControlFlowError(f"{what}: {path} is {t}, a scalar: every leaf of xs needs "
                                   f"a leading axis to scan over", source)
    lengths = {t.shape[0] for t in xs_types}
    if length is not None:
        if isinstance(length, bool) or not isinstance(length, (int, DimExpr)) or length < 0:
            raise ControlFlowError(f"{what}: length must be a non-negative int, got "
                                   f"{length!r}", source)
        lengths.add(length)
    if len(lengths) > 1:
        lines = [f"  {p}: {t} (leading axis {t.shape[0]})" for p, t in zip(paths, xs_types)]
        if length is not None:
            lines.append(f"  length={length}")
        raise ControlFlowError(f"{what}: the leading axes of xs (and length) disagree:\n"
                               + "\n".join(lines), source)
    if not lengths:
        raise ControlFlowError(f"{what}: give length= when xs has no arrays to scan over",
                               source)
    return lengths.pop()


def _index_dtype(lower, upper, source):
    """The bounds' common dtype, as JAX's: equal dtypes, or a weak (Python int) bound next to
    a signed integer one takes that one's dtype."""
    tl, tu = leaf_type(lower), leaf_type(upper)
    for name, t in (("lower", tl), ("upper", tu)):
        if t.shape != () or not dtypes.is_integer(t.dtype):
            raise ControlFlowError(f"fori_loop: {name} must be an integer scalar, got {t}",
                                   source)
    if tl.dtype == tu.dtype:
        return tl.dtype
    signed = not any(dtypes.is_unsigned(t.dtype) for t in (tl, tu))
    if signed and tl.weak_type != tu.weak_type:
        return tl.dtype if tu.weak_type else tu.dtype
    raise ControlFlowError(f"fori_loop: lower ({tl}) and upper ({tu}) must have the same "
                           f"dtype (a Python int next to a signed integer bound takes its "
                           f"dtype); convert one of them", source)


def _check_callable(what, fn, name, source):
    if not callable(fn):
        raise ControlFlowError(f"{what}: {name} must be a function, got "
                               f"{type(fn).__name__}", source)


_add_examples(globals(), """
fori_loop:
    >>> pto.lax.fori_loop(0, 5, lambda i, acc: acc + i, 0)
    Array(10, dtype=int32, weak_type=True)
while_loop:
    >>> pto.lax.while_loop(lambda x: x < 100, lambda x: x * 2, 1)
    Array(128, dtype=int32, weak_type=True)
scan:
    >>> pto.lax.scan(lambda c, x: (c + x, c * x), 0, pnp.array([1, 2, 3]))
    (Array(6, dtype=int32), Array([0, 2, 9], dtype=int32))
map:
    >>> pto.lax.map(lambda x: x ** 2, pnp.array([1, 2, 3]))
    Array([1, 4, 9], dtype=int32)
""")
