"""A matmul result carried to the next loop step and read there only by the vector unit lives
in two copies of a cube -> vector GM workspace (CANN FlashAttentionScore's ping-pong): the
cube stores step j's result into copy (j - start + 1) % 2 while the vector unit loads step
j - 1's from the other, so the cube runs a step ahead. Each copy is one credit of the
workspace's free flag, set by the vector unit as a program starts and taken back by the cube
as it ends; check_sync sees a missing wait."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import host_jit
from kernels import rand
from ptojax.errors import KernelCheckError
from ptojax.lower import pto_cpp
from ptojax.tile import ops as T

K = pto.kernel
T910 = pto.targets.ascend910b
PROGRAMS, M, D, BK, STEPS = 2, 32, 32, 16, 5


def _pipelined(last=True):
    """o[i] = sum_j exp(a_i @ b_j^T / 8), the scores of block j + 1 computed in step j and
    read by the vector unit in step j + 1 (a carry); without the ``last`` block's term the
    last scores computed are never read."""
    @K(out_shape=pto.ShapeDtypeStruct((PROGRAMS * M, BK), np.float32), grid=(PROGRAMS,),
       in_specs=[pto.BlockSpec((M, D), lambda i: (i, 0)),
                 pto.BlockSpec((STEPS * BK, D), lambda i: (0, 0))],
       out_specs=pto.BlockSpec((M, BK), lambda i: (i, 0)))
    def pipelined(a_ref, b_ref, o_ref):
        a = a_ref[...]

        def scores(j):
            return K.dot(a, b_ref[K.ds(j * BK, BK), :], trans_b=True)

        def body(j, carry):
            acc, s = carry
            return acc + pnp.exp(s * 0.125), scores(j + 1)
        s0 = K.fori(0, 1, lambda j, s: scores(j), pnp.zeros((M, BK), np.float32))
        acc, s = K.fori(0, STEPS - 1, body, (pnp.zeros((M, BK), np.float32), s0))
        o_ref[...] = acc + pnp.exp(s * 0.125) if last else acc
    return pipelined


def _expected(jnp, a, b, blocks=STEPS):
    blocks = jnp.asarray(b).reshape(STEPS, BK, D)[:blocks]
    s = jnp.einsum("md,jkd->jmk", jnp.asarray(a), blocks)
    return np.asarray(jnp.exp(s * 0.125).sum(axis=0))


@pytest.fixture(scope="module")
def ab():
    return rand(PROGRAMS * M, D), rand(STEPS * BK, D, seed=1)


def _kernel_eqn(*args, last=True):
    (eqn,) = [e for e in pto.jit(_pipelined(last)).lower(*args).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    return eqn


def test_the_carried_scores_take_two_copies_that_alternate(ab, jnp, monkeypatch):
    eqn = _kernel_eqn(*ab)
    assert eqn.params["workspace_depths"] == (2,)
    body = eqn.params["bodies"][0]
    (ws,) = T.kernel_signature(getattr(body, "ir", body), 2)[2]
    rows = ws.type.shape[0] // (2 * eqn.params["grid"].blocks)
    stored = []
    write = T.write_window

    def spy(gm, tile, r0, c0, view, atomic=False):
        if gm.shape == ws.type.shape:
            stored.append(r0)
        return write(gm, tile, r0, c0, view, atomic)
    monkeypatch.setattr(T, "write_window", spy)
    got = pto.tile(_pipelined())(*ab)
    assert_close(got, _expected(jnp, *ab), scale=8)
    # each program from copy 0: the one-step loop's carry starts there (never read), so s0
    # goes to copy 1, then steps 0 .. STEPS - 2 to copies 0, 1, 0, ...
    assert len(stored) == PROGRAMS * STEPS
    for p in range(PROGRAMS):
        part = [r % (2 * rows) for r in stored[p * STEPS:(p + 1) * STEPS]]
        assert part == [((n + 1) % 2) * rows for n in range(STEPS)]


@pytest.mark.parametrize("kernels", ["pto", "fused"])
def test_the_host_builds_match_jax(ab, jnp, kernels):
    got = host_jit(_pipelined(), check_sync=kernels == "pto", kernels=kernels,
                   target=T910)(*ab)
    assert_close(got, _expected(jnp, *ab), scale=8)


def test_a_value_stored_and_never_loaded_keeps_its_carry_single_copy(ab, jnp):
    """Each copy's credit comes back only when every value stored there is loaded: the last
    step's scores, never read, would leave the cube waiting for a credit at the program's
    end. The loop whose result is not read carries the scores in UB (one copy); the one-step
    loop before it, whose result that loop reads, keeps two."""
    assert _kernel_eqn(*ab, last=False).params["workspace_depths"] == (2, 1)
    got = host_jit(_pipelined(False), check_sync=True, kernels="pto", target=T910)(*ab)
    assert_close(got, _expected(jnp, *ab, blocks=STEPS - 1), scale=8)


def test_check_sync_sees_the_vector_units_missing_wait_for_a_copy(ab, monkeypatch):
    """Without its wait for the cube's store, the vector unit's load of a copy races it."""
    ready = []
    original = pto_cpp._Printer.cross_sync

    def cross_sync(self, x):
        if x.action == "set" and x.pipe == "FIX" and not ready:
            ready.append(x.flag)        # the cube's first ready notification (the scores)
        if x.action == "wait" and ready and x.flag == ready[0] and self.core == "vector":
            return
        original(self, x)

    def core_block(self, x, _original=pto_cpp._Printer.core_block):
        saved, self.core = getattr(self, "core", None), x.core
        _original(self, x)
        self.core = saved
    monkeypatch.setattr(pto_cpp._Printer, "core_block", core_block)
    monkeypatch.setattr(pto_cpp._Printer, "cross_sync", cross_sync)
    with pytest.raises(KernelCheckError, match="TLOAD .* reads a buffer that TSTORE"):
        host_jit(_pipelined(), check_sync=True, kernels="pto", target=T910)(*ab)
