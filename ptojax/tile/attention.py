"""``pto.tile`` recognizes attention and runs it as flash attention kernels (``kernel/flash.py``),
so the S x S scores never reach GM.

Recognized (after ``tile_prepare``; float32, leading batch dims ``*b`` folded into heads):

    s = dot_general(q [*b, Sq, D], k [*b, Sk, D])          q k^T
    s = s * c | c * s | s / c                               optional, c a scalar literal
    s = select(mask, s, NEG) | select(~mask, NEG, s)        optional: mask a constant of the
                                                            program equal to the causal mask,
                                                            NEG <= -1e30 (or -inf)
    p = exp(s - rowmax(s)) / rowsum(exp(s - rowmax(s)))     softmax over keys (the row
                                                            vectors broadcast back by any
                                                            reshape/broadcast/stop_gradient)
    o = dot_general(p, v [*b, Sk, D])

or the same with heads in the middle (``nn.dot_product_attention``'s einsums, GQA): the
match then holds a ``Layout`` (``tile/attention_layout.py``) mapping q, k, v to the
kernels' form and the output back. Its gradient is recognized by a template: the vjp of the matched forward equations, traced and
prepared as the program was, must appear in the program equation for equation (anchored at
q, k, v and the mask; the output cotangent is whatever the program feeds it). The forward
becomes the flash forward kernel (storing the row log-sum-exp), the gradient the dK/dV and dQ
kernels. A sequence no block divides runs padded to whole blocks. Anything else — another
mask (padding, a run-time mask), another softmax, an intermediate (the probabilities, the
scores) used elsewhere, a dtype other than float32 — stays as it was and tiles unfused.
"""
from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass, field

import numpy as np

from ptojax import dtypes
from ptojax.autodiff.api import vjp
from ptojax.errors import DtypeError, TileError
from ptojax.eval.interpreter import eval_ir
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Var
from ptojax.kernel.call import kernel_call_p
from ptojax.tile.attention_layout import Layout, output_layout, scores_layout
from ptojax.kernel.lower import lower_kernel
from ptojax.kernel.flash import FlashShape, dkdv_kernel, dq_kernel, forward_kernel
from ptojax.ops.arithmetic import div_p, mul, mul_p, sub_p
from ptojax.ops.broadcast import reduce_sum, reduce_sum_p
from ptojax.ops.elementwise import zero_like
from ptojax.ops.linalg import dot_general, dot_general_p
from ptojax.ops.logic import select_p
from ptojax.ops.reductions import reduce_max_p
from ptojax.ops.shape import reshape, transpose_p
from ptojax.ops.slicing import pad, slice as slice_
from ptojax.ops.transcendental import exp_p
from ptojax.optimize import dce, has_effect
from ptojax.trace import trace_flat

LAYOUT = {"reshape", "broadcast_in_dim", "stop_gradient", "copy"}
# (query rows, key rows) per block, tried in order: the first whose lowering fits the target
# (910B, H8 D64: the forward takes (128, 64), its vector tiles split over both vector
# sub-blocks (tile/row_split.py) and its query block, split along K, resident in L1 across
# the key loop -- cost model S2048 causal 103 us against 117 at (64, 64), non-causal 175
# against 187, S8192 causal 1.242 against 1.428 ms; the backward (64, 64), its dK/dV
# kernel overflowing at (128, 64); at (64, 32) the forward took 344 us at S2048).
BLOCKS = ((128, 64), (64, 64), (64, 32), (32, 32), (32, 16), (16, 16))


@dataclass
class Forward:
    """A matched attention forward: its operands, math, equations and internal values.
    ``v`` and ``out`` are None when the program has no ``p @ v`` (a gradient program whose
    loss is linear in the attention's output keeps only ``p``)."""
    q: Var
    k: Var
    v: object
    p: Var
    out: object
    scale: float
    mask: object                       # the mask Var (causal), or None
    eqns: list                         # indices into the program, in order
    layout: Layout = None              # q, k, v, out <-> the kernels' [*lead, S, D]
    internal: set = field(default_factory=set)

    @property
    def batch(self):
        return self.layout.lead

    @property
    def nb(self):
        return len(self.batch)


