"""Gradient-tree utilities: ``l2_norm`` of a pytree and ``clip_grads`` to a maximum norm."""
from ptojax import numpy as jnp
from ptojax import tree_util


def l2_norm(tree):
    """The Euclidean norm of all the leaves of ``tree`` taken as one vector.

    >>> from ptojax.example_libraries import optimizers
    >>> optimizers.l2_norm([pnp.array([3.0]), pnp.array([[4.0]])])
    Array(5., dtype=float32)
    """
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled down to norm ``max_norm`` if its ``l2_norm`` is at least that.

    >>> from ptojax.example_libraries import optimizers
    >>> grads = {"a": pnp.array([3.0, 0.0]), "b": pnp.array([4.0])}
    >>> optimizers.l2_norm(grads)
    Array(5., dtype=float32)
    >>> optimizers.clip_grads(grads, 1.0)
    {'a': Array([0.6, 0. ], dtype=float32), 'b': Array([0.8], dtype=float32)}
    """
    norm = l2_norm(grad_tree)

    def clip(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))

    return tree_util.tree_map(clip, grad_tree)
