"""LAPACK's Householder reflectors (``larfg``) as array operations, for the ``scipy.linalg``
functions whose results depend on LAPACK's conventions: ``hessenberg`` (``gehrd``) and the
complex QR of ``qr_multiply`` (``geqrf``; ptojax's QR primitive is real only).

A reflector ``H = I - tau v v^H`` with ``v[start] = 1`` maps the column ``x`` (its entries
from ``start`` on) to ``beta e_start``, ``beta = -sign(re x_start) |x|`` real; it is the
identity (``tau = 0``) when the entries below ``start`` are 0 and ``x_start`` is real. The
index ``start`` may be traced (a ``fori_loop`` counter).
"""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.control_flow import fori_loop


def reflector(column, start):
    """``(v, tau)`` of LAPACK's reflector for ``column``'s entries from ``start`` on."""
    index = pnp.arange(column.shape[0])
    alpha = column[start]
    below = pnp.where(index > start, column, 0)
    tail = pnp.sqrt(pnp.sum(pnp.abs(below) ** 2))
    identity = (tail == 0) & (pnp.imag(alpha) == 0)
    beta = -pnp.where(pnp.real(alpha) >= 0, 1, -1) * pnp.sqrt(pnp.abs(alpha) ** 2 + tail ** 2)
    beta = pnp.where(identity, 1, beta)
    tau = pnp.where(identity, 0, (beta - alpha) / beta).astype(column.dtype)
    v = pnp.where(index == start, 1, below / pnp.where(identity, 1, alpha - beta))
    return v.astype(column.dtype), tau


def reflect_left(a, v, tau):
    """``H^H a``."""
    return a - pnp.conj(tau) * pnp.outer(v, pnp.conj(v) @ a)


def reflect_right(a, v, tau):
    """``a H``."""
    return a - tau * pnp.outer(a @ v, pnp.conj(v))


def householder_qr(a):
    """``(q, r)`` of one ``(m, n)`` matrix as LAPACK's ``geqrf`` and ``ungqr`` give them:
    ``q`` ``(m, m)`` unitary, ``r`` ``(m, n)`` upper triangular with a real diagonal."""
    m, n = a.shape

    def step(j, state):
        r, q = state
        v, tau = reflector(r[:, j], j)
        return reflect_left(r, v, tau), reflect_right(q, v, tau)

    r, q = fori_loop(0, min(m, n), step, (a, pnp.eye(m, dtype=a.dtype)))
    return q, pnp.triu(r)