class _Graph:
    """Producers and users of a program's values."""

    def __init__(self, closed: ClosedIR):
        self.ir, self.consts = closed.ir, dict(zip(closed.ir.constvars, closed.consts))
        self.producer = {v: i for i, e in enumerate(self.ir.eqns) for v in e.outputs}
        self.users = {}
        for i, e in enumerate(self.ir.eqns):
            for a in e.inputs:
                if type(a) is Var:
                    self.users.setdefault(a, []).append(i)
        self.outvars = {v for v in self.ir.outvars if type(v) is Var}

    def eqn(self, var):
        i = self.producer.get(var) if type(var) is Var else None
        return (None, None) if i is None else (i, self.ir.eqns[i])


# --- the forward ------------------------------------------------------------------------------
def _scalar_literal(atom):
    if type(atom) is Literal and atom.type.shape == ():
        return float(np.asarray(atom.value))
    return None


def _layout_chain(g: _Graph, var):
    """(source, equations) of the reshape/broadcast/stop_gradient chain producing ``var``."""
    chain = []
    while True:
        i, e = g.eqn(var)
        if e is None or e.prim.name not in LAYOUT or type(e.inputs[0]) is not Var:
            return var, chain
        chain.append(i)
        var = e.inputs[0]


def _row_broadcast(g: _Graph, var, chain, target_shape) -> bool:
    """Whether ``chain`` broadcasts the row vector ``var`` [*b, Sq] along the last axis."""
    if tuple(var.type.shape) != tuple(target_shape[:-1]):
        return False
    eqns = [g.ir.eqns[i] for i in reversed(chain)]
    out = eqns[-1].outputs[0] if eqns else var
    if tuple(out.type.shape) != tuple(target_shape):
        return False
    index = np.arange(int(np.prod(var.type.shape)), dtype=np.float32).reshape(var.type.shape)
    got = _evaluate(eqns, {var: index})[out]
    return np.array_equal(got, np.broadcast_to(index[..., None], target_shape))


def _evaluate(eqns, env) -> dict:
    """Values of equations (pure, small: masks and index probes) by their primitives' impls,
    outside any trace (tile runs while ``pto.tile``'s caller is being traced)."""
    env = dict(env)
    for e in eqns:
        args = [np.asarray(a.value) if type(a) is Literal else env[a] for a in e.inputs]
        out = e.prim.impl(*args, **e.params)
        outs = out if e.prim.multiple_results else [out]
        env.update((v, np.asarray(o)) for v, o in zip(e.outputs, outs))
    return env


def _reduction_of(g: _Graph, var, prim, src, last):
    """The equation index of ``prim(src, axes=(last,))`` broadcast back as ``var``, and the
    chain's equations; or None."""
    row, chain = _layout_chain(g, var)
    i, e = g.eqn(row)
    if e is None or e.prim is not prim or e.inputs[0] is not src or \
            tuple(e.params["axes"]) != (last,):
        return None
    return ([i] + chain) if _row_broadcast(g, row, chain, src.type.shape) else None


def _constant_value(g: _Graph, var):
    """The value of ``var`` when it depends on no program input, else None."""
    eqns, pending, seen = [], [var], set()
    while pending:
        v = pending.pop()
        if type(v) is not Var or v in seen or v in g.consts:
            continue
        seen.add(v)
        i, e = g.eqn(v)
        if e is None or has_effect(e):
            return None
        eqns.append(i)
        pending.extend(e.inputs)
    env = {c: np.asarray(x) for c, x in g.consts.items()}
    return _evaluate([g.ir.eqns[i] for i in sorted(eqns)], env)[var]


def _causal_mask(g: _Graph, sel):
    """The mask Var when ``select`` ``sel`` keeps the causal scores (NEG elsewhere), with
    which operand is the scores; None when it is any other mask."""
    pred, a, b = sel.inputs
    for keep, scores, fill in ((True, a, b), (False, b, a)):
        value = _scalar_literal(fill)
        if value is None or not value <= -1e30 or type(scores) is not Var:
            continue
        mask = _constant_value(g, pred)
        if mask is None:
            return None
        sq, sk = scores.type.shape[-2:]
        causal = np.tril(np.ones((sq, sk), bool))
        if sq == sk and np.array_equal(np.broadcast_to(mask, scores.type.shape),
                                       np.broadcast_to(causal if keep else ~causal,
                                                       scores.type.shape)):
            return scores
    return None


