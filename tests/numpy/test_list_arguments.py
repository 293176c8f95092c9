"""A Python list where a function takes an array: refused exactly where JAX refuses it
(``check_arraylike``), with a TypeError naming the function and the user's line, and still
accepted where JAX accepts it (asarray, stack, select's lists, ...). The records are JAX's
behaviour on the same calls (``list_arguments_jax.py``, written by
``jax_list_arguments_survey.py``)."""
import importlib
import inspect
import os
import warnings

import numpy as np
import pytest

import ptojax
import ptojax.nn  # noqa: F401  (the modules the records name)
import ptojax.random  # noqa: F401
from list_arguments_jax import RECORDS

LIST = [1.0, 2.0, 3.0]
FILL = np.float32([1, 2, 3])
_VALUES = {"L": LIST, "F": FILL, "K": ptojax.random.PRNGKey(0)}
# Where JAX's filler is invalid for the function in another way, JAX still reports the list
# (it checks its array arguments first), while ptojax may report the other problem first:
# these calls get valid values in the other parameters (the list stays where JAX had it).
_INTS = np.int32([0, 1, 2])
_DROP = object()   # JAX's ufuncs take ``*args``: ptojax's unary ones take one argument
_VALID_OTHERS = {
    **{f"numpy.{f}": {"initial": 0.0} for f in ("max", "min", "amax", "amin", "nanmax",
                                                 "nanmin")},
    "numpy.full": {0: 3}, "numpy.insert": {1: 1}, "numpy.ldexp": {1: _INTS},
    "numpy.take_along_axis": {"axis": 0}, "numpy.unravel_index": {0: _INTS, "list": [1, 2, 3]},
    "numpy.negative": {1: _DROP}, "numpy.where": {1: FILL, 2: FILL},
    **{f"numpy.{f}": {"method": "inverted_cdf"} for f in ("percentile", "quantile",
                                                          "nanpercentile", "nanquantile")},
}


def _call(module, name, args, kwargs):
    fun = getattr(importlib.import_module(module), name)
    others = _VALID_OTHERS.get(f"{module.split('.', 1)[1]}.{name}", {})
    values = {**_VALUES, "L": others.get("list", LIST)}
    args = [values.get(a, a) for a in args]
    kwargs = {k: values.get(v, v) for k, v in kwargs.items()}
    for key, value in others.items():
        if key == "list":
            continue
        if isinstance(key, str):
            kwargs.setdefault(key, value)
        elif key == len(args):
            args.append(value)
        elif args[key] is not values["L"]:
            args[key] = value
    args = [a for a in args if a is not _DROP]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fun(*args, **kwargs)


def _id(record):
    module, name, param = record[:3]
    return f"{module.split('.', 1)[1] if '.' in module else module}.{name}:{param}"


def _takes(record):
    """Whether ptojax's function has the record's parameter (missing functions and
    parameters are the public-API test's business)."""
    params = inspect.signature(getattr(importlib.import_module(record[0]), record[1])).parameters
    return record[2] in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


# functions ptojax does not define are the public-API test's business
_DEFINED = [r for r in RECORDS if hasattr(importlib.import_module(r[0]), r[1])]
_REFUSED = [r for r in _DEFINED if r[5] == "refuses"]
_ACCEPTED = [r for r in _DEFINED if r[5] == "accepts" and _takes(r)]


@pytest.mark.parametrize("record", _REFUSED, ids=[_id(r) for r in _REFUSED])
def test_a_list_is_refused_where_jax_refuses_it(record):
    module, name, param, args, kwargs, _ = record
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments") as info:
        _call(module, name, args, kwargs)
    source = getattr(info.value, "source", None)
    assert source is not None and os.path.samefile(source.file, __file__), \
        f"the error should point at this file, got {source}"


@pytest.mark.parametrize("record", _ACCEPTED, ids=[_id(r) for r in _ACCEPTED])
def test_a_list_is_accepted_where_jax_accepts_it(record):
    module, name, param, args, kwargs, _ = record
    _call(module, name, args, kwargs)


# Operators, methods and indexing with lists and tuples: JAX 0.10.2's outcome on each
# (``x = jnp.asarray(numpy.float32([1, 2, 3]))``; ``TypeError`` for all the refusals).
_EXPRESSIONS = [
    ("x[[0, 1]]", "refuses"), ("x.at[[0, 1]].set(0.0)", "refuses"),
    ("x.at[[True, False, True]].get()", "refuses"), ("x + [1.0, 2.0, 3.0]", "refuses"),
    ("[1.0, 2.0, 3.0] + x", "refuses"), ("x == [1.0, 2.0, 3.0]", "refuses"),
    ("x * (1.0, 2.0, 3.0)", "refuses"), ("x @ [1.0, 2.0, 3.0]", "refuses"),
    ("[1.0, 2.0, 3.0] @ x", "refuses"), ("x > (1.0, 2.0, 3.0)", "refuses"),
    ("divmod(x, [1.0, 2.0, 3.0])", "refuses"), ("pow(x, [1.0, 2.0, 3.0])", "refuses"),
    ("x.take([0, 1])", "refuses"), ("x.clip([0.0, 0.0, 0.0])", "refuses"),
    ("x.searchsorted([1.0])", "refuses"), ("x.dot([1.0, 2.0, 3.0])", "refuses"),
    ("x.repeat([1, 1, 1])", "refuses"), ("x.sum(where=[True, False, True])", "refuses"),
    ("x[(0,)]", "accepts"), ("x.reshape([3])", "accepts"),
    ("x.at[np.array([0, 1])].set([5.0, 6.0])", "accepts"),
    ("x.at[1:].add((1.0, 2.0))", "accepts"), ("pnp.ones((2, 2))[[0, 1], [1, 0]]", "accepts"),
    ("pnp.ones((2, 2))[([0, 1], [1, 0])]", "accepts"),
]


