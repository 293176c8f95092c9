"""Train an MLP classifier on synthetic 2-D spirals with ``pto.jit(pto.value_and_grad(...))``.

Three interleaved spiral arms, one class each; an MLP with tanh hidden layers learns to
separate them with SGD + momentum. The training step is one jitted function: its gradient
is an IR rewrite of the loss, and the cpu backend runs its fused kernels once they are
compiled in the background.

    python examples/mlp_synthetic.py                  # 600 steps
    python examples/mlp_synthetic.py --steps 50 --hidden 32
"""
from __future__ import annotations

import argparse

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp


def spirals(rng, n_per_class: int, classes: int = 3, noise: float = 0.15):
    """Points on ``classes`` spiral arms (x: float32 [n, 2]) and their arm (int32 [n])."""
    radius = np.tile(np.linspace(0.1, 1.0, n_per_class), classes)
    arm = np.repeat(np.arange(classes), n_per_class)
    angle = 4.0 * radius + arm * 2 * np.pi / classes + rng.normal(0, noise, radius.shape)
    x = np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1)
    return x.astype(np.float32), arm.astype(np.int32)


def init_params(rng, sizes):
    return [{"w": (rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32),
             "b": np.zeros(n, np.float32)} for m, n in zip(sizes[:-1], sizes[1:])]


def logits(params, x):
    for layer in params[:-1]:
        x = pnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, labels):
    log_probs = pto.nn.log_softmax(logits(params, x), axis=-1)
    return -pnp.mean(pnp.sum(log_probs * pto.nn.one_hot(labels, log_probs.shape[-1]), axis=-1))


def make_step(lr: float, momentum: float = 0.9):
    @pto.jit
    def step(params, velocity, x, labels):
        loss, grads = pto.value_and_grad(loss_fn)(params, x, labels)
        velocity = pto.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
        params = pto.tree_util.tree_map(lambda p, v: p - lr * v, params, velocity)
        return params, velocity, loss
    return step


def accuracy(params, x, labels) -> float:
    return float(np.mean(np.argmax(np.asarray(pto.jit(logits)(params, x)), axis=1) == labels))


def main(steps: int = 600, hidden: int = 64, n_per_class: int = 300, lr: float = 0.05):
    rng = np.random.default_rng(0)
    x, labels = spirals(rng, n_per_class)
    params = init_params(rng, [2, hidden, hidden, 3])
    velocity = pto.tree_util.tree_map(np.zeros_like, params)
    step = make_step(lr)
    first = None
    bar = pto.tools.progress(range(steps), desc="train")
    for _ in bar:
        params, velocity, loss = step(params, velocity, x, labels)
        first = float(loss) if first is None else first
        bar.set(loss=float(loss))
    final = float(loss_fn(params, x, labels))
    print(f"loss {first:.4f} -> {final:.4f}; training accuracy "
          f"{accuracy(params, x, labels):.1%} on {len(labels)} points")
    return first, final


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=600, help="training steps")
    parser.add_argument("--hidden", type=int, default=64, help="hidden layer width")
    parser.add_argument("--points-per-class", type=int, default=300,
                        help="synthetic points per class")
    args = parser.parse_args()
    main(args.steps, args.hidden, args.points_per_class)