def _is_batched_dot(e, nb, lhs_contract, rhs_contract) -> bool:
    if e is None or e.prim is not dot_general_p:
        return False
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    batch = tuple(range(nb))
    return tuple(lc) == (lhs_contract,) and tuple(rc) == (rhs_contract,) and \
        tuple(lb) == batch and tuple(rb) == batch and \
        all(a.type.dtype == dtypes.float32 for a in (*e.inputs, *e.outputs)) and \
        e.params.get("preferred_element_type") in (None, dtypes.float32)


def match_forward(g: _Graph, index):
    """The attention whose softmax division ``p = e / rowsum(e)`` is equation ``index``, or
    None."""
    ediv = g.ir.eqns[index]
    p = ediv.outputs[0]
    if ediv.prim is not div_p or p.type.ndim < 3 or p.type.dtype != dtypes.float32 or \
            type(ediv.inputs[0]) is not Var:
        return None
    nb = p.type.ndim - 2
    e = ediv.inputs[0]
    z = _reduction_of(g, ediv.inputs[1], reduce_sum_p, e, nb + 1)
    ie, eexp = g.eqn(e)
    if z is None or eexp is None or eexp.prim is not exp_p:
        return None
    ir_, esub = g.eqn(eexp.inputs[0])
    if esub is None or esub.prim is not sub_p or type(esub.inputs[0]) is not Var:
        return None
    x = esub.inputs[0]
    m = _reduction_of(g, esub.inputs[1], reduce_max_p, x, nb + 1)
    if m is None:
        return None
    eqns = [index, *z, ie, ir_, *m]
    mask, s = None, x
    ix, ex = g.eqn(x)
    if ex is not None and ex.prim is select_p:
        s = _causal_mask(g, ex)
        if s is None:
            return None
        mask = ex.inputs[0]
        eqns.append(ix)
    scale, scores = 1.0, s
    i_s, es = g.eqn(s)
    if es is not None and es.prim in (mul_p, div_p):
        a, b = es.inputs
        c = _scalar_literal(b)
        if c is None and es.prim is mul_p:
            a, c = b, _scalar_literal(a)
        if c is not None and type(a) is Var and c != 0:
            scale, scores = (c if es.prim is mul_p else 1.0 / c), a
            eqns.append(i_s)
    i_qk, eqk = g.eqn(scores)
    lead, q_map, k_map = tuple(p.type.shape[:-2]), None, None
    if eqk is not None and eqk.prim is transpose_p:     # heads in the middle
        i_dot, dot = g.eqn(eqk.inputs[0])
        found = scores_layout(dot, eqk) if _is_dot(dot) else None
        if found is None or found[0] != lead:
            return None
        _, q_map, k_map = found
        eqns.append(i_qk)
        i_qk, eqk = i_dot, dot
    elif not _is_batched_dot(eqk, nb, nb + 1, nb + 1):
        return None
    if not all(type(a) is Var for a in eqk.inputs):
        return None
    q, k = eqk.inputs
    (lc, rc), _ = eqk.params["dimension_numbers"]
    dim = q.type.shape[lc[0]]
    if dim != k.type.shape[rc[0]]:
        return None
    eqns.append(i_qk)
    v = out = v_map = out_map = None
    for i in g.users.get(p, ()):
        pv = g.ir.eqns[i]
        if pv.inputs[0] is not p or not _is_dot(pv) or type(pv.inputs[1]) is not Var:
            continue
        if _is_batched_dot(pv, nb, nb + 1, nb) and pv.inputs[1].type.shape[-1] == dim:
            v, out = pv.inputs[1], pv.outputs[0]
        elif output_layout(pv) is not None and pv.outputs[0].type.shape[-1] == dim:
            v, out = pv.inputs[1], pv.outputs[0]
            v_map, out_map = output_layout(pv)
        else:
            continue
        eqns.append(i)
        break
    layout_shape = (*lead, p.type.shape[-1], dim)
    if v is not None and v_map is None and tuple(v.type.shape) != layout_shape:
        return None
    maps = {n: m for n, m in (("q", q_map), ("k", k_map), ("v", v_map), ("out", out_map))
            if m is not None}
    layout = Layout(lead, p.type.shape[-2], p.type.shape[-1], dim, **maps)
    fwd = Forward(q, k, v, p, out, float(scale), mask, sorted(eqns), layout)
    fwd.internal = {o for i in fwd.eqns for o in g.ir.eqns[i].outputs} - {out}
    return fwd