@pytest.mark.parametrize("expression, outcome", _EXPRESSIONS)
def test_lists_in_operators_methods_and_indexing_as_in_jax(expression, outcome):
    import ptojax.numpy as pnp
    x = pnp.asarray(np.float32([1, 2, 3]))
    code = compile(expression, __file__, "eval")   # the user's code is this file
    scope = {"x": x, "np": np, "pnp": pnp}
    if outcome == "accepts":
        eval(code, scope)
        return
    with pytest.raises(TypeError) as info:
        eval(code, scope)
    source = getattr(info.value, "source", None)
    assert source is not None and os.path.samefile(source.file, __file__), \
        f"the error should point at this file, got {source}"


# pto.lax functions the survey's filler cannot reach (they need shapes, axes or dimension
# numbers), each with a list where it takes an array; JAX 0.10.2 raises a TypeError on each,
# or, marked ``attribute``, an AttributeError of its own code (ptojax: the TypeError).
_LAX_EXPRESSIONS = [
    ("lax.concatenate([[1.0]], 0)", "type"), ("lax.concatenate([a, [1.0]], 0)", "type"),
    ("lax.sort([[2.0, 1.0]])", "attribute"), ("lax.sort(([2.0, 1.0], a))", "attribute"),
    ("lax.top_k([1.0, 2.0], 1)", "type"), ("lax.dynamic_slice([1.0, 2.0], (0,), (1,))",
                                             "attribute"),
    ("lax.dynamic_update_slice(a, [1.0], (0,))", "type"),
    ("lax.gather([1.0, 2.0], np.int32([[0]]), lax.GatherDimensionNumbers((), (0,), (0,)), "
     "(1,))", "type"),
    ("lax.broadcast_in_dim([1.0], (2, 1), (1,))", "type"),
    ("lax.reshape([1.0, 2.0], (2, 1))", "type"), ("lax.transpose([[1.0]], (0, 1))", "type"),
    ("lax.squeeze([[1.0]], (0,))", "type"), ("lax.expand_dims([1.0], (0,))", "type"),
    ("lax.convert_element_type([1.0], np.int32)", "type"),
    ("lax.argmax([1.0, 2.0], 0, np.int32)", "type"),
    ("lax.dot_general([1.0], [1.0], (((0,), (0,)), ((), ())))", "type"),
    ("lax.conv_general_dilated([[[1.0]]], [[[1.0]]], (1,), 'VALID')", "attribute"),
    ("lax.full_like([1.0], 0.0)", "type"), ("lax.index_in_dim([1.0, 2.0], 0)", "attribute"),
    ("lax.dynamic_index_in_dim([1.0, 2.0], 0)", "attribute"),
    ("lax.slice_in_dim([1.0, 2.0], 0, 1)", "attribute"),
    ("lax.collapse([[1.0]], 0, 2)", "attribute"), ("lax.split([1.0, 2.0], (1, 1))", "type"),
]


@pytest.mark.parametrize("expression, jax_error", _LAX_EXPRESSIONS)
def test_lax_functions_refuse_lists_with_a_type_error(expression, jax_error):
    from ptojax import lax
    code = compile(expression, __file__, "eval")
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments") as info:
        eval(code, {"lax": lax, "np": np, "a": np.float32([1, 2])})
    assert os.path.samefile(info.value.source.file, __file__)


@pytest.mark.parametrize("expression, name", [
    ("pnp.sum([1, 2])", "sum"), ("pnp.stack([[1.0, 2.0]])", "stack"),
    ("pnp.hstack([[1.0], [2.0]])", "hstack"), ("pnp.atleast_2d([1.0])", "atleast_2d"),
    ("pnp.exp([1.0])", "exp"), ("x + [1.0, 2.0, 3.0]", "add"), ("x.take([0])", "take"),
    ("lax.add([1.0], 1.0)", "add"), ("lax.reduce_sum([1.0], (0,))", "reduce_sum"),
    ("pto.random.choice(pto.random.PRNGKey(0), [1, 2])", "choice"),
    ("pto.nn.relu([1.0])", "relu"),
])
def test_the_refusal_names_the_function_called(expression, name):
    import ptojax as pto
    import ptojax.numpy as pnp
    from ptojax import lax
    scope = {"pto": pto, "pnp": pnp, "lax": lax, "x": pnp.ones(3)}
    with pytest.raises(TypeError) as info:
        eval(compile(expression, __file__, "eval"), scope)
    assert str(info.value).startswith(f"{name} requires ndarray or scalar arguments, got list")
