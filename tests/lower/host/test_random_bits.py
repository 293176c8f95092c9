"""threefry2x32 equations of a host program run the kernel library's compiled loop
(lower/host/random_bits.py), bit for bit the primitive's numpy impl."""
import numpy as np

import ptojax as pto
from host_cases import executable_of, host_jit
from ptojax.ops.random_bits import threefry2x32_p

SHAPE = (64, 128)


def noisy(key, x):
    return pto.random.uniform(key, SHAPE) * x


def test_a_programs_random_bits_are_computed_by_its_library():
    key, x = pto.random.PRNGKey(7), np.full(SHAPE, 3.0, np.float32)
    fn = host_jit(noisy)
    got = fn(key, x)
    np.testing.assert_array_equal(np.asarray(got),
                                  np.asarray(pto.jit(noisy, backend="interpreter")(key, x)))
    program = executable_of(fn, key, x).program
    [(eqn, run)] = program.tensor_runners.items()
    rng = np.random.default_rng(0)
    words = lambda *s: rng.integers(0, 2**32, s, dtype=np.uint64).astype(np.uint32)  # noqa: E731
    k1, k2 = words(), words()
    for x1, x2 in ((words(*SHAPE), words(*SHAPE)), (words(), words(*SHAPE)),
                   (words(*SHAPE), np.uint32(0))):
        for a, b in zip(run(k1, k2, x1, x2), threefry2x32_p.impl(k1, k2, x1, x2)):
            np.testing.assert_array_equal(a, np.broadcast_to(b, SHAPE))
    batched, x1 = words(*SHAPE), words(*SHAPE)      # per-element keys: the numpy impl
    for a, b in zip(run(batched, k2, x1, x1), threefry2x32_p.impl(batched, k2, x1, x1)):
        np.testing.assert_array_equal(a, b)
