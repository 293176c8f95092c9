"""What lets the cube and vector unit of a pto.kernel overlap, in the emitted schedule and the
cost model's pipes: a matmul result the vector unit reads is stored to its workspace right
after the matmul; the cube loads its own operand before it waits for one from the vector
unit; a loop's accumulators are double-buffered; staging rings, not adjacent flag pairs,
order a buffer's reuse across loop steps."""
import functools
import importlib.util
from pathlib import Path

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ir.pto import Instr
from ptojax.lower.program_schedule import ADJACENT_EVENT, schedule_of
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
