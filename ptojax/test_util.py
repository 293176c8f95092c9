"""``pto.test_util``: check derivatives against finite differences, as ``jax.test_util``.

``check_grads(f, args, order)`` checks forward mode (``jvp`` against a central difference in
a random direction), reverse mode (``<vjp(w), t>`` against ``<w, jvp(t)>`` with the numerical
``jvp``) and, for ``order > 1``, the same of the derivative functions. Tolerances default to
JAX's per-dtype gradient tolerances (float32: 2e-3, float64: 1e-5), scaled by the number of
elements as JAX scales them; random directions come from ``numpy.random.RandomState(0)``.
"""
from __future__ import annotations

import functools

import numpy as np

from ptojax import dtypes
from ptojax.autodiff.api import jvp, linearize, vjp
from ptojax.pytree import tree_leaves, tree_map, tree_reduce

EPS = 1e-4
# JAX's default_gradient_tolerance
GRADIENT_TOLERANCE = {np.dtype(dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
                      np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5}


def _dtype(x) -> np.dtype:
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if isinstance(x, (bool, int, float)):
        return dtypes.python_scalar_dtype(x)
    return np.asarray(x).dtype


def _tolerance(dtype, tol) -> float:
    if tol is None:
        tol = GRADIENT_TOLERANCE
    if not isinstance(tol, dict):
        return tol
    table = {**GRADIENT_TOLERANCE, **{np.dtype(k): v for k, v in tol.items()}}
    return table.get(np.dtype(dtype), 0.0)


def _assert_leaf_close(a, b, atol, rtol, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    atol = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol))
    rtol = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol))
    if a.dtype == dtypes.bfloat16 or b.dtype == dtypes.bfloat16:  # numpy cannot compare it
        a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, atol=atol * a.size, rtol=rtol * b.size, err_msg=what)


def _check_close(xs, ys, atol, rtol, what):
    tree_map(lambda a, b: _assert_leaf_close(a, b, atol, rtol, what), xs, ys)


def _check_dtypes_match(xs, ys, what):
    def check(x, y):
        assert _dtype(x) == _dtype(y), f"{what}: dtype {_dtype(x)} != {_dtype(y)}"
    tree_map(check, xs, ys)


def _random_like(rng, x):
    value = np.asarray(rng.randn(*np.shape(x)), _dtype(x))
    return value.item() if isinstance(x, (bool, int, float)) else value


def _step(xs, ts, sign, eps):
    """``xs + sign * eps * ts``, leaf by leaf, in each leaf's dtype."""
    def step(x, t):
        dtype = _dtype(x)
        out = np.add(np.asarray(x, dtype), np.asarray(sign * eps, dtype) * np.asarray(t, dtype),
                     dtype=dtype)
        return out.item() if isinstance(x, (bool, int, float)) else out
    return tree_map(step, xs, ts)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """The central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, in the dtypes of
    ``f``'s outputs (equal outputs give exactly 0, so infinities do not make NaNs)."""
    plus = f(*_step(primals, tangents, 1.0, eps))
    minus = f(*_step(primals, tangents, -1.0, eps))

    def difference(p, m):
        p, m = np.asarray(p), np.asarray(m)
        with np.errstate(invalid="ignore"):
            delta = np.where(p == m, np.zeros((), p.dtype), np.subtract(p, m, dtype=p.dtype))
        return np.multiply(delta, np.asarray(0.5 / eps, p.dtype), dtype=p.dtype)
    return tree_map(difference, plus, minus)


def _inner_product(xs, ys) -> float:
    products = tree_map(lambda x, y: float(np.dot(np.asarray(x, np.float64).reshape(-1),
                                                  np.asarray(y, np.float64).reshape(-1))),
                        xs, ys)
    return tree_reduce(lambda a, b: a + b, products, 0.0)


