"""What lets the cube and vector unit of a pto.kernel overlap, in the emitted schedule and the
cost model's pipes: a matmul result the vector unit reads is stored to its workspace right
after the matmul; the cube loads its own operand before it waits for one from the vector
unit; a loop's accumulators are double-buffered; staging rings, not adjacent flag pairs,
order a buffer's reuse across loop steps."""
import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ir.pto import Instr
from ptojax.lower.program_schedule import schedule_of
from ptojax.lower.schedule_items import ADJACENT_EVENT
from ptojax.lower.schedule import CoreBlock, CrossSync, Flag, Loop
from ptojax.tile.kernel import tile_kernel_p
from ptojax.tile.memory import plan_memory

PATH = Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py"
_spec = importlib.util.spec_from_file_location("flash_attention", PATH)
fa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fa)

T910 = pto.targets.ascend910b
K = pto.kernel


def _kernel_eqn(kernel, *shapes):
    lowered = pto.jit(kernel).lower(*(pto.ShapeDtypeStruct(s, np.float32) for s in shapes))
    return next(e for e in lowered._tiling.ir.ir.eqns if e.prim is tile_kernel_p)


@functools.lru_cache(maxsize=None)
def _flash_eqn():
    return _kernel_eqn(fa.forward_kernel(1, 256, 64, True, 64, 64), *[(1, 256, 64)] * 3)


def _flat(stmts, core=None, loop=False):
    """(core, statement, inside a loop) in program order."""
    for s in stmts:
        if isinstance(s, CoreBlock):
            yield from _flat(s.stmts, s.core, loop)
        elif isinstance(s, Loop):
            yield from _flat(s.stmts, core, True)
        else:
            yield core, s, loop


def _region_stmts(eqn):
    (sec,) = schedule_of(eqn).sections
    return list(_flat(sec.regions[0].stmts))


def test_a_matmul_result_the_vector_reads_is_stored_right_after_the_matmul():
    spec = pto.BlockSpec((32, 32), lambda i: (i, 0))

    @K(out_shape=pto.ShapeDtypeStruct((64, 32), np.float32), grid=(2,),
       in_specs=[spec, spec, spec], out_specs=spec)
    def mm_then_vector(a_ref, b_ref, x_ref, o_ref):
        s = K.dot(a_ref[...], b_ref[...])
        y = pnp.exp(x_ref[...]) * 2.0            # vector work written before s is read
        o_ref[...] = s + y

    stmts = [(c, s) for c, s, _ in _region_stmts(_kernel_eqn(mm_then_vector, *[(64, 32)] * 3))
             if isinstance(s, Instr)]
    ops = [s.op for _, s in stmts]
    mm = ops.index("TMATMUL")
    assert stmts[mm + 1][0] == "cube" and ops[mm + 1] == "TSTORE"      # not after TEXP
    assert ops.index("TEXP") > mm + 1


def test_the_cube_loads_its_own_operand_before_waiting_for_the_vector_units():
    stmts = _region_stmts(_flash_eqn())
    cube = [s for c, s, in_loop in stmts if c == "cube" and in_loop]

    def is_(s, op):
        return isinstance(s, Instr) and s.op == op
    p_load = next(i for i, s in enumerate(cube) if is_(s, "TLOAD") and
                  s.srcs[0].param.role == "ws")                 # P, from the vector unit
    wait = max(i for i in range(p_load) if isinstance(cube[i], CrossSync) and
               cube[i].action == "wait")
    scores = max(i for i in range(wait) if is_(cube[i], "TMATMUL"))
    # V's window is loaded between the scores' matmul and the wait for P
    assert any(is_(s, "TLOAD") and s.srcs[0].param.role == "in" for s in cube[scores:wait])


def test_a_loops_accumulators_are_double_buffered():
    eqn = _flash_eqn()
    plan = plan_memory(eqn.params["bodies"][0], 2, T910)
    accs = [s for s in plan.ordered if s.space == "L0C"]
    assert accs and all(s.copies == 2 and s.level == 1 for s in accs)


def test_staging_rings_not_adjacent_pairs_order_reuse_across_loop_steps():
    stmts = _region_stmts(_flash_eqn())
    adjacent = {(s.src, s.dst) for c, s, in_loop in stmts
                if in_loop and isinstance(s, Flag) and s.event == ADJACENT_EVENT}
    # the next step's matmul into an accumulator waits for that copy's store (a ring), not
    # for every store the FIX pipe has queued
    assert ("FIX", "M") not in adjacent
    rings = {(s.src, s.dst) for c, s, in_loop in stmts
             if in_loop and isinstance(s, Flag) and isinstance(s.event, tuple)}
    assert ("FIX", "M") in rings


def test_the_flash_forward_overlaps_its_pipes_in_the_cost_model():
    (row,) = pto.jit(fa.forward_kernel(2, 1024, 64, True, 64, 64)).lower(
        *[pto.ShapeDtypeStruct((2, 1024, 64), np.float32)] * 3).cost()
    pipes = row.detail["pipes"]
    assert max(pipes.values()) <= row.detail["slowest core"] < 0.75 * sum(pipes.values())
    # each key step's cube <-> vector round trip is longer than any pipe's work: the cores
    # wait on each other's flags
    assert row.bound == "latency"


