"""``pto.mixed_precision``: precision policies, loss scaling and casts with a rounding mode.

    policy = pto.mixed_precision.get_policy("params=float32,compute=bfloat16,output=float32")
    logits = policy.apply(model)(params, x)          # bf16 compute, f32 params and result

A ``Policy`` names three dtypes: parameters are *stored* in ``param_dtype`` (f32, so small
updates are not lost to rounding), computed in ``compute_dtype`` (bf16/f16: half the bytes,
the cube's fast path) and returned in ``output_dtype``. Only floating-point leaves are cast;
integers and bools pass through. ``policy.apply(fn)`` casts ``fn``'s floating-point arguments
to the compute dtype and its floating-point results to the output dtype; gradients flow back
through the casts (``convert_element_type`` is linear), so ``grad`` of a policy-applied loss
returns parameter gradients in the parameters' own dtype.

fp16 training underflows small gradients: scale the loss before differentiating, unscale the
gradients after (``DynamicLossScale``), and skip the update when a gradient is not finite
(``all_finite`` + ``select_tree``); the dynamic scale halves on overflow and doubles after
``period`` finite steps. The loss scales are pytrees, so they pass through ``pto.jit``.

``cast(x, dtype, rounding=..., overflow=..., key=...)`` converts with an explicit rounding
mode: ``"nearest_even"`` (IEEE, as ``astype``) or ``"stochastic"`` (to the lower or upper
neighbour with probabilities making the result unbiased: ``E[cast(x)] == x``), and an explicit
overflow rule: ``"inf"`` (IEEE: beyond the largest finite value is inf, or NaN for
float8_e4m3fn, which has no inf) or ``"saturate"`` (clamp to the largest finite value).
Conversions to integers round as asked and always saturate. Everything is written with
``pto.lax``/``pto.numpy``, so it traces, differentiates (a cast's derivative is the identity,
as ``astype``'s) and tiles into elementwise kernels.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptojax import dtypes, lax, random
from ptojax import numpy as pnp
from ptojax.errors import ConfigError, DtypeError
from ptojax.source_info import user_frame
from ptojax.pytree import register_dataclass, tree_leaves, tree_map
from ptojax.public import add_examples, dir_function

__all__ = ["Policy", "get_policy", "cast", "cast_to_full", "cast_to_half", "NoOpLossScale",
           "StaticLossScale", "DynamicLossScale", "all_finite", "select_tree"]
__dir__ = dir_function(__all__)


# --- policies --------------------------------------------------------------------------------
def _is_float_leaf(x) -> bool:
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return isinstance(x, float)
    return dtypes.is_float(np.dtype(dtype))


def _cast_tree(tree, dtype):
    """Every floating-point leaf of ``tree`` converted to ``dtype``; other leaves unchanged."""
    dtype = dtypes.canonicalize(dtype)
    return tree_map(lambda x: pnp.asarray(x).astype(dtype) if _is_float_leaf(x) else x, tree)


def cast_to_full(tree):
    """Floating-point leaves as float32."""
    return _cast_tree(tree, dtypes.float32)


def cast_to_half(tree, dtype=dtypes.bfloat16):
    """Floating-point leaves as ``dtype`` (bfloat16 by default, or float16)."""
    return _cast_tree(tree, dtype)


@dataclass(frozen=True)
class Policy:
    """Parameter, compute and output dtypes (see the module doc)."""
    param_dtype: np.dtype
    compute_dtype: np.dtype
    output_dtype: np.dtype

    def __post_init__(self):
        for name in ("param_dtype", "compute_dtype", "output_dtype"):
            dtype = dtypes.canonicalize(getattr(self, name))
            if not dtypes.is_float(dtype):
                raise DtypeError(f"Policy.{name} must be a floating-point dtype, got "
                                 f"{dtypes.short_name(dtype)}", user_frame())
            object.__setattr__(self, name, dtype)

    def cast_to_param(self, tree):
        return _cast_tree(tree, self.param_dtype)

    def cast_to_compute(self, tree):
        return _cast_tree(tree, self.compute_dtype)

    def cast_to_output(self, tree):
        return _cast_tree(tree, self.output_dtype)

    def with_output_dtype(self, dtype) -> "Policy":
        return Policy(self.param_dtype, self.compute_dtype, dtype)

    def apply(self, fn):
        """``fn`` with its floating-point arguments cast to the compute dtype and its
        floating-point results cast to the output dtype."""
        def wrapped(*args, **kwargs):
            args, kwargs = self.cast_to_compute((args, kwargs))
            return self.cast_to_output(fn(*args, **kwargs))
        wrapped.__name__ = getattr(fn, "__name__", "fn")
        wrapped.__wrapped__ = fn
        return wrapped

    def __str__(self):
        return (f"params={self.param_dtype.name},compute={self.compute_dtype.name},"
                f"output={self.output_dtype.name}")


_POLICY_KEYS = {"params": "param_dtype", "p": "param_dtype", "compute": "compute_dtype",
                "c": "compute_dtype", "output": "output_dtype", "o": "output_dtype"}


def get_policy(spec) -> Policy:
    """A Policy from ``"params=float32,compute=bfloat16,output=float32"`` (keys may be
    abbreviated p/c/o, dtypes f32/bf16/f16 or full names; unnamed dtypes default to float32),
    or one dtype name for all three, or a Policy (returned as is)."""
    if isinstance(spec, Policy):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"get_policy: expected a string such as "
                          f"'params=float32,compute=bfloat16,output=float32', got {spec!r}",
                          user_frame())
    if "=" not in spec:
        dtype = dtypes.canonicalize(spec.strip())
        return Policy(dtype, dtype, dtype)
    fields = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        name = _POLICY_KEYS.get(key.strip())
        if name is None or not value.strip():
            raise ConfigError(f"get_policy: cannot read {part.strip()!r} in {spec!r}; use "
                              f"params=, compute= and output= with a dtype each", user_frame())
        fields[name] = dtypes.canonicalize(value.strip())
    return Policy(**{n: fields.get(n, dtypes.float32)
                     for n in ("param_dtype", "compute_dtype", "output_dtype")})


# --- loss scaling ----------------------------------------------------------------------------
def all_finite(tree):
    """A bool scalar: every element of every floating-point leaf is finite."""
    flags = [pnp.all(pnp.isfinite(x)) for x in tree_leaves(tree) if _is_float_leaf(x)]
    out = pnp.asarray(True)
    for f in flags:
        out = pnp.logical_and(out, f)
    return out


def select_tree(pred, on_true, on_false):
    """``on_true`` where the bool scalar ``pred`` holds, else ``on_false``, leaf by leaf (the
    two trees share a structure): how a training step skips a non-finite update."""
    return tree_map(lambda a, b: lax.select(pnp.broadcast_to(pred, pnp.shape(a)),
                                            pnp.asarray(a), pnp.asarray(b)),
                    on_true, on_false)


def _scale_tree(tree, factor):
    return tree_map(lambda x: x * factor.astype(x.dtype) if _is_float_leaf(x) else x, tree)


@register_dataclass
@dataclass(frozen=True)
class NoOpLossScale:
    """No loss scaling (float32 or bfloat16 training)."""

    @property
    def loss_scale(self):
        return pnp.asarray(1.0, dtypes.float32)

    def scale(self, tree):
        return tree

    def unscale(self, tree):
        return tree

    def adjust(self, grads_finite) -> "NoOpLossScale":
        return self


@register_dataclass
@dataclass(frozen=True)
class StaticLossScale:
    """A fixed loss scale."""
    loss_scale: object

    def scale(self, tree):
        return _scale_tree(tree, pnp.asarray(self.loss_scale, dtypes.float32))

    def unscale(self, tree):
        return _scale_tree(tree, 1.0 / pnp.asarray(self.loss_scale, dtypes.float32))

    def adjust(self, grads_finite) -> "StaticLossScale":
        return self


@register_dataclass
@dataclass(frozen=True)
class DynamicLossScale:
    """A loss scale that halves (by ``factor``, not below ``min_loss_scale``) when the
    gradients overflow and grows by ``factor`` after ``period`` finite steps in a row.

    ``loss_scale`` (a float32 scalar, e.g. ``pnp.asarray(2.0 ** 15)``) and ``counter`` are
    pytree children, so a jitted step takes and returns the scale; ``period``, ``factor`` and
    ``min_loss_scale`` are static."""
    loss_scale: object
    counter: object = np.int32(0)
    period: int = field(default=2000, metadata={"static": True})
    factor: int = field(default=2, metadata={"static": True})
    min_loss_scale: float = field(default=1.0, metadata={"static": True})

    def scale(self, tree):
        return _scale_tree(tree, self.loss_scale)

    def unscale(self, tree):
        return _scale_tree(tree, 1.0 / self.loss_scale)

    def adjust(self, grads_finite) -> "DynamicLossScale":
        """The scale for the next step, given whether this step's gradients were finite."""
        grown = self.counter + 1 >= self.period
        finite_scale = pnp.where(grown, self.loss_scale * self.factor, self.loss_scale)
        finite_counter = pnp.where(grown, 0, self.counter + 1)
        shrunk = pnp.maximum(self.loss_scale / self.factor, self.min_loss_scale)
        return DynamicLossScale(pnp.where(grads_finite, finite_scale, shrunk),
                                pnp.where(grads_finite, finite_counter, 0),
                                self.period, self.factor, self.min_loss_scale)


