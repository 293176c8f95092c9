"""Tensor-parallel (Megatron-style) training of a residual MLP with ``pto.shard``.

Each block is ``x + relu(x @ W1 + b1) @ W2 + b2``. W1 is split by columns and W2 by rows over
the 'model' axis, so the hidden activations never leave their device: the forward pass of a
block needs exactly one all-reduce (after the row-parallel matmul), and the backward pass one
more for each block whose input gradient is needed (not the first: its input is data). The batch is split over the 'data' axis of a 2-D mesh when there are devices to spare.
The sharded losses match single-device training step for step.

    python examples/train_tensor_parallel.py
    mpiexec -n 2 python examples/train_tensor_parallel.py
"""
from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

P = pto.P


def init_params(rng, dim, hidden, blocks):
    return [dict(w1=(rng.normal(size=(dim, hidden)) / np.sqrt(dim)).astype(np.float32),
                 b1=np.zeros(hidden, np.float32),
                 w2=(rng.normal(size=(hidden, dim)) / np.sqrt(hidden)).astype(np.float32),
                 b2=np.zeros(dim, np.float32)) for _ in range(blocks)]


# Megatron: column-parallel first matmul, row-parallel second one
BLOCK_SPECS = dict(w1=P(None, "model"), b1=P("model"), w2=P("model", None), b2=P())


def model(params, x):
    for p in params:
        x = x + pnp.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]
    return x


def loss_fn(params, x, y):
    return pnp.mean((model(params, x) - y) ** 2)


def train_step(params, x, y, lr=0.05):
    loss, grads = pto.value_and_grad(loss_fn)(params, x, y)
    return pto.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


def collective_summary(fn, *args) -> str:
    """The collectives of the per-device program ``fn`` compiles to."""
    closed = pto.make_ir(fn)(*args)
    body = next(e for e in closed.eqns if e.prim.name == "shard_map").params["body"]
    counts = Counter((e.prim.name, e.params["axes"]) for e in body.eqns
                     if getattr(e.prim, "collective", False) and e.prim.name != "axis_index")
    return ", ".join(f"{n} x {name} over {axes}" for (name, axes), n in sorted(counts.items()))


def main(steps=20, model_parallel=None, dim=32, hidden=128, blocks=2, batch=32):
    if pto.distributed.launched_by_mpiexec():
        pto.distributed.initialize()
    n = pto.device_count()
    model_parallel = model_parallel or min(4, n)
    mesh = pto.make_mesh((n // model_parallel, model_parallel), ("data", "model"))
    rng = np.random.default_rng(0)
    params = init_params(rng, dim, hidden, blocks)
    x = rng.normal(size=(batch, dim)).astype(np.float32)
    y = np.sin(x) + 0.1 * rng.normal(size=x.shape).astype(np.float32)

    specs = [BLOCK_SPECS] * blocks
    step = pto.shard(train_step, mesh=mesh, in_specs=(specs, P("data"), P("data")),
                     out_specs=(specs, P()))
    forward = pto.shard(model, mesh=mesh, in_specs=(specs, P("data")), out_specs=P("data"))
    reference = pto.jit(train_step)
    talk = pto.process_index() == 0
    if talk:
        print(f"mesh {mesh} over {pto.process_count()} process(es)")
        print(f"forward per device:       {collective_summary(forward, params, x)}")
        print(f"training step per device: {collective_summary(step, params, x, y)}")
    ref_params = params
    for i in range(steps):
        params, loss = step(params, x, y)
        ref_params, ref_loss = reference(ref_params, x, y)
        np.testing.assert_allclose(float(loss), float(ref_loss), rtol=1e-4)
        if talk and (i % 5 == 0 or i == steps - 1):
            print(f"step {i:3d}  loss {float(loss):.6f}  single device {float(ref_loss):.6f}")
    if talk:
        print("losses match single-device training")
    return float(loss)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=20, help="training steps")
    parser.add_argument("--model-parallel", type=int, default=None, 
                        help="devices along the model axis (None: min(4, device count))")
    args = parser.parse_args()
    main(args.steps, args.model_parallel)
