"""An inexact line search meeting the strong Wolfe conditions (Nocedal & Wright, "Numerical
Optimization", algorithms 3.5 and 3.6), written as ``while_loop``s so it runs under ``jit``,
with the same trial steps as JAX's ``jax.scipy.optimize`` line search: the first step from
the previous decrease (capped at 1), doubling until the minimum is bracketed, then a zoom
trying a cubic, then a quadratic interpolation, then bisection. Its counters and status
codes are JAX's (status 0 passed, 1 zoom failed, 3 too many iterations).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.api import value_and_grad


class LineSearchResults(NamedTuple):
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def _dot(a, b):
    return pnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _choose(flag, new: dict, old: dict) -> dict:
    """``old`` with the entries of ``new`` taken where ``flag`` holds."""
    return {**old, **{k: pnp.where(flag, v, old[k]) for k, v in new.items()}}


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    A = (dc ** 2 * rb - db ** 2 * rc) / denom
    B = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-B + pnp.sqrt(B * B - 3.0 * A * fpa)) / (3.0 * A)


def _quadratic_minimizer(a, fa, fpa, b, fb):
    """The minimizer of the quadratic through (a, fa) with slope fpa at a, and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curvature)


def _zoom(phi_dphi, sufficient_decrease, curvature_ok, lo, hi, g_0, skip):
    """Algorithm 3.6 between the bracket ends ``lo`` and ``hi`` (dicts a, phi, dphi);
    ``skip`` makes it return at once (the caller's other branch was taken)."""
    dtype = lo["a"].dtype
    tiny = 1e-5 if np.finfo(dtype).bits < 64 else 1e-10
    state = dict(done=pnp.array(False), failed=pnp.array(False), j=pnp.array(0),
                 a_lo=lo["a"], phi_lo=lo["phi"], dphi_lo=lo["dphi"],
                 a_hi=hi["a"], phi_hi=hi["phi"], dphi_hi=hi["dphi"],
                 a_rec=(lo["a"] + hi["a"]) / 2.0, phi_rec=(lo["phi"] + hi["phi"]) / 2.0,
                 a_star=pnp.ones((), dtype), phi_star=lo["phi"], dphi_star=lo["dphi"],
                 g_star=g_0, nfev=pnp.array(0), ngev=pnp.array(0))

    def body(s):
        width = s["a_hi"] - s["a_lo"]
        left, right = pnp.minimum(s["a_hi"], s["a_lo"]), pnp.maximum(s["a_hi"], s["a_lo"])
        s = dict(s, failed=s["failed"] | (width <= tiny))
        cubic = _cubic_minimizer(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"],
                                 s["phi_hi"], s["a_rec"], s["phi_rec"])
        use_cubic = (s["j"] > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
        quad = _quadratic_minimizer(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"],
                                    s["phi_hi"])
        use_quad = ~use_cubic & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
        a_j = pnp.where(use_cubic, cubic,
                        pnp.where(use_quad, quad, (s["a_lo"] + s["a_hi"]) / 2.0))
        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j, dphi_j = phi_j.astype(s["phi_lo"].dtype), dphi_j.astype(s["dphi_lo"].dtype)
        g_j = g_j.astype(s["g_star"].dtype)
        s = dict(s, nfev=s["nfev"] + 1, ngev=s["ngev"] + 1)
        new_hi = sufficient_decrease(a_j, phi_j) | (phi_j >= s["phi_lo"])
        accept = curvature_ok(dphi_j) & ~new_hi
        flip = (dphi_j * (s["a_hi"] - s["a_lo"]) >= 0.0) & ~new_hi & ~accept
        new_lo = ~new_hi & ~accept
        s = _choose(new_hi, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s["a_hi"],
                                 phi_rec=s["phi_hi"]), s)
        s = _choose(accept, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j),
                    dict(s, done=accept | s["done"]))
        s = _choose(flip, dict(a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"],
                               a_rec=s["a_hi"], phi_rec=s["phi_hi"]), s)
        s = _choose(new_lo & ~flip, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"]), s)
        s = _choose(new_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s)
        j = s["j"] + 1
        return dict(s, j=j, failed=s["failed"] | (j >= 30))

    return lax.while_loop(lambda s: ~s["done"] & ~skip & ~s["failed"], body, state)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20) -> LineSearchResults:
    """A step ``a_k`` along the descent direction ``pk`` from ``xk`` meeting the strong Wolfe
    conditions (sufficient decrease ``c1``, curvature ``c2``) for ``f``."""
    dtype = pnp.result_type(xk, pk, pnp.float32)
    xk, pk = pnp.asarray(xk, dtype), pnp.asarray(pk, dtype)

    def phi_dphi(t):
        value, g = value_and_grad(f)(xk + pnp.asarray(t, pk.dtype) * pk)
        return value, pnp.real(_dot(g, pk)), g

    given = old_fval is not None and gfk is not None
    if given:
        phi_0, dphi_0 = old_fval, pnp.real(_dot(gfk, pk))
    else:
        phi_0, dphi_0, gfk = phi_dphi(0.0)
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        first_step = pnp.where(candidate > 1, 1.0, candidate)
    else:
        first_step = 1.0

    def sufficient_decrease(a, phi):      # False when the Armijo condition fails
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_ok(dphi):
        return pnp.abs(dphi) <= -c2 * dphi_0

    zero = pnp.zeros((), pnp.asarray(phi_0).dtype)
    state = dict(done=pnp.array(False), failed=pnp.array(False), i=pnp.array(1),
                 a_prev=pnp.zeros((), dtype), phi_prev=phi_0 + zero, dphi_prev=dphi_0 + zero,
                 nfev=pnp.array(0 if given else 1), ngev=pnp.array(0 if given else 1),
                 a_star=pnp.zeros((), dtype), phi_star=phi_0 + zero,
                 dphi_star=dphi_0 + zero, g_star=gfk)
    keys = ("a_star", "phi_star", "dphi_star", "g_star")

    def body(s):
        a_i = pnp.where(s["i"] == 1, first_step, s["a_prev"] * 2.0).astype(dtype)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        s = dict(s, nfev=s["nfev"] + 1, ngev=s["ngev"] + 1)
        zoom_up = sufficient_decrease(a_i, phi_i) | ((phi_i >= s["phi_prev"]) & (s["i"] > 1))
        accept = curvature_ok(dphi_i) & ~zoom_up
        zoom_down = (dphi_i >= 0.0) & ~zoom_up & ~accept
        here = dict(a=a_i, phi=phi_i, dphi=dphi_i)
        prev = dict(a=s["a_prev"], phi=s["phi_prev"], dphi=s["dphi_prev"])
        z1 = _zoom(phi_dphi, sufficient_decrease, curvature_ok, prev, here, gfk, ~zoom_up)
        z2 = _zoom(phi_dphi, sufficient_decrease, curvature_ok, here, prev, gfk, ~zoom_down)
        s = dict(s, nfev=s["nfev"] + z1["nfev"] + z2["nfev"],
                 ngev=s["ngev"] + z1["ngev"] + z2["ngev"])
        s = _choose(zoom_up, {k: z1[k] for k in keys},
                    dict(s, done=zoom_up | s["done"], failed=(zoom_up & z1["failed"]) | s["failed"]))
        s = _choose(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i),
                    dict(s, done=accept | s["done"]))
        s = _choose(zoom_down, {k: z2[k] for k in keys},
                    dict(s, done=zoom_down | s["done"],
                         failed=(zoom_down & z2["failed"]) | s["failed"]))
        return dict(s, i=s["i"] + 1, a_prev=a_i, phi_prev=phi_i, dphi_prev=dphi_i)

    s = lax.while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
    status = pnp.where(s["failed"], 1, pnp.where(s["i"] > maxiter, 3, 0))
    a_k = s["a_star"]
    if np.finfo(a_k.dtype).bits != 64:    # a vanishing float32 step moves by at least 1e-8
        a_k = pnp.where(pnp.abs(a_k) < 1e-8, pnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=s["failed"] | ~s["done"], nit=s["i"] - 1, nfev=s["nfev"],
                             ngev=s["ngev"], k=s["i"], a_k=a_k, f_k=s["phi_star"],
                             g_k=s["g_star"], status=status)
