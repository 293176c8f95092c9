"""The equations of a whole-compiled loop's body as C++ (``native_loop.py``).

``LoopFunction`` builds one loop function: the C++ name of each value, the buffers (one per
value, in an arena allocated once per call; a relabelling equation such as a reshape names its
operand's), and each equation's loop nest over its static shape. ``FORMS`` maps a primitive to
its form: which equations it takes (``accepts``) and the C++ it emits (``emit``). Elementwise
equations are their primitives' ``host`` facts, as in the fused kernels (``fused_exprs.py``),
so values match those kernels': the same vectorized ``exp``/``log`` (``pto_host_vmath.h``),
integer arithmetic that wraps, and float32 reductions summed in order (numpy's sums are
pairwise: they can differ in the last bits). A few have a C++ expression of their own
(``_Math``: ``<cmath>`` for float32, as numpy's float32 loops compute it), with the impl's
results where C++ leaves an operation undefined (an integer remainder by 0 or -1, a shift by
the width).
"""
from __future__ import annotations

import math

import numpy as np

from ptojax.ir.core import Literal, sub_irs
from ptojax.ir.symbolic import has_symbols
from ptojax.lower.host.fused_exprs import host_expr, loaded, rounded, value_literal
from ptojax.lower.pto_cpp import cpp_type
from ptojax.ops.arithmetic import add_p, ceil_p, floor_p, max_p, min_p, mul_p, rem_p
from ptojax.ops.broadcast import broadcast_in_dim_p, reduce_sum_p
from ptojax.ops.convert import convert_element_type_p
from ptojax.ops.dynamic_slicing import dynamic_slice_p, dynamic_update_slice_p
from ptojax.ops.gather_scatter import gather_p, scatter_p
from ptojax.ops.linalg import dot_general_p
from ptojax.ops.logic import shift_left_p, shift_right_logical_p, xor_p
from ptojax.ops.random_bits import threefry2x32_p
from ptojax.ops.reductions import reduce_max_p, reduce_min_p
from ptojax.ops.shape import expand_dims_p, reshape_p, squeeze_p, transpose_p
from ptojax.ops.slicing import concatenate_p, iota_p, rev_p, slice_p
from ptojax.ops.special import (_GILES_DP_CENTRAL, _GILES_DP_MIDDLE, _GILES_DP_TAIL,
                                erf_inv_p)
from ptojax.ops.transcendental import cos_p, expm1_p, pow_p, sin_p

MAX_ELEMENTS = 1 << 12
MAX_PRODUCT_WORK = 1 << 15
DTYPES = frozenset(map(np.dtype, ("float32", "int32", "uint32", "int16", "int8", "uint8",
                                   "bool")))


# --- which equations ----------------------------------------------------------------------
def small(t) -> bool:
    return not has_symbols(t.shape) and np.dtype(t.dtype) in DTYPES and \
        0 < t.size <= MAX_ELEMENTS


def has_form(eqn) -> bool:
    if eqn.prim.effectful or not all(small(a.type) for a in eqn.inputs):
        return False
    form = FORMS.get(eqn.prim)
    if form is None:
        return not (sub_irs(eqn.params) or eqn.prim.multiple_results) and \
            ELEMENTWISE.accepts(eqn)
    return form.accepts(eqn)


def ir_compiles(ir) -> bool:
    """Whether every value of ``ir`` is small and every equation has a form."""
    values = (*ir.constvars, *ir.invars, *ir.outvars, *(v for e in ir.eqns for v in e.outputs))
    return all(small(v.type) for v in values) and all(map(has_form, ir.eqns))


def _elementwise_shapes(eqn) -> bool:
    """Operands of the result's shape, or scalars (literals, 0-d values)."""
    shape = eqn.outputs[0].type.shape
    return len(eqn.outputs) == 1 and all(a.type.shape in (shape, ()) for a in eqn.inputs)


