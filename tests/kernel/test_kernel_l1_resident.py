"""A matmul operand split along K (its double-buffered L0 halves do not hold it whole) is
loaded into L1 once, where it is defined, and each K step extracts its block from L1: a
loop-invariant query block stays resident in L1 across a key loop, as in CANN's
FlashAttentionScore, instead of being re-read from GM every step."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
from host_cases import host_jit
from kernels import rand

K = pto.kernel
M, D, BK, STEPS = 128, 64, 32, 4     # [128, 64] float32 splits along K on the 910B's L0A;
# the [32, 64] key blocks, transposed, are not square


def _scores_sum():
    """acc = sum_j q @ k_j^T over STEPS key blocks; q is the same block every step."""
    @K(out_shape=pto.ShapeDtypeStruct((M, BK), np.float32), grid=(1,),
       in_specs=[pto.BlockSpec((M, D), lambda i: (0, 0)),
                 pto.BlockSpec((STEPS * BK, D), lambda i: (0, 0))],
       out_specs=pto.BlockSpec((M, BK), lambda i: (0, 0)))
    def scores_sum(q_ref, k_ref, o_ref):
        q = q_ref[...]

        def body(j, acc):
            return acc + pto.numpy.exp(K.dot(q, k_ref[K.ds(j * BK, BK), :], trans_b=True)
                                       * 0.01)
        o_ref[...] = K.fori(0, STEPS, body, pto.numpy.zeros((M, BK), np.float32))
    return scores_sum


def _expected(q, k):
    return sum(np.exp(q @ k[j * BK:(j + 1) * BK].T * np.float32(0.01)) for j in range(STEPS))


@pytest.fixture(scope="module")
def qk():
    return rand(M, D), rand(STEPS * BK, D, seed=1)


def test_the_query_block_crosses_gm_once_and_each_k_step_extracts_from_l1(qk):
    lowered = pto.jit(_scores_sum()).lower(*qk)      # the 910B by default
    (row,) = lowered.cost()
    q, k = qk
    scores = STEPS * 2 * M * BK * 4        # each step's scores: cube -> workspace -> vector
    assert row.bytes == q.nbytes + k.nbytes + M * BK * 4 + scores   # q was read STEPS times
    text = str(lowered.as_text("pto"))
    loop = text.index("scf.for %k")
    q_load = text.index("partition_tensor_view<128x64xf32>) outs(")
    assert q_load < loop                       # loaded before the key loop, whole
    extracts = [ln for ln in text[loop:].splitlines() if "pto.textract" in ln]
    assert any("[%c0, %c32]" in ln for ln in extracts)   # its second K step's block
    # the L1 tile feeds L0A, so it has the left operand's layout though the loop extracts it
    assert "rows=128, cols=64, v_row=128, v_col=64, blayout=col_major, slayout=row_major" in \
        text[q_load:loop]


def test_the_pto_and_fused_host_builds_match(qk):
    kernel = _scores_sum()
    expected = _expected(*qk)
    assert_close(pto.tile(kernel)(*qk), expected, scale=4)
    for kernels in ("pto", "fused"):
        got = host_jit(kernel, check_sync=kernels == "pto", kernels=kernels,
                       target=pto.targets.ascend910b)(*qk)
        assert_close(got, expected, scale=4)


def test_a_block_outside_the_l1_tile_is_refused():
    from ptojax.errors import ShapeError
    from ptojax.tile import ops as T
    l1 = T.tile_type((32, 64), np.dtype(np.float32), "L1")
    with pytest.raises(ShapeError, match="outside"):
        T.tile_move_p.abstract_eval(l1, space="L0A", index=(0, 48), shape=(32, 32))
