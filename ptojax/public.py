"""What a public module shows: its ``__all__`` and a module-level ``__dir__`` (PEP 562) that
lists only those names, so ``dir(pnp.linalg)`` or ``help(pto.random)`` show the API and not
the helpers the module imports.

Each public module ends with::

    __all__ = [...]                      # or public_names(globals(), ...)
    __dir__ = dir_function(__all__)
"""
import inspect
import sys
import types


def public_names(namespace, submodules=()):
    """The names of ``namespace`` (a module's ``globals()``) that are not private and not an
    imported module, plus the public ``submodules`` named; for modules whose every other
    global is API (``ptojax.numpy``, ``ptojax.lax``, ``ptojax.nn``)."""
    return sorted(name for name, value in namespace.items()
                  if not name.startswith("_")
                  and (name in submodules or not isinstance(value, types.ModuleType)))


def dir_function(names):
    """A module-level ``__dir__`` returning ``names`` sorted."""
    def __dir__():
        return sorted(names)
    return __dir__


def add_examples(namespace, table):
    """Document the functions a module makes in families (elementwise functions, lax
    wrappers) from one ``table``: entries ``name: what it does`` (continued on indented
    lines), each followed by indented doctest lines, an executed example. A summary replaces
    the function's docstring; an entry with none (``name:``) keeps it and adds the example.
    Under ``python -OO`` (docstrings stripped) it does nothing."""
    if sys.flags.optimize >= 2:
        return
    for name, summary, example in _entries(table):
        if not example:
            raise ValueError(f"{name} has no example in the table")
        fn = namespace[name]
        text = summary or inspect.cleandoc(fn.__doc__ or "")
        if not text:
            raise ValueError(f"{name} has neither a docstring nor a summary in the table")
        fn.__doc__ = f"{text}\n\nExample:\n{example}"


def _entries(table):
    """(name, summary, example lines) for each entry of an ``add_examples`` table."""
    entries = []
    for line in table.strip("\n").split("\n"):
        if not line.startswith(" "):
            name, _, summary = line.partition(":")
            entries.append([name.strip(), summary.strip(), []])
        elif line.lstrip().startswith(">>>") or entries[-1][2]:
            entries[-1][2].append(line)
        else:
            entries[-1][1] += " " + line.strip()
    return [(name, summary, "\n".join(example)) for name, summary, example in entries]
