"""``ptojax.custom_batching``: functions with their own batching rule, where JAX's
``jax.custom_batching`` lists them: ``custom_vmap`` (with ``def_vmap``; its primitive and
facts in ``ptojax/autodiff/custom_vmap.py``) and ``sequential_vmap``, a custom_vmap whose
rule loops over the examples with ``lax.map``."""
from ptojax.autodiff.custom_vmap import custom_vmap
from ptojax.control_flow.loops import map as sequential_map
from ptojax.pytree import tree_flatten, tree_map, tree_unflatten
from ptojax.public import dir_function


def sequential_vmap(f):
    """``f`` as a ``custom_vmap`` function whose batching rule runs it once per example, in
    a loop (``lax.map``), instead of vectorizing it (``jax.custom_batching.sequential_vmap``).

    Example:
      >>> f = pto.custom_batching.sequential_vmap(lambda x: x * 2)
      >>> pto.vmap(f)(pnp.arange(3.0))
      Array([0., 2., 4.], dtype=float32)
    """
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_flatten(list(args))
        flags = tree_flatten(in_batched)[0]

        def one(batched_leaves):
            it = iter(batched_leaves)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return f.fun(*tree_unflatten(tree, full))
        out = sequential_map(one, [x for x, b in zip(leaves, flags) if b])
        return out, tree_map(lambda _: True, out)
    return f


__all__ = ["custom_vmap", "sequential_vmap"]
__dir__ = dir_function(__all__)
