"""Differentiating through a smoke simulation, in the style of JAX's examples/fluidsim.py
(after autograd's fluidsim, after Stam's "Real-Time Fluid Dynamics for Games"): velocity
projection by Jacobi sweeps of ``np.roll`` stencils from ``np.zeros(vx.shape)``, and
semi-Lagrangian advection that interpolates a field at back-traced cell centres (``meshgrid``
of ``arange``, ``floor().astype(int)``, ``np.mod`` wrap-around, gathers ``f[rows, cols]`` with
two index arrays, ``reshape``), stepped by a Python loop. The initial velocity field is
fitted so that the smoke ends near a target image: ``value_and_grad`` of the mean squared
distance, flattened parameters in one vector, minimised by ``scipy.optimize.minimize``
(conjugate gradients, ``jac=True``, a callback) on NumPy float64 vectors. Plotting is left
out; the images are synthetic (no files are read) and ``device_put`` on the device."""
import numpy as onp
from scipy.optimize import minimize

import jax.numpy as np
from jax import device_put, jit, value_and_grad


def project(vx, vy):
    h = 1.0 / vx.shape[0]
    div = -0.5 * h * (np.roll(vx, -1, axis=0) - np.roll(vx, 1, axis=0)
                      + np.roll(vy, -1, axis=1) - np.roll(vy, 1, axis=1))
    p = np.zeros(vx.shape)
    for _ in range(10):
        p = (div + np.roll(p, 1, axis=0) + np.roll(p, -1, axis=0)
             + np.roll(p, 1, axis=1) + np.roll(p, -1, axis=1)) / 4.0
    vx = vx - 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy = vy - 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def interpolate(f, xs, ys):
    rows, cols = f.shape
    left, top = np.floor(xs).astype(int), np.floor(ys).astype(int)
    right_w, bottom_w = xs - left, ys - top
    left, top = np.mod(left, rows), np.mod(top, cols)
    right, bottom = np.mod(left + 1, rows), np.mod(top + 1, cols)
    return ((1 - right_w) * ((1 - bottom_w) * f[left, top] + bottom_w * f[left, bottom])
            + right_w * ((1 - bottom_w) * f[right, top] + bottom_w * f[right, bottom]))


def advect(f, vx, vy):
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    flat = interpolate(f, (cell_xs - vx).ravel(), (cell_ys - vy).ravel())
    return np.reshape(flat, (rows, cols))


def simulate(vx, vy, smoke, num_steps):
    for _ in range(num_steps):
        vx, vy = project(advect(vx, vx, vy), advect(vy, vx, vy))
        smoke = advect(smoke, vx, vy)
    return smoke


def blob(n, cx, cy, width):
    i, j = onp.mgrid[0:n, 0:n]
    return onp.exp(-((i - cx) ** 2 + (j - cy) ** 2) / (2 * width**2)).astype(onp.float32)


def main(n=12, num_steps=4, maxiter=3):
    init_smoke = device_put(blob(n, n / 3, n / 2, n / 8))
    target = device_put(blob(n, 2 * n / 3, n / 2, n / 6))

    def objective(params):
        vx = np.reshape(params[: n * n], (n, n))
        vy = np.reshape(params[n * n:], (n, n))
        return np.mean((target - simulate(vx, vy, init_smoke, num_steps)) ** 2)

    objective_with_grad = jit(value_and_grad(objective))
    start = 0.05 * onp.sin(onp.arange(2 * n * n) / 7.0)
    losses = []
    result = minimize(objective_with_grad, start, jac=True, method="CG",
                      options={"maxiter": maxiter}, callback=lambda p: losses.append(
                          float(objective_with_grad(p)[0])))
    loss0, grad0 = objective_with_grad(start)
    return loss0, grad0, onp.array(losses, onp.float32), result.x.astype(onp.float32)
