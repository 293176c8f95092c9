"""Training on sentences of varying length: padding to the maximum, bucketing by length, or one
symbolic length dimension.

A bag-of-embeddings classifier with a small self-attention layer is trained for an epoch on
synthetic sentences of 4 to ``--max-len`` tokens. Batches are formed after sorting by length
(so a batch's sentences have similar lengths) and padded, with a mask, in one of three ways:

- **pad to max**: every batch padded to ``--max-len``: one compile, the most padding;
- **buckets**: padded to the next power of two: one compile per bucket used;
- **symbolic**: padded only to the batch's own longest sentence, with the length declared
  ``pto.Dim("length", 1, max_len)``: one compile, the least padding.

The mask makes the three compute the same losses; the table shows compiles, padding and time.

    python examples/variable_length_batches.py
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import nn


def make_data(rng, n, max_len, vocab):
    lengths = rng.integers(4, max_len + 1, size=n)
    sentences = [rng.integers(1, vocab, size=k) for k in lengths]
    # the label: whether the sentence has more small tokens than large ones
    labels = np.array([int((s < vocab // 2).sum() * 2 > len(s)) for s in sentences])
    return sentences, labels


def init_params(rng, vocab, dim):
    def dense(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    return dict(embed=(rng.standard_normal((vocab, dim)) * 0.3).astype(np.float32),
                qk=dense(dim, 2 * dim), hidden=dense(dim, dim), out=dense(dim, 2))


def loss_fn(params, tokens, mask, labels):
    """Cross-entropy of a masked self-attention + mean-pooling classifier."""
    x = params["embed"][tokens]                                   # [batch, length, dim]
    q, k = pnp.split(x @ params["qk"], 2, axis=-1)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(np.float32(x.shape[-1]))
    scores = pnp.where(mask[:, None, :], scores, -1e9)            # padding is never attended
    x = x + nn.softmax(scores, axis=-1) @ x
    pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    logits = pnp.tanh(pooled @ params["hidden"]) @ params["out"]
    return -pnp.mean(nn.log_softmax(logits)[pnp.arange(labels.shape[0]), labels])


def train_step(params, tokens, mask, labels):
    loss, grads = pto.value_and_grad(loss_fn)(params, tokens, mask, labels)
    return loss, pto.tree_util.tree_map(lambda p, g: p - 2.0 * g, params, grads)


def batches(sentences, labels, batch, pad_to):
    order = np.argsort([len(s) for s in sentences], kind="stable")
    for start in range(0, len(order) - batch + 1, batch):
        idx = order[start:start + batch]
        width = pad_to(max(len(sentences[i]) for i in idx))
        tokens = np.zeros((batch, width), np.int32)
        mask = np.zeros((batch, width), np.float32)
        for row, i in enumerate(idx):
            tokens[row, :len(sentences[i])] = sentences[i]
            mask[row, :len(sentences[i])] = 1
        yield tokens, mask, labels[idx].astype(np.int32)


def run(name, step, params, data, pad_to):
    start, losses, padded, real = time.perf_counter(), [], 0, 0
    (sentences, labels), batch = data
    for tokens, mask, labels in batches(sentences, labels, batch, pad_to):
        loss, params = step(params, tokens, mask, labels)
        losses.append(float(loss))
        padded, real = padded + mask.size, real + int(mask.sum())
    elapsed = time.perf_counter() - start
    return dict(name=name, time=elapsed, compiles=step.cache_size(),
                padding=1 - real / padded, losses=losses)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--sentences", type=int, default=2048, help="training sentences")
    ap.add_argument("--batch", type=int, default=32, help="sentences per batch")
    ap.add_argument("--max-len", type=int, default=200, help="longest sentence")
    ap.add_argument("--vocab", type=int, default=512, help="vocabulary size")
    ap.add_argument("--dim", type=int, default=32, help="embedding width")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    data = make_data(rng, args.sentences, args.max_len, args.vocab)
    params = init_params(rng, args.vocab, args.dim)
    data = (data[0], data[1]), args.batch
    length = pto.Dim("length", 1, args.max_len)
    dynamic = {"tokens": {1: length}, "mask": {1: length}}
    results = [
        run("pad to max", pto.jit(train_step), params, data, lambda n: args.max_len),
        run("buckets (powers of 2)", pto.jit(train_step), params, data,
            lambda n: min(1 << (n - 1).bit_length(), args.max_len)),
        run("symbolic length", pto.jit(train_step, dynamic=dynamic), params, data,
            lambda n: n),
    ]
    print(f"{args.sentences} sentences of 4..{args.max_len} tokens, batches of {args.batch} "
          f"sorted by length, one epoch:")
    print(f"{'strategy':<24}{'compiles':>9}{'padding':>9}{'time':>10}{'first loss':>12}"
          f"{'last loss':>11}")
    for r in results:
        print(f"{r['name']:<24}{r['compiles']:>9}{r['padding']:>9.0%}{r['time']:>9.2f}s"
              f"{r['losses'][0]:>12.4f}{r['losses'][-1]:>11.4f}")
    reference = results[0]["losses"]
    for r in results[1:]:
        np.testing.assert_allclose(r["losses"], reference, rtol=2e-4, atol=2e-5,
                                   err_msg=f"{r['name']} computed other losses than padding")
    print("the three strategies computed the same losses (the mask hides the padding): "
          f"loss {reference[0]:.4f} -> {reference[-1]:.4f}")


if __name__ == "__main__":
    main()
