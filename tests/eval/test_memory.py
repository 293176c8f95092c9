"""The allocator policy: freed array memory is reused instead of page-faulted in again."""
import os
import platform
import subprocess
import sys

import pytest

FAULTS_PER_STEP = """
import resource, sys
import numpy as np
import ptojax as pto
if sys.argv[1] == "jit":
    pto.jit(lambda x: x + 1)(np.ones(3, np.float32))   # building an executable applies it
def step():   # a step's intermediates: several sizes alive at once, then all freed
    arrays = [np.ones(mib << 18, np.float32) for mib in (3, 5, 9, 17)]
    return sum(float(a[-1]) for a in arrays)
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
"""


def _faults_per_step(mode, **env):
    out = subprocess.run([sys.executable, "-c", FAULTS_PER_STEP, mode], check=True, text=True,
                         capture_output=True, env={**os.environ, **env})
    return float(out.stdout.split()[-1])


linux_glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="the policy is implemented with glibc's mallopt")


@linux_glibc
def test_after_the_first_jit_a_steps_buffers_are_reused_without_page_faults():
    without = _faults_per_step("import-only")    # importing ptojax changes nothing
    with_policy = _faults_per_step("jit")
    assert without > 1000                        # 34 MiB of fresh pages per step
    assert with_policy < 50


@linux_glibc
def test_the_policy_can_be_turned_off():
    assert _faults_per_step("jit", PTOJAX_KEEP_FREED_MEMORY="0") > 1000


@linux_glibc
def test_applied_once():
    from ptojax.eval.memory import keep_freed_memory
    assert keep_freed_memory() is True and keep_freed_memory() is True
