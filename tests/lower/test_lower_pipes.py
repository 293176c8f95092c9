"""The pipe model of the cost estimate (ptojax/lower/pipes.py): each pipe is an in-order
queue, flags order them, cross-core flags order the cores, and a loop's steady state is
extrapolated exactly."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.lower.pipes import CUBE, PipeClock, repeat
from ptojax.lower.schedule import CrossSync, Flag

T910 = pto.targets.ascend910b


def _step(clock, e):
    """load 1 s, compute 1 s, store 1 s on one vector core, in buffer copy ``e``."""
    clock.flag("vec0", Flag("wait", "V", "MTE2", e), e)      # the copy is free
    clock.run("vec0", "MTE2", 1.0)
    clock.flag("vec0", Flag("set", "MTE2", "V", e), e)
    clock.flag("vec0", Flag("wait", "MTE2", "V", e), e)
    clock.run("vec0", "V", 1.0)
    clock.flag("vec0", Flag("set", "V", "MTE2", e), e)
    clock.flag("vec0", Flag("set", "V", "MTE3", e), e)
    clock.flag("vec0", Flag("wait", "V", "MTE3", e), e)
    clock.run("vec0", "MTE3", 1.0)


@pytest.mark.parametrize("copies, seconds", [(2, 12.0), (1, 21.0)])
def test_pipes_overlap_so_a_core_takes_its_critical_pipe_not_the_sum(copies, seconds):
    clock = PipeClock(T910)
    for e in range(copies):                                    # the free buffer copies
        clock.flag("vec0", Flag("set", "V", "MTE2", e), e)
    for i in range(10):
        _step(clock, i % copies)
    # double-buffered: 10 steps of a 1 s pipe plus the fill (a load, a store); one buffer:
    # each load waits for the compute before it (2 s a step), the stores overlap
    assert clock.finish() == pytest.approx(seconds)
    assert clock.busy[("vec0", "MTE2")] == pytest.approx(10.0)


def test_a_wait_holds_its_pipe_until_the_set_and_flags_are_counted():
    clock = PipeClock(T910)
    clock.run("vec0", "MTE2", 2.0)
    clock.flag("vec0", Flag("set", "MTE2", "V", 1), 1)        # fires at 2
    clock.run("vec0", "MTE2", 3.0)
    clock.flag("vec0", Flag("set", "MTE2", "V", 1), 1)        # fires at 5
    clock.flag("vec0", Flag("wait", "MTE2", "V", 1), 1)
    clock.run("vec0", "V", 1.0)
    assert clock.at("vec0", "V") == pytest.approx(3.0)        # the first set, not the last
    clock.flag("vec0", Flag("wait", "MTE2", "V", 1), 1)
    clock.run("vec0", "V", 1.0)
    assert clock.at("vec0", "V") == pytest.approx(6.0)
    with pytest.raises(AssertionError, match="no earlier set"):
        clock.flag("vec0", Flag("wait", "MTE2", "V", 1), 1)


def test_a_cross_core_wait_holds_every_pipe_of_the_waiting_core_and_reaches_both_halves():
    clock = PipeClock(T910, vector_units=2)
    clock.run(CUBE, "M", 4.0)
    clock.run(CUBE, "FIX", 1.0)                               # FIX does not wait for M here
    clock.cross_sync(CUBE, CrossSync("set", 3, "M"))          # fires when M is done: 4
    for unit in ("vec0", "vec1"):
        clock.cross_sync(unit, CrossSync("wait", 3))
        clock.run(unit, "MTE2", 1.0)
        assert clock.at(unit, "MTE2") == pytest.approx(5.0)
        assert clock.at(unit, "MTE3") == pytest.approx(4.0)



def test_the_cubes_wait_on_its_vector_sub_blocks_needs_a_set_from_each():
    """CANN CrossCoreSetFlag, mode 2: the cube's counter rises once both AIVs have set the
    flag, so the cube waits for the later sub-block, and one sub-block's sets alone never
    release it (a hang on hardware: the model refuses it)."""
    clock = PipeClock(T910, vector_units=2)
    clock.run("vec0", "MTE2", 1.0)
    clock.run("vec1", "MTE2", 5.0)
    for unit in ("vec0", "vec1"):
        clock.cross_sync(unit, CrossSync("set", 2, "MTE2"))
    clock.cross_sync("vec0", CrossSync("set", 2, "MTE2"))    # vec0 again: 1 (vec1 has not)
    clock.cross_sync(CUBE, CrossSync("wait", 2))
    clock.run(CUBE, "MTE2", 1.0)
    assert clock.at(CUBE, "MTE2") == pytest.approx(6.0)      # the later sub-block's set
    with pytest.raises(AssertionError, match="no earlier set"):
        clock.cross_sync(CUBE, CrossSync("wait", 2))

def test_a_loops_extrapolated_steady_state_matches_running_every_step():
    def run(n, warmup):
        clock = PipeClock(T910)
        clock.flag("vec0", Flag("set", "V", "MTE2", 0), 0)
        clock.flag("vec0", Flag("set", "V", "MTE2", 1), 1)

        def step(i):
            e = i % 2
            clock.flag("vec0", Flag("wait", "V", "MTE2", e), e)
            clock.run("vec0", "MTE2", 1.5)
            clock.flag("vec0", Flag("set", "MTE2", "V", e), e)
            clock.flag("vec0", Flag("wait", "MTE2", "V", e), e)
            clock.run("vec0", "V", 1.0 if i % 2 else 2.5)
            clock.flag("vec0", Flag("set", "V", "MTE2", e), e)
        if warmup:
            repeat(clock, n, step)
        else:
            for i in range(n):
                step(i)
        return clock.finish(), dict(clock.busy)
    assert run(101, True)[0] == pytest.approx(run(101, False)[0])
    assert run(101, True)[1] == pytest.approx(run(101, False)[1])


def test_a_double_buffered_vector_kernel_costs_less_than_its_pipes_summed():
    x = pto.ShapeDtypeStruct((2048, 1024), np.float32)
    (row,) = pto.jit(pto.nn.softmax).lower(x, target=T910).cost()
    pipes, core = row.detail["pipes"], row.detail["slowest core"]
    assert max(pipes.values()) <= core < sum(pipes.values())
    assert row.us >= core
