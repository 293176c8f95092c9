"""Post-training int8 quantization of an MLP classifier, with ``pto.quant``.

An MLP (float32, ReLU) is trained on a synthetic 8-class problem; its weights are then
quantized to int8 with one scale per output channel, and each layer runs as
``quantized_matmul``: the activations are quantized per tensor on the fly, the int8 x int8
products accumulate exactly in int32 on the cube, and the dequantization (x the two scales)
plus bias and ReLU run in the kernel's epilogue. The script reports the accuracy of both
models, how often they agree and the largest logit error, then prints the PTO-AS of the int8
cube kernel of the first layer (for Ascend 910B; nothing here has run on an NPU) and the
cost model's estimate.

    python examples/int8_inference.py
    python examples/int8_inference.py --steps 100 --hidden 64
"""
from __future__ import annotations

import argparse
import re

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import quant

CLASSES, FEATURES = 8, 32


def synthetic(rng, n: int):
    """Points around ``CLASSES`` random centres, passed through a fixed nonlinearity."""
    centres = np.random.default_rng(42).normal(size=(CLASSES, FEATURES)) * 0.6
    labels = rng.integers(0, CLASSES, n)
    x = centres[labels] + rng.normal(size=(n, FEATURES))
    return np.tanh(x).astype(np.float32), labels.astype(np.int32)


def init(rng, sizes):
    return [{"w": (rng.normal(size=(m, n)) * np.sqrt(2 / m)).astype(np.float32),
             "b": np.zeros(n, np.float32)} for m, n in zip(sizes[:-1], sizes[1:])]


def mlp(params, x):
    for layer in params[:-1]:
        x = pto.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, labels):
    log_probs = pto.nn.log_softmax(mlp(params, x))
    return -pnp.mean(pnp.sum(log_probs * pto.nn.one_hot(labels, CLASSES), axis=-1))


@pto.jit
def sgd_step(params, x, labels):
    loss, grads = pto.value_and_grad(loss_fn)(params, x, labels)
    return pto.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


def quantize_params(params):
    """int8 weights, one scale per output channel (column); biases stay float32."""
    return [{"w": quant.quantize(layer["w"], pto.int8, axis=1), "b": layer["b"]}
            for layer in params]


def int8_layer(x, w, b, relu=True):
    y = quant.quantized_matmul(x, w) + b
    return pto.nn.relu(y) if relu else y


def int8_mlp(qparams, x):
    for layer in qparams[:-1]:
        x = int8_layer(x, layer["w"], layer["b"])
    return int8_layer(x, qparams[-1]["w"], qparams[-1]["b"], relu=False)


def cube_kernel_pto_as(text: str) -> str:
    """The int8 cube kernel's signature, operand tiles and matmul instructions."""
    kernel = re.split(r"(?=  // kernel )", text)
    cube = next(k for k in kernel if "(cube)" in k)
    keep = re.compile(r"// kernel|func\.func|loc=(left|right|acc)|pto\.tmatmul|pto\.tmov")
    lines = [line.strip() for line in cube.splitlines() if keep.search(line)]
    return "\n".join("    " + (line if len(line) < 160 else line[:157] + "...")
                     for line in dict.fromkeys(lines))


def main(steps=400, hidden=128, batch=256):
    rng = np.random.default_rng(0)
    params = init(rng, [FEATURES, hidden, hidden, CLASSES])
    first = None
    for _ in range(steps):
        x, labels = synthetic(rng, batch)
        params, loss = sgd_step(params, x, labels)
        first = float(loss) if first is None else first
    test_x, test_y = synthetic(rng, 2000)
    final = float(loss_fn(params, test_x, test_y))
    print(f"float32 training: loss {first:.4f} -> {final:.4f}")

    qparams = quantize_params(params)
    f32_logits = np.asarray(pto.jit(mlp)(params, test_x))
    int8_logits = np.asarray(pto.jit(int8_mlp)(qparams, test_x))
    f32_pred, int8_pred = f32_logits.argmax(1), int8_logits.argmax(1)
    print(f"accuracy on {len(test_y)} held-out points: float32 {np.mean(f32_pred == test_y):.2%}"
          f", int8 {np.mean(int8_pred == test_y):.2%}; predictions agree on "
          f"{np.mean(f32_pred == int8_pred):.2%}")
    err = np.abs(int8_logits - f32_logits).max() / np.abs(f32_logits).max()
    print(f"largest int8 logit error: {err:.2%} of the largest logit")
    weight_bytes = sum(p["w"].nbytes for p in params)
    qweight_bytes = sum(np.asarray(q["w"].values).nbytes for q in qparams)
    print(f"weights: {weight_bytes} bytes in float32, {qweight_bytes} bytes in int8 (+ scales)")

    lowered = pto.jit(int8_layer).lower(test_x[:batch], qparams[0]["w"], qparams[0]["b"],
                                        target=pto.targets.ascend910b)
    print("\nPTO-AS of the first layer's int8 cube kernel (untested on Ascend hardware):")
    print(cube_kernel_pto_as(lowered.as_text("pto")))
    print()
    print(lowered.cost())
    return np.mean(f32_pred == test_y), np.mean(int8_pred == test_y)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    main(args.steps, args.hidden, args.batch)
