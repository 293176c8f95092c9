"""``checkpoint_policies``: which intermediates of a ``checkpoint`` region the forward pass
saves for the backward pass instead of recomputing them, as JAX's ``jax.checkpoint_policies``.

A policy is called on each equation of the region's forward computation as
``policy(primitive, *input_types, **params)`` and returns True to save its outputs. The
default (no policy) is ``nothing_saveable``: everything is recomputed. The name-based
policies save values named with ``ad_checkpoint.checkpoint_name`` (the ``name`` primitive).
"""
from __future__ import annotations

import types
from dataclasses import dataclass

from ptojax.ops.convert import name_p
from ptojax.ops.convolution import conv_general_dilated_p
from ptojax.ops.linalg import dot_general_p


def everything_saveable(*_, **__) -> bool:
    """Save every intermediate (no recomputation, as without ``checkpoint``)."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save nothing: recompute the whole region in the backward pass (the default)."""
    return False


@dataclass(frozen=True)
class DotsSaveable:
    """Save the results of matrix products (``dot_general``) and convolutions; with
    ``only_if_no_batch_dims``, only those of ``dot_general``s without batch dimensions."""
    only_if_no_batch_dims: bool

    def __call__(self, prim, *args, **params):
        if self.only_if_no_batch_dims:
            if prim is dot_general_p:
                (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
                return not lhs_batch and not rhs_batch
            return False
        return prim is dot_general_p or prim is conv_general_dilated_p


dots_saveable = checkpoint_dots = DotsSaveable(False)
dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = DotsSaveable(True)


@dataclass(frozen=True)
class _Both:
    first: object
    second: object

    def __call__(self, prim, *args, **params):
        return self.first(prim, *args, **params) or self.second(prim, *args, **params)


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""
    return _Both(policy_1, policy_2)


@dataclass(frozen=True)
class _ByName:
    """Save values named with ``checkpoint_name``: those whose name is in ``names``
    (``among``), or those whose name is not; ``unnamed`` says whether any other value is
    saved."""
    names: frozenset
    among: bool
    unnamed: bool

    def __call__(self, prim, *args, **params):
        if prim is not name_p:
            return self.unnamed
        return (params["name"] in self.names) == self.among


def save_only_these_names(*names):
    """Save only the values named with one of ``names``."""
    return _ByName(frozenset(names), among=True, unnamed=False)


def save_any_names_but_these(*names):
    """Save every named value except those named with one of ``names``."""
    return _ByName(frozenset(names), among=False, unnamed=False)


def save_anything_except_these_names(*names):
    """Save every value except those named with one of ``names``."""
    return _ByName(frozenset(names), among=False, unnamed=True)


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_from_both_policies=save_from_both_policies,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names)