def _is_dot(e) -> bool:
    return e is not None and e.prim is dot_general_p


# --- the gradient -----------------------------------------------------------------------------
def _template(g: _Graph, f: Forward, prepare) -> IR:
    """The vjp of the forward's equations (closed by ``p @ v``, its own or a default one),
    traced and prepared like the program. Inputs (q, k, v, [mask], do)."""
    probs = [g.ir.eqns[i] for i in f.eqns if f.out is None or f.out not in
             g.ir.eqns[i].outputs]
    mask = [f.mask] if f.mask is not None else []
    p_ir = IR([], [f.q, f.k, *mask], probs, [f.p])
    pv = next((g.ir.eqns[i] for i in f.eqns if f.out is not None and
               f.out in g.ir.eqns[i].outputs), None)
    batch = tuple(range(f.nb))
    dims = (((f.nb + 1,), (f.nb,)), (batch, batch))

    def attention(q, k, v, *mask):
        (p,) = eval_ir(p_ir, [q, k, *mask], [])
        if pv is None:
            return dot_general(p, v, dims)
        return pv.prim.bind(p, v, **pv.params)

    def grads(q, k, v, *rest):
        _, back = vjp(lambda q, k, v: attention(q, k, v, *rest[:-1]), q, k, v)
        return list(back(rest[-1]))

    lead = f.layout.lead_shape
    v_type = f.v.type if f.v is not None else \
        type(f.k.type)(lead(f.layout.seq_k), dtypes.float32)
    out_type = f.out.type if f.out is not None else \
        type(f.q.type)(lead(f.layout.seq_q), dtypes.float32)
    types = [f.q.type, f.k.type, v_type, *(m.type for m in mask), out_type]
    return prepare(trace_flat(grads, types, "attention gradient")).ir


def _same_params(a: Eqn, b: Eqn) -> bool:
    try:
        return a.params == b.params
    except Exception:       # params holding arrays
        return False


def _same_literal(a, b) -> bool:
    return type(a) is Literal and type(b) is Literal and a.type == b.type and \
        np.array_equal(np.asarray(a.value), np.asarray(b.value))


MAX_BINDINGS = 64       # candidate (cotangent, v) bindings tried at most


def match_gradient(g: _Graph, f: Forward, template: IR):
    """(cotangent Var, v, {q|k|v: the program's Var of its cotangent}, matched equation
    indices) when the program computes the template's gradient, else None. The cotangent
    (and ``v`` when the program has no ``p @ v``) are the program's values that make the most
    of the template match, tried among the operands of the matmuls a gradient has
    (``do v^T``, and ``p^T do``)."""
    do_t, v_t = template.invars[-1], template.invars[2]
    bindings = _bindings(g, f, do_t.type, v_t.type)
    if not bindings or len(bindings) > MAX_BINDINGS:
        return None
    free = [do_t] + ([v_t] if f.v is None else [])
    best = None
    for binding in bindings:
        found = _match_bound(g, f, template, dict(zip(free, binding)))
        if found is not None and (best is None or
                                  (len(found[2]), len(found[3])) > (len(best[2]), len(best[3]))):
            best = found
    return best


def _bindings(g: _Graph, f: Forward, do_type, v_type) -> list:
    """Candidate (cotangent,) or (cotangent, v) tuples: the operands of ``do v^T``-shaped
    matmuls, and the partners of ``p`` in matmuls."""
    dots = [e for e in g.ir.eqns if e.prim is dot_general_p and
            all(type(a) is Var for a in e.inputs)]
    pairs = [tuple(e.inputs) for e in dots
             if e.inputs[0].type == do_type and e.inputs[1].type == v_type]
    if f.v is None:
        return list(dict.fromkeys(pairs))
    dos = [a for a, b in pairs if b is f.v]
    dos += [x for e in dots if f.p in e.inputs for x in e.inputs
            if x is not f.p and x.type == do_type]
    return [(d,) for d in dict.fromkeys(dos)]


