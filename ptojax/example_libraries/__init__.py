"""``pto.example_libraries``: JAX's two example libraries with the same public API, so programs
written for ``jax.example_libraries`` run unchanged under a name-only mapping.

``stax`` builds networks from layers, each an ``(init_fun, apply_fun)`` pair;
``optimizers`` gives ``(init_fun, update_fun, get_params)`` triples over pytrees of
parameters, step-size schedules and gradient utilities. Both are written with
``ptojax.numpy``, ``lax``, ``nn``, ``random`` and ``tree_util``, so jit, grad and vmap trace
through them. Like JAX's, they are small examples, not a full neural-network library.
"""
from ptojax.example_libraries import optimizers, stax
from ptojax.public import dir_function as _dir_function

__all__ = ["optimizers", "stax"]
__dir__ = _dir_function(__all__)
