"""Train a small decoder-only transformer block end to end with ptojax.

One pre-norm block (causal multi-head self-attention, then a GELU MLP, both residual) between
a token + position embedding and a tied output projection, trained with Adam on synthetic
arithmetic sequences: each sequence starts anywhere and counts up by a step of 1, 2 or 3
(mod the vocabulary), so predicting the next token needs the context — the step is only
visible from earlier tokens. The whole update (forward, gradient, Adam) is one
``pto.jit``-ed function.

    python examples/transformer_block.py                   # 300 steps
    python examples/transformer_block.py --steps 20 --dim 16
"""
from __future__ import annotations

import argparse

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp


def counting_sequences(rng, batch: int, length: int, vocab: int):
    """int32 [batch, length + 1]: start + step * position (mod vocab), step in {1, 2, 3}."""
    start = rng.integers(0, vocab, (batch, 1))
    step = rng.integers(1, 4, (batch, 1))
    return ((start + step * np.arange(length + 1)) % vocab).astype(np.int32)


def init_params(rng, vocab: int, length: int, dim: int, heads: int):
    def dense(m, n):
        return (rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32)
    ones, zeros = np.ones(dim, np.float32), np.zeros(dim, np.float32)
    return {"embed": (0.2 * rng.normal(size=(vocab, dim))).astype(np.float32),
            "position": (0.2 * rng.normal(size=(length, dim))).astype(np.float32),
            "norm1": {"scale": ones, "bias": zeros}, "norm2": {"scale": ones, "bias": zeros},
            "qkv": dense(dim, 3 * dim), "out": dense(dim, dim),
            "up": dense(dim, 4 * dim), "down": dense(4 * dim, dim)}


def attention(params, x, heads: int):
    """Causal multi-head self-attention of x [batch, length, dim]."""
    batch, length, dim = x.shape
    q, k, v = pnp.split(x @ params["qkv"], 3, axis=-1)

    def split_heads(t):
        return t.reshape(batch, length, heads, dim // heads).transpose(0, 2, 1, 3)
    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dim // heads).astype(np.float32)
    causal = np.tril(np.ones((length, length), bool))
    weights = pto.nn.softmax(pnp.where(causal, scores, -1e9), axis=-1)
    mixed = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, dim)
    return mixed @ params["out"]


def decoder_block(params, x, heads: int):
    h = pto.nn.layer_norm(x, params["norm1"]["scale"], params["norm1"]["bias"])
    x = x + attention(params, h, heads)
    h = pto.nn.layer_norm(x, params["norm2"]["scale"], params["norm2"]["bias"])
    return x + pto.nn.gelu(h @ params["up"]) @ params["down"]


def next_token_logits(params, tokens, heads: int):
    x = params["embed"][tokens] + params["position"][: tokens.shape[1]]
    return decoder_block(params, x, heads) @ params["embed"].T


def loss_fn(params, sequences, heads: int):
    inputs, targets = sequences[:, :-1], sequences[:, 1:]
    log_probs = pto.nn.log_softmax(next_token_logits(params, inputs, heads), axis=-1)
    picked = pnp.take_along_axis(log_probs, targets[..., None], axis=-1)
    return -pnp.mean(picked)


def make_train_step(heads: int, lr: float = 3e-3, b1: float = 0.9, b2: float = 0.99,
                    eps: float = 1e-8):
    """One Adam step: (params, moments, step, batch) -> (params, moments, loss)."""
    tree_map = pto.tree_util.tree_map

    @pto.jit
    def train_step(params, moments, step, sequences):
        loss, grads = pto.value_and_grad(loss_fn)(params, sequences, heads)
        first, second = moments
        first = tree_map(lambda m, g: b1 * m + (1 - b1) * g, first, grads)
        second = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, second, grads)
        scale = lr * pnp.sqrt(1 - b2 ** step) / (1 - b1 ** step)
        params = tree_map(lambda p, m, v: p - scale * m / (pnp.sqrt(v) + eps),
                          params, first, second)
        return params, (first, second), loss
    return train_step


def main(steps: int = 300, dim: int = 32, heads: int = 2, length: int = 12, vocab: int = 16,
         batch: int = 32):
    rng = np.random.default_rng(0)
    params = init_params(rng, vocab, length, dim, heads)
    zeros = pto.tree_util.tree_map(np.zeros_like, params)
    moments = (zeros, zeros)
    train_step = make_train_step(heads)
    losses = []
    bar = pto.tools.progress(range(1, steps + 1), desc="train")
    for step in bar:
        sequences = counting_sequences(rng, batch, length, vocab)
        params, moments, loss = train_step(params, moments, np.float32(step), sequences)
        losses.append(float(loss))
        bar.set(loss=losses[-1])
    held_out = counting_sequences(np.random.default_rng(1), 256, length, vocab)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} (uniform guessing: {np.log(vocab):.4f}); "
          f"held-out loss {float(loss_fn(params, held_out, heads)):.4f}")
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    parser.add_argument("--dim", type=int, default=32, help="model width")
    parser.add_argument("--heads", type=int, default=2, help="attention heads")
    parser.add_argument("--length", type=int, default=12, help="sequence length")
    parser.add_argument("--batch", type=int, default=32, help="sequences per batch")
    args = parser.parse_args()
    main(args.steps, args.dim, args.heads, args.length, batch=args.batch)