class LoopFunction:
    """The lines of one loop function and the C++ name of each value."""

    def __init__(self):
        self.head, self.lines, self.names = [], [], {}
        self.arena = 0            # bytes of the buffers allocated once per call
        self.count = 0
        self.argc = 0             # arguments bound so far

    def fresh(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def bind(self, var, name: str) -> None:
        self.names[var] = name

    def bind_all(self, variables, names) -> None:
        for v, name in zip(variables, names):
            self.bind(v, name)

    def arguments(self, atoms) -> list:
        """Pointers to the next arguments, one per atom, typed as the atoms are."""
        names = [self.pointer(a.type, f"args[{self.argc + k}]") for k, a in enumerate(atoms)]
        self.argc += len(names)
        return names

    def operand_buffers(self, atoms) -> list:
        """The buffers of ``atoms``: a literal's filled in a buffer of its own."""
        names = []
        for a in atoms:
            if isinstance(a, Literal):
                names.append(self.buffer(a.type))
                self.store(names[-1], a)
            else:
                names.append(self.names[a])
        return names

    def carry_buffers(self, carries, initial) -> tuple:
        """(current, following): two buffers per carry, the current ones holding
        ``initial``'s values."""
        current = [self.buffer(v.type) for v in carries]
        following = [self.buffer(v.type) for v in carries]
        for v, buf, src in zip(carries, current, initial):
            self.copy(buf, src, v.type.size)
        return current, following

    def body(self, ir) -> None:
        for e in ir.eqns:
            FORMS.get(e.prim, ELEMENTWISE).emit(self, e)

    def swap(self, current, following) -> None:
        self.lines += [f"  std::swap({a}, {b});" for a, b in zip(current, following)]

    def finish(self, carries, current, outs) -> None:
        for v, buf, out in zip(carries, current, outs):
            self.copy(out, buf, v.type.size)

    def pointer(self, t, arg: str) -> str:
        name = self.fresh()
        self.head.append(f"  {cpp_type(t.dtype)}* {name} = static_cast<{cpp_type(t.dtype)}*>({arg});")
        return name

    def buffer(self, t) -> str:
        """A buffer of ``t``'s size in the arena (64-byte aligned), named."""
        name = self.fresh()
        self.head.append(f"  {cpp_type(t.dtype)}* {name} = reinterpret_cast<{cpp_type(t.dtype)}*>"
                         f"(arena + {self.arena});")
        self.arena += -(-t.size * np.dtype(t.dtype).itemsize // 64) * 64
        return name

    def value(self, var) -> str:
        """A buffer for equation result ``var``, allocated and named."""
        name = self.buffer(var.type)
        self.bind(var, name)
        return name

    def element(self, atom, index: str) -> str:
        """Element ``index`` of ``atom`` in its compute type (a literal or a 0-d value is the
        same at every index)."""
        if isinstance(atom, Literal):
            return value_literal(atom.value, atom.type.dtype)
        return loaded(f"{self.names[atom]}[{index if atom.type.shape else 0}]", atom.type.dtype)

    def copy(self, dest: str, src: str, size: int) -> None:
        self.lines.append(f"  std::memcpy({dest}, {src}, {size} * sizeof(*{dest}));")

    def store(self, dest: str, atom) -> None:
        """Writes ``atom`` (a value or a literal) over ``dest``."""
        size = atom.type.size
        if isinstance(atom, Literal):
            self.lines.append(f"  for (long long k = 0; k < {size}; ++k) {dest}[k] = "
                              f"{self.element(atom, 'k')};")
        else:
            self.copy(dest, self.names[atom], size)

    def loops(self, shape, body: str) -> None:
        """``body`` inside loops over ``shape``, index variables ``j0, j1, ...``."""
        depth = len(shape)
        text = "  " * (depth + 1) + body
        for d in reversed(range(depth)):
            ind = "  " * (d + 1)
            text = f"{ind}for (long long j{d} = 0; j{d} < {shape[d]}; ++j{d}) {{\n{text}\n{ind}}}"
        self.lines.append("  { " + text.strip() + " }" if depth == 0 else text)

    def source(self, name: str) -> str:
        return "\n".join([f"inline void {name}(void* const* args) {{",
                          f"  std::unique_ptr<unsigned char[]> owned(new unsigned char"
                          f"[{self.arena} + 64]);",
                          "  unsigned char* arena = reinterpret_cast<unsigned char*>("
                          "(reinterpret_cast<uintptr_t>(owned.get()) + 63) & ~uintptr_t(63));",
                          *self.head, *self.lines, "}", ""])


def flat(shape, indices) -> str:
    """The row-major offset of ``indices`` (C expressions) in ``shape``."""
    terms, stride = [], 1
    for d in reversed(range(len(shape))):
        if shape[d] != 1:
            terms.append(f"({indices[d]}) * {stride}" if stride != 1 else f"({indices[d]})")
        stride *= shape[d]
    return " + ".join(reversed(terms)) or "0"


def out_index(var) -> str:
    shape = var.type.shape
    return flat(shape, [f"j{d}" for d in range(len(shape))])


# --- the forms of the equations ------------------------------------------------------------------
class Form:
    def accepts(self, eqn) -> bool:
        return True


class _Elementwise(Form):
    def accepts(self, eqn) -> bool:
        return eqn.prim.fact("host") is not None and _elementwise_shapes(eqn)

    def emit(self, fn, eqn):
        out = eqn.outputs[0]
        t = out.type
        o = fn.value(out)
        expr = host_expr(eqn.prim, [fn.element(a, "k") for a in eqn.inputs], eqn.params)
        fn.lines.append(f"  for (long long k = 0; k < {t.size}; ++k) "
                        f"{o}[k] = {rounded(expr, t.dtype)};")


class _Relabel(Form):
    """An equation that only relabels its operand's elements (reshape, squeeze, ...)."""

    def accepts(self, eqn) -> bool:
        p = eqn.params
        return p.get("dimensions") is None if eqn.prim is reshape_p else True

    def emit(self, fn, eqn):
        (x,), out = eqn.inputs[:1], eqn.outputs[0]
        if isinstance(x, Literal):
            fn.store(fn.value(out), x)
        else:
            fn.bind(out, fn.names[x])


class _Convert(_Elementwise):
    def accepts(self, eqn) -> bool:
        return np.dtype(eqn.params["new_dtype"]) in DTYPES and _elementwise_shapes(eqn)

    def emit(self, fn, eqn):
        x = eqn.inputs[0]
        if not isinstance(x, Literal) and x.type.dtype == eqn.outputs[0].type.dtype:
            fn.bind(eqn.outputs[0], fn.names[x])
        else:
            super().emit(fn, eqn)


class _Broadcast(Form):
    def emit(self, fn, eqn):
        x, out = eqn.inputs[0], eqn.outputs[0]
        o = fn.value(out)
        dims = eqn.params["broadcast_dimensions"]
        src = [f"j{d}" if x.type.shape[k] != 1 else "0" for k, d in enumerate(dims)] \
            if not isinstance(x, Literal) else []
        at = flat(x.type.shape, src)
        fn.loops(out.type.shape, f"{o}[{out_index(out)}] = {fn.element(x, at)};")


class _Reduce(Form):
    def __init__(self, combine, identity):
        self.combine, self.identity = combine, identity

    def accepts(self, eqn) -> bool:
        return eqn.inputs[0].type.dtype != np.dtype(bool)

    def emit(self, fn, eqn):
        x, out = eqn.inputs[0], eqn.outputs[0]
        axes = set(eqn.params["axes"])
        o = fn.value(out)
        ctype = cpp_type(out.type.dtype)
        is_float = np.dtype(out.type.dtype).kind == "f"
        init = self.identity(ctype, is_float)
        fn.lines.append(f"  for (long long k = 0; k < {out.type.size}; ++k) "
                        f"{o}[k] = {init};")
        kept = [f"j{d}" for d in range(len(x.type.shape)) if d not in axes]
        at = flat(out.type.shape, kept)
        acc = loaded(f"{o}[{at}]", out.type.dtype)
        combined = host_expr(self.combine, [acc, fn.element(x, out_index(x))], {})
        fn.loops(x.type.shape, f"{o}[{at}] = {rounded(combined, out.type.dtype)};")


def _zero(ctype, is_float):
    return f"{ctype}(0)"


def _lowest(ctype, is_float):
    return f"-std::numeric_limits<{ctype}>::infinity()" if is_float else \
        f"std::numeric_limits<{ctype}>::lowest()"


def _highest(ctype, is_float):
    return f"std::numeric_limits<{ctype}>::infinity()" if is_float else \
        f"std::numeric_limits<{ctype}>::max()"


def _clamped_starts(fn, starts, operand_shape, sizes) -> list:
    """C names of the start indices, each clamped to [0, dim - size] as JAX clamps."""
    names = []
    for s, dim, size in zip(starts, operand_shape, sizes):
        name = fn.fresh()
        fn.lines.append(f"  const long long {name} = std::min<long long>(std::max<long long>("
                        f"{fn.element(s, '0')}, 0), {dim - size});")
        names.append(name)
    return names


class _DynamicSlice(Form):
    def emit(self, fn, eqn):
        x, starts, out = eqn.inputs[0], eqn.inputs[1:], eqn.outputs[0]
        sizes = eqn.params["slice_sizes"]
        names = _clamped_starts(fn, starts, x.type.shape, sizes)
        o = fn.value(out)
        at = flat(x.type.shape, [f"{s} + j{d}" for d, s in enumerate(names)])
        fn.loops(out.type.shape, f"{o}[{out_index(out)}] = {fn.names[x]}[{at}];")


class _DynamicUpdateSlice(Form):
    def accepts(self, eqn) -> bool:
        return not any(isinstance(a, Literal) for a in eqn.inputs[:2])

    def emit(self, fn, eqn):
        x, update, starts, out = eqn.inputs[0], eqn.inputs[1], eqn.inputs[2:], eqn.outputs[0]
        names = _clamped_starts(fn, starts, x.type.shape, update.type.shape)
        o = fn.value(out)
        fn.copy(o, fn.names[x], out.type.size)
        at = flat(x.type.shape, [f"{s} + j{d}" for d, s in enumerate(names)])
        fn.loops(update.type.shape, f"{o}[{at}] = {fn.names[update]}[{out_index(update)}];")


class _Slice(Form):
    def accepts(self, eqn) -> bool:
        return not isinstance(eqn.inputs[0], Literal)

    def emit(self, fn, eqn):
        x, out = eqn.inputs[0], eqn.outputs[0]
        p = eqn.params
        strides = p.get("strides") or (1,) * len(out.type.shape)
        o = fn.value(out)
        at = flat(x.type.shape, [f"{s} + j{d} * {st}" for d, (s, st)
                                 in enumerate(zip(p["start_indices"], strides))])
        fn.loops(out.type.shape, f"{o}[{out_index(out)}] = {fn.names[x]}[{at}];")


class _Transpose(Form):
    def accepts(self, eqn) -> bool:
        return not isinstance(eqn.inputs[0], Literal)

    def emit(self, fn, eqn):
        x, out = eqn.inputs[0], eqn.outputs[0]
        perm = eqn.params["permutation"]
        index = [None] * len(perm)
        for d, src in enumerate(perm):
            index[src] = f"j{d}"
        o = fn.value(out)
        fn.loops(out.type.shape, f"{o}[{out_index(out)}] = "
                                 f"{fn.names[x]}[{flat(x.type.shape, index)}];")


class _Iota(Form):
    def emit(self, fn, eqn):
        out = eqn.outputs[0]
        o = fn.value(out)
        d = eqn.params["dimension"]
        fn.loops(out.type.shape, f"{o}[{out_index(out)}] = "
                                 f"static_cast<{cpp_type(out.type.dtype)}>(j{d});")


class _Concatenate(Form):
    def accepts(self, eqn) -> bool:
        return not any(isinstance(a, Literal) for a in eqn.inputs)

    def emit(self, fn, eqn):
        out = eqn.outputs[0]
        axis = eqn.params["dimension"]
        o = fn.value(out)
        offset = 0
        for x in eqn.inputs:
            index = [f"j{d}" + (f" + {offset}" if d == axis else "")
                     for d in range(len(out.type.shape))]
            fn.loops(x.type.shape, f"{o}[{flat(out.type.shape, index)}] = "
                                   f"{fn.names[x]}[{out_index(x)}];")
            offset += x.type.shape[axis]


class _DotGeneral(Form):
    def accepts(self, eqn) -> bool:
        lhs, rhs = eqn.inputs
        out = eqn.outputs[0]
        if any(isinstance(a, Literal) for a in (lhs, rhs)) or any(
                np.dtype(t.dtype) != np.float32 for t in (lhs.type, rhs.type, out.type)):
            return False
        (lc, _), _ = eqn.params["dimension_numbers"]
        depth = math.prod(lhs.type.shape[d] for d in lc)
        return out.type.size * depth <= MAX_PRODUCT_WORK

    def emit(self, fn, eqn):
        lhs, rhs = eqn.inputs
        out = eqn.outputs[0]
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lfree = [d for d in range(len(lhs.type.shape)) if d not in lc and d not in lb]
        rfree = [d for d in range(len(rhs.type.shape)) if d not in rc and d not in rb]
        li, ri = [None] * len(lhs.type.shape), [None] * len(rhs.type.shape)
        j = 0
        for a, b in zip(lb, rb):
            li[a] = ri[b] = f"j{j}"
            j += 1
        for a in lfree:
            li[a] = f"j{j}"
            j += 1
        for b in rfree:
            ri[b] = f"j{j}"
            j += 1
        for k, (a, b) in enumerate(zip(lc, rc)):
            li[a] = ri[b] = f"c{k}"
        o = fn.value(out)
        product = (f"acc += {fn.names[lhs]}[{flat(lhs.type.shape, li)}] * "
                   f"{fn.names[rhs]}[{flat(rhs.type.shape, ri)}];")
        for k in reversed(range(len(lc))):
            product = f"for (long long c{k} = 0; c{k} < {lhs.type.shape[lc[k]]}; ++c{k}) " \
                      f"{{ {product} }}"
        fn.loops(out.type.shape, f"float acc = 0.0f; {product} {o}[{out_index(out)}] = acc;")


class _Math(_Elementwise):
    """An elementwise primitive without a ``host`` fact, as a C++ expression (``<cmath>`` for
    float32, as numpy's float32 loops compute it) over operands of the ``kinds`` given."""

    def __init__(self, template: str, kinds: str = "f"):
        self.template, self.kinds = template, kinds

    def accepts(self, eqn) -> bool:
        return _elementwise_shapes(eqn) and all(
            np.dtype(a.type.dtype).kind in self.kinds for a in eqn.inputs)

    def emit(self, fn, eqn):
        out = eqn.outputs[0]
        o = fn.value(out)
        expr = self.template.format(*[fn.element(a, "k") for a in eqn.inputs])
        fn.lines.append(f"  for (long long k = 0; k < {out.type.size}; ++k) "
                        f"{o}[k] = {rounded(expr, out.type.dtype)};")


class _Rem(_Math):
    """``rem``: C's fmod for floats; for integers C++'s ``%`` (both truncate), with the impl's
    results where C++ leaves it undefined: the dividend for a divisor of 0 (XLA's), 0 for
    -1."""

    def __init__(self):
        super().__init__("std::fmod({0}, {1})", "fiu")

    def emit(self, fn, eqn):
        if np.dtype(eqn.inputs[0].type.dtype).kind == "f":
            return super().emit(fn, eqn)
        _Math("(({1}) == 0 ? ({0}) : ({1}) == -1 ? 0 : ({0}) % ({1}))", "iu").emit(fn, eqn)


class _Rev(_Slice):
    def emit(self, fn, eqn):
        x, out = eqn.inputs[0], eqn.outputs[0]
        flipped = set(eqn.params["dimensions"])
        shape = x.type.shape
        at = flat(shape, [f"{shape[d] - 1} - j{d}" if d in flipped else f"j{d}"
                          for d in range(len(shape))])
        o = fn.value(out)
        fn.loops(shape, f"{o}[{out_index(out)}] = {fn.names[x]}[{at}];")


class _Gather(Form):
    """``gather`` without batch dimensions, indices clamped (modes clip, promise_in_bounds)."""

    def accepts(self, eqn) -> bool:
        p = eqn.params
        return p["nbatch"] == 0 and p["mode"] != "fill" and \
            not any(isinstance(a, Literal) for a in eqn.inputs)

    def emit(self, fn, eqn):
        x, indices = eqn.inputs
        out = eqn.outputs[0]
        axes = eqn.params["axes"]
        lead = len(indices.type.shape) - 1
        at = _indexed(fn, x.type.shape, indices, axes, lead, clamp=True)
        o = fn.value(out)
        fn.loops(out.type.shape, f"{o}[{out_index(out)}] = {fn.names[x]}[{at}];")


class _Scatter(Form):
    """``scatter`` without batch dimensions: out-of-bounds updates are dropped."""

    def accepts(self, eqn) -> bool:
        return eqn.params["nbatch"] == 0 and not any(isinstance(a, Literal) for a in eqn.inputs)

    def emit(self, fn, eqn):
        x, indices, updates = eqn.inputs
        out = eqn.outputs[0]
        axes, mode = eqn.params["axes"], eqn.params["mode"]
        lead = len(indices.type.shape) - 1
        o = fn.value(out)
        fn.copy(o, fn.names[x], out.type.size)
        targets = [f"{_index_of(fn, indices, lead, j)}" for j in range(len(axes))]
        inside = " && ".join(f"({t}) >= 0 && ({t}) < {x.type.shape[a]}"
                             for t, a in zip(targets, axes)) or "true"
        at = _indexed(fn, x.type.shape, indices, axes, lead, clamp=False)
        value = fn.element(updates, out_index(updates))
        if mode != "set":
            value = rounded(host_expr(SCATTER_COMBINE[mode],
                                      [loaded(f"{o}[{at}]", out.type.dtype), value], {}),
                            out.type.dtype)
        fn.loops(updates.type.shape, f"if ({inside}) {o}[{at}] = {value};")


def _index_of(fn, indices, lead: int, j: int) -> str:
    """Index column ``j`` at the loop's leading (index) positions, as a long long."""
    where = [f"j{d}" for d in range(lead)] + [str(j)]
    return f"static_cast<long long>({fn.names[indices]}[{flat(indices.type.shape, where)}])"


def _indexed(fn, shape, indices, axes, lead: int, clamp: bool) -> str:
    """The offset in ``shape`` of the element a gather reads (a scatter writes): indexed axes
    from the index columns (clamped to the axis when ``clamp``), the others from the loop
    positions after the leading ones."""
    index, rest = [], lead
    for d in range(len(shape)):
        if d in axes:
            column = _index_of(fn, indices, lead, axes.index(d))
            index.append(f"std::min<long long>(std::max<long long>({column}, 0), "
                         f"{shape[d] - 1})" if clamp else column)
        else:
            index.append(f"j{rest}")
            rest += 1
    return flat(shape, index)


class _Threefry(Form):
    """``threefry2x32`` with scalar keys: the kernel library's own loop body
    (``pto_host_random.h``, bit for bit the impl's), once per element."""

    def accepts(self, eqn) -> bool:
        k1, k2, x1, x2 = eqn.inputs
        shape = eqn.outputs[0].type.shape
        return k1.type.shape == k2.type.shape == () and \
            all(x.type.shape in (shape, ()) for x in (x1, x2))

    def emit(self, fn, eqn):
        k1, k2, x1, x2 = (fn.element(a, "k") for a in eqn.inputs)
        y1, y2 = (fn.value(v) for v in eqn.outputs)
        fn.lines.append(f"  for (long long k = 0; k < {eqn.outputs[0].type.size}; ++k) "
                        f"threefry2x32_block({k1}, {k2}, {x1}, {x2}, &{y1}[k], &{y2}[k]);")


class _Shift(_Math):
    """A shift of unsigned integers by a literal amount below their width (C++ leaves a
    shift by the width or more undefined; lax gives 0)."""

    def accepts(self, eqn) -> bool:
        x, by = eqn.inputs
        return super().accepts(eqn) and isinstance(by, Literal) and \
            0 <= int(by.value) < 8 * np.dtype(x.type.dtype).itemsize


def _giles(coefficients) -> str:
    """Horner's rule over ``coefficients`` (highest power first) at ``t``, as C++."""
    text = repr(float(coefficients[0]))
    for c in coefficients[1:]:
        text = f"({text}) * t + {float(c)!r}"
    return text


def erf_inv_source() -> str:
    """``erf_inv_giles``: the float32 impl's computation (``ops/special.py``, Giles' double
    precision polynomials in double, no Newton step), step for step."""
    return f"""\
inline float erf_inv_giles(float y32) {{
  const double y = y32;
  if (!(std::fabs(y) < 1.0)) return std::fabs(y) == 1.0 ? float(y * INFINITY) : NAN;
  const double w = -std::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 6.25) {{ const double t = w - 3.125; p = {_giles(_GILES_DP_CENTRAL)}; }}
  else {{
    const double root = std::sqrt(w);
    if (root < 4.0) {{ const double t = root - 3.25; p = {_giles(_GILES_DP_MIDDLE)}; }}
    else {{ const double t = root - 5.0; p = {_giles(_GILES_DP_TAIL)}; }}
  }}
  return float(p * y);
}}
"""


ELEMENTWISE = _Elementwise()
RELABEL = _Relabel()
# primitive -> its form in a whole-compiled loop; any other primitive with a ``host`` fact
# and elementwise shapes is ELEMENTWISE (the loops and cond: native_loop.py adds them)
FORMS = {
    reshape_p: RELABEL, squeeze_p: RELABEL, expand_dims_p: RELABEL,
    convert_element_type_p: _Convert(),
    broadcast_in_dim_p: _Broadcast(),
    reduce_sum_p: _Reduce(add_p, _zero), reduce_max_p: _Reduce(max_p, _lowest),
    reduce_min_p: _Reduce(min_p, _highest),
    dynamic_slice_p: _DynamicSlice(), dynamic_update_slice_p: _DynamicUpdateSlice(),
    slice_p: _Slice(), transpose_p: _Transpose(), iota_p: _Iota(),
    concatenate_p: _Concatenate(), dot_general_p: _DotGeneral(), rev_p: _Rev(),
    rem_p: _Rem(), expm1_p: _Math("std::expm1({0})"), sin_p: _Math("std::sin({0})"),
    cos_p: _Math("std::cos({0})"), floor_p: _Math("std::floor({0})"),
    ceil_p: _Math("std::ceil({0})"), pow_p: _Math("std::pow({0}, {1})"),
    xor_p: _Math("({0} ^ {1})", "iub"), gather_p: _Gather(), scatter_p: _Scatter(),
    threefry2x32_p: _Threefry(),
    shift_right_logical_p: _Shift("({0} >> {1})", "u"), shift_left_p: _Shift("({0} << {1})", "u"),
    erf_inv_p: _Math("erf_inv_giles({0})"),
}
SCATTER_COMBINE = {"add": add_p, "mul": mul_p, "min": min_p, "max": max_p}
