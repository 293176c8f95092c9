"""The checker of PTO_HOST_CHECK_SYNC builds: the emitter's flag protocol passes, and each way
of breaking it — a missing wait, an unwaited set, a wait with no set, a missing cross-core
wait, a result written over an operand it has not finished reading — fails the launch naming
the instruction and its kernel line."""
import re

import numpy as np
import pytest

from handwritten import N, SOURCE, index_of, load
from ptojax.errors import KernelCheckError


@pytest.fixture(scope="module")
def checked():
    return load(check_sync=True)[0]


def _run(library, name, blocks=4):
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    library.launch(index_of(name), [x, out], blocks)
    return x, out


def _line_of(needle, after):
    """The 1-based line of ``needle`` in SOURCE, first after the line containing ``after``."""
    lines = SOURCE.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i in range(start, len(lines)) if needle in lines[i]) + 1


def test_correct_protocol_passes_and_computes(checked):
    x, out = _run(checked, "scale")
    np.testing.assert_array_equal(out, 2 * x)


def test_missing_wait_is_reported_with_both_instructions_and_lines(checked):
    with pytest.raises(KernelCheckError) as e:
        _run(checked, "scale_no_wait")
    message = str(e.value)
    line = _line_of("TMULS", "void scale_no_wait")
    assert f"kernel line {line}: TMULS" in message
    assert re.search(r"reads a buffer that TLOAD \(line \d+, PIPE_MTE2\) wrote", message)
    assert "PIPE_V" in message


def test_set_never_waited_is_reported(checked):
    with pytest.raises(KernelCheckError, match=r"set_flag\(PIPE_V, PIPE_MTE2, EVENT_ID\d\) is "
                                               r"never waited for"):
        _run(checked, "scale_unwaited_sets")


def test_wait_without_set_would_hang_and_is_reported(checked):
    with pytest.raises(KernelCheckError, match="has no pending set_flag: it would hang"):
        _run(checked, "scale_extra_wait")


def test_cross_core_notification_orders_the_workspace(checked):
    _run(checked, "notify", blocks=1)
    with pytest.raises(KernelCheckError, match=r"TLOAD on PIPE_MTE2 reads a buffer that TSTORE "
                                               r"\(line \d+, PIPE_FIX\) wrote, with no "
                                               r"cross-core notification"):
        _run(checked, "notify_nowait", blocks=1)


def test_a_result_written_over_an_operand_with_wider_elements_is_reported(checked):
    with pytest.raises(KernelCheckError, match=r"TCVT: the destination overlaps an operand it "
                                               r"has not finished reading \(4-byte elements "
                                               r"written over 1-byte ones\)"):
        _run(checked, "widen_in_place")


def test_a_release_build_does_not_check(checked):
    release = load(check_sync=False)[0]
    x, out = _run(release, "scale_no_wait")     # racy on hardware, sequential on the host
    np.testing.assert_array_equal(out, 2 * x)
