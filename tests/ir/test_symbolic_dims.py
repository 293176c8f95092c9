"""Symbolic dimensions (ir/symbolic.py): normal form, arithmetic, decisions from ranges, the
questions that depend on the size, printing, and evaluation."""
import math
import pickle

import numpy as np
import pytest

import ptojax as pto
from ptojax.errors import ConcretizationError, InconclusiveDimensionOperation
from ptojax.ir.symbolic import divide_exactly, slice_indices

seq = pto.Dim("seq", 1, 4096)
batch = pto.Dim("batch", 2, 8)


def test_normal_form_makes_equal_sizes_equal():
    assert seq * 64 == 64 * seq and hash(seq * 64) == hash(64 * seq)
    assert seq + 1 - 1 is not seq and seq + 1 - 1 == seq
    assert (seq + batch) * 2 == 2 * batch + 2 * seq
    assert seq - seq == 0 and type(seq - seq) is int
    assert math.prod((seq, 64)) == 64 * seq
    assert np.int64(3) * seq == 3 * seq     # numpy scalars defer to the symbol


@pytest.mark.parametrize("expr, text", [
    (seq, "seq"), (seq + 1, "seq+1"), (2 * seq, "2*seq"), (1 - seq, "-seq+1"),
    (seq * seq, "seq^2"), (2 * batch * seq - 3, "2*batch*seq-3")])
def test_prints_compactly(expr, text):
    assert str(expr) == text


def test_shape_prints_with_its_symbols():
    t = pto.TensorType((seq, 64), np.dtype("float32"))
    assert str(t) == "f32[seq,64]" and t.size == 64 * seq


def test_equality_is_syntactic_as_in_jax():
    assert seq != 1 and not (seq == 1)       # broadcasting never stretches a symbol
    assert seq != batch
    assert bool(seq - 1)    # seq - 1 != 0 on the normal form: shortcuts for empty arrays skip


@pytest.mark.parametrize("question, answer", [
    (lambda: seq >= 1, True), (lambda: seq < 5000, True), (lambda: seq + 1 > 1, True),
    (lambda: seq - 1 >= 0, True), (lambda: seq * batch >= 2, True), (lambda: 0 > seq, False),
    (lambda: bool(seq), True)])
def test_questions_every_size_answers_alike_are_decided(question, answer):
    assert question() is answer


@pytest.mark.parametrize("question", [
    lambda: seq < 8, lambda: seq - 2 >= 0, lambda: seq // 3,
    lambda: seq % 2, lambda: seq > batch])
def test_questions_that_depend_on_the_size_raise(question):
    with pytest.raises(InconclusiveDimensionOperation, match="depends on the size|whole"):
        question()


def test_exact_division():
    assert (64 * seq) // 64 == seq and (64 * seq) % 8 == 0
    assert divide_exactly(64 * seq, seq) == 64
    assert divide_exactly(seq * batch, batch) == seq
    assert divide_exactly(seq + 1, 2) is None and divide_exactly(12, 5) is None
    assert divide_exactly(12, 4) == 3


def test_a_concrete_int_is_refused_with_the_range():
    with pytest.raises(ConcretizationError, match=r"`seq` in 1\.\.4096"):
        range(seq)
    with pytest.raises(ConcretizationError):
        int(seq)


def test_evaluate_and_bounds():
    expr = 2 * batch * seq - 3
    assert expr.evaluate({"seq": 5, "batch": 3}) == 27
    assert expr.bounds() == (2 * 2 * 1 - 3, 2 * 8 * 4096 - 3)
    assert pto.Dim("u").bounds() == (1, math.inf)


@pytest.mark.parametrize("s", [slice(1, None), slice(None, -1), slice(None), slice(2, None),
                               slice(None, None, -1), slice(-3, None)])
def test_slice_indices_match_python_at_every_size(s):
    n = pto.Dim("n", 3, 40)
    start, stop, step, count = slice_indices(s, n)
    for size in (3, 4, 17, 40):
        sizes = {"n": size}
        want = s.indices(size)
        got = tuple(v.evaluate(sizes) if hasattr(v, "evaluate") else v
                    for v in (start, stop, step))
        assert got == want
        c = count.evaluate(sizes) if hasattr(count, "evaluate") else count
        assert c == len(range(*want))


def test_slice_bounds_that_depend_on_the_size_raise():
    with pytest.raises(InconclusiveDimensionOperation):
        slice_indices(slice(5, None), pto.Dim("n", 1, 10))   # 5 may exceed n
    with pytest.raises(InconclusiveDimensionOperation, match="step 2"):
        slice_indices(slice(None, None, 2), seq)


@pytest.mark.parametrize("bad", [dict(name="1x"), dict(name="n", lo=0), dict(name="n", lo=5, hi=4),
                                 dict(name="n", lo=1.5)])
def test_bad_dims_are_refused(bad):
    with pytest.raises(ValueError):
        pto.Dim(**bad)


def test_two_dims_of_one_name_with_other_ranges_do_not_mix():
    with pytest.raises(InconclusiveDimensionOperation, match="different names"):
        pto.Dim("n", 1, 4) + pto.Dim("n", 1, 8)


def test_pickles():
    assert pickle.loads(pickle.dumps(3 * seq + batch)) == 3 * seq + batch
