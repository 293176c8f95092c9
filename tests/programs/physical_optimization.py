"""Shape optimisation by gradient descent through Python control flow, in the style of JAX's
examples/physical_optimization.py (a basketball backboard): a jitted function iterates over
the rows of its argument (``zip(board, board[1:])``) and returns a nested Python list of
scalars, jitted scalar helpers take Python numbers and 0-d arrays, and the loss picks a
segment with Python ``if``/``elif``/``continue`` on comparisons of those values (chained
``a < y < b``) — under ``grad`` outside ``jit``, where the primal values are concrete — and
may return a Python float. The board is ``device_put`` from a NumPy array and updated with
``+=``; throws come from a seeded ``random.uniform``."""
import random

import numpy as onp
import jax.numpy as jnp
from jax import device_put, grad, jit

N, H_STEP, H_0, G = 12, 0.2, 10, -9.8
HOOP = (10, 8)


@jit
def segments(board):
    lines = []
    for i, (a, b) in enumerate(zip(board, board[1:])):
        x0, y0 = a + 10, -i * H_STEP + H_0
        x1, y1 = b + 10, -(i + 1) * H_STEP + H_0
        slope = (y1 - y0) / (x1 - x0)
        lines.append([slope, y1 - x1 * slope])
    return lines


@jit
def hit_times(k, l, x0, y0, vx, vy):
    c, b, a = y0 - k * x0 - l, vy - k * vx, 0.5 * G
    disc = b**2 - 4 * a * c
    t1, t2 = (-b - jnp.sqrt(disc)) / (2 * a), (-b + jnp.sqrt(disc)) / (2 * a)
    return t1, t2, y0 + vy * t1 + 0.5 * G * t1**2, y0 + vy * t2 + 0.5 * G * t2**2


@jit
def miss(t, y_hit, x0, vx, vy):
    x_hit, vy_hit = x0 + vx * t, vy + G * t
    restitution, dt = 0.81, 0.1
    x_b = x_hit - restitution * vx * dt
    y_b = y_hit - restitution * vy_hit * dt + 0.5 * G * dt**2
    return jnp.sqrt((x_b - HOOP[0]) ** 2 + (y_b - HOOP[1]) ** 2)


def bounce(board, x0, y0, vx, vy):
    for i, (k, l) in enumerate(segments(board)):
        t1, t2, y1, y2 = hit_times(k, l, x0, y0, vx, vy)
        low, high = -(i + 1) * H_STEP + H_0, -i * H_STEP + H_0
        if t1 > 0 and low < y1 < high:
            t, y_hit = t1, y1
        elif t2 > 0 and low < y2 < high:
            t, y_hit = t2, y2
        else:
            continue
        return miss(t, y_hit, x0, vx, vy)
    return 0.


def main(steps=6, seed=0):
    random.seed(seed)
    board = device_put(onp.random.RandomState(seed).rand(N))
    losses, hits = [], 0
    for _ in range(steps):
        vx, vy = random.uniform(7, 10), random.uniform(7, 10)
        losses.append(bounce(board, 0, 5, vx, vy))
        board_grad = grad(bounce, 0)(board, 0, 5, vx, vy)
        hits += bool(jnp.any(board_grad != 0))
        board += -board_grad * 0.1
    return board, jnp.array(losses), hits, segments(board)
