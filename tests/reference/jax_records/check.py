"""Running one case in ptojax and in JAX (the reference, x64 disabled) and comparing them:
values within JAX's tolerances, dtypes and shapes. ``outcome(case, mode)`` -> Outcome.

Suites are of three kinds: "call" (the function on the inputs; modes eager / jit), "grad"
(jvp and vjp of the function, to the record's order; modes jvp / vjp) and "vmap" (the
function vmapped over the record's in_axes; modes vmap / jit).
"""
import operator
import re
import traceback
import warnings
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from . import golden
from .cases import Case
from .rngs import dims, generate, np_dtype
from .spec import DEFAULT_GRAD_TOL, DEFAULT_TOL, Ref

VMAP_SIZE = 10
_FAST = {"xla_backend_optimization_level": 0}


class Missing(Exception):
    """A function or object the record needs does not exist in the library."""


class Outcome(NamedTuple):
    ok: bool
    reason: str = ""       # short, stable: the known-failure reason / category
    detail: str = ""       # longer, for the assertion message


# ---------------------------------------------------------------- libraries

def _jax_lib():
    import jax
    import jax.numpy as jnp
    fast_jit = lambda f: lambda *a: jax.jit(f).lower(*a).compile(_FAST)(*a)
    return SimpleNamespace(name="jax", numpy=jnp, lax=jax.lax, jit=fast_jit, jvp=jax.jvp,
                           vjp=jax.vjp, vmap=jax.vmap, leaves=jax.tree_util.tree_leaves,
                           prefix={"numpy": "jnp", "lax": "lax"})


def _pto_lib():
    import ptojax as pto
    import ptojax.numpy as pnp
    return SimpleNamespace(name="ptojax", numpy=pnp, lax=pto.lax, jit=pto.jit, jvp=pto.jvp,
                           vjp=pto.vjp, vmap=pto.vmap, leaves=pto.tree_util.tree_leaves,
                           prefix={"numpy": "pnp", "lax": "lax"})


_LIBS = {}


def lib(name):
    if name not in _LIBS:
        _LIBS[name] = {"jax": _jax_lib, "ptojax": _pto_lib}[name]()
    return _LIBS[name]


def _operator(lib_, name):
    """``operator.add`` etc. on the library's arrays (numpy inputs converted first)."""
    op = getattr(operator, name.strip("_"))
    return lambda *xs: op(*(_asarray(lib_, x) for x in xs))


def _rmethod(lib_, name):
    """``y.__radd__(x)`` on the library's arrays."""
    return lambda x, y: getattr(_asarray(lib_, y), name)(_asarray(lib_, x))


def _asarray(lib_, x):
    return lib_.numpy.asarray(x) if isinstance(x, (np.ndarray, np.generic)) else x


def lookup(lib_, module, path):
    if module == "operator":
        return _operator(lib_, path)
    if module == "rmethod":
        return _rmethod(lib_, path)
    obj = getattr(lib_, module)
    try:
        for part in path.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise Missing(f"missing: {lib_.prefix[module]}.{path}") from None
    return obj


def resolve(lib_, value):
    if isinstance(value, Ref):
        module, _, path = value.path.partition(".")
        obj = lookup(lib_, module, path)
        return obj(**dict(value.kwargs)) if value.kwargs else obj
    if isinstance(value, tuple) and any(isinstance(v, Ref) for v in value):
        return tuple(resolve(lib_, v) for v in value)
    return value


# ---------------------------------------------------------------- the function of a case

def function(lib_, case):
    """The case's function of its array arguments, in ``lib_``."""
    rec = case.record
    fn = lookup(lib_, rec["module"], rec["fn"])
    kwargs = {k: resolve(lib_, v) for k, v in case.kwargs}
    static = [kwargs.pop(k) for k in rec["positional"] if k in kwargs]
    names = rec["arg_names"] or ()

    def f(*args):
        if rec["pack"] == "list":
            return fn(list(args), *static, **kwargs)
        named = dict(zip(names, args))
        pos = [a for i, a in enumerate(args) if i >= len(names) or names[i] is None]
        kw = {n: a for n, a in named.items() if n is not None}
        return fn(*pos, *static, **kw, **kwargs)
    return f


def batched(shape, axis):
    if axis is None:
        return shape
    d = list(dims(shape))
    d.insert(axis, VMAP_SIZE)
    return tuple(d)


