"""A mixture-of-experts layer with top-2 gating, trained on synthetic data, run with vmap and
expert-parallel over a mesh axis with ``all_to_all``.

The layer (GShard/Switch style): a softmax gate picks each token's two best experts with
``lax.top_k`` and renormalises their weights; each expert has a buffer of ``capacity`` slots
and a token's slot is its rank among the tokens routed there (first choices before second
choices; tokens past capacity are dropped). Dispatch is a scatter into the ``[experts,
capacity, dim]`` buffers, each expert is a two-layer MLP applied to its buffer (batched
matmuls), and combine is a gather from the buffers weighted by the gate. The load-balancing
loss is Switch's ``experts * sum(fraction routed * mean gate probability)``.

Expert parallelism: with the tokens and the experts split over the mesh axis 'expert', each
device routes its own tokens into buffers for all experts, one ``all_to_all`` sends every
expert's slots to the device holding that expert, the experts run locally, and a second
``all_to_all`` brings the results back for the combine. Its losses and gradients equal those
of the single-device layer applied to each device's tokens.

    python examples/moe.py
    PTOJAX_NUM_DEVICES=4 python examples/moe.py --steps 20
"""
from __future__ import annotations

import argparse
import math
from collections import Counter

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax

P = pto.P
TOP_K = 2


def init(rng, dim, hidden, experts):
    return {"gate": (rng.normal(size=(dim, experts)) * 0.1).astype(np.float32),
            "w1": (rng.normal(size=(experts, dim, hidden)) / np.sqrt(dim)).astype(np.float32),
            "b1": np.zeros((experts, hidden), np.float32),
            "w2": (rng.normal(size=(experts, hidden, dim)) / np.sqrt(hidden)).astype(
                np.float32)}


def capacity(tokens: int, experts: int, factor: float = 1.5) -> int:
    return max(1, math.ceil(factor * tokens * TOP_K / experts))


def route(gate_w, x):
    """Gate probabilities [T, E], and each token's two experts [T, 2] with their weights."""
    probs = pto.nn.softmax(x @ gate_w)
    weight, expert = lax.top_k(probs, TOP_K)
    return probs, weight / pnp.sum(weight, axis=-1, keepdims=True), expert


def slots(expert, experts: int):
    """Each (token, choice)'s rank among the entries routed to its expert, first choices of
    all tokens before second choices."""
    tokens = expert.shape[0]
    chosen = pto.nn.one_hot(expert.T.reshape(-1), experts, dtype=np.int32)  # choice-major
    rank = pnp.sum((pnp.cumsum(chosen, axis=0) - 1) * chosen, axis=-1)
    return rank.reshape(TOP_K, tokens).T


def dispatch(x, expert, slot, experts: int, cap: int):
    """Scatter tokens into ``[experts, cap, dim]`` buffers (entries past capacity drop)."""
    updates = pnp.broadcast_to(x[:, None, :], (*expert.shape, x.shape[-1]))
    return pnp.zeros((experts, cap, x.shape[-1]), x.dtype).at[expert, slot].add(updates)


def run_experts(params, buffers):
    """Each expert's MLP on its buffer: [E, C, D] -> [E, C, D] (leading batch of any rank)."""
    h = pto.nn.relu(pnp.einsum("...ecd,edh->...ech", buffers, params["w1"])
                    + params["b1"][:, None, :])
    return pnp.einsum("...ech,ehd->...ecd", h, params["w2"])


def combine(outputs, expert, slot, weight, cap: int):
    """Gather each token's expert outputs and weight them (dropped entries count 0)."""
    kept = (slot < cap).astype(outputs.dtype)
    picked = outputs[expert, pnp.minimum(slot, cap - 1)]                   # [T, 2, D]
    return pnp.sum(picked * (weight * kept)[..., None], axis=1)


def balance_loss(probs, expert):
    experts = probs.shape[-1]
    routed = pnp.mean(pto.nn.one_hot(expert[:, 0], experts), axis=0)
    return experts * pnp.sum(routed * pnp.mean(probs, axis=0))


def moe(params, x):
    """The layer on one device: outputs [T, D] and the load-balancing loss."""
    experts = params["gate"].shape[-1]
    cap = capacity(x.shape[0], experts)
    probs, weight, expert = route(params["gate"], x)
    slot = slots(expert, experts)
    outputs = run_experts(params, dispatch(x, expert, slot, experts, cap))
    return combine(outputs, expert, slot, weight, cap), balance_loss(probs, expert)