def _match_bound(g: _Graph, f: Forward, template: IR, bound):
    known = [f.q, f.k, f.v] + ([f.mask] if f.mask is not None else [])
    env = {t: u for t, u in zip(template.invars, known) if u is not None}
    env.update(bound)
    matched = set()
    for te in template.eqns:
        hit = None
        for i in _candidates(g, te, env):
            e = g.ir.eqns[i]
            if e.prim is te.prim and len(e.inputs) == len(te.inputs) and \
                    len(e.outputs) == len(te.outputs) and _same_params(e, te) and \
                    _inputs_agree(g, te.inputs, e.inputs, env):
                hit = i
                break
        if hit is None:
            continue                    # not computed here (an input not differentiated)
        env.update(zip(te.outputs, g.ir.eqns[hit].outputs))
        if any(type(a) is Var for a in te.inputs):     # constants stay (others may share)
            matched.add(hit)
    grads = {name: env.get(t) for name, t in zip("qkv", template.outvars) if type(t) is Var}
    grads = {n: v for n, v in grads.items() if v is not None}
    return (env[template.invars[-1]], env[template.invars[2]], grads, matched) \
        if grads else None


def _splat_of(g: _Graph, var, literal) -> bool:
    """Whether ``var`` is the scalar ``literal`` broadcast (by reshapes and broadcasts, as
    ``vmap`` batches a constant the template holds as a literal)."""
    while type(var) is Var:
        _, e = g.eqn(var)
        if e is None or e.prim.name not in LAYOUT:
            return False
        var = e.inputs[0]
    return type(var) is Literal and var.type.shape == () and \
        var.type.dtype == literal.type.dtype and literal.type.shape == () and \
        np.array_equal(np.asarray(var.value), np.asarray(literal.value))


def _candidates(g: _Graph, te: Eqn, env) -> list:
    mapped = [env[a] for a in te.inputs if type(a) is Var and a in env]
    if mapped:
        return sorted(set(g.users.get(mapped[0], [])))
    return [i for i, e in enumerate(g.ir.eqns) if e.prim is te.prim]


def _inputs_agree(g: _Graph, t_inputs, inputs, env) -> bool:
    for ta, a in zip(t_inputs, inputs):
        if type(ta) is Literal:
            if not (_same_literal(ta, a) or _splat_of(g, a, ta)):
                return False
        elif env.get(ta) is not a:
            return False
    return True


# --- the rewrite ------------------------------------------------------------------------------
def _replacements(f: Forward, target, do_type):
    """(forward IR, backward IR or None) built from flash kernels, each with the largest
    blocks ``target`` holds, or None. Forward: (q, k, v) -> (out, o3, lse); backward:
    (q, k, v, o3, lse, do) -> (dq, dk, dv) in the program's shapes."""
    fir = _first_that_lowers(f, target, _forward_ir)
    if fir is None or do_type is None:
        return (fir, None) if fir is not None else None
    o3, lse = fir.ir.outvars[1].type, fir.ir.outvars[2].type
    bir = _first_that_lowers(f, target, lambda shape, f, target: _backward_ir(
        shape, f, target, o3, lse, do_type))
    return (fir, bir) if bir is not None else None