def inputs(case):
    """The numpy inputs of a case (vmap cases: batched along in_axes)."""
    rng = np.random.default_rng(case.seed)
    kinds = case.record["rng"]
    in_axes = dict(case.extra).get("in_axes")
    args = []
    for i, (shape, dtype) in enumerate(zip(case.shapes, case.dtypes)):
        kind = kinds[i] if isinstance(kinds, (list, tuple)) else kinds
        if in_axes is not None:
            shape = batched(shape, in_axes[i])
        args.append(generate(kind, shape, dtype, rng))
    args += [np.asarray(c, np.int32) for c in case.record["consts"] or ()]
    return args


def like(value, rng):
    """A random array shaped like ``value`` (tangents, cotangents)."""
    dtype = np.dtype(value.dtype)
    kind = "default(1)" if dtype.kind in "fc" else "bool"
    name = "bfloat16" if dtype == np_dtype("bfloat16") else dtype.name
    return generate(kind, tuple(value.shape), name, rng)


# ---------------------------------------------------------------- autodiff

def differentiated(lib_, case, args):
    """f restricted to the differentiated arguments (others closed over), one output leaf."""
    f, rec = function(lib_, case), case.record
    diff = rec["diff_argnums"] or tuple(range(len(case.shapes)))

    def g(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        out = f(*full)
        return out if rec["out_index"] is None else lib_.leaves(out)[rec["out_index"]]
    return g, [args[i] for i in diff]


def jvp_outputs(lib_, g, xs, ts, order):
    out, t1 = lib_.jvp(g, tuple(xs), tuple(ts))
    if order < 2:
        return [out, t1]
    first = lambda *ys: lib_.jvp(g, tuple(ys), tuple(ts))[1]
    return [out, t1, lib_.jvp(first, tuple(xs), tuple(ts))[1]]


def vjp_outputs(lib_, g, xs, ts, ct, order):
    grads = lib_.vjp(g, *xs)[1](ct)
    if order < 2:
        return [grads]
    first = lambda *ys: lib_.vjp(g, *ys)[1](ct)
    return [grads, lib_.vjp(first, *xs)[1](tuple(ts))]


def grad_data(case, args):
    """Tangents and a cotangent for the case (seeded like its inputs, plus one)."""
    import jax
    g, xs = differentiated(lib("jax"), case, args)
    rng = np.random.default_rng(case.seed + 1)
    ts = [like(np.asarray(x), rng) for x in xs]
    out = jax.eval_shape(g, *xs)
    leaves = [like(o, rng) for o in jax.tree_util.tree_leaves(out)]
    ct = type(out)(leaves) if isinstance(out, (list, tuple)) else leaves[0]
    return ts, ct


# ---------------------------------------------------------------- running a mode

def program(lib_, case, mode, kind, data):
    """(function, arguments): the computation of ``mode`` in ``lib_``, not yet jitted."""
    args = data["args"]
    if kind == "grad":
        g, xs = differentiated(lib_, case, args)
        order, ts = case.record["order"], data["ts"]
        if mode == "jvp":
            return (lambda *ys: jvp_outputs(lib_, g, ys, ts, order)), xs
        return (lambda *ys: vjp_outputs(lib_, g, ys, ts, data["ct"], order)), xs
    if kind == "vmap":
        in_axes = tuple(dict(case.extra)["in_axes"])
        return lib_.vmap(function(lib_, case), in_axes=in_axes), args
    return function(lib_, case), args


def leaves(lib_, out):
    return [np.asarray(x) for x in lib_.leaves(out)]


def run_ptojax(case, mode, kind, data):
    pto = lib("ptojax")
    fn, args = program(pto, case, mode, kind, data)
    return leaves(pto, (pto.jit(fn) if mode == "jit" else fn)(*args))


def prepare(case, kind):
    data = {"args": inputs(case)}
    if kind == "grad":
        data["ts"], data["ct"] = grad_data(case, data["args"])
    return data


def _split(flat, progs):
    out, i = [], 0
    for _, args in progs:
        out.append(flat[i:i + len(args)])
        i += len(args)
    return out


def run_jax(tasks, kind):
    """JAX's outputs (or exception) for each (case, mode) task: one compilation for all of
    them when they can be jitted (JAX's compile time dominates the run), else one by one."""
    jx = lib("jax")
    datas, progs = [], []
    for case, mode in tasks:
        try:
            data = prepare(case, kind)
            prog = program(jx, case, mode, kind, data)
        except Exception as e:       # e.g. a function this JAX version lacks
            data, prog = dict(args=inputs(case), out=e), None
        datas.append(data)
        progs.append(prog)
    jit = kind != "call" or "jit" in tasks[0][0].record["modes"]
    if jit and len(tasks) > 1 and None not in progs:
        try:
            together = lambda *flat: [fn(*a) for (fn, _), a in zip(progs, _split(flat, progs))]
            outs = jx.jit(together)(*[a for _, args in progs for a in args])
            return [dict(d, out=leaves(jx, o)) for d, o in zip(datas, outs)]
        except Exception:
            pass                     # some case is rejected by JAX: find which, one by one
    results = []
    for prog, d in zip(progs, datas):
        if prog is None:
            results.append(d)
            continue
        fn, args = prog
        try:
            results.append(dict(d, out=leaves(jx, (jx.jit(fn) if jit else fn)(*args))))
        except Exception as e:       # JAX rejects the case: ptojax must reject it too
            results.append(dict(d, out=_op_by_op(jx, fn, args, e) if jit else e))
    return results


def _op_by_op(jx, fn, args, error):
    """JAX's outputs computed without jit when XLA failed to compile the jitted program (a
    JaxRuntimeError: a backend bug, e.g. XLA's CPU backend lacks ``mulhi`` on a transposed
    int8/int16 operand, not a rejection of the case); other errors stay the expected ones."""
    if type(error).__name__ not in ("JaxRuntimeError", "XlaRuntimeError"):
        return error
    try:
        return leaves(jx, fn(*args))
    except Exception as e:
        return e


_CACHE = {}


def task_key(case, mode, kind):
    """What JAX's output depends on: the case, and the mode of grads (jvp or vjp)."""
    return case.id(mode) if kind == "grad" else case.key


def reference(case, mode, kind, group=None, live=False):
    """JAX's outputs and the inputs of ``case`` in ``mode``, computed for all of ``group``
    (the cases of the same record) and all its modes at once, and cached; read from the
    store of JAX's outputs (golden.py) where it has them, unless ``live``."""
    import jax
    key = lambda c, m: task_key(c, m, kind)
    if key(case, mode) not in _CACHE:
        modes = case.record["modes"] if kind == "grad" else [mode]
        tasks = [(c, m) for c in group or () for m in modes if key(c, m) not in _CACHE]
        if not any(c is case for c, _ in tasks):
            tasks = [(case, mode)]
        if len(_CACHE) > 512:
            _CACHE.clear()
        with jax.enable_x64(False), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if not live:
                tasks = [t for t in tasks if not _from_store(*t, kind)]
            for (c, m), data in zip(tasks, run_jax(tasks, kind) if tasks else ()):
                _CACHE[key(c, m)] = data
    return _CACHE[key(case, mode)]


def _from_store(case, mode, kind):
    """Whether JAX's stored output for the task was found (and cached)."""
    try:
        data = prepare(case, kind)
    except Exception:                # JAX rejected the case before running it
        data = dict(args=inputs(case))
    out = golden.stored(task_key(case, mode, kind), data)
    if out is not None:
        _CACHE[task_key(case, mode, kind)] = dict(data, out=out)
    return out is not None


# ---------------------------------------------------------------- comparing

def tolerance(spec, dtype, default):
    if spec is not None and not isinstance(spec, dict):
        return spec
    table = dict(default, **(spec or {}))
    return table.get(dtype, 0)


def dtype_name(dtype):
    return "bfloat16" if dtype == np_dtype("bfloat16") else np.dtype(dtype).name


def compare_leaf(a, e, tol):
    """None if ``a`` (ptojax) matches ``e`` (JAX), else the reason."""
    if a.dtype != e.dtype:
        # ptojax promotes like JAX with x64 (u32 + i32 is i64): a category of its own
        kind = "64-bit result" if a.dtype.itemsize == 8 > e.dtype.itemsize else "dtype mismatch"
        return f"{kind}: {dtype_name(a.dtype)} vs JAX {dtype_name(e.dtype)}"
    if a.shape != e.shape:
        return f"shape mismatch: {a.shape} vs JAX {e.shape}"
    if e.dtype.kind in "biu" or tol == 0:
        return None if np.array_equal(a, e, equal_nan=e.dtype.kind in "fc") else \
            "value mismatch: not equal"
    wide = np.complex128 if e.dtype.kind == "c" else np.float64
    a, e = a.astype(wide), e.astype(wide)
    if not np.array_equal(np.isnan(a), np.isnan(e)) or \
            not np.array_equal(a[np.isinf(e)], e[np.isinf(e)]):
        return "value mismatch: nan/inf placement"
    fin = np.isfinite(e)
    err = np.abs(a[fin] - e[fin])
    bad = err > tol + tol * np.abs(e[fin])
    if bad.any():
        return f"value mismatch: max err {err.max():.1e} > tol {tol:g}"
    return None


def compare(case, kind, actual, expected):
    if len(actual) != len(expected):
        return f"output count: {len(actual)} vs JAX {len(expected)}"
    for k, (a, e) in enumerate(zip(actual, expected)):
        name = dtype_name(e.dtype)
        if kind == "grad":
            # AD against AD: the record's tolerance (sized for JAX's numerical derivatives)
            # where tighter than JAX's default gradient tolerance, else the latter
            default = DEFAULT_GRAD_TOL.get(name, 0)
            tol = min(tolerance(case.record["tol"], name, DEFAULT_GRAD_TOL), default)
        else:
            tol = tolerance(case.record["tol"], name, DEFAULT_TOL)
        reason = compare_leaf(a, e, tol)
        if reason:
            return reason + (f" (output {k})" if len(expected) > 1 else "")
    return None


def complex_case(case):
    """Whether the case has complex inputs or asks for a complex dtype."""
    dts = list(case.dtypes) + [v for _, v in case.kwargs if isinstance(v, str)]
    return any("complex" in d for d in dts)


def has_complex(case, expected):
    outs = expected if isinstance(expected, list) else []
    return complex_case(case) or any(o.dtype.kind == "c" for o in outs)


# (exception message pattern, reason): ptojax limitations worth a category of their own
RULES = [
    (r"operand shapes differ", "lax broadcasting: size-1 dimensions"),
    (r"operands have different dtypes", "mixed operand dtypes"),
]


def normalize(msg):
    """A message without its shapes and addresses, so that reasons group and stay stable."""
    msg = re.sub(r"0x[0-9a-f]+", "0x..", msg)
    msg = re.sub(r"\b(bool|bf16|[iufc]\d+)\[[\d, ]*\]", "T[..]", msg)
    msg = re.sub(r"\[[\d, ]*\]", "[..]", msg)
    return re.sub(r"\(\d+(, ?\d+)*,?\)", "(..)", msg)


def classify(exc, case):
    """The short reason of a ptojax exception."""
    if isinstance(exc, Missing):
        return str(exc)
    msg = (str(exc).splitlines() or [""])[0]
    prefix = lib("ptojax").prefix.get(case.record["module"], case.record["module"])
    m = re.search(r"unexpected keyword argument '(\w+)'", msg)
    if isinstance(exc, TypeError) and m:
        return f"unsupported argument: {prefix}.{case.record['fn']}({m.group(1)})"
    for pattern, reason in RULES:
        if re.search(pattern, msg):
            return reason
    return f"raises {type(exc).__name__}: {normalize(msg)[:90]}"


def outcome(case: Case, mode: str, kind: str = "call", group=None) -> Outcome:
    """ptojax against JAX on ``case`` in ``mode``; ``group``: the cases of the same record,
    whose JAX references are computed together."""
    data = reference(case, mode, kind, group)
    expected = data["out"]
    if isinstance(expected, Missing):        # the record needs updating for this JAX
        return Outcome(False, f"JAX lacks {str(expected)[len('missing: '):]}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            actual = run_ptojax(case, mode, kind, data)
    except Exception as e:
        if isinstance(expected, Exception):
            return Outcome(True)
        reason = classify(e, case)
        if has_complex(case, expected) and not isinstance(e, Missing):
            reason = "complex dtype"
        return Outcome(False, reason, traceback.format_exc(limit=-3))
    if isinstance(expected, Exception):
        return Outcome(False, "JAX raises, ptojax does not",
                       f"JAX: {type(expected).__name__}: {expected}")
    reason = compare(case, kind, actual, expected)
    if reason is None:
        return Outcome(True)
    return Outcome(False, "complex dtype" if has_complex(case, expected) else reason, reason)
