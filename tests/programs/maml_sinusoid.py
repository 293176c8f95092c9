"""Model-agnostic meta-learning on sine tasks, as JAX's MAML tutorial does it: the meta loss
differentiates through one inner SGD step (a gradient of a gradient), is vmapped over a batch
of tasks, and trains with a hand-written Adam under jit (the tasks and initial weights come
from numpy). JAX style, program tests."""
import jax
import jax.numpy as jnp

INNER_LR = 0.1


def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


def adapted(params, x, y):
    return jax.tree.map(lambda p, g: p - INNER_LR * g, params, jax.grad(loss)(params, x, y))


def maml_loss(params, x1, y1, x2, y2):
    return loss(adapted(params, x1, y1), x2, y2)


def batch_maml_loss(params, x1, y1, x2, y2):
    return jnp.mean(jax.vmap(maml_loss, in_axes=(None, 0, 0, 0, 0))(params, x1, y1, x2, y2))


@jax.jit
def step(i, params, moments, tasks):
    value, grads = jax.value_and_grad(batch_maml_loss)(params, *tasks)
    m, v = moments
    m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    t = i + 1
    params = jax.tree.map(lambda p, m, v: p - 1e-2 * (m / (1 - 0.9 ** t))
                          / (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-8), params, m, v)
    return params, (m, v), value


@jax.jit
def adapted_predictions(params, x1, y1, grid):
    return predict(adapted(params, x1, y1), grid)


def main(params, x, y):
    """``params``: the MLP's (w, b) layers; ``x``, ``y``: (steps, 2, tasks, shots, 1) samples
    of sine tasks, split into inner (0) and outer (1) sets; the last step's adapts only."""
    derivatives = [jax.grad(jax.grad(jax.grad(f)))(v) for f, v in ((jnp.exp, 1.0),
                                                                   (jnp.square, 2.0))]
    params = [tuple(map(jnp.asarray, layer)) for layer in params]
    moments = jax.tree.map(jnp.zeros_like, (params, params))
    values = []
    for i in range(len(x) - 1):
        params, moments, value = step(i, params, moments, (x[i, 0], y[i, 0], x[i, 1], y[i, 1]))
        values.append(value)
    grid = jnp.linspace(-5, 5, 7)[:, None]
    return derivatives, jnp.stack(values), adapted_predictions(params, x[-1, 0, 0], y[-1, 0, 0],
                                                               grid)
