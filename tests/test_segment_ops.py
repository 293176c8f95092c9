"""``pto.ops`` (JAX's ``jax.ops``): the segment reductions against JAX: values, dtypes,
buckets, modes, grad, vmap, jit and errors."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.errors import ConcretizationError
from helpers import assert_close

NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
DATA = np.random.RandomState(0).randn(7, 3).astype(np.float32)
IDS = np.array([0, 2, 2, 1, 5, -1, 0], np.int32)   # 5 and -1 are out of range: dropped


PROD_IDS = np.array([3, 0, 1, 2, 6, 5, 4], np.int32)   # unique: JAX differentiates
                                                       # scatter_mul only then


def _values_and_grads(lib, grad, data):
    out = {}
    for name in NAMES:
        fn = getattr(lib.ops, name)
        ids = PROD_IDS if name == "segment_prod" else IDS
        for bucket_size in (None, 3):
            out[f"{name}/{bucket_size}"] = (
                fn(data, IDS, 4, bucket_size=bucket_size),
                grad(lambda x: fn(x, ids, 4, bucket_size=bucket_size,
                                  unique_indices=name == "segment_prod").sum())(data))
    return out


def test_segment_values_and_grads_match_jax(jax):
    theirs = jax.jit(lambda d: _values_and_grads(jax, jax.grad, d))(DATA)   # one program
    ours = _values_and_grads(pto, pto.grad, DATA)
    for key, (value, grad) in ours.items():
        assert_close(value, theirs[key][0])
        assert_close(grad, theirs[key][1])


@pytest.mark.parametrize("name", NAMES)
def test_segment_integer_bool_and_default_num_segments(jax, name):
    ours, theirs = getattr(pto.ops, name), getattr(jax.ops, name)
    data, ids = np.arange(1, 6, dtype=np.int32), np.array([0, 0, 1, 1, 3], np.int32)
    assert_close(ours(data, ids), theirs(data, ids))          # empty segment 2: identity
    assert_close(ours(data, ids, 2, mode="clip"), theirs(data, ids, 2, mode="clip"))
    flags = np.array([True, False, False])
    if name in ("segment_max", "segment_min"):
        assert_close(ours(flags, np.array([0, 0, 1]), 3), theirs(flags, np.array([0, 0, 1]), 3))


def test_segment_under_jit_and_vmap(jax):
    f = pto.jit(pto.vmap(lambda x: pto.ops.segment_sum(x, IDS, 3)))
    batch = np.stack([DATA, 2 * DATA])
    assert_close(f(batch), jax.vmap(lambda x: jax.ops.segment_sum(x, IDS, 3))(batch))
    ids = np.stack([IDS, IDS[::-1]])
    assert_close(pto.vmap(lambda i: pto.ops.segment_max(DATA, i, 3))(ids),
                 jax.vmap(lambda i: jax.ops.segment_max(DATA, i, 3))(ids))


def test_segment_errors():
    with pytest.raises(ConcretizationError, match="num_segments"):
        pto.jit(lambda x, i: pto.ops.segment_sum(x, i))(DATA, IDS)
    with pytest.raises(ValueError, match="non-negative"):
        pto.ops.segment_sum(DATA, IDS, -1)
    with pytest.raises(TypeError, match="ndarray"):
        pto.ops.segment_sum([1.0, 2.0], IDS[:2])
    with pytest.raises(TypeError, match="integer"):
        pto.ops.segment_sum(DATA, IDS.astype(np.float32), 3)
    with pytest.raises(ValueError, match="leading axis"):
        pto.ops.segment_sum(DATA[:3], IDS, 3)


def test_ops_shows_only_the_segment_reductions(jax):
    assert dir(pto.ops) == sorted(n for n in dir(jax.ops) if not n.startswith("_"))