# --- casts with a rounding mode --------------------------------------------------------------
ROUNDINGS = ("nearest_even", "stochastic")
OVERFLOWS = ("inf", "saturate")


def cast(x, dtype, rounding: str = "nearest_even", overflow: str = "inf", key=None):
    """``x`` converted to ``dtype`` with an explicit rounding mode and overflow rule (see the
    module doc). ``rounding="stochastic"`` needs a ``key`` (``pto.random.key``); the same key
    gives the same result."""
    dtype = dtypes.canonicalize(dtype)
    x = pnp.asarray(x)
    _check_cast(x, dtype, rounding, overflow, key)
    if not dtypes.is_float(x.dtype) or x.dtype == dtype:
        return x.astype(dtype)
    wide = x.astype(dtypes.float64 if x.dtype == dtypes.float64 else dtypes.float32)
    if dtypes.is_integer(dtype) or dtypes.is_bool(dtype):
        return _cast_to_integer(wide, dtype, rounding, key)
    if overflow == "saturate":
        big = float(dtypes.finfo(dtype).max)
        wide = pnp.where(pnp.isnan(wide), wide, pnp.clip(wide, -big, big))
    if rounding == "stochastic" and dtype.itemsize < wide.dtype.itemsize:
        wide = _stochastic_neighbour(wide, dtype, key)
    return lax.convert_element_type(wide, dtype)


