"""``unpack_optimizer_state`` / ``pack_optimizer_state``: an ``OptimizerState`` as a plain
pytree (for saving) and back. The parameter tree is kept, each parameter's state sitting in a
``JoinPoint`` leaf that marks where the outer tree ends and the state's own tree begins."""
from ptojax import tree_util
from ptojax.example_libraries.optimizers.state import (OptimizerState, flatten_states,
                                                       parameter_states)


class JoinPoint:
    """A leaf holding one parameter's optimizer state (a pytree of its own). Iterating it
    yields that state, so containers of JoinPoints still look like containers of arrays."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """The parameter tree of ``opt_state`` with each parameter's state in a ``JoinPoint``."""
    marked = [JoinPoint(s) for s in parameter_states(opt_state)]
    return tree_util.tree_unflatten(opt_state.tree_def, marked)


def pack_optimizer_state(marked_pytree):
    """The ``OptimizerState`` of a tree made by ``unpack_optimizer_state`` (its inverse)."""
    marks, treedef = tree_util.tree_flatten(marked_pytree)
    strays = [type(m).__name__ for m in marks if not isinstance(m, JoinPoint)]
    if strays:
        raise TypeError(f"pack_optimizer_state: every leaf must be a JoinPoint (as "
                        f"unpack_optimizer_state returns); found {', '.join(sorted(set(strays)))}")
    packed, subtree_defs = flatten_states([m.subtree for m in marks])
    return OptimizerState(packed, treedef, subtree_defs)
