"""x64 mode (``jax_enable_x64``) against JAX in the same process: default dtypes of creation
functions, Python scalars promoted with every dtype, arithmetic, reductions, random, jit/grad/
vmap, and the retrace when the flag changes.

JAX's flag is process-global, so the ``both_modes`` fixture sets JAX's and ptojax's flag
together and restores both afterwards (the session runs JAX with x64 on, see conftest.py).
Without x64, ptojax keeps explicit 64-bit inputs 64-bit where JAX narrows them (DESIGN.md,
"Numerics decisions"), so the x64-off comparisons use only 32-bit-or-narrower inputs.
"""
import os
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ConfigError, IntegerOverflowError

NARROW = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float16,
          ml_dtypes.bfloat16, np.float32, np.complex64]
ALL = NARROW + [np.int64, np.uint64, np.float64, np.complex128]
SCALARS = [True, 3, 2.5, 1j]


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def both_modes(request, jax):
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", request.param)
    pto.config.update("jax_enable_x64", request.param)
    try:
        yield request.param
    finally:
        jax.config.update("jax_enable_x64", previous)
        pto.config.update("jax_enable_x64", False)


@pytest.fixture
def x64(jax):
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    pto.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)
        pto.config.update("jax_enable_x64", False)


def _same_type(ours, theirs, what=""):
    assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), \
        f"{what}: ptojax {ours.dtype} weak={ours.weak_type}, JAX {theirs.dtype} " \
        f"weak={theirs.weak_type}"


def _check(ours, theirs, what="", rtol=0):
    _same_type(ours, theirs, what)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, err_msg=what)


CREATION = {
    "array([1.0])": lambda m: m.array([1.0]),
    "array([1])": lambda m: m.array([1]),
    "array([1j])": lambda m: m.array([1j]),
    "asarray(2.5)": lambda m: m.asarray(2.5),
    "asarray(7)": lambda m: m.asarray(7),
    "zeros": lambda m: m.zeros(3),
    "ones(int)": lambda m: m.ones(3, int),
    "empty": lambda m: m.empty(2),
    "full(3)": lambda m: m.full(2, 3),
    "full(3.0)": lambda m: m.full(2, 3.0),
    "zeros_like(3)": lambda m: m.zeros_like(3),
    "arange(5)": lambda m: m.arange(5),
    "arange(0.5, 3)": lambda m: m.arange(0.5, 3),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "eye": lambda m: m.eye(3),
    "tri": lambda m: m.tri(3),
    "indices": lambda m: m.indices((2, 3)),
    "fft.fftfreq": lambda m: m.fft.fftfreq(4),
}


@pytest.mark.parametrize("name", list(CREATION))
def test_creation_defaults_follow_the_mode(both_modes, jnp, name):
    _check(CREATION[name](pnp), CREATION[name](jnp), name)


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_python_scalars_promote_with_every_dtype_as_jax(both_modes, jax, scalar):
    for dtype in ALL if both_modes else NARROW:
        ours = np.ones(2, dtype)
        for left in (True, False):
            what = f"{np.dtype(dtype).name} {'+' if left else 'radd'} {scalar!r}"
            add = (lambda a: a + scalar) if left else (lambda a: scalar + a)
            got = add(pnp.asarray(ours))
            _same_type(got, jax.eval_shape(add, ours), what)   # JAX's type, no compile
            np.testing.assert_array_equal(np.asarray(got),
                                          (np.ones(2) + scalar).astype(got.dtype))


def test_array_pairs_promote_on_the_x64_lattice(x64, jnp):
    for a in ALL:
        for b in ALL:
            got = pnp.result_type(pnp.zeros(1, a), pnp.zeros(1, b))
            assert got == jnp.result_type(jnp.zeros(1, a), jnp.zeros(1, b)), (a, b)


