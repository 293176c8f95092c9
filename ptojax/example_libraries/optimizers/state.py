"""The optimizer state and the ``optimizer`` decorator that lifts a per-array optimizer to
pytrees of parameters.

An optimizer is an ``(init_fun, update_fun, get_params)`` triple (the ``Optimizer``
namedtuple): ``init_fun(params) -> state``, ``update_fun(step, grads, state) -> state`` and
``get_params(state) -> params``. For a pytree of parameters the state is an
``OptimizerState``: a tuple of each leaf's own state leaves (``packed_state``, the only
pytree children), the parameters' treedef and each leaf-state's treedef (static data).
"""
import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

from ptojax import tree_util

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """The state of an optimizer made by ``optimizer``: ``packed_state``,
for each parameter leaf the list of its own state's leaves (the only pytree children), then
the parameters' treedef and each per-parameter state's treedef (static).

    >>> from ptojax.example_libraries import optimizers
    >>> state = optimizers.momentum(0.1, 0.9)[0]({"w": pnp.ones(2), "b": pnp.zeros(1)})
    >>> len(state.packed_state), state.tree_def
    (2, PyTreeDef({'b': *, 'w': *}))
    >>> len(pto.tree.leaves(state))  # each parameter and its velocity
    4
    """
tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda static, children: OptimizerState(children[0], *static))

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    """An optimizer's three functions.

    >>> from ptojax.example_libraries import optimizers
    >>> opt = optimizers.sgd(0.1)
    >>> opt._fields
    ('init_fn', 'update_fn', 'params_fn')
    >>> opt_init, opt_update, get_params = opt
    """
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def params_of(state):
    """The parameters of a per-array state ``(params, *auxiliary)``."""
    return state[0]


def flatten_states(states):
    """((leaves of each state,), (treedef of each state,)): tuples, as JAX's, so the
    ``OptimizerState`` pytrees of both have the same structure."""
    flat = [tree_util.tree_flatten(s) for s in states]
    return tuple(leaves for leaves, _ in flat), tuple(treedef for _, treedef in flat)


def parameter_states(opt_state):
    """Each parameter leaf's own state, rebuilt from an ``OptimizerState``."""
    packed, _, subtree_defs = opt_state
    if len(packed) != len(subtree_defs):
        raise ValueError(f"optimizer state holds {len(packed)} packed states for "
                         f"{len(subtree_defs)} parameters; was it built by this optimizer's "
                         f"init_fun (or pack_optimizer_state)?")
    return [tree_util.tree_unflatten(d, leaves) for d, leaves in zip(subtree_defs, packed)]


def _check_same_structure(what, want, got):
    if got != want:
        raise TypeError(f"optimizer update_fun: {what} does not match the structure the "
                        f"optimizer state was initialized with: expected {want}, got {got}")


def optimizer(opt_maker):
    """Decorator: ``opt_maker(*args)`` returns ``(init, update, get_params)`` for ONE array;
    the decorated function returns the ``Optimizer`` applying them leaf by leaf to pytrees of
    parameters, with an ``OptimizerState`` as the state.

    >>> from ptojax.example_libraries import optimizers
    >>> @optimizers.optimizer
    ... def halving_sgd(step_size):
    ...     init = lambda x: (x, step_size)
    ...     update = lambda i, g, state: (state[0] - state[1] * g, state[1] / 2)
    ...     return init, update, lambda state: state[0]
    >>> opt_init, opt_update, get_params = halving_sgd(1.0)
    >>> state = opt_init({"w": 0.0})
    >>> for i in range(3):
    ...     state = opt_update(i, {"w": 1.0}, state)
    >>> get_params(state)
    {'w': -1.75}
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(params):
            leaves, treedef = tree_util.tree_flatten(params)
            packed, subtree_defs = flatten_states([init(x) for x in leaves])
            return OptimizerState(packed, treedef, subtree_defs)

        @functools.wraps(update)
        def tree_update(i, grads, opt_state):
            _, treedef, subtree_defs = opt_state
            grad_leaves, grad_def = tree_util.tree_flatten(grads)
            _check_same_structure("the gradient tree", treedef, grad_def)
            new = [update(i, g, s) for g, s in zip(grad_leaves, parameter_states(opt_state))]
            packed, new_defs = flatten_states(new)
            for want, got in zip(subtree_defs, new_defs):
                _check_same_structure("the per-parameter state update returned", want, got)
            return OptimizerState(packed, treedef, subtree_defs)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            _, treedef, _ = opt_state
            params = [get_params(s) for s in parameter_states(opt_state)]
            return tree_util.tree_unflatten(treedef, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker
