"""BFGS (Nocedal & Wright, "Numerical Optimization", algorithm 6.1) as a ``while_loop``:
search direction ``-H g``, a strong-Wolfe line search (``line_search.py``), the inverse
Hessian update ``H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T`` (skipped when
``rho = 1 / y.s`` is not finite), stopping when ``|g|_norm < gtol``. The state, counters and
status codes are JAX's ``jax.scipy.optimize`` BFGS's (status 0 converged, 1 too many
iterations, 2 + the line search's status when it failed, -1 otherwise)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.api import value_and_grad
from ptojax.scipy.optimize.line_search import line_search


class BFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def _dot(a, b):
    return pnp.dot(a, b, precision=lax.Precision.HIGHEST)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimize ``fun`` (a scalar function of a 1-D array) from ``x0`` with BFGS."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    x0 = pnp.asarray(x0)
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = BFGSResults(
        converged=pnp.linalg.norm(g_0, ord=norm) < gtol, failed=pnp.array(False),
        k=pnp.array(0), nfev=pnp.array(1), ngev=pnp.array(1), nhev=pnp.array(0), x_k=x0,
        f_k=f_0, g_k=g_0, H_k=pnp.eye(d, dtype=x0.dtype),
        old_old_fval=f_0 + pnp.linalg.norm(g_0) / 2, status=pnp.array(0),
        line_search_status=pnp.array(0))

    def keep_going(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def step(s):
        p_k = -_dot(s.H_k, s.g_k)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                         gfk=s.g_k, maxiter=line_search_maxiter)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - s.g_k
        rho = pnp.reciprocal(_dot(y_k, s_k))
        w = pnp.eye(d, dtype=rho.dtype) - rho * s_k[:, None] * y_k[None, :]
        H = pnp.einsum("ij,jk,lk", w, s.H_k, w, precision=lax.Precision.HIGHEST) \
            + rho * s_k[:, None] * s_k[None, :]
        return s._replace(
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed,
            line_search_status=ls.status,
            converged=pnp.linalg.norm(ls.g_k, ord=norm) < gtol, k=s.k + 1,
            x_k=s.x_k + s_k, f_k=ls.f_k, g_k=ls.g_k,
            H_k=pnp.where(pnp.isfinite(rho), H, s.H_k), old_old_fval=s.f_k)

    s = lax.while_loop(keep_going, step, state)
    status = pnp.where(s.converged, 0,
                       pnp.where(s.k == maxiter, 1,
                                 pnp.where(s.failed, 2 + s.line_search_status, -1)))
    return s._replace(status=status)