def test_python_ints_are_int64_in_x64_mode(both_modes, jnp):
    big = 2**40
    int8 = np.ones(2, np.int8)
    if both_modes:  # a weak int64: it wraps into an int8 operand, as JAX
        _check(pnp.asarray(int8) + big, jnp.asarray(int8) + big, "int8 + 2**40")
        _check(pnp.asarray(big), jnp.asarray(big), "asarray(2**40)")
    else:   # JAX without x64: an OverflowError (ptojax's names the int32 it cannot fit)
        with pytest.raises(OverflowError):
            jnp.asarray(int8) + big
        with pytest.raises(IntegerOverflowError, match="too large to convert to int32"):
            pnp.asarray(int8) + big


ARITHMETIC = {
    "0.1 * 3": lambda m: m.asarray(0.1) * 3,
    "i32 * 0.1": lambda m: m.arange(4, dtype=np.int32) * 0.1,
    "f32 / 3.0": lambda m: m.ones(3, np.float32) / 3.0,
    "i32 / 2": lambda m: m.arange(4, dtype=np.int32) / 2,
    "sin(3)": lambda m: m.sin(3),
    "sqrt(arange)": lambda m: m.sqrt(m.arange(4)),
    "u32 + i32": lambda m: m.ones(2, np.uint32) + m.ones(2, np.int32),
    "where": lambda m: m.where(m.arange(3) > 0, 1, 2.0),
    "astype(float64)": lambda m: m.ones(2, np.float32).astype(np.float64),
    "1/3 exact": lambda m: m.full(2, 1.0) / 3,
}


@pytest.mark.parametrize("name", list(ARITHMETIC))
def test_arithmetic_matches_jax_in_x64_mode(x64, jnp, name):
    _check(ARITHMETIC[name](pnp), ARITHMETIC[name](jnp), name, rtol=1e-15)


