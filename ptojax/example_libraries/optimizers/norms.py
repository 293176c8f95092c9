"""Gradient-tree utilities: ``l2_norm`` of a pytree and ``clip_grads`` to a maximum norm."""
from ptojax import numpy as jnp
from ptojax import tree_util


def l2_norm(tree):
    """The Euclidean norm of all the leaves of ``tree`` taken as one vector."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled down to norm ``max_norm`` if its ``l2_norm`` is at least that."""
    norm = l2_norm(grad_tree)

    def clip(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))

    return tree_util.tree_map(clip, grad_tree)
