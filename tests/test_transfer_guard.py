"""``pto.transfer_guard*`` and ``pto.default_device`` against JAX on CPU: which conversions
count as transfers (implicit or explicit) under each level, and where new arrays land."""
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

LEVELS = ["allow", "log", "disallow", "log_explicit", "disallow_explicit"]


def _cases(api, m, x):
    """Conversions JAX and ptojax agree on: name -> thunk (``x`` an array of ``api``)."""
    return {
        "asarray of numpy": lambda: m.asarray(np.ones(3, np.float32)),
        "array of a list": lambda: m.array([1.0, 2.0]),
        "python scalar operand": lambda: x + 1.0,
        "numpy operand": lambda: x + np.ones(3, np.float32),
        "jit numpy argument": lambda: api.jit(lambda a: a * 2)(np.ones(3, np.float32)),
        "jit python argument": lambda: api.jit(lambda a: a * 2)(1.0),
        "jit of arrays": lambda: api.jit(lambda a: a * 2)(x),
        "numpy constant in jit": lambda: api.jit(lambda a: a * np.ones(3, np.float32))(x),
        "vmap numpy argument": lambda: api.vmap(lambda a: a * 2)(np.ones(3, np.float32)),
        "grad python argument": lambda: api.grad(lambda a: a * 2)(1.0),
        "lax.add numpy operand": lambda: api.lax.add(x, np.ones(3, np.float32)),
        "where with a python scalar": lambda: m.where(x > 0, x, 0.0),
        "sum, reshape": lambda: x.sum() + x.reshape(3, 1),
        "device_put of numpy": lambda: api.device_put(np.ones(3, np.float32)),
        "device_put of an array": lambda: api.device_put(x),
        "np.asarray": lambda: np.asarray(x),
        "tolist": lambda: x.tolist(),
        "str": lambda: str(x),
        "device_get": lambda: api.device_get(x),
    }


def _outcomes(api, m, x, guard):
    outcomes = {}
    for name, thunk in _cases(api, m, x).items():
        thunk()   # compiled outside the guard, as a warm program
        with guard():
            try:
                thunk()
                outcomes[name] = "ok"
            except Exception as e:   # noqa: BLE001 -- the class is compared
                outcomes[name] = type(e).__name__
    return outcomes


@pytest.mark.parametrize("level", ["disallow", "disallow_explicit"])
def test_which_conversions_are_guarded_as_in_jax(level, jax, jnp):
    ours = _outcomes(pto, pnp, pnp.ones(3), lambda: pto.transfer_guard(level))
    theirs = _outcomes(jax, jnp, jnp.ones(3, np.float32),
                       lambda: jax.transfer_guard(level))
    assert ours == theirs
    assert set(ours.values()) == {"ok", "JaxRuntimeError"}
    assert issubclass(pto.errors.JaxRuntimeError, RuntimeError)


def test_log_levels_warn_and_allow_does_nothing(caplog):
    x = pnp.ones(3)
    for level, expected in [("log", 1), ("log_explicit", 2), ("allow", 0)]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, "ptojax.transfer_guard"), \
                pto.transfer_guard_host_to_device(level):
            x * np.ones(3, np.float32)        # implicit
            pto.device_put(np.ones(2))          # explicit
        assert len(caplog.records) == expected, level
        assert all("host-to-device transfer: aval=f32[" in r.getMessage()
                   for r in caplog.records)


def test_guard_options_scopes_and_config():
    x = pnp.ones(3)
    assert pto.config.jax_transfer_guard is None
    with pto.transfer_guard("disallow"):
        assert pto.config.jax_transfer_guard_host_to_device == "disallow"
        with pto.transfer_guard_host_to_device("allow"):   # the specific option wins
            pnp.asarray(np.ones(2))
        with pytest.raises(pto.errors.JaxRuntimeError, match="host-to-device"):
            pnp.asarray(np.ones(2))
        with pto.transfer_guard_device_to_host("disallow"):   # never guarded on CPU
            assert float(x[0]) == 1.0 and np.asarray(x).sum() == 3
    pnp.asarray(np.ones(2))
    pto.config.update("jax_transfer_guard", "disallow")
    try:
        with pytest.raises(pto.errors.JaxRuntimeError):
            x + np.ones(3, np.float32)
    finally:
        pto.config.update("jax_transfer_guard", None)
    for bad in (lambda: pto.transfer_guard("bogus"),
                lambda: pto.config.update("jax_transfer_guard_device_to_device", "bogus")):
        with pytest.raises(ValueError, match="allow"):
            with bad():
                pass


def test_device_to_device_transfers():
    d0, d1 = pto.devices()[:2]
    x = pnp.ones(3)
    with pto.transfer_guard("disallow"):
        assert pto.device_put(x, d1).devices() == {d1}    # explicit: allowed
    with pto.transfer_guard("disallow_explicit"):
        assert pto.device_put(x, d0) is x                 # already there: no transfer
        with pytest.raises(pto.errors.JaxRuntimeError, match="device-to-device"):
            pto.device_put(x, d1)


# default_device ------------------------------------------------------------------------------
def _placements(api, m, device):
    x = m.ones(2)
    with api.default_device(device):
        made = {"ones": m.ones(2), "asarray": m.asarray(np.ones(2)), "op": x + 1,
                "jit": api.jit(lambda a: a * 2)(np.ones(2)),
                "device_put": api.device_put(np.ones(2))}
    made["outside"] = m.ones(2)
    made["kept"] = made["ones"]
    return {k: [d.id for d in v.devices()] for k, v in made.items()}


_JAX_PLACEMENTS = """
import json, sys
import numpy as np
import jax
jax.config.update("jax_num_cpu_devices", 2)
import jax.numpy as jnp
sys.path.insert(0, {tests!r})
from test_transfer_guard import _placements
print(json.dumps(_placements(jax, jnp, jax.devices()[1])))
"""


def test_default_device_places_new_arrays(jax):
    """As JAX with two CPU devices (in a subprocess: the device count is fixed at JAX's
    start)."""
    script = _JAX_PLACEMENTS.format(tests=os.path.dirname(__file__))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert run.returncode == 0, run.stderr[-2000:]
    theirs = json.loads(run.stdout.strip().splitlines()[-1])
    assert _placements(pto, pnp, pto.devices()[1]) == theirs
    assert pto.config.jax_default_device is None
    with pto.default_device("cpu"):
        assert pnp.ones(2).devices() == {pto.devices()[0]}
    with pytest.raises(ValueError, match="Device object"):
        pto.default_device(3)
    pto.config.update("jax_default_device", pto.devices()[2])
    try:
        assert pnp.zeros(1).devices() == {pto.devices()[2]}
    finally:
        pto.config.update("jax_default_device", None)
    assert pnp.zeros(1).devices() == {pto.devices()[0]}