REDUCTIONS = {
    "sum i32": lambda m: m.sum(m.arange(5, dtype=np.int32)),
    "sum u8": lambda m: m.sum(m.ones(3, np.uint8)),
    "sum bool": lambda m: m.sum(m.ones(3, bool)),
    "prod i16": lambda m: m.prod(m.full(3, 2, np.int16)),
    "cumsum bool": lambda m: m.cumsum(m.ones(3, bool)),
    "cumsum i8": lambda m: m.cumsum(m.ones(3, np.int8)),
    "mean i32": lambda m: m.mean(m.arange(4, dtype=np.int32)),
    "mean": lambda m: m.mean(m.arange(4.0)),
    "argmax": lambda m: m.argmax(m.array([1.0, 3.0, 2.0])),
    "argsort": lambda m: m.argsort(m.array([1.0, 3.0, 2.0])),
    "nonzero": lambda m: m.nonzero(m.array([1.0, 0.0, 2.0]))[0],
    "count_nonzero": lambda m: m.count_nonzero(m.array([1.0, 0.0, 2.0])),
    "bincount": lambda m: m.bincount(m.array([0, 2, 2]), length=3),
    "lexsort": lambda m: m.lexsort((m.array([2.0, 1.0, 1.0]), m.array([0, 1, 1]))),
    "tril_indices": lambda m: m.tril_indices(3)[1],
    "diag_indices": lambda m: m.diag_indices(2)[0],
    "hanning": lambda m: m.hanning(5),
    "kaiser": lambda m: m.kaiser(4, 2.0),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction_and_index_dtypes_follow_the_mode(both_modes, jnp, name):
    _check(REDUCTIONS[name](pnp), REDUCTIONS[name](jnp), name, rtol=1e-6)


def test_random_defaults_follow_the_mode(both_modes, jax):
    # the bits are JAX's (Threefry), so integer draws and keys match exactly; float draws
    # may differ in the last bit (DESIGN.md, "Random numbers")
    for seed in (0, -1, 2**40):
        if seed == 2**40 and not both_modes:
            continue
        np.testing.assert_array_equal(pto.random.PRNGKey(seed), jax.random.PRNGKey(seed))
    key, jkey = pto.random.PRNGKey(1), jax.random.PRNGKey(1)
    _check(pto.random.randint(key, (5,), 0, 100), jax.random.randint(jkey, (5,), 0, 100))
    _check(pto.random.bits(key, (3,)), jax.random.bits(jkey, (3,)), "bits")
    p = np.full(4, 0.25, np.float32)
    _same_type(pto.random.choice(key, 4, (3,), p=p), jax.random.choice(jkey, 4, (3,), p=p))
    for name in ("uniform", "normal"):
        _check(getattr(pto.random, name)(key, (5,)), getattr(jax.random, name)(jkey, (5,)),
               name, rtol=1e-6)


def test_nn_defaults_follow_the_mode(both_modes, jax):
    _check(pto.nn.one_hot(pnp.arange(3), 3), jax.nn.one_hot(jax.numpy.arange(3), 3), "one_hot")
    got = pto.nn.initializers.glorot_uniform()(pto.random.PRNGKey(0), (2, 3))
    want = jax.nn.initializers.glorot_uniform()(jax.random.PRNGKey(0), (2, 3))
    _check(got, want, "glorot_uniform", rtol=1e-6)


def test_transforms_in_x64_mode_match_jax(x64, jax):
    def f(x, s):
        return pnp.sum(pnp.sin(x) * s) + 1.0

    def jf(x, s):
        return jax.numpy.sum(jax.numpy.sin(x) * s) + 1.0

    x = np.linspace(0, 1, 4)
    _check(pto.jit(f)(x, 0.3), jax.jit(jf)(x, 0.3), "jit", rtol=1e-15)
    _check(pto.grad(f)(x, 0.3), jax.grad(jf)(x, 0.3), "grad", rtol=1e-15)
    _check(pto.grad(lambda s: s * s)(3.0), jax.grad(lambda s: s * s)(3.0), "grad of a float")
    _check(pto.vmap(lambda v: v * 2.5)(pnp.arange(3)), jax.vmap(lambda v: v * 2.5)(
        jax.numpy.arange(3)), "vmap")
    _check(pto.jit(lambda i: i * 0.1)(np.int32(3)), jax.jit(lambda i: i * 0.1)(np.int32(3)),
           "jit of an int32 times a float", rtol=1e-15)


def test_jit_retraces_when_the_mode_changes(jax):
    f = pto.jit(lambda x, s: x * s)
    x = np.arange(3, dtype=np.int32)
    assert f(x, 0.1).dtype == np.float32
    with pto.enable_x64(True):
        out = f(x, 0.1)
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, np.arange(3) * 0.1)
    assert f(x, 0.1).dtype == np.float32
    assert f.cache_size() == 2


def test_enable_x64_context_is_per_thread_and_restores():
    seen = {}

    def other_thread():
        seen["other"] = pnp.array([1.0]).dtype

    with pto.enable_x64(True):
        assert pto.config.jax_enable_x64 and pto.enable_x64.value
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        assert pnp.array([1.0]).dtype == np.float64
        with pto.enable_x64(False):
            assert pnp.array([1.0]).dtype == np.float32
    assert not pto.config.jax_enable_x64
    assert seen["other"] == np.float32


def test_config_update_checks_the_value():
    with pytest.raises(ConfigError, match="must be a bool"):
        pto.config.update("jax_enable_x64", 1)
    with pytest.raises(ConfigError, match="must be a bool"):
        pto.enable_x64("yes")
    assert not pto.config.jax_enable_x64


def test_the_environment_variable_is_read_at_import():
    env = dict(os.environ, JAX_ENABLE_X64="1")
    code = "import ptojax, ptojax.numpy as pnp; print(pnp.arange(2).dtype, pnp.zeros(1).dtype)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["int64", "float64"]


def test_config_with_absl_applies_the_command_line_flag():
    absl_app = pytest.importorskip("absl.app")
    pto.config.config_with_absl()
    seen = []
    try:
        with pytest.raises(SystemExit):
            absl_app.run(lambda argv: seen.append(pnp.arange(2).dtype),
                         argv=["example", "--jax_enable_x64"])
    finally:
        pto.config.update("jax_enable_x64", False)
    assert seen == [np.int64]
