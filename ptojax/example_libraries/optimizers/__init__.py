"""``pto.example_libraries.optimizers``: JAX's example optimizers.

An optimizer is an ``(init_fun, update_fun, get_params)`` triple (``Optimizer``)::

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)   # grads: same tree as params
    params = get_params(state)

Step sizes are scalars or schedules (``exponential_decay``, ``piecewise_constant``, ...).
``optimizer`` lifts a per-array ``(init, update, get_params)`` to pytrees; the state is an
``OptimizerState`` pytree, turned into a plain tree and back by ``unpack_optimizer_state`` /
``pack_optimizer_state``. ``l2_norm`` and ``clip_grads`` work on gradient trees.
"""
from ptojax.example_libraries.optimizers.adaptive import (adagrad, adam, adamax, rmsprop,
                                                          rmsprop_momentum)
from ptojax.example_libraries.optimizers.momentum_family import momentum, nesterov, sgd
from ptojax.example_libraries.optimizers.norms import clip_grads, l2_norm
from ptojax.example_libraries.optimizers.schedules import (constant, exponential_decay,
                                                           inverse_time_decay, make_schedule,
                                                           piecewise_constant,
                                                           polynomial_decay)
from ptojax.example_libraries.optimizers.serialization import (JoinPoint, pack_optimizer_state,
                                                               unpack_optimizer_state)
from ptojax.example_libraries.optimizers.memory_efficient import sm3
from ptojax.example_libraries.optimizers import state as _state
from ptojax.example_libraries.optimizers.state import Optimizer, OptimizerState, optimizer
from ptojax.public import dir_function as _dir_function

__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam", "adamax",
           "clip_grads", "constant", "exponential_decay", "inverse_time_decay",
           "l2_norm", "make_schedule", "momentum", "nesterov", "optimizer",
           "pack_optimizer_state", "piecewise_constant", "polynomial_decay", "rmsprop",
           "rmsprop_momentum", "sgd", "sm3", "unpack_optimizer_state"]
__dir__ = _dir_function(__all__)

# JAX's typing aliases, for annotations such as ``params: optimizers.Params``: reachable by
# name, not listed (they are not functions)
_ANNOTATION_ALIASES = ("Array", "InitFn", "Params", "ParamsFn", "Schedule", "State", "Step",
                       "UpdateFn", "Updates")


def __getattr__(name):
    if name in _ANNOTATION_ALIASES:
        return getattr(_state, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
