"""``pto.experimental``: the parts of JAX's ``jax.experimental`` ptojax has:
``io_callback`` (a callback with side effects; ``ptojax/ops/io_callback.py``) and the
submodules ``ode`` (``odeint``, an adaptive Runge-Kutta integrator differentiable by the
adjoint method) and
``checkify`` (run-time checks as values: ``check``, ``checkify``, ``Error``)."""
from ptojax.experimental import checkify, ode
from ptojax.ops.io_callback import io_callback
from ptojax.public import dir_function as _dir_function

__all__ = ["checkify", "io_callback", "ode"]
__dir__ = _dir_function(__all__)