def _first_that_lowers(f: Forward, target, build):
    """``build``'s IR for the first blocks of ``BLOCKS`` whose lowering fits ``target``:
    blocks dividing the sequences first, else (a ragged sequence) padded to whole blocks."""
    lay = f.layout
    heads = int(np.prod(lay.lead, dtype=np.int64))
    sq, sk, d = lay.seq_q, lay.seq_k, lay.dim
    causal = f.mask is not None
    exact = [(bq, bk, sq, sk) for bq, bk in BLOCKS if not (sq % bq or sk % bk)]
    padded = sorted(((bq, bk, _up(sq, bq), _up(sk, bq if causal else bk))
                     for bq, bk in BLOCKS), key=lambda b: b[2] * b[3])    # least padding
    for bq, bk, sq_p, sk_p in exact or padded:
        shape = FlashShape(heads, sq_p, sk_p, d, f.scale, causal, bq, bk,
                           None if sk_p == sk or causal else sk)
        try:
            closed = build(shape, f, target)
            for e in closed.ir.eqns:        # the buffer check of the lowering
                if e.prim is kernel_call_p:
                    lower_kernel(e.params, e.inputs, e.outputs, e.source)
            return closed
        except (TileError, DtypeError):     # blocks the target's buffers cannot hold
            continue
    return None


