"""``ptojax.experimental.ode``: ``odeint``, JAX's adaptive Dormand-Prince (RK45) integrator.

Each step is one Dormand-Prince 5(4) Runge-Kutta step (seven stages, the last one reused as
the next step's first); the 4th-order embedded solution estimates the error, which accepts
or rejects the step and picks the next step size. The solution at a requested time is read
off a quartic fitted to the step that spans it (dense output), so the requested times do
not shorten the steps. The state may be any pytree: it is raveled to one vector.

Gradients use the adjoint method (Appendix C of https://arxiv.org/abs/1806.07366): the
backward pass integrates the state, its cotangent and the cotangents of ``t[0]`` and of the
extra arguments backwards in time, from each requested time to the one before, with this
same ``odeint``. So memory does not grow with the number of steps, and the gradients agree
with those of the exact solution up to the tolerances (not with those of the discrete
steps). Everything is written with ``lax.while_loop``/``lax.scan`` and ``custom_vjp``, so
``jit`` and ``vmap`` compose with it.

The building blocks (``runge_kutta_step``, ``interp_fit_dopri``,
``fit_4th_order_polynomial``, ``initial_step_size``, ``mean_error_ratio``,
``optimal_step_size``, ``abs2``) are public here as in ``jax.experimental.ode``; they work
on one flat state vector.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from ptojax import dtypes
from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.api import vjp
from ptojax.autodiff.closure import closure_convert
from ptojax.autodiff.custom_derivatives import custom_vjp
from ptojax.batching.api import vmap
from ptojax.eval.array import Array
from ptojax.flatten_util import ravel_pytree as _ravel_pytree
from ptojax.jit import jit
from ptojax.numpy._promote import promote_inexact
from ptojax.public import dir_function
from ptojax.trace import Tracer
from ptojax.tree_util import tree_leaves as _tree_leaves, tree_map as _tree_map

# The Dormand-Prince 5(4) tableau: stage times, stage weights, the 5th-order solution and
# the difference between the 5th- and 4th-order solutions (the error estimate).
_STAGE_TIMES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1.)
_STAGE_WEIGHTS = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0))
_SOLUTION = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_ERROR = (35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
# Weights of the stages giving the solution at the middle of a step (Shampine's dense output).
_MIDPOINT = (6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
             -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
             -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step of ``dy/dt = func(y, t)`` from ``(t0, y0)`` of size ``dt``,
    with ``f0 = func(y0, t0)``: ``(y1, f1, y1_error, k)``, the 5th-order solution, the
    derivative there, the error estimate and the seven stage derivatives (``k[0] = f0``).

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import ode
        >>> y0 = pnp.array([1.0])
        >>> y1, f1, err, k = ode.runge_kutta_step(lambda y, t: -y, y0, -y0, 0.0, pnp.array(0.1))
        >>> print(pnp.round(y1, 6), k.shape)
        [0.904837] (7, 1)
    """
    dt = pnp.asarray(dt)
    step = dt.astype(f0.dtype)
    stage_times = pnp.array(_STAGE_TIMES, dtype=dt.dtype)
    weights = pnp.array(_STAGE_WEIGHTS, dtype=f0.dtype)

    def stage(i, k):
        yi = y0 + step * pnp.dot(weights[i - 1], k)
        return k.at[i].set(func(yi, t0 + dt * stage_times[i - 1]))

    k = pnp.zeros((7,) + f0.shape, f0.dtype).at[0].set(f0)
    k = lax.fori_loop(1, 7, stage, k)
    y1 = step * pnp.dot(pnp.array(_SOLUTION, dtype=f0.dtype), k) + y0
    y1_error = step * pnp.dot(pnp.array(_ERROR, dtype=f0.dtype), k)
    return y1, k[-1], y1_error, k


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    """The coefficients ``(a, b, c, d, e)`` (highest power first) of the quartic ``p`` on
    ``[0, 1]`` with ``p(0) = y0``, ``p(1) = y1``, ``p(1/2) = y_mid``, and slopes ``dt * dy0``
    and ``dt * dy1`` at the ends.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import ode
        >>> one = pnp.array(1.0)
        >>> print(pnp.stack(ode.fit_4th_order_polynomial(0 * one, one, 0.5 * one, one, one, one)))
        [0. 0. 0. 1. 0.]
    """
    dt = pnp.asarray(dt).astype(y0.dtype)
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    return a, b, c, dt * dy0, y0


