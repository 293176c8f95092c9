"""``unpack_optimizer_state`` / ``pack_optimizer_state``: an ``OptimizerState`` as a plain
pytree (for saving) and back. The parameter tree is kept, each parameter's state sitting in a
``JoinPoint`` leaf that marks where the outer tree ends and the state's own tree begins."""
from ptojax import tree_util
from ptojax.example_libraries.optimizers.state import (OptimizerState, flatten_states,
                                                       parameter_states)


class JoinPoint:
    """A leaf holding one parameter's optimizer state (a pytree of its own). Iterating it
    yields that state, so containers of JoinPoints still look like containers of arrays.

    >>> from ptojax.example_libraries import optimizers
    >>> mark = optimizers.JoinPoint((pnp.zeros(2), pnp.ones(2)))
    >>> [x.tolist() for x in mark.subtree]
    [[0.0, 0.0], [1.0, 1.0]]
    """

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """The parameter tree of ``opt_state`` with each parameter's state in a ``JoinPoint``.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.momentum(0.1, mass=0.9)
    >>> state = opt_init({"w": pnp.ones(2), "b": pnp.zeros(1)})
    >>> saved = optimizers.unpack_optimizer_state(state)
    >>> sorted(saved), type(saved["w"]).__name__
    (['b', 'w'], 'JoinPoint')
    >>> [x.tolist() for x in saved["w"].subtree]  # the parameter and its velocity
    [[1.0, 1.0], [0.0, 0.0]]
    """
    _, treedef, _ = opt_state
    marked = [JoinPoint(s) for s in parameter_states(opt_state)]
    return tree_util.tree_unflatten(treedef, marked)


def pack_optimizer_state(marked_pytree):
    """The ``OptimizerState`` of a tree made by ``unpack_optimizer_state`` (its inverse).

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.adam(0.1)
    >>> state = opt_init({"w": pnp.ones(2)})
    >>> restored = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    >>> restored.tree_def == state.tree_def, get_params(restored)["w"].tolist()
    (True, [1.0, 1.0])
    """
    marks, treedef = tree_util.tree_flatten(marked_pytree)
    strays = [type(m).__name__ for m in marks if not isinstance(m, JoinPoint)]
    if strays:
        raise TypeError(f"pack_optimizer_state: every leaf must be a JoinPoint (as "
                        f"unpack_optimizer_state returns); found {', '.join(sorted(set(strays)))}")
    packed, subtree_defs = flatten_states([m.subtree for m in marks])
    return OptimizerState(packed, treedef, subtree_defs)
