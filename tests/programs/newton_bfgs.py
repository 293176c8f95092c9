"""Second-order minimisation in plain Python loops on eager arrays, exercising what JAX's
examples/newton_method.py and bfgs_method.py do (our own code): ``jax.grad`` and
``jax.hessian`` of a function indexing its argument, the Newton direction
``-inv(H).dot(g.T).reshape(1, -1)``, a bisecting Wolfe line search whose tests are Python
``if``s on one-element arrays (``g.dot(d.T)`` of a vector and a column), ``jnp.abs`` of
Python floats, ``jnp.linalg.norm`` against a tolerance, in-place ``+=`` on arrays with a
Python-float step, and a BFGS update of the Hessian approximation from the rows ``s`` and
``y``: outer products ``(y.T).dot(y)``, ``hs.dot(hs.T)`` over ``s.dot(y.T)``, ``s.dot(hs)``. The iterates and values are returned, and the log lines
formatted with ``str.format`` of arrays."""
import jax


def freudenstein_roth_pairs(x):
    """Freudenstein and Roth's function of (x0, x1), plus the same of (x2, x3)."""
    total = 0.
    for a, b in ((x[0], x[1]), (x[2], x[3])):
        total = total + (-13 + a + ((5 - b) * b - 2) * b) ** 2 \
            + (-29 + a + ((b + 1) * b - 14) * b) ** 2
    return total


def coupled_quartic(x):
    """A smooth function of four coordinates with one well-conditioned minimum."""
    return (x[0] - 1.) ** 4 + (x[0] - 2. * x[1]) ** 2 + (x[2] + .5) ** 2 * (1. + x[3] ** 2) \
        + (x[3] - 1.) ** 2 + 0.1 * x[1] * x[3]


def step_length(fun, slope0, x, direction, c1=0.25, c2=0.6, low=0., high=2., tol=1e-3):
    """A step satisfying the Wolfe conditions, by bisection of [low, high]."""
    alpha = 1.
    f0 = fun(x)
    while low < high:
        trial = x + (alpha * direction)[0]
        if fun(trial) <= f0 + c1 * alpha * slope0.dot(direction.T):
            if jax.grad(fun)(trial).dot(direction.T) >= c2 * slope0.dot(direction.T):
                break
            low = alpha
        else:
            high = alpha
        alpha = 0.5 * (low + high)
        if jax.numpy.abs(low - high) < tol:
            break
    return alpha


def newton(fun, start, tol=1e-5, max_steps=20):
    x = jax.numpy.array(start)
    path, log = [x], []
    for k in range(max_steps):
        g = jax.grad(fun)(x)
        h = jax.hessian(fun)(x)
        direction = -jax.numpy.linalg.inv(h).dot(g.T).reshape(1, -1)
        log.append('{}\t{}\t{}'.format(x, fun(x), k))
        if jax.numpy.linalg.norm(direction) < tol:
            break
        x += step_length(fun, g, x, direction) * direction[0]
        path.append(x)
    return path, log


def bfgs(fun, start, tol=1e-5, max_steps=40):
    """Quasi-Newton: the exact Hessian once, then BFGS updates of it."""
    x = jax.numpy.array(start)
    h = jax.hessian(fun)(x)
    g = jax.grad(fun)(x)
    path, values = [x], [fun(x)]
    for _ in range(max_steps):
        direction = -jax.numpy.linalg.inv(h).dot(g.T).reshape(1, -1)
        if jax.numpy.linalg.norm(direction) < tol:
            break
        s = step_length(fun, g, x, direction) * direction
        x += s[0]
        g_new = jax.grad(fun)(x)
        y = (g_new - g).reshape(1, -1)
        hs = h.dot(s.T)
        if y.any() and (s.dot(y.T) > 0).all():
            h += (y.T).dot(y) / s.dot(y.T) - hs.dot(hs.T) / s.dot(hs)
        g = g_new
        path.append(x)
        values.append(fun(x))
    return path, values


def main(start):
    start = [float(v) for v in start]
    newton_path, log = newton(freudenstein_roth_pairs, start)
    bfgs_path, bfgs_values = bfgs(coupled_quartic, start)
    quadratic = lambda x: (x[0] - 1.) ** 2 + 10. * (x[1] + 2.) ** 2 + x[0] * x[1]
    return (newton_path, [len(line.split('\t')) for line in log], bfgs_path, bfgs_values,
            newton(coupled_quartic, start)[0], newton(quadratic, [0., 0.])[0])
