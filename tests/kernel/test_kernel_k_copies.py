"""A matmul split along K (its operands' K steps do not fit L0A/L0B whole) alternates its K
steps between two single-copy buffers per operand (``tile_move``'s ``k_copy``, the K step's
parity), as CANN's L0A/L0B ping-pong: K step k + 1's TEXTRACT fills one while K step k's
TMATMUL reads the other. Each parity has its own ring on the loop level's M -> MTE1 events
(the first TEXTRACT of a parity waits for the previous step's last TMATMUL of it); check_sync
sees a missing wait."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
from host_cases import host_jit
from kernels import rand
from ptojax.errors import KernelCheckError
from ptojax.ir.core import ClosedIR
from ptojax.lower import pto_cpp
from ptojax.ir.pto import Instr
from ptojax.lower.program_schedule import program_schedule
from ptojax.lower.schedule import CoreBlock, Flag, Loop, kernel_parameters
from ptojax.lower.schedule_items import EARLY_EVENT
from ptojax.tile import ops as T

K = pto.kernel
T910 = pto.targets.ascend910b
PROGRAMS, M, D, BK, STEPS = 2, 128, 64, 32, 3     # [128, 64] f32 lhs: two K steps of 32


def _kernel():
    @K(out_shape=pto.ShapeDtypeStruct((PROGRAMS * M, BK), np.float32), grid=(PROGRAMS,),
       in_specs=[pto.BlockSpec((M, D), lambda i: (i, 0)),
                 pto.BlockSpec((STEPS * BK, D), lambda i: (0, 0))],
       out_specs=pto.BlockSpec((M, BK), lambda i: (i, 0)))
    def k_split(a_ref, b_ref, o_ref):
        a = a_ref[...]

        def body(j, acc):
            return acc + K.dot(a, b_ref[K.ds(j * BK, BK), :], trans_b=True)
        o_ref[...] = K.fori(0, STEPS, body, pto.numpy.zeros((M, BK), np.float32))
    return k_split


def _expected(jnp, a, b):
    return np.asarray(jnp.asarray(a) @ jnp.asarray(b).reshape(STEPS, BK, D).sum(0).T)


@pytest.fixture(scope="module")
def ab():
    return rand(PROGRAMS * M, D), rand(STEPS * BK, D, seed=1)


def _loop_moves(ir):
    for e in ir.eqns:
        if e.prim is T.tile_loop_p:
            body = e.params["body"]
            yield from _loop_moves(body.ir if isinstance(body, ClosedIR) else body)
        elif e.prim is T.tile_move_p:
            yield e


def test_the_k_steps_alternate_between_two_single_copy_buffers(ab):
    (eqn,) = [e for e in pto.jit(_kernel()).lower(*ab).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    _, _, (plan,) = kernel_parameters(eqn)
    body = eqn.params["bodies"][0]
    moves = list(_loop_moves(getattr(body, "ir", body)))
    by_space = {}
    for e in moves:
        by_space.setdefault(e.params["space"], []).append(e)
    assert sorted(by_space) == ["L0A", "L0B"]
    for space, es in by_space.items():
        assert [e.params["k_copy"] for e in es] == [0, 1] * (len(es) // 2)
        slots = [plan.slots[e.outputs[0]] for e in es]
        assert [s.k_copy for s in slots] == [e.params["k_copy"] for e in es]
        assert all(s.copies == 1 and s.staging for s in slots)
        for even, odd in zip(slots[::2], slots[1::2]):     # one matmul's two K steps
            assert even is not odd and abs(even.address() - odd.address()) >= even.nbytes


def _loop_cube_stmts(stmts):
    """The cube statements of every loop body (its own, not its nested loops')."""
    for x in stmts:
        if isinstance(x, Loop):
            yield [s for b in x.stmts if isinstance(b, CoreBlock) and b.core == "cube"
                   for s in b.stmts]
            yield from _loop_cube_stmts(x.stmts)


def test_each_k_step_waits_for_its_parity_not_the_previous_k_step(ab):
    """In the loop, the odd K step's TEXTRACTs wait for the odd TMATMUL of the step before
    (a parity ring event), not for the even TMATMUL just issued (no other M -> MTE1 wait)."""
    (eqn,) = [e for e in pto.jit(_kernel()).lower(*ab).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    (region,) = program_schedule(eqn).sections[0].regions
    bodies = [b for b in _loop_cube_stmts(region.stmts)
              if any(isinstance(s, Instr) and s.op.startswith("TMATMUL") for s in b)]
    assert bodies
    for body in bodies:
        events = []          # the M -> MTE1 waits before each K step's first TEXTRACT
        for s in body:
            if isinstance(s, Flag) and s.action == "wait" and (s.src, s.dst) == ("M", "MTE1"):
                events.append(s.event)
            if isinstance(s, Instr) and s.op.startswith("TMATMUL"):
                events.append("mm")
        assert len(events) == 4 and events[1::2] == ["mm", "mm"], events
        assert isinstance(events[0], int) and isinstance(events[2], int) and \
            events[0] != events[2] and max(events[0], events[2]) < EARLY_EVENT


@pytest.mark.parametrize("kernels", ["pto", "fused"])
def test_the_host_builds_match_jax(ab, jnp, kernels):
    got = host_jit(_kernel(), check_sync=kernels == "pto", kernels=kernels,
                   target=T910)(*ab)
    assert_close(got, _expected(jnp, *ab), scale=8)


def _loop_events(ab):
    (eqn,) = [e for e in pto.jit(_kernel()).lower(*ab).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    (region,) = program_schedule(eqn).sections[0].regions
    (body,) = [b for b in _loop_cube_stmts(region.stmts)
               if any(isinstance(s, Instr) and s.op.startswith("TMATMUL") for s in b)]
    return [s.event for s in body if isinstance(s, Flag) and s.action == "wait"
            and (s.src, s.dst) == ("M", "MTE1")]


def test_check_sync_sees_a_missing_wait_for_a_k_copy(ab, monkeypatch):
    """Without the odd K steps' ring in the loop (its wait and set there; the sets before
    the loop and the waits after it stay balanced), a step's odd TEXTRACT overwrites the
    buffer the previous step's odd TMATMUL may still read."""
    odd = _loop_events(ab)[1]
    seen = {"set": 0, "wait": 0}
    dropped = []
    original = pto_cpp._Printer.flag

    def flag(self, x):
        if (x.src, x.dst, x.event) == ("M", "MTE1", odd):
            seen[x.action] += 1
            # the sets: before the loop, in it; the waits: in it, after it
            if (x.action, seen[x.action]) in (("set", 2), ("wait", 1)):
                dropped.append(x)
                return
        original(self, x)
    monkeypatch.setattr(pto_cpp._Printer, "flag", flag)
    with pytest.raises(KernelCheckError, match="TEXTRACT .* overwrites a buffer that TMATMUL"):
        host_jit(_kernel(), check_sync=True, kernels="pto", target=T910)(*ab)
    assert len(dropped) == 2
