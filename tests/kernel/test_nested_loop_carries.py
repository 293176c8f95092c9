"""Tile carries of nested pto.kernel.fori loops, 2 and 3 deep, with one and two carries, in
vector-only and mixed (matmul) kernels, and steps whose new value of a carry is not a tile the
step computes (another carry, a value from outside the step): the PTO-faithful host build
(every ordering checked), the fused host build and the tile interpreter agree with numpy. A
nested loop's result lives in its own carry's buffer: the PTO build kept the outer carry stale
(every outer step read its initial value) before such a new value was copied into the carry's
buffer, and the memory plan now rejects a loop whose carry is not updated in one buffer."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import executable_of, host_jit

K = pto.kernel
F32 = np.float32
R, C, N = 8, 16, 3          # a block's rows and columns; the inner loops' trip count


def _kernel(body):
    return K(out_shape=pto.ShapeDtypeStruct((2 * R, C), F32), grid=(2,),
             in_specs=[pto.BlockSpec((R, C), lambda i: (i, 0)),
                       pto.BlockSpec((N * R, C), lambda i: (0, 0)),
                       pto.BlockSpec((C, C), lambda i: (0, 0))],
             out_specs=pto.BlockSpec((R, C), lambda i: (i, 0)))(body)


# Each case: the kernel body's math on one block's arrays (w: R x C, x: N*R x C, v: C x C),
# written once for both pnp (in the kernel) and numpy (the reference); `loop` is K.fori or
# a Python loop.
def two_deep(np_, loop, w, x, v):
    return loop(0, 2, lambda a, acc: loop(
        0, N, lambda j, acc: acc * 0.5 + np_.tanh(x(j) * w), acc), np_.zeros((R, C), F32))


def three_deep(np_, loop, w, x, v):
    def middle(b, acc):
        return loop(0, N, lambda j, acc: acc * 0.5 + x(j) * w + 1.0, acc)
    return loop(0, 2, lambda a, acc: loop(0, 2, middle, acc) * 0.75, np_.ones((R, C), F32))


def two_carries_two_deep(np_, loop, w, x, v):
    def inner(j, c):
        s, t = c
        return s + x(j) * w, t * 0.5 + s
    s, t = loop(0, 2, lambda a, c: loop(0, N, inner, c),
                (np_.zeros((R, C), F32), np_.ones((R, C), F32)))
    return s - t


def two_carries_three_deep(np_, loop, w, x, v):
    def inner(j, c):        # the carries swap places each step
        s, t = c
        return t + x(j), s * 0.5 + w
    middle = lambda b, c: loop(0, N, inner, c)      # noqa: E731
    s, t = loop(0, 2, lambda a, c: loop(0, 2, middle, c), (np_.zeros((R, C), F32), w * 1.0))
    return s + 2.0 * t


def carry_from_outside_the_step(np_, loop, w, x, v):
    def inner(j, c):        # s's new value is an input tile, t's the old s: no tile computed
        s, t = c
        return w, s
    s, t = loop(0, 2, lambda a, c: loop(0, N, inner, c),
                (np_.zeros((R, C), F32), np_.ones((R, C), F32)))
    return s * t


def mixed_two_deep(np_, loop, w, x, v):
    """The inner step multiplies on the cube."""
    dot = K.dot if np_ is pnp else np.dot
    return loop(0, 2, lambda a, acc: loop(
        0, N, lambda j, acc: acc * 0.5 + np_.tanh(dot(x(j), v) * 0.25), acc),
        np_.zeros((R, C), F32))


def mixed_two_carries_three_deep(np_, loop, w, x, v):
    dot = K.dot if np_ is pnp else np.dot

    def inner(j, c):
        s, t = c
        return s + dot(x(j) * t, v) * 0.125, t * 0.5 + 0.25
    middle = lambda b, c: loop(0, N, inner, c)      # noqa: E731
    s, t = loop(0, 2, lambda a, c: loop(0, 2, middle, c),
                (np_.zeros((R, C), F32), np_.ones((R, C), F32)))
    return s + t


TWO_DEEP = [two_deep, two_carries_two_deep, carry_from_outside_the_step, mixed_two_deep]
# the PTO build has ring events for loops nested two deep with two staging buffers (a deeper
# nest is a TileError there): three deep runs on the fused build and the tile interpreter
CASES = TWO_DEEP + [three_deep, two_carries_three_deep, mixed_two_carries_three_deep]


def as_kernel(case):
    @_kernel
    def kernel(w_ref, x_ref, v_ref, o_ref):
        o_ref[...] = case(pnp, K.fori, w_ref[...], lambda j: x_ref[K.ds(j * R, R), :],
                          v_ref[...])
    kernel.__name__ = case.__name__
    return kernel


def python_loop(lo, hi, body, carry):
    for k in range(lo, hi):
        carry = body(k, carry)
    return carry


def expected(case, w, x, v):
    blocks = [case(np, python_loop, w[i * R:(i + 1) * R], lambda j: x[j * R:(j + 1) * R], v)
              for i in range(2)]
    return np.concatenate(blocks).astype(F32)


KERNELS = [as_kernel(case) for case in CASES]


def every_case(w, x, v):
    return tuple(k(w, x, v) for k in KERNELS)


def two_deep_cases(w, x, v):
    return tuple(k(w, x, v) for k in KERNELS[:len(TWO_DEEP)])


def rand(*shape, seed):
    return (np.random.default_rng(seed).standard_normal(shape) * 0.5).astype(F32)


W, X, V = rand(2 * R, C, seed=1), rand(N * R, C, seed=2), rand(C, C, seed=3)


@pytest.fixture(scope="module")
def references():
    return [expected(case, W, X, V) for case in CASES]


def test_pto_build_with_every_ordering_checked(references):
    jitted = host_jit(two_deep_cases, check_sync=True, kernels="pto")
    outs = jitted(W, X, V)
    assert executable_of(jitted, W, X, V).program.check_sync
    for case, out, ref in zip(TWO_DEEP, outs, references):
        assert_close(out, ref, scale=4), case.__name__


def test_fused_build(references):
    outs = host_jit(every_case, kernels="fused")(W, X, V)
    for case, out, ref in zip(CASES, outs, references):
        assert_close(out, ref, scale=4), case.__name__


def test_tile_interpreter(references):
    outs = pto.jit(every_case, backend="interpreter")(W, X, V)
    for case, out, ref in zip(CASES, outs, references):
        assert_close(out, ref, scale=4), case.__name__
