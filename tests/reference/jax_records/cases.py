"""Records -> cases: the parameter space of a record, sampled deterministically.

The space of a record is (shape entry) x (dtype entry) x (free keyword values). A shape entry
is the per-argument shapes with the keyword values that depend on them (axis tokens); a dtype
entry is the per-argument dtypes. Like JAX's ``jtu.sample_product`` we draw a bounded number
of distinct valid points, seeded by the record's name, so the cases are stable across runs.
"""
import itertools
import math
import zlib
from typing import NamedTuple

import numpy as np

from .spec import DTYPES, OMIT, SHAPES, Ref
from .rngs import dims, np_dtype


class Case(NamedTuple):
    suite: str
    record: dict
    shapes: tuple        # per array argument: a tuple, "np" or "py"
    dtypes: tuple        # per array argument: dtype names
    kwargs: tuple        # ((name, value), ...) with tokens resolved, OMIT dropped
    extra: tuple = ()    # suite-specific, e.g. vmap in_axes

    @property
    def key(self):
        return f"{self.suite}::{self.record['name']}[{params(self)}]"

    def id(self, mode):
        return f"{self.key}::{mode}"

    @property
    def seed(self):
        return zlib.crc32(self.key.encode())


def fmt(value):
    if isinstance(value, Ref):
        return repr(value)
    if isinstance(value, slice):
        return f"slice({value.start},{value.stop},{value.step})"
    if isinstance(value, tuple):
        return "(" + ",".join(fmt(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ",".join(fmt(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def params(case):
    """The readable parameter string of a case id: dtypes, shapes, keywords."""
    dts = case.dtypes if len(set(case.dtypes)) > 1 else case.dtypes[:1]
    parts = list(dts) + [fmt(s) for s in case.shapes]
    parts += [f"{k}={fmt(v)}" for k, v in case.kwargs]
    parts += [f"{k}={fmt(v)}" for k, v in case.extra]
    return ",".join(parts)


def dtype_list(spec):
    """A group name, a dtype name or a list of dtype names -> a list of dtype names."""
    if isinstance(spec, str):
        return DTYPES.get(spec, [spec])
    return list(spec)


def ndim(shape):
    return len(dims(shape))


def size(shape):
    return math.prod(dims(shape))


def expand_token(value, shape):
    nd = ndim(shape)
    tokens = {"@axes": lambda: list(range(-nd, nd)), "@axes+": lambda: list(range(nd)),
              "@axes_but_last": lambda: list(range(nd - 1)),
              "@axes_ext": lambda: list(range(-nd, nd + 1)),
              "@all_axes": lambda: [tuple(range(nd))], "@shape": lambda: [dims(shape)],
              "@size-1": lambda: [size(shape) - 1], "@size//2": lambda: [size(shape) // 2]}
    if isinstance(value, str) and value in tokens:
        return tokens[value]()
    return [value]


def shape_dependent(values):
    return any(isinstance(v, str) and v.startswith("@") and v not in ("@dtype", OMIT)
               for v in values)


def broadcastable(shapes):
    try:
        np.broadcast_shapes(*(dims(s) for s in shapes))
        return True
    except ValueError:
        return False


def shape_tuples(rec):
    """Per-argument shape tuples of a record without combos."""
    spec, n = rec["shapes"], max(rec["nargs"], 1)
    if isinstance(spec, str):
        mode, _, group = spec.rpartition(":")
        shapes = SHAPES[group]
        if mode == "cwr":
            return [c for c in itertools.combinations_with_replacement(shapes, n)
                    if broadcastable(c)]
        return [(s,) * n for s in shapes]
    if spec is None:
        return [()]
    return [s if n > 1 or rec["nargs"] == 0 else (s,) for s in spec]


def shape_entries(rec):
    """[(shapes, {kw: value}), ...]: shapes with the keyword values that depend on them."""
    if rec["combos"] is not None:
        base = [(tuple(c["shapes"]), {k: [v] for k, v in c.items() if k != "shapes"})
                for c in rec["combos"]]
    else:
        base = [(s, {}) for s in shape_tuples(rec)]
    dependent = {k: v for k, v in rec["kwargs"].items() if shape_dependent(v)}
    entries = []
    for shapes, fixed in base:
        first = shapes[0] if shapes else ()
        opts = dict(fixed, **{k: [x for v in vs for x in expand_token(v, first)]
                              for k, vs in dependent.items()})
        for values in itertools.product(*opts.values()):
            entries.append((shapes, dict(zip(opts, values))))
    return entries


def dtype_entries(rec, nshapes):
    """[(per-argument dtypes, {kw: value}), ...]."""
    n, mode = max(nshapes, 1), rec["dtype_mode"]
    if mode == "kwargs":             # [(dtype, {kw: value}), ...] drawn jointly
        return [((d,) * n, dict(kw)) for d, kw in rec["dtypes"]]
    if mode == "explicit":           # [(per-argument dtypes), ...]
        return [(tuple(e), {}) for e in rec["dtypes"]]
    if mode == "per_arg":            # one dtype list per argument, product
        entries = list(itertools.product(*(dtype_list(d) for d in rec["dtypes"])))
    elif mode == "product":
        entries = list(itertools.product(dtype_list(rec["dtypes"]), repeat=n))
    elif mode == "cwr":
        entries = list(itertools.combinations_with_replacement(dtype_list(rec["dtypes"]), n))
    else:
        entries = [(d,) * n for d in dtype_list(rec["dtypes"])]
    fixed = rec["arg_dtypes"]
    if fixed:
        entries = list(dict.fromkeys(tuple(f or d for f, d in zip(fixed, e)) for e in entries))
    return [(e, {}) for e in entries]


def valid(shapes, dtypes):
    """A Python scalar argument exists only for bool with x64 disabled (jtu.is_valid_shape)."""
    return all(d == "bool" for s, d in zip(shapes, dtypes) if s == "py")


def decode(index, sizes):
    out = []
    for n in sizes:
        index, i = divmod(index, n)
        out.append(i)
    return out


def sample(sizes, k, seed, ok):
    """Up to k distinct valid index tuples of the mixed-radix space ``sizes``."""
    total = math.prod(sizes)
    if total <= 4 * k:
        picks = [decode(i, sizes) for i in range(total)]
        picks = [p for p in picks if ok(p)]
        rng = np.random.default_rng(seed)
        return [picks[i] for i in sorted(rng.permutation(len(picks))[:k])]
    rng, seen, out, misses = np.random.default_rng(seed), set(), [], 0
    while len(out) < k and misses < 200:
        i = int(rng.integers(total))
        p = decode(i, sizes)
        if i in seen or not ok(p):
            misses += 1
            continue
        seen.add(i)
        out.append(p)
    return sorted(out)


def resolve(value, dtype):
    """"@dtype" -> the case dtype; ("@typed", v) -> v as a numpy scalar of the case dtype."""
    if value == "@dtype":
        return dtype
    if isinstance(value, tuple) and value[:1] == ("@typed",):
        return np.asarray(value[1]).astype(np_dtype(dtype))[()]
    return value


def cases(suite, rec, k, extra=None):
    """The sampled cases of one record. ``extra(shapes)`` lists suite-specific choices
    (vmap's in_axes) per shape entry."""
    entries = shape_entries(rec)
    if extra is not None:
        entries = [(s, dict(kw, __extra__=e)) for s, kw in entries for e in extra(s)]
    nshapes = len(entries[0][0]) if entries else 0
    dentries = dtype_entries(rec, nshapes)
    free = [(k_, v) for k_, v in rec["kwargs"].items() if not shape_dependent(v)]
    sizes = [len(entries), len(dentries)] + [len(v) for _, v in free]
    ok = lambda p: valid(entries[p[0]][0], dentries[p[1]][0])
    out = []
    for p in sample(sizes, k, zlib.crc32(f"{suite}::{rec['name']}".encode()), ok):
        shapes, kw = entries[p[0]]
        kw = dict(kw)
        ext = kw.pop("__extra__", None)
        dts, dkw = dentries[p[1]]
        kw.update(dkw)
        kw.update((name, vals[i]) for (name, vals), i in zip(free, p[2:]))
        kwargs = tuple((n, resolve(v, dts[0] if dts else None)) for n, v in kw.items()
                       if v != OMIT)
        out.append(Case(suite, rec, tuple(shapes), tuple(dts[:len(shapes)] or dts[:1]),
                        kwargs, () if ext is None else (("in_axes", ext),)))
    return out
