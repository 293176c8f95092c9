"""``lax.conv_general_dilated_patches``: the patches a convolution would see, one output
feature per (input channel, filter position), as JAX defines them: a grouped convolution with
a one-hot filter per filter position, so every entry is copied exactly (times one) and
gradients and vmap are the convolution's."""
from __future__ import annotations

import math

import numpy as np

from ptojax.ops.convolution import conv_dimension_numbers, conv_general_dilated
from ptojax.ops.linalg import Precision
from ptojax.public import add_examples as _add_examples


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                                 precision=None, preferred_element_type=None):
    """The patches of ``lhs`` under a ``filter_shape`` window, flattened into the feature
    dimension (``channel * prod(filter_shape) + position``), with the strides, padding,
    dilations and layouts of ``conv_general_dilated``."""
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(tuple(lhs.shape), (1, 1, *filter_shape), dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    positions = math.prod(filter_shape)
    channels = lhs.shape[lhs_spec[1]]
    one_hot = np.broadcast_to(np.eye(positions, dtype=lhs.dtype), (channels, positions, positions))
    rhs = one_hot.reshape(channels * positions, 1, *filter_shape)
    rhs = np.moveaxis(rhs, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
        feature_group_count=channels,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        preferred_element_type=preferred_element_type)


_add_examples(globals(), """
conv_general_dilated_patches:
    >>> x = pnp.arange(6.0).reshape(1, 1, 2, 3)
    >>> pto.lax.conv_general_dilated_patches(x, (1, 2), (1, 1), "VALID")[0, :, 0]
    Array([[0., 1.],
           [1., 2.]], dtype=float32)
""")