def _check_cast(x, dtype, rounding, overflow, key):
    if rounding not in ROUNDINGS:
        raise ValueError(f"cast: rounding must be one of {ROUNDINGS}, got {rounding!r}")
    if overflow not in OVERFLOWS:
        raise ValueError(f"cast: overflow must be one of {OVERFLOWS}, got {overflow!r}")
    if rounding == "stochastic" and key is None:
        raise ValueError("cast: rounding='stochastic' needs a key= (pto.random.key(seed))")


def _cast_to_integer(x, dtype, rounding, key):
    """Round to an integer (half to even, or down after adding uniform noise in [0, 1):
    stochastic and unbiased), then saturate at ``dtype``'s range (NaN becomes 0)."""
    if rounding == "stochastic":
        x = pnp.floor(x + random.uniform(key, x.shape, x.dtype))
    else:
        x = pnp.round(x)
    return lax.convert_element_type(x, dtype)


def _spacing_factor(dtype) -> float:
    """f = 0.625 * 2**-m for a dtype with m explicit mantissa bits: RNE(y * (1 + f)) is the
    next value above a positive normal y, RNE(y * (1 - f)) the next one below (the product
    lands between 0.5 and 1.5 spacings from y, on the side of the neighbour)."""
    return 0.625 * 2.0 ** -dtypes.finfo(dtype).nmant


