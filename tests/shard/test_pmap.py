"""``pto.pmap`` against ``jax.pmap`` on the same programs (``pmap_cases.py``; JAX runs them
on 8 emulated CPU devices in a subprocess), and its errors."""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from pmap_cases import CASES

HERE = os.path.dirname(__file__)


@pytest.fixture(scope="module")
def jax_results(tmp_path_factory):
    pytest.importorskip("jax")
    path = tmp_path_factory.mktemp("jax") / "pmap.npz"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, os.path.join(HERE, "pmap_cases.py"), str(path)],
                   check=True, env=env, timeout=120)
    return dict(np.load(path))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_pmap(name, jax_results):
    m = types.SimpleNamespace(pmap=pto.pmap, lax=pto.lax, np=pnp, grad=pto.grad,
                              vmap=pto.vmap)
    got = CASES[name](m)
    want = jax_results[name]
    assert got.shape == want.shape and got.dtype == want.dtype
    assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_more_slices_than_devices_says_how_many_are_available():
    with pytest.raises(pto.errors.ShardingError, match=r"needs 9 devices, but only 8") as e:
        pto.pmap(lambda v: v)(np.ones((9, 2), np.float32))
    assert e.value.source.file == __file__


def test_inconsistent_mapped_sizes():
    with pytest.raises(pto.errors.ShardingError, match="inconsistent sizes"):
        pto.pmap(lambda a, b: a + b)(np.ones((2, 3)), np.ones((3, 3)))


def test_in_axes_out_of_range():
    with pytest.raises(pto.errors.ShardingError, match="in_axes entry 2"):
        pto.pmap(lambda a: a, in_axes=2)(np.ones((2, 3)))


def test_explicit_devices_must_match_the_mapped_size():
    with pytest.raises(pto.errors.ShardingError, match="given 3 devices"):
        pto.pmap(lambda a: a, devices=pto.devices()[:3])(np.ones((2, 3)))
