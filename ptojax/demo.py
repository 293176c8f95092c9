"""``python -m ptojax.demo``: the whole story in under a minute.

1. a small MLP traced to PTO IR;
2. its gradient — another plain IR, produced by rewriting the first;
3. a softmax tiled into one fused kernel: its tile IR, the PTO instructions of one tile (from
   the emitted PTO C++) and the cost model's estimate on Ascend 910B;
4. a few training steps with ``jit(grad(loss))``, the loss falling.
"""
from __future__ import annotations

import re
import textwrap
import time

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp


def init_params(key_seed: int, sizes):
    rng = np.random.default_rng(key_seed)
    return [{"w": pnp.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
             "b": pnp.zeros(n)} for m, n in zip(sizes[:-1], sizes[1:])]


def mlp(params, x):
    for layer in params[:-1]:
        x = pnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, y):
    return pnp.mean((mlp(params, x) - y) ** 2)


def synthetic_data(n: int = 256, seed: int = 1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    y = np.stack([np.sin(3 * x[:, 0]) * x[:, 1], np.cos(2 * x[:, 2]) + x[:, 3]], 1)
    return pnp.asarray(x), pnp.asarray(y.astype(np.float32))


def section(title: str):
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def tile_instructions(cpp: str) -> str:
    """The PTO instructions (no buffer assignments) of the first tile region of the first
    kernel."""
    region = cpp.split("// region 0", 1)[1].split("\n            }", 1)[0]
    calls = re.compile(r"\b((?!TASSIGN)T[A-Z_]+|set_flag|wait_flag|pipe_barrier)\(")
    return textwrap.indent(textwrap.dedent("\n".join(
        line for line in region.splitlines() if calls.search(line))), "    ")


def show_softmax_kernel():
    lowered = pto.jit(lambda x: pto.nn.softmax(x, axis=-1)).lower(
        pto.ShapeDtypeStruct((256, 512), pto.float32), target=pto.targets.ascend910b)
    print(lowered.tile_ir)
    print("\n  PTO C++ of one tile (lowered.as_text('pto-cpp'); untested on Ascend hardware):")
    print(tile_instructions(lowered.as_text("pto-cpp")))
    print()
    print(lowered.cost())


def main(steps: int = 200, lr: float = 0.1):
    params = init_params(0, [4, 16, 16, 2])
    x, y = synthetic_data()

    section("1. the MLP forward pass as PTO IR (pto.make_ir)")
    print(pto.make_ir(mlp)(params, x[:8]))

    section("2. its gradient: an IR -> IR rewrite (pto.make_ir(pto.grad(loss)))")
    print(pto.make_ir(pto.grad(loss))(params, x[:8], y[:8]))

    section("3. softmax as one fused tile kernel (pto.jit(f).lower(x, target=ascend910b))")
    show_softmax_kernel()

    section(f"4. training with pto.jit(pto.grad(loss)) for {steps} steps")

    @pto.jit
    def step(params, x, y):
        value, grads = pto.value_and_grad(loss)(params, x, y)
        new = pto.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return new, value

    start = time.perf_counter()
    for i in range(steps + 1):
        params, value = step(params, x, y)
        if i % (steps // 5) == 0:
            print(f"  step {i:4d}   loss {float(value):.5f}")
    print(f"  ({steps + 1} steps in {time.perf_counter() - start:.2f} s; the first includes "
          f"tracing and compiling)")


if __name__ == "__main__":
    main()
