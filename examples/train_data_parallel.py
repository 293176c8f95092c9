"""Data-parallel training of an MLP classifier with ``pto.shard``.

The training step is written on whole arrays; ``pto.shard`` splits the batch over every
device of the mesh, keeps the parameters replicated and inserts the all-reduces of the loss and
of each gradient. The sharded losses match single-device training step for step.

    python examples/train_data_parallel.py                 # 8 virtual devices, one process
    mpiexec -n 2 python examples/train_data_parallel.py    # one device per MPI process
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

P = pto.P


def init_params(rng, sizes):
    return [((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = pnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, labels):
    logits = predict(params, x)
    log_probs = logits - pto.nn.logsumexp(logits, axis=1, keepdims=True)
    return -pnp.mean(pnp.sum(log_probs * pto.nn.one_hot(labels, logits.shape[1]), axis=1))


def train_step(params, x, labels, lr=0.1):
    loss, grads = pto.value_and_grad(loss_fn)(params, x, labels)
    new = pto.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return new, loss


def synthetic_data(rng, n, dim, classes):
    teacher = rng.normal(size=(dim, classes)).astype(np.float32)
    x = rng.normal(size=(n, dim)).astype(np.float32)
    return x, np.argmax(x @ teacher, axis=1).astype(np.int32)


def main(steps=20, batch_per_device=16, sizes=(32, 64, 64, 10), check=True):
    if pto.distributed.launched_by_mpiexec():
        pto.distributed.initialize()
    n = pto.device_count()
    mesh = pto.make_mesh((n,), ("data",))
    rng = np.random.default_rng(0)  # the same data and parameters in every process
    params = init_params(rng, sizes)
    x, labels = synthetic_data(rng, batch_per_device * n, sizes[0], sizes[-1])

    step = pto.shard(train_step, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                     out_specs=(P(), P()))
    reference = pto.jit(train_step)
    ref_params = params
    talk = pto.process_index() == 0
    if talk:
        print(f"data parallel over {n} devices in {pto.process_count()} process(es), "
              f"global batch {x.shape[0]}")
    start = time.perf_counter()
    for i in range(steps):
        params, loss = step(params, x, labels)
        if check:
            ref_params, ref_loss = reference(ref_params, x, labels)
            np.testing.assert_allclose(float(loss), float(ref_loss), rtol=1e-4)
        if talk and (i % 5 == 0 or i == steps - 1):
            extra = f"  single device {float(ref_loss):.6f}" if check else ""
            print(f"step {i:3d}  loss {float(loss):.6f}{extra}")
    elapsed = time.perf_counter() - start
    if talk:
        print(f"{steps} steps in {elapsed:.2f} s"
              + ("; losses match single-device training" if check else ""))
    return float(loss)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=20, help="training steps")
    parser.add_argument("--batch-per-device", type=int, default=16,
                        help="examples per device in each batch")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the single-device reference (for timing)")
    args = parser.parse_args()
    main(args.steps, args.batch_per_device, check=not args.no_check)