def _up(n, block) -> int:
    return -(-n // block) * block


def _heads(x, shape: FlashShape, seq):
    """``x [*lead, s, D]`` as the kernels' ``[heads, seq, D]``, zero rows appended."""
    s = x.shape[-2]
    if s != seq:
        x = pad(x, zero_like(x), [(0, 0, 0)] * (x.ndim - 2) + [(0, seq - s, 0), (0, 0, 0)])
    return reshape(x, (shape.heads, seq, shape.dim))


def _unheads(x3, lay: Layout, seq):
    """The kernels' ``[heads, padded seq, D]`` as ``[*lead, seq, D]``."""
    x = reshape(x3, lay.lead_shape(x3.shape[-2]))
    if x.shape[-2] == seq:
        return x
    return slice_(x, (0,) * x.ndim, x.shape[:-2] + (seq, x.shape[-1]))


def _forward_ir(shape: FlashShape, f: Forward, target) -> ClosedIR:
    fwd, lay = forward_kernel(shape, target), f.layout

    def forward(q, k, v):
        o3, lse = fwd(_heads(lay.q(q), shape, shape.seq_q), _heads(lay.k(k), shape, shape.seq_k),
                      _heads(lay.v(v), shape, shape.seq_k))
        return [lay.out(_unheads(o3, lay, lay.seq_q)), o3, lse]

    return trace_flat(forward, [f.q.type, f.k.type, f.v.type], "flash attention")


def _backward_ir(shape: FlashShape, f: Forward, target, o3, lse, do) -> ClosedIR:
    """The flash backward kernels between the layout's maps: ``do`` taken to the kernels'
    form by the transpose of the output map, their gradients back by the vjp of the operand
    maps (a transpose; a sum over the groups where k and v were broadcast; a crop of the
    padding of a ragged sequence)."""
    dkdv, dq, lay = dkdv_kernel(shape, target), dq_kernel(shape, target), f.layout
    sq, sk = shape.seq_q, shape.seq_k

    def operands(q, k, v):
        return (_heads(lay.q(q), shape, sq), _heads(lay.k(k), shape, sk),
                _heads(lay.v(v), shape, sk))

    def output(o3):
        return lay.out(_unheads(o3, lay, lay.seq_q))

    def backward(q, k, v, o3, lse, do):
        (q3, k3, v3), back = vjp(operands, q, k, v)
        (do3,) = vjp(output, o3)[1](do)      # padded query rows get a zero cotangent
        delta = reduce_sum(mul(do3, o3), (2,))      # once, not per dK/dV program and step
        dk3, dv3 = dkdv(q3, k3, v3, delta, do3, lse)
        dq3 = dq(q3, k3, v3, o3, do3, lse)
        return list(back((dq3, dk3, dv3)))

    return trace_flat(backward, [f.q.type, f.k.type, f.v.type, o3, lse, do],
                      "flash attention gradient")


def _splice(sub: ClosedIR, inputs, outputs, anchor):
    """``sub``'s equations over the program's ``inputs``, defining ``outputs`` (a Var, or
    None to keep the sub-IR's own), each tagged with its place ``anchor``; and the Vars
    that stand for the sub-IR's outputs."""
    if sub.consts:
        raise AssertionError("flash attention kernels captured constants")
    rename = dict(zip(sub.ir.invars, inputs))
    for t, u in zip(sub.ir.outvars, outputs):
        if u is not None and type(t) is Var and t not in rename:
            rename[t] = u
    eqns = [(anchor, Eqn(e.prim, [rename.get(a, a) if type(a) is Var else a for a in e.inputs],
                         [rename.get(v, v) for v in e.outputs], e.params, e.source))
            for e in sub.ir.eqns]
    copies = [u for t, u in zip(sub.ir.outvars, outputs)
              if u is not None and rename.get(t) is not u]
    if copies:          # an output that is an input or another output: never for flash
        raise AssertionError("flash attention: a kernel output aliases an input")
    return eqns, [rename.get(t, t) for t in sub.ir.outvars]


def _ordered(items) -> list:
    """Equations (anchor, eqn) in a dependency order, as close to their anchors as can."""
    producer = {v: n for n, (_, e) in enumerate(items) for v in e.outputs}
    waiting, users = [], [[] for _ in items]
    for n, (_, e) in enumerate(items):
        deps = {producer[a] for a in e.inputs if type(a) is Var and a in producer}
        waiting.append(len(deps))
        for d in deps:
            users[d].append(n)
    ready = [(items[n][0], n) for n in range(len(items)) if waiting[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, n = heapq.heappop(ready)
        order.append(items[n][1])
        for u in users[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (items[u][0], u))
    return order


def _used_outside(g: _Graph, values, inside) -> bool:
    return any(v in g.outvars or any(u not in inside for u in g.users.get(v, ()))
               for v in values)


def fuse_attention(closed: ClosedIR, target, prepare, gradients: bool = False) -> ClosedIR:
    """``closed`` with each recognized attention run as flash kernels, and its gradient too if
    ``gradients`` (else an attention whose internals a gradient reads stays unfused).
    ``prepare`` is the IR -> IR preparation the program went through (for the template)."""
    if "float32" not in target.cube_macs_per_cycle:
        return closed                   # no float32 cube (host_jit: BLAS runs the matmuls)
    return _fuse(closed, target, prepare, gradients)


def _fuse(closed: ClosedIR, target, prepare, gradients: bool) -> ClosedIR:
    g = _Graph(closed)
    removed, added = set(), []
    for index, e in enumerate(g.ir.eqns):
        if e.prim is not div_p or index in removed:
            continue
        f = match_forward(g, index)
        if f is None or removed & set(f.eqns):
            continue
        rewrite = _rewrite(g, f, target, prepare, gradients)
        if rewrite is not None:
            removed |= rewrite[0]
            added += rewrite[1]
    if not added:
        return closed
    kept = [(float(i), e) for i, e in enumerate(g.ir.eqns) if i not in removed]
    ir = IR(g.ir.constvars, g.ir.invars, _ordered(sorted(kept + added, key=lambda t: t[0])),
            g.ir.outvars)
    return ClosedIR(dce(ir), closed.consts)


def _rewrite(g: _Graph, f: Forward, target, prepare, gradients: bool):
    """(equations removed, (anchor, equation)s added) for the attention ``f``, or None."""
    inside = set(f.eqns)
    gradient = None
    if _used_outside(g, f.internal, inside):
        if not gradients or (f.v is None and not f.layout.leading):
            return None                 # (no p @ v to place v's heads)
        gradient = match_gradient(g, f, _template(g, f, prepare))
        if gradient is None:
            return None
        do, v, grads, matched = gradient
        f = dataclasses.replace(f, v=v)
        inside |= matched
        values = {o for i in matched for o in g.ir.eqns[i].outputs} - set(grads.values())
        if _used_outside(g, f.internal | values, inside):
            return None
    elif f.v is None:
        return None                     # p is used, but not by p @ v
    built = _replacements(f, target, gradient[0].type if gradient else None)
    if built is None:
        return None
    fir, bir = built
    anchor = max(f.eqns) + 0.5
    added, (_, o3, lse) = _splice(fir, [f.q, f.k, f.v], [f.out, None, None], anchor)
    if bir is not None:
        do, _, grads, matched = gradient
        outs = [grads.get(n) for n in "qkv"]
        anchor = max(matched) + 0.5
        more, _ = _splice(bir, [f.q, f.k, f.v, o3, lse, do], outs, anchor)
        added += more
    return inside, added
