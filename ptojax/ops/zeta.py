"""The Hurwitz zeta function and the polygamma functions, as compositions of primitives (no
primitive of their own), for ``lax.zeta``/``lax.polygamma`` and ``scipy.special``'s: both
sit above this layer, and ``lax`` must not import ``scipy``.

``zeta(s, a) = sum_k (a + k)^-s`` for ``s > 1`` by Euler-Maclaurin summation: ``N`` terms
summed directly (8 in float32, 16 in float64), the tail's integral ``(a + N)^(1-s) / (s - 1)``
and ``N`` correction terms with the Bernoulli numbers (exact fractions). ``+inf`` at ``s == 1``
and at the poles ``a = 0, -1, ...``; NaN for ``s < 1`` and for negative non-integer ``a``
(unless ``s`` is an integer). ``polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x)`` for
``n >= 1``, ``digamma`` for ``n == 0``, NaN for a negative or non-integer order.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from ptojax.ops.arithmetic import add, div, floor, max, mul, neg, sub
from ptojax.ops.logic import bitwise_and, bitwise_not, bitwise_or, eq, le, lt, ne, select
from ptojax.ops.slicing import full_like
from ptojax.ops.special import digamma, lgamma
from ptojax.ops.transcendental import exp, pow

_TERMS = {"float32": 8, "float64": 16}


@functools.lru_cache(maxsize=None)
def bernoulli_numbers(n: int) -> tuple:
    """``B_0 .. B_n`` as Fractions, with ``B_1 = -1/2`` (the Akiyama-Tanigawa algorithm,
    which gives ``B_1 = +1/2``; the sign is flipped)."""
    row, out = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    if n >= 1:
        out[1] = -out[1]
    return tuple(out)


def euler_maclaurin_coefficients(terms: int) -> list:
    """``B_2j / (2j)!`` for j = 1..terms."""
    b = bernoulli_numbers(2 * terms)
    return [float(b[2 * j] / math.factorial(2 * j)) for j in range(1, terms + 1)]


def _euler_maclaurin(s, a):
    n = _TERMS.get(np.dtype(s.dtype).name, 8)
    head = full_like(s, 0.0)
    for k in range(n):
        head = add(head, pow(add(a, float(k)), neg(s)))
    tail_start = add(a, float(n))
    integral = div(pow(tail_start, sub(1.0, s)), sub(s, 1.0))
    rising = div(s, tail_start)            # s (s+1) ... (s+2j-2) / (a+N)^(2j-1)
    corrections = full_like(s, 0.5)
    for j, c in enumerate(euler_maclaurin_coefficients(n), 1):
        corrections = add(corrections, mul(c, rising))
        for m in (2 * j - 1, 2 * j):
            rising = mul(rising, div(add(s, float(m)), tail_start))
    return add(add(head, integral), mul(pow(tail_start, neg(s)), corrections))


def _is_integer(x):
    return eq(x, floor(x))


def _isnan(x):
    return ne(x, x)


def zeta(s, a):
    """``zeta(s, a)`` of float arrays of one dtype and shape (see the module)."""
    value = _euler_maclaurin(s, a)
    pole = bitwise_or(eq(s, 1.0), bitwise_and(le(a, 0.0), _is_integer(a)))
    value = select(pole, full_like(value, np.inf), value)
    undefined = bitwise_or(lt(s, 1.0), bitwise_and(lt(a, 0.0), bitwise_and(
        bitwise_not(_is_integer(a)), bitwise_not(_is_integer(s)))))
    undefined = bitwise_or(undefined, bitwise_or(_isnan(s), _isnan(a)))
    return select(undefined, full_like(value, np.nan), value)


def polygamma(n, x):
    """``polygamma(n, x)`` of float arrays of one dtype and shape (see the module)."""
    order = max(n, 1.0)
    odd = eq(sub(order, mul(2.0, floor(mul(order, 0.5)))), 1.0)
    sign = select(odd, full_like(order, 1.0), full_like(order, -1.0))
    higher = mul(mul(sign, exp(lgamma(add(order, 1.0)))), zeta(add(order, 1.0), x))
    out = select(eq(n, 0.0), digamma(x), higher)
    bad = bitwise_or(lt(n, 0.0), bitwise_not(_is_integer(n)))
    return select(bad, full_like(out, np.nan), out)
