"""What a public module shows: its ``__all__`` and a module-level ``__dir__`` (PEP 562) that
lists only those names, so ``dir(pnp.linalg)`` or ``help(pto.random)`` show the API and not
the helpers the module imports.

Each public module ends with::

    __all__ = [...]                      # or public_names(globals(), ...)
    __dir__ = dir_function(__all__)
"""
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