def interp_fit_dopri(y0, y1, k, dt):
    """The quartic interpolating a Dormand-Prince step (from ``runge_kutta_step``'s stages
    ``k``): an array of its five coefficients, highest power first, for ``pnp.polyval`` at
    the fraction of the step.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import ode
        >>> y0 = pnp.array([1.0])
        >>> y1, _, _, k = ode.runge_kutta_step(lambda y, t: -y, y0, -y0, 0.0, pnp.array(0.1))
        >>> coeffs = ode.interp_fit_dopri(y0, y1, k, pnp.array(0.1))
        >>> print(pnp.round(pnp.polyval(coeffs, 0.5), 6))
        [0.951229]
    """
    dt = pnp.asarray(dt)
    y_mid = y0 + dt.astype(y0.dtype) * pnp.dot(pnp.array(_MIDPOINT, dtype=y0.dtype), k)
    return pnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """A first step size for a method of ``order`` (Hairer, Norsett and Wanner, *Solving
    Ordinary Differential Equations I*, sec. II.4), from the sizes of ``y0``, of
    ``f0 = fun(y0, t0)`` and of the change of ``fun`` over a trial step.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import ode
        >>> y0 = pnp.array([1.0])
        >>> h = ode.initial_step_size(lambda y, t: -y, 0.0, y0, 4, 1e-6, 1e-6, -y0)
        >>> print(pnp.round(h, 6))
        0.028854
    """
    y0, f0 = promote_inexact("initial_step_size", y0, f0)
    scale = (atol + pnp.abs(y0) * rtol).astype(y0.dtype)
    d0 = pnp.linalg.norm(y0 / scale)
    d1 = pnp.linalg.norm(f0 / scale)
    h0 = pnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = pnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = pnp.where((d1 <= 1e-15) & (d2 <= 1e-15), pnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / pnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return pnp.minimum(100. * h0, h1)


def abs2(x):
    """``|x|**2`` elementwise, without a square root for complex ``x``.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import ode
        >>> print(ode.abs2(pnp.array([3 + 4j, 2])))
        [25.  4.]
    """
    if pnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    """The root mean square of ``error_estimate`` relative to the tolerance
    ``atol + rtol * max(|y0|, |y1|)``: a step is accepted when it is at most 1.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import ode
        >>> print(ode.mean_error_ratio(pnp.array([1e-6, 3e-6]), 0.0, 1e-6, pnp.ones(2), pnp.ones(2)))
        2.236068
    """
    tolerance = atol + rtol * pnp.maximum(pnp.abs(y0), pnp.abs(y1))
    ratio = error_estimate / tolerance.astype(error_estimate.dtype)
    return pnp.sqrt(pnp.mean(abs2(ratio)))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2,
                      order=5.0):
    """The next step size after a step of ``last_step`` with error ratio
    ``mean_error_ratio``: scaled by ``safety * ratio**(-1/order)``, at most ``ifactor``
    times larger, and, after a rejected step (ratio above 1), at most ``1/dfactor`` times
    smaller (an accepted step never shrinks it).

    Example:
        >>> from ptojax.experimental import ode
        >>> print(ode.optimal_step_size(0.1, 0.5))
        0.10338285
    """
    dfactor = pnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = pnp.minimum(ifactor,
                         pnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor))
    return pnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """The solution of ``dy/dt = func(y, t, *args)`` with ``y(t[0]) = y0`` at the times
    ``t``, by adaptive Dormand-Prince Runge-Kutta steps, as ``jax.experimental.ode.odeint``.

    Args:
      func: the time derivative, ``func(y, t, *args)``, of ``y``'s structure.
      y0: the initial state, a floating array or a pytree of them.
      t: a floating array of strictly increasing times; ``t[0]`` is where ``y0`` holds.
      *args: extra arguments for ``func`` (arrays, scalars or pytrees of them); the
        gradient flows to them.
      rtol, atol: relative and absolute local error tolerances.
      mxstep: the most steps to take between two requested times (then the solution is
        returned where the integration stopped).
      hmax: the largest step.

    Returns:
      ``y0``'s structure with a leading axis of ``len(t)``: the solution at each time.
      Differentiable (by the adjoint method) in ``y0``, ``t`` and ``args``.

    Example:
        >>> import ptojax.numpy as pnp
        >>> from ptojax.experimental import ode
        >>> ys = ode.odeint(lambda y, t, k: -k * y, pnp.array(1.0), pnp.array([0.0, 1.0]), 2.0)
        >>> print(pnp.round(ys, 6))
        [1.       0.135335]
    """
    for arg in _tree_leaves(args):
        if not _is_array_leaf(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg!r}.")
    if not hasattr(t, "dtype"):
        raise TypeError(f"odeint's t must be an array of floats, but got a {type(t).__name__}: "
                        f"{t!r}; pass ptojax.numpy.array(t).")
    if not dtypes.issubdtype(t.dtype, np.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    for leaf in _tree_leaves(y0):
        if not dtypes.is_inexact(pnp.asarray(leaf).dtype):
            raise TypeError(f"odeint's y0 must hold floating (or complex) arrays, but it holds "
                            f"one of dtype {pnp.asarray(leaf).dtype}; pass y0 as floats, e.g. "
                            f"ptojax.numpy.asarray(y0, float).")
    converted, consts = closure_convert(func, y0, t[0], *args)
    if not consts:  # nothing traced closed over: func itself, so repeated calls reuse the trace
        converted = func
    return _odeint_pytree(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _is_array_leaf(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex))


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_pytree(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """``odeint`` on a pytree state: ravel it, integrate the vector, unravel each row."""
    flat_y0, unravel = _ravel_pytree(y0)

    def flat_func(y, t, *args):
        return _ravel_pytree(func(unravel(y), t, *args))[0]

    return vmap(unravel)(_odeint(flat_func, rtol, atol, mxstep, hmax, flat_y0, ts, *args))


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """Integrate the flat state ``y0`` to each of ``ts[1:]``: a scan over the requested
    times, each one a while loop of steps until the last accepted step passes it."""
    def dynamics(y, t):
        return func(y, t, *args)

    def advance(carry, target_t):
        def unfinished(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, f, t, dt, last_t, coeffs = state
            next_y, next_f, error, k = runge_kutta_step(dynamics, y, f, t, dt)
            ratio = mean_error_ratio(error, rtol, atol, y, next_y)
            next_dt = pnp.clip(optimal_step_size(dt, ratio), min=0., max=hmax)
            accepted = (i + 1, next_y, next_f, t + dt, next_dt, t,
                        interp_fit_dopri(y, next_y, k, dt))
            rejected = (i + 1, y, f, t, next_dt, last_t, coeffs)
            return tuple(pnp.where(ratio <= 1., a, r) for a, r in zip(accepted, rejected))

        _, *carry = lax.while_loop(unfinished, step, (0, *carry))
        _, _, t, _, last_t, coeffs = carry
        fraction = (target_t - last_t) / (t - last_t)
        return carry, pnp.polyval(coeffs, fraction.astype(coeffs.dtype))

    f0 = dynamics(y0, ts[0])
    dt = pnp.clip(initial_step_size(dynamics, ts[0], y0, 4, rtol, atol, f0), min=0., max=hmax)
    coeffs = pnp.stack([y0] * 5)
    _, ys = lax.scan(advance, [y0, f0, ts[0], dt, ts[0], coeffs], ts[1:])
    return pnp.concatenate((y0[None], ys))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, residuals, g):
    """The adjoint pass: from the last requested time back to the first, integrate the
    state with its cotangent and the cotangents of ``t[0]`` and ``args`` backwards (in
    negated time, so that ``odeint``'s times increase), adding each output's cotangent
    ``g[i]`` where the pass crosses ``t[i]``; the cotangent of ``t[i]`` is ``f(y_i) . g_i``."""
    ys, ts, args = residuals

    def augmented(state, minus_t, *args):
        y, y_bar, *_ = state
        y_dot, pullback = vjp(func, y, -minus_t, *args)
        return (-y_dot, *pullback(y_bar))

    def back(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = pnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        solved = odeint(augmented, (ys[i], y_bar, t0_bar, args_bar),
                        pnp.stack([-ts[i], -ts[i - 1]]), *args,
                        rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        _, y_bar, t0_bar, args_bar = _tree_map(operator.itemgetter(1), solved)
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    start = (g[-1], pnp.zeros((), ts.dtype), _tree_map(pnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), ts_bar = lax.scan(back, start, pnp.arange(len(ts) - 1, 0, -1))
    return (y_bar, pnp.concatenate([t0_bar[None], ts_bar[::-1]]), *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)

__all__ = ["abs2", "fit_4th_order_polynomial", "initial_step_size", "interp_fit_dopri",
           "mean_error_ratio", "odeint", "optimal_step_size", "runge_kutta_step"]
__dir__ = dir_function(__all__)