def _carried_operand_kernel(final="matmul"):
    """A loop carrying ``p``, which only matmuls read (in the step after it is computed), then
    ``p`` after the loop: read by a loop of two steps passing it through ("matmul"), or
    stored by the vector unit ("store"; then it stays in UB)."""
    x_spec = pto.BlockSpec((32, 32), lambda i: (i, 0))
    w_spec = pto.BlockSpec((128, 32), lambda i: (0, 0))

    @K(out_shape=(pto.ShapeDtypeStruct((64, 32), np.float32),) * 2, grid=(2,),
       in_specs=[x_spec, w_spec], out_specs=(x_spec, x_spec))
    def carried_operand(x_ref, w_ref, o_ref, p_ref):
        x = x_ref[...]

        def body(j, carry):
            acc, p = carry
            o = K.dot(p, w_ref[K.ds(j * 32, 32), :])
            # the next step's operand, on the vector (its exp reads a carry: it stays in the
            # loop, not hoisted as loop-invariant)
            p = pnp.exp(x * 0.1 + acc * 0.001) + o * 0.25
            return acc + o * 0.5, p
        acc, p = K.fori(0, 4, body, (pnp.zeros((32, 32), np.float32), x))

        def tail(j, carry):
            acc, p = carry
            return acc + K.dot(p, w_ref[K.ds(j * 32, 32), :]), p
        acc, _ = K.fori(1, 3, tail, (acc, p))
        o_ref[...] = acc
        p_ref[...] = p if final == "store" else x
    return carried_operand


def _carried_operand_reference(x, w, final):
    out, ps = np.zeros_like(x), np.zeros_like(x)
    for b in range(2):
        xb, acc, p = x[32 * b:32 * b + 32], 0.0, x[32 * b:32 * b + 32]
        for j in range(4):
            acc, p = acc + (p @ w[32 * j:32 * j + 32]) * 0.5, \
                np.exp(xb * 0.1 + acc * 0.001) + (p @ w[32 * j:32 * j + 32]) * 0.25
        for j in (1, 2):
            acc = acc + p @ w[32 * j:32 * j + 32]
        out[32 * b:32 * b + 32] = acc
        ps[32 * b:32 * b + 32] = p if final == "store" else xb
    return out, ps


def test_a_carry_only_matmuls_read_is_stored_where_it_is_computed():
    stmts = [(c, s) for c, s, in_loop in _region_stmts(_kernel_eqn(
        _carried_operand_kernel(), (64, 32), (128, 32))) if in_loop and isinstance(s, Instr)]
    vector = [s.op for c, s in stmts if c == "vector"]
    ws_store = next(i for i, (c, s) in enumerate(stmts) if c == "vector" and
                    s.op == "TSTORE" and s.srcs[0].param.role == "ws")
    # the new p goes out right after the vector unit computes it (before the step's update
    # waits for the matmul's result), not at its use in the next step
    assert vector.index("TEXP") < vector.index("TSTORE")
    assert stmts[ws_store - 1][1].op == "TADD" and stmts[ws_store - 1][0] == "vector"
    # the cube loads the carried p (the previous step's) before the vector stores the new one
    p_load = next(i for i, (c, s) in enumerate(stmts) if c == "cube" and s.op == "TLOAD"
                  and s.srcs[0].param.role == "ws")
    assert p_load < ws_store


@pytest.mark.parametrize("final", ["matmul", "store"])
def test_a_carry_in_its_workspace_computes_the_same_everywhere(final):
    from host_cases import host_jit
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = (rng.standard_normal((128, 32)) * 0.2).astype(np.float32)
    expected = _carried_operand_reference(x, w, final)
    kernel = _carried_operand_kernel(final)
    ops = [s.op if s.op != "TSTORE" or s.srcs[0].param.role != "ws" else "to ws"
           for c, s, in_loop in _region_stmts(_kernel_eqn(kernel, (64, 32), (128, 32)))
           if in_loop and c == "vector" and isinstance(s, Instr)]
    # in its workspace (stored after the exp) only when every value stored there is loaded
    # once by the cube; else stored from UB at its use, before the step's exp
    assert (ops.index("to ws") > ops.index("TEXP")) == (final == "matmul")
    # the host build (checking every ordering it relies on) for the workspace carry's flags
    for fn in (pto.tile(kernel),) + ((host_jit(kernel, check_sync=True),)
                                     if final == "matmul" else ()):
        for got, want in zip(fn(x, w), expected):
            np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-4)


def test_a_tile_stored_only_before_the_loops_has_one_copy():
    plan = plan_memory(_flash_eqn().params["bodies"][0], 2, T910)
    fills = [s for s in plan.ordered if s.space == "UB" and s.level == 0 and
             s.owner.prim.name == "tile_fill" and s.nbytes == 64 * 64 * 4]
    # P's zero start goes to its workspace before the loops: no second copy for the next tile
    assert fills and all(s.copies == 1 for s in fills)
