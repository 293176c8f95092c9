"""Early set/wait pairs of one pipe pair whose pending stretches overlap take distinct event
ids (``pipe_order._early_events``: the ids below the adjacent pairs' no staging ring of the
kernel takes on that pair), instead of all but one becoming adjacent pairs. The flash forward
at 128x64 on the 910B has two: the vector unit's loads of its single-copy UB buffers each wait
for the V op of the step before that last read them (loop-carried V -> MTE2 pairs, pending
at once). check_sync sees two overlapping pairs given one event."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
from host_cases import host_jit
from ptojax.errors import KernelCheckError
from ptojax.ir.pto import Instr
from ptojax.lower import pipe_order
from ptojax.lower.program_schedule import program_schedule
from ptojax.lower.schedule import CoreBlock, Flag, Loop
from ptojax.lower.schedule_items import ADJACENT_EVENT

PATH = Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py"
_spec = importlib.util.spec_from_file_location("flash_attention", PATH)
fa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fa)

T910 = pto.targets.ascend910b
H, S, D, BQ, BK = 1, 256, 64, 128, 64


def _kernel():
    return fa.forward_kernel(H, S, D, False, BQ, BK)


@pytest.fixture(scope="module")
def qkv():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((H, S, D)).astype(np.float32) for _ in range(3)]


def _vector_loop_stmts(stmts):
    for x in stmts:
        if isinstance(x, Loop):
            yield [s for b in x.stmts if isinstance(b, CoreBlock) and b.core == "vector"
                   for s in b.stmts]
            yield from _vector_loop_stmts(x.stmts)


def _loop_load_waits(qkv):
    (eqn,) = [e for e in pto.jit(_kernel()).lower(*qkv).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    (region,) = program_schedule(eqn).sections[0].regions
    waits = []
    for body in _vector_loop_stmts(region.stmts):
        pending = []
        for s in body:
            if isinstance(s, Flag) and s.action == "wait" and (s.src, s.dst) == ("V", "MTE2"):
                pending.append(s.event)
            elif isinstance(s, Instr):
                if s.op.startswith("TLOAD") and pending:
                    waits.append(tuple(pending))
                pending = []
    return waits


def test_overlapping_early_pairs_of_one_pipe_pair_take_distinct_events(qkv):
    waits = _loop_load_waits(qkv)
    early = [w for w in waits if ADJACENT_EVENT not in w]
    assert len(early) >= 2, waits
    assert all(ADJACENT_EVENT not in w for w in waits), waits     # no adjacent V -> MTE2
    assert len({e for w in early for e in w}) >= 2, waits


@pytest.mark.parametrize("kernels", ["pto", "fused"])
def test_the_host_builds_match_jax(qkv, jax, jnp, kernels):
    q, k, v = qkv
    out, _ = host_jit(_kernel(), check_sync=kernels == "pto", kernels=kernels,
                      target=T910)(q, k, v)
    s = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D)
    expected = np.asarray(jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, axis=-1), v), np.float32)
    assert_close(out, expected, scale=8)


def test_check_sync_sees_two_pending_pairs_given_one_event(qkv, monkeypatch):
    """With every stretch taken as free of the others, overlapping early pairs share an event:
    a second set_flag before the first one's wait."""
    monkeypatch.setattr(pipe_order, "_overlap", lambda a, b: False)
    with pytest.raises(KernelCheckError, match="again before its wait_flag"):
        host_jit(_kernel(), check_sync=True, kernels="pto", target=T910)(*qkv)