def _label(prefix, what):
    return f"{prefix} {what}" if prefix else what


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check ``f_jvp(primals, tangents) -> (out, tangent out)`` against ``f`` and a central
    difference along a random tangent.

    Args:
      f: the function.
      f_jvp: its JVP, e.g. ``functools.partial(pto.jvp, f)``.
      args: the primal arguments (a tuple).
      atol: absolute tolerance (a number or a dict by dtype), default by dtype.
      rtol: relative tolerance, default by dtype.
      eps: the finite-difference step.
      err_msg: a prefix for failure messages.

    Example:
      >>> pto.test_util.check_jvp(pnp.sin, functools.partial(pto.jvp, pnp.sin), (0.5,))
    """
    tangents = tree_map(functools.partial(_random_like, np.random.RandomState(0)), args)
    out, tangent_out = f_jvp(args, tangents)
    _check_dtypes_match(out, tangent_out, _label(err_msg, "tangent dtype"))
    expected = f(*args)
    _check_dtypes_match(out, expected, _label(err_msg, "primal dtype"))
    _check_close(out, expected, atol, rtol, _label(err_msg, "primal"))
    _check_close(tangent_out, numerical_jvp(f, args, tangents, eps), atol, rtol,
                 _label(err_msg, "tangent"))


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check ``f_vjp(*args) -> (out, vjp_fn)`` against ``f``: ``<t, vjp_fn(w)>`` must equal
    ``<numerical jvp(t), w>`` for random ``t`` and ``w``.

    Args:
      f: the function.
      f_vjp: its VJP, e.g. ``functools.partial(pto.vjp, f)``.
      args: the primal arguments (a tuple).
      atol: absolute tolerance (a number or a dict by dtype), default by dtype.
      rtol: relative tolerance, default by dtype.
      eps: the finite-difference step.
      err_msg: a prefix for failure messages.

    Example:
      >>> pto.test_util.check_vjp(pnp.sin, functools.partial(pto.vjp, pnp.sin), (0.5,))
    """
    rng = np.random.RandomState(0)
    out, vjp_fn = f_vjp(*args)
    _check_close(out, f(*args), atol, rtol, _label(err_msg, "primal"))
    tangents = tree_map(functools.partial(_random_like, rng), args)
    tangent_out = numerical_jvp(f, args, tangents, eps)
    cotangents = tree_map(functools.partial(_random_like, rng), out)
    projected = _inner_product(tangents, vjp_fn(cotangents))
    expected = _inner_product(tangent_out, cotangents)
    dtype = _dtype(tree_leaves(out)[0]) if tree_leaves(out) else np.dtype(np.float32)
    _assert_leaf_close(np.asarray(projected, dtype), np.asarray(expected, dtype), atol, rtol,
                       _label(err_msg, "cotangent projection"))


def _jvp_from_linearize(f, primals, tangents):
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check the derivatives of ``f`` at ``args`` up to ``order`` against finite differences.

    Args:
      f: the function (of arrays, returning arrays or pytrees of them).
      args: its arguments (a tuple).
      order: the highest derivative order to check (1: first derivatives).
      modes: any of ``"fwd"`` (jvp), ``"rev"`` (vjp) and ``"lin"`` (linearize).
      atol: absolute tolerance (a number or a dict by dtype); default JAX's by dtype.
      rtol: relative tolerance, likewise.
      eps: the finite-difference step, default 1e-4.

    Raises:
      AssertionError: naming the failing mode (``JVP``, ``VJP of JVP``, ...) and check.

    Example:
      >>> pto.test_util.check_grads(lambda x: pnp.sin(x) * x, (np.array([0.5, 1.0]),), 2)
    """
    args, eps = tuple(args), eps or EPS

    def check(f, args, order, name):
        if "fwd" in modes:
            label = f"JVP of {name}" if name else "JVP"
            check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, label)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, label)
        if "rev" in modes:
            label = f"VJP of {name}" if name else "VJP"
            check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, label)
            if order > 1:
                def f_vjp(*primals):
                    out, vjp_fn = vjp(f, *primals)
                    return vjp_fn(out)
                check(f_vjp, args, order - 1, label)
        if "lin" in modes:
            label = f"LIN of {name}" if name else "LIN"
            check_jvp(f, functools.partial(_jvp_from_linearize, f), args, atol, rtol, eps,
                      label)
            if order > 1:
                check(functools.partial(_jvp_from_linearize, f), (args, args), order - 1,
                      label)

    check(f, args, order, "")