def moe_expert_parallel(params, x):
    """The layer inside ``shard_map``: ``x`` holds this device's tokens, the expert weights
    this device's experts; two all_to_alls move the buffers to the experts and back."""
    devices = lax.axis_size("expert")
    experts = params["gate"].shape[-1]
    cap = capacity(x.shape[0], experts)
    probs, weight, expert = route(params["gate"], x)
    slot = slots(expert, experts)
    buffers = dispatch(x, expert, slot, experts, cap)
    buffers = buffers.reshape(devices, experts // devices, cap, x.shape[-1])
    buffers = lax.all_to_all(buffers, "expert", 0, 0)      # [source device, local experts]
    outputs = lax.all_to_all(run_experts(params, buffers), "expert", 0, 0)
    outputs = outputs.reshape(experts, cap, x.shape[-1])
    return combine(outputs, expert, slot, weight, cap), balance_loss(probs, expert)


def loss_from(layer, balance_weight=0.01):
    def loss(params, x, y):
        out, balance = layer(params, x)
        return pnp.mean((out - y) ** 2) + balance_weight * balance
    return loss


def synthetic(rng, tokens, dim, clusters=4):
    """Tokens from ``clusters`` clusters, each with its own linear map to the target."""
    centres = np.random.default_rng(7).normal(size=(clusters, dim)) * 2
    maps = np.random.default_rng(8).normal(size=(clusters, dim, dim)) / np.sqrt(dim)
    c = rng.integers(0, clusters, tokens)
    x = centres[c] + rng.normal(size=(tokens, dim))
    y = np.einsum("td,tde->te", x, maps[c]) / 3
    return x.astype(np.float32), y.astype(np.float32)


EXPERT_SPECS = {"gate": P(), "w1": P("expert"), "b1": P("expert"), "w2": P("expert")}


def expert_parallel_loss(mesh):
    """The global loss (mean over devices of their tokens' loss) as one shard_map."""
    local = loss_from(moe_expert_parallel)
    return pto.shard_map(lambda p, x, y: lax.pmean(local(p, x, y), "expert"), mesh=mesh,
                         in_specs=(EXPERT_SPECS, P("expert"), P("expert")), out_specs=P())


def per_device_reference(devices):
    """The same loss computed on one device, shard by shard."""
    single = loss_from(moe)

    def loss(params, x, y):
        xs, ys = pnp.split(x, devices), pnp.split(y, devices)
        return sum(single(params, a, b) for a, b in zip(xs, ys)) / devices
    return loss


def collectives(fn, *args) -> str:
    """The collectives of the per-device programs (shard_map bodies) of ``fn``."""
    counts = Counter(e.prim.name for outer in pto.make_ir(fn)(*args).eqns
                     if outer.prim.name == "shard_map" for e in outer.params["body"].eqns
                     if getattr(e.prim, "collective", False))
    return ", ".join(f"{n} x {name}" for name, n in sorted(counts.items()))


def sgd(params, grads, lr):
    return pto.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


def main(steps=60, dim=16, hidden=32, experts=8, tokens=128, lr=0.1):
    devices = pto.device_count()
    if experts % devices or tokens % devices:
        raise SystemExit(f"experts ({experts}) and tokens ({tokens}) must divide over "
                         f"{devices} devices")
    rng = np.random.default_rng(0)
    params = init(rng, dim, hidden, experts)
    mesh = pto.make_mesh((devices,), ("expert",))
    parallel_loss = expert_parallel_loss(mesh)
    reference_loss = per_device_reference(devices)
    step = pto.jit(lambda p, x, y: (lambda lg: (sgd(p, lg[1], lr), lg[0]))(
        pto.value_and_grad(parallel_loss)(p, x, y)))
    reference = pto.jit(pto.value_and_grad(reference_loss))

    x, y = synthetic(rng, tokens, dim)
    print(f"{experts} experts over {devices} device(s), top-{TOP_K} routing, capacity "
          f"{capacity(tokens // devices, experts)} per expert per device")
    print(f"expert-parallel loss per device: {collectives(parallel_loss, params, x, y)}; "
          f"its gradient: {collectives(pto.grad(parallel_loss), params, x, y)}")
    first = None
    for i in range(steps):
        x, y = synthetic(rng, tokens, dim)
        ref_loss, ref_grads = reference(params, x, y)
        expected = sgd(params, ref_grads, lr)
        params, loss = step(params, x, y)
        np.testing.assert_allclose(float(loss), float(ref_loss), rtol=1e-4)
        for got, want in zip(pto.tree_util.tree_leaves(params),
                             pto.tree_util.tree_leaves(expected)):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
        first = float(loss) if first is None else first
        if i % 10 == 0 or i == steps - 1:
            print(f"step {i:3d}  loss {float(loss):.5f}  (single device, shard by shard: "
                  f"{float(ref_loss):.5f}; updates equal)")
    test_x, test_y = synthetic(rng, tokens, dim)
    final = float(reference_loss(params, test_x, test_y))
    print(f"loss {first:.4f} -> {final:.4f} on held-out tokens")

    # vmap: the layer over a batch of independent sequences equals a loop over them
    sequences = np.stack([synthetic(rng, 32, dim)[0] for _ in range(3)])
    batched, _ = pto.vmap(moe, in_axes=(None, 0))(params, sequences)
    looped = np.stack([np.asarray(moe(params, s)[0]) for s in sequences])
    np.testing.assert_allclose(np.asarray(batched), looped, rtol=1e-5, atol=1e-5)
    routed = np.bincount(np.asarray(route(params["gate"], test_x)[2]).ravel(), minlength=experts)
    print(f"vmap over {len(sequences)} sequences matches a loop; entries routed per expert "
          f"on held-out tokens: {routed.tolist()}")
    return first, final


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=128)
    args = parser.parse_args()
    main(args.steps, args.dim, args.hidden, args.experts, args.tokens)
