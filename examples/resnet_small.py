"""Train a small ResNet on synthetic 32x32 images in bfloat16 with ``pto.nn.conv``, pooling
and batch norm.

Four classes of RGB images — horizontal stripes, vertical stripes, a checkerboard and a
centred blob, each with a random phase, colour and noise. The network is a 3x3 stem, a max
pool, two residual stages (the second strided, with a 1x1 projection shortcut), global
average pooling and a dense layer; every convolution is followed by batch norm (batch
statistics while training, running averages for evaluation) and ReLU. A mixed-precision
policy keeps the parameters in float32, computes in bfloat16 (convolutions accumulate in
float32; batch norm statistics are float32) and returns float32 logits.

    python examples/resnet_small.py                      # 60 steps, batch 32, width 16
    python examples/resnet_small.py --steps 5 --batch 8 --width 8 --size 16
"""
from __future__ import annotations

import argparse

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

POLICY = pto.mixed_precision.get_policy("params=float32,compute=bfloat16,output=float32")
CLASSES = 4


def synthetic_images(rng, n: int, size: int):
    """``n`` images (float32 [n, size, size, 3]) and their classes (int32 [n])."""
    labels = rng.integers(0, CLASSES, n).astype(np.int32)
    yy, xx = np.mgrid[0:size, 0:size] / size
    images = np.empty((n, size, size, 3), np.float32)
    for i, c in enumerate(labels):
        phase, freq = rng.uniform(0, 2 * np.pi), rng.uniform(3, 5)
        pattern = [np.sin(2 * np.pi * freq * yy + phase), np.sin(2 * np.pi * freq * xx + phase),
                   np.sign(np.sin(2 * np.pi * freq * yy) * np.sin(2 * np.pi * freq * xx)),
                   np.exp(-((yy - 0.5) ** 2 + (xx - 0.5) ** 2) * 20) * 2 - 0.5][c]
        colour = rng.uniform(0.5, 1.0, 3)
        images[i] = pattern[..., None] * colour + rng.normal(0, 0.3, (size, size, 3))
    return images, labels


def _conv_params(rng, k, cin, cout):
    return {"w": (rng.normal(size=(k, k, cin, cout)) * np.sqrt(2 / (k * k * cin))).astype(
        np.float32), "scale": np.ones(cout, np.float32), "bias": np.zeros(cout, np.float32)}


def init(rng, width: int):
    """Parameters and batch-norm state (running mean and variance per conv)."""
    params = {"stem": _conv_params(rng, 3, 3, width),
              "a1": _conv_params(rng, 3, width, width), "a2": _conv_params(rng, 3, width, width),
              "b1": _conv_params(rng, 3, width, 2 * width),
              "b2": _conv_params(rng, 3, 2 * width, 2 * width),
              "proj": _conv_params(rng, 1, width, 2 * width),
              "dense": {"w": (rng.normal(size=(2 * width, CLASSES)) / np.sqrt(2 * width)).astype(
                  np.float32), "b": np.zeros(CLASSES, np.float32)}}
    state = {name: {"mean": np.zeros(p["w"].shape[-1], np.float32),
                    "var": np.ones(p["w"].shape[-1], np.float32)}
             for name, p in params.items() if name != "dense"}
    return params, state


def conv_bn(p, stats, x, train: bool, strides=1, momentum=0.9):
    """conv -> batch norm (statistics in float32), returning the new running statistics."""
    y = pto.nn.conv(x, p["w"], strides=strides, padding="SAME")
    y32 = y.astype(np.float32)
    if train:
        mean, var = pnp.mean(y32, axis=(0, 1, 2)), pnp.var(y32, axis=(0, 1, 2))
        stats = {"mean": momentum * stats["mean"] + (1 - momentum) * pto.lax.stop_gradient(mean),
                 "var": momentum * stats["var"] + (1 - momentum) * pto.lax.stop_gradient(var)}
    else:
        mean, var = stats["mean"], stats["var"]
    y32 = (y32 - mean) * pto.lax.rsqrt(var + 1e-5) * p["scale"] + p["bias"]
    return y32.astype(y.dtype), stats


def forward(params, state, images, train: bool):
    """Logits (float32) and the new batch-norm state."""
    params, x = POLICY.cast_to_compute((params, images))
    new = {}
    x, new["stem"] = conv_bn(params["stem"], state["stem"], x, train)
    x = pto.nn.max_pool(pto.nn.relu(x), (2, 2), strides=(2, 2))
    h, new["a1"] = conv_bn(params["a1"], state["a1"], pto.nn.relu(x), train)
    h, new["a2"] = conv_bn(params["a2"], state["a2"], pto.nn.relu(h), train)
    x = x + h
    h, new["b1"] = conv_bn(params["b1"], state["b1"], pto.nn.relu(x), train, strides=2)
    h, new["b2"] = conv_bn(params["b2"], state["b2"], pto.nn.relu(h), train)
    shortcut, new["proj"] = conv_bn(params["proj"], state["proj"], x, train, strides=2)
    x = pto.nn.relu(shortcut + h)
    pooled = pto.nn.avg_pool(x, x.shape[1:3])[:, 0, 0]          # global average pooling
    logits = pooled @ params["dense"]["w"] + params["dense"]["b"]
    return POLICY.cast_to_output(logits), new


def loss_fn(params, state, images, labels):
    logits, new_state = forward(params, state, images, train=True)
    log_probs = pto.nn.log_softmax(logits)
    loss = -pnp.mean(pnp.sum(log_probs * pto.nn.one_hot(labels, CLASSES), axis=-1))
    return loss, new_state


def make_step(lr: float, momentum: float = 0.9):
    @pto.jit
    def step(params, velocity, state, images, labels):
        (loss, state), grads = pto.value_and_grad(loss_fn, has_aux=True)(
            params, state, images, labels)
        velocity = pto.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
        params = pto.tree_util.tree_map(lambda p, v: p - lr * v, params, velocity)
        return params, velocity, state, loss
    return step


def accuracy(params, state, images, labels) -> float:
    logits, _ = pto.jit(forward, static_argnums=3)(params, state, images, False)
    return float(np.mean(np.argmax(np.asarray(logits), axis=1) == labels))


def main(steps=60, batch=32, width=16, size=32, lr=0.05):
    rng = np.random.default_rng(0)
    params, state = init(rng, width)
    velocity = pto.tree_util.tree_map(np.zeros_like, params)
    test_x, test_y = synthetic_images(rng, 4 * batch, size)
    step = make_step(lr)
    print(f"policy {POLICY}; {sum(p.size for p in pto.tree_util.tree_leaves(params))} "
          f"parameters; images {size}x{size}x3, batch {batch}")
    first = None
    bar = pto.tools.progress(range(steps), desc="train")
    for _ in bar:
        images, labels = synthetic_images(rng, batch, size)
        params, velocity, state, loss = step(params, velocity, state, images, labels)
        first = float(loss) if first is None else first
        bar.set(loss=float(loss))
    final, _ = loss_fn(params, state, test_x, test_y)
    print(f"loss {first:.4f} -> {float(final):.4f}; held-out accuracy "
          f"{accuracy(params, state, test_x, test_y):.1%} on {len(test_y)} images")
    return first, float(final)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    main(args.steps, args.batch, args.width, args.size, args.lr)
