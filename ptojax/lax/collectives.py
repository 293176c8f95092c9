"""More of JAX's collectives over named axes (``vmap(axis_name=)``, ``pmap``, ``shard_map``),
written with ``ptojax/shard/collectives.py``'s: ``pshuffle`` (a ``ppermute`` given as a
permutation), ``pswapaxes`` (an ``all_to_all`` within one dimension), ``pbroadcast`` (every
device gets one device's value, by ``all_gather``) and ``pcast``.

ptojax does not type values as varying or invariant over an axis, so ``pcast`` only checks
its arguments and returns ``x`` (its values are unchanged in JAX too).
"""
from __future__ import annotations

from ptojax.errors import UnsupportedError
from ptojax.ops.shape import squeeze
from ptojax.ops.slicing import index_in_dim
from ptojax.pytree import tree_map
from ptojax.shard.collectives import all_gather, all_to_all, axis_size, ppermute
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples

_PCAST_TO = ("varying", "invariant", "reduced", "unreduced")


def pshuffle(x, axis_name, perm):
    """Device ``i`` gets ``x`` of device ``perm[i]`` (a ``ppermute`` given as a
    permutation)."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named axis with dimension ``axis`` of ``x`` (whose size is the axis size):
    device ``i`` gets the ``i``-th slices of every device, along ``axis``."""
    if axis_index_groups is not None:
        raise UnsupportedError("pswapaxes: axis_index_groups is not supported", user_frame())
    return all_to_all(x, axis_name, axis, axis)


def pbroadcast(x, axis_name, source):
    """Every device along ``axis_name`` gets the ``x`` of device ``source``."""
    n = axis_size(axis_name)
    if not 0 <= int(source) < n:
        raise ValueError(f"pbroadcast: source {source} is out of range for axis {axis_name!r} "
                         f"of size {n}")
    return tree_map(lambda v: squeeze(index_in_dim(all_gather(v, axis_name), int(source), 0),
                                      (0,)), x)


def pcast(x, axis_name, *, to: str):
    """``x`` cast to ``to`` (``"varying"``, ...) over ``axis_name``: ptojax does not type
    values by their variance over named axes, so the values are returned unchanged."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name} must be a tuple or a str. Got {axis_name}")
    if axis_name and to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {_PCAST_TO}")
    return x


_add_examples(globals(), """
pshuffle:
    >>> pto.vmap(lambda v: pto.lax.pshuffle(v, "i", [1, 2, 0]), axis_name="i")(pnp.arange(3.0))
    Array([1., 2., 0.], dtype=float32)
pswapaxes:
    >>> x = pnp.arange(4.0).reshape(2, 2)
    >>> pto.vmap(lambda v: pto.lax.pswapaxes(v, "i", 0), axis_name="i")(x)
    Array([[0., 2.],
           [1., 3.]], dtype=float32)
pbroadcast:
    >>> pto.vmap(lambda v: pto.lax.pbroadcast(v, "i", 2), axis_name="i")(pnp.arange(3.0))
    Array([2., 2., 2.], dtype=float32)
pcast:
    >>> pto.vmap(lambda v: pto.lax.pcast(v, "i", to="varying"), axis_name="i")(pnp.ones(2))
    Array([1., 1.], dtype=float32)
""")
