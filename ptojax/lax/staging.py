"""The staging helpers of ``jax.lax``: tokens (``create_token``, ``after_all``),
``dce_sink``, ``composite`` and ``platform_dependent``.

ptojax orders effects by program order, so a token carries no data: ``Token`` is a pytree
with no leaves, which ``jit`` passes in and out as structure. ``composite`` runs its
decomposition under ``named_scope(name)``; ``platform_dependent`` picks
the branch of the platform ptojax runs on (``"cpu"``, its host devices) at trace time.
"""
from __future__ import annotations

from ptojax.devices import default_backend
from ptojax.eval.leaves import check_arraylike
from ptojax.pytree import tree_leaves
from ptojax.pytree_nodes import register_pytree_node
from ptojax.source_info import named_scope
from ptojax.public import add_examples as _add_examples


class Token:
    """A token: the sequencing value of JAX's effects API (carries no data)."""

    def __repr__(self):
        return "Token()"


register_pytree_node(Token, lambda token: ((), None), lambda aux, children: Token())


def create_token(_=None):
    """A new token (the argument, if any, is ignored, as in JAX)."""
    return Token()


def after_all(*operands):
    """One token that follows all of ``operands`` (tokens)."""
    if not all(isinstance(t, Token) for t in operands):
        check_arraylike("after_all", *(t for t in operands if not isinstance(t, Token)))
        raise TypeError("Arguments to after_all must be tokens, got "
                        f"{[type(t).__name__ for t in operands]}")
    return Token()


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Marks the arrays of ``val`` (a pytree) as used, so dead-code elimination keeps them;
    returns None. ptojax keeps every value a program computes until its last use, so this
    only checks ``val``."""
    del prevent_mlir_dce
    check_arraylike("dce_sink", *tree_leaves(val))


def composite(decomposition, name: str, version: int = 0):
    """``decomposition`` as a named composite operation: calling the result runs it under
    the scope ``name`` (keyword arguments are its static attributes). Unlike JAX (which has
    no JVP rule for composites), grad and vmap go through the decomposition."""
    def call(*args, **attributes):    # checked when called, as JAX's (it lowers then)
        if not isinstance(name, str) or not name:
            raise ValueError(f"composite: name must be a non-empty string, got {name!r}")
        if not isinstance(version, int) or version < 0:
            raise ValueError(f"composite: version must be a non-negative int, got "
                             f"{version!r}")
        if not callable(decomposition):
            raise TypeError(f"composite: the decomposition must be callable, got "
                            f"{type(decomposition).__name__}")
        with named_scope(name):
            return decomposition(*args, **attributes)
    call.__name__ = getattr(decomposition, "__name__", None) or \
        (name if isinstance(name, str) and name else "composite")
    call.__doc__ = getattr(decomposition, "__doc__", None)
    return call


def platform_dependent(*args, default=None, **per_platform):
    """The branch of ``per_platform`` for the platform ptojax runs on (``cpu``), else
    ``default``, applied to ``args``; JAX's NotImplementedError when there is neither."""
    platform = default_backend()
    branch = per_platform.get(platform, default)
    if branch is None:
        raise NotImplementedError(f"platform_dependent: no branch for platform {platform!r} "
                                  f"(given {sorted(per_platform)}) and no default")
    return branch(*args)


_add_examples(globals(), """
create_token:
    >>> pto.lax.create_token()
    Token()
after_all:
    >>> pto.lax.after_all(pto.lax.create_token(), pto.lax.create_token())
    Token()
dce_sink:
    >>> pto.lax.dce_sink(pnp.ones(2)) is None
    True
composite:
    >>> scale = pto.lax.composite(lambda x, *, n: x * n, name="my.scale")
    >>> scale(pnp.ones(2), n=3.0)
    Array([3., 3.], dtype=float32)
platform_dependent:
    >>> pto.lax.platform_dependent(pnp.ones(2), cpu=lambda x: x + 1, default=lambda x: x - 1)
    Array([2., 2.], dtype=float32)
""")