def _stochastic_neighbour(x, dtype, key):
    """``x`` (f32/f64) replaced by one of its two ``dtype`` neighbours lo <= x <= hi, hi with
    probability (x - lo) / (hi - lo): unbiased. Values ``dtype`` represents exactly, NaN and
    infinities are kept; beyond the largest finite value the nearest-even rule applies."""
    wide = x.dtype
    info = dtypes.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    f = _spacing_factor(dtype)
    a = pnp.abs(x)
    nearest = lax.convert_element_type(lax.convert_element_type(a, dtype), wide)
    up = lax.convert_element_type(lax.convert_element_type(nearest * (1 + f), dtype), wide)
    down = lax.convert_element_type(lax.convert_element_type(nearest * (1 - f), dtype), wide)
    up, down = pnp.maximum(up, nearest + tiny), pnp.minimum(down, nearest - tiny)
    lo = pnp.where(nearest <= a, nearest, down)
    hi = pnp.where(nearest <= a, up, nearest)
    p = (a - lo) / (hi - lo)
    pick = pnp.where(random.uniform(key, x.shape, wide) < p, hi, lo)
    exact = (nearest == a) | ~pnp.isfinite(a) | ~pnp.isfinite(hi)
    return pnp.where(exact, x, pnp.copysign(pick, x))


add_examples(globals(), """
Policy:
    >>> policy = pto.mixed_precision.get_policy('params=float32,compute=bfloat16,output=float32')
    >>> policy.compute_dtype
    dtype(bfloat16)
get_policy:
    >>> policy = pto.mixed_precision.get_policy('params=float32,compute=float16,output=float32')
    >>> policy.param_dtype, policy.compute_dtype
    (dtype('float32'), dtype('float16'))
cast:
    >>> pto.mixed_precision.cast(pnp.array([1.0, 70000.0]), pnp.float16)
    Array([ 1., inf], dtype=float16)
cast_to_full:
    >>> pto.mixed_precision.cast_to_full({'w': pnp.ones(2, dtype=pnp.bfloat16), 'n': 3})
    {'n': 3, 'w': Array([1., 1.], dtype=float32)}
cast_to_half:
    >>> pto.mixed_precision.cast_to_half({'w': pnp.ones(2), 'step': pnp.array(1)})
    {'step': Array(1, dtype=int32, weak_type=True), 'w': Array([1, 1], dtype=bfloat16)}
NoOpLossScale:
    >>> pto.mixed_precision.NoOpLossScale().scale(pnp.array(2.0))
    Array(2., dtype=float32, weak_type=True)
StaticLossScale:
    >>> pto.mixed_precision.StaticLossScale(pnp.array(128.0)).scale(pnp.array(2.0))
    Array(256., dtype=float32)
DynamicLossScale:
    >>> ls = pto.mixed_precision.DynamicLossScale(pnp.array(1024.0))
    >>> ls.adjust(pnp.array(False)).loss_scale
    Array(512., dtype=float32, weak_type=True)
all_finite:
    >>> pto.mixed_precision.all_finite({'a': pnp.ones(2), 'b': pnp.array([1.0, pnp.inf])})
    Array(False, dtype=bool)
select_tree:
    >>> pto.mixed_precision.select_tree(pnp.array(True), {'w': pnp.ones(2)}, {'w': pnp.zeros(2)})
    {'w': Array([1., 1.], dtype=float32)}
""")
