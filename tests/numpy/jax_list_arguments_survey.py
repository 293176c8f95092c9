"""Regenerates ``list_arguments_jax.py``: which public functions of jax.numpy (and its linalg
and fft modules), jax.lax, jax.random, jax.nn and jax.scipy (special, linalg, signal)
refuse a Python list in each parameter
(JAX's ``check_arraylike``), and which accept one.

Each parameter in turn gets the list ``[1.0, 2.0, 3.0]`` while the other parameters without
a default get ``numpy.float32([1, 2, 3])`` (a PRNG key for ``key``) and those with a default
keep it. The outcome is ``refuses`` when JAX raises its TypeError naming the list,
``accepts`` when the call succeeds; other outcomes (the filler did not fit the function)
are not recorded. A record is (module, function, parameter, args, kwargs, outcome):
``args`` a tuple and ``kwargs`` a dict with ``L`` for the list, ``F`` for the filler and
``K`` for the key (an optional positional-only parameter before the list's takes its
default).
Run: ``python tests/numpy/jax_list_arguments_survey.py`` (needs jax; about a minute)."""
import inspect
import os
import pprint
import warnings

import numpy as np

LIST = [1.0, 2.0, 3.0]
FILL = np.float32([1, 2, 3])
# JAX's messages for a list where an array is required (jax.numpy, then jax.lax)
REFUSALS = ("requires ndarray or scalar arguments", "Error interpreting argument to")
MODULES = ("jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.random",
           "jax.nn", "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.signal")
KEY = "K"   # a PRNG key (jax.random's ``key`` parameter), as the layout marks it


def call_args(params, i):
    """Positional args and keyword args with the list at parameter ``i``."""
    args, kwargs = [], {}
    if params[i].kind == params[i].KEYWORD_ONLY:
        kwargs[params[i].name] = LIST
    for j, q in enumerate(params):
        if q.kind in (q.VAR_KEYWORD, q.KEYWORD_ONLY):
            continue
        positional = q.kind == q.POSITIONAL_ONLY or (len(args) == j and not kwargs)
        if j == i:
            if q.kind == q.POSITIONAL_ONLY:   # earlier optional ones take their defaults
                args += [params[k].default for k in range(len(args), j)]
                positional = True
            if q.kind == q.VAR_POSITIONAL:
                args += [LIST, FILL]
            elif positional:
                args.append(LIST)
            else:
                kwargs[q.name] = LIST
        elif q.default is inspect.Parameter.empty and q.kind != q.VAR_POSITIONAL:
            fill = KEY if q.name == "key" else FILL
            if positional:
                args.append(fill)
            else:
                kwargs[q.name] = fill
    return args, kwargs


def layout(values):
    """The args (a tuple) or kwargs (a dict) with ``L`` for the list, ``F`` for the filler
    (and an optional parameter's default as it is)."""
    def one(v):
        return "L" if v is LIST else "F" if v is FILL else v
    if isinstance(values, dict):
        return {k: one(v) for k, v in values.items()}
    return tuple(one(v) for v in values)


def outcome(jax, fun, args, kwargs):
    args = [jax.random.PRNGKey(0) if a is KEY else a for a in args]
    kwargs = {k: jax.random.PRNGKey(0) if v is KEY else v for k, v in kwargs.items()}
    try:
        jax.block_until_ready(jax.tree_util.tree_leaves(fun(*args, **kwargs)))
    except TypeError as e:
        return "refuses" if any(m in str(e) for m in REFUSALS) else None
    except Exception:
        return None
    return "accepts"


def survey():
    import importlib
    import jax
    jax.config.update("jax_platforms", "cpu")
    records = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in sorted(dir(module)):
            fun = getattr(module, name)
            if name.startswith("_") or isinstance(fun, type) or not callable(fun):
                continue
            try:
                params = list(inspect.signature(fun).parameters.values())
            except (TypeError, ValueError):
                continue
            for i, p in enumerate(params):
                if p.kind == p.VAR_KEYWORD:
                    continue
                args, kwargs = call_args(params, i)
                result = outcome(jax, fun, args, kwargs)
                if result is not None:
                    records.append((module_name.replace("jax", "ptojax", 1), name, p.name,
                                    layout(args), layout(kwargs), result))
    return records


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "list_arguments_jax.py")
    import jax
    with open(out, "w") as f:
        f.write(f'"""Written by jax_list_arguments_survey.py from jax {jax.__version__}: '
                f'(module, function, parameter,\nargs, kwargs, outcome) with a Python list in that '
                f'parameter. Do not edit by hand."""\n\nRECORDS = ')
        f.write(pprint.pformat(survey(), width=96, compact=True))
        f.write("\n")
