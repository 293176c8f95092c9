"""``pto.scipy.optimize``: JAX's ``jax.scipy.optimize``: ``minimize`` with
``method="BFGS"`` (``bfgs.py``, with the strong-Wolfe line search of ``line_search.py``),
jit-able, gradients by ``value_and_grad``; results as JAX's ``OptimizeResults``."""
from __future__ import annotations

from typing import NamedTuple

from ptojax.public import add_examples, dir_function
from ptojax.scipy.optimize.bfgs import minimize_bfgs


class OptimizeResults(NamedTuple):
    """The result of ``minimize``: the solution ``x``, ``success``, ``status`` (0 converged,
    1 too many iterations, 2 + the line search's code when it failed, -1 otherwise), ``fun``
    and ``jac`` at ``x``, the inverse Hessian estimate ``hess_inv``, the counts of function
    and gradient evaluations ``nfev``/``njev`` and of iterations ``nit``."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def minimize(fun, x0, args=(), *, method, tol=None, options=None) -> OptimizeResults:
    """Minimize ``fun(x, *args)`` (a scalar) over the 1-D array ``x`` from ``x0``, as
    ``jax.scipy.optimize.minimize``; ``method`` must be ``"BFGS"``; ``options`` are the
    solver's (``maxiter``, ``norm``, ``gtol``, ``line_search_maxiter``)."""
    options = {} if options is None else dict(options)
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got "
                        f"{args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized (ptojax has 'BFGS')")
    r = minimize_bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                           fun=r.f_k, jac=r.g_k, hess_inv=r.H_k, nfev=r.nfev, njev=r.ngev,
                           nit=r.k)


__all__ = ["OptimizeResults", "minimize"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
minimize:
    >>> from ptojax.scipy.optimize import minimize
    >>> r = minimize(lambda x: pnp.sum((x - 2.0) ** 2), pnp.zeros(2), method="BFGS")
    >>> r.x, bool(r.success)
    (Array([2., 2.], dtype=float32), True)
OptimizeResults:
    >>> from ptojax.scipy.optimize import minimize
    >>> r = minimize(lambda x: pnp.sum(x ** 2), pnp.ones(1), method="BFGS")
    >>> int(r.status), int(r.nit), r.fun
    (0, 2, Array(0., dtype=float32))
""")
