"""``lax.conv_general_dilated_local``: an unshared ("locally connected") convolution, where
every output position has its own filter. The patches each output position sees
(``conv_general_dilated_patches``) are contracted with that position's weights by one
``dot_general`` batched over the output's spatial dimensions, so jit, grad and vmap come
from those two."""
from __future__ import annotations

from ptojax.eval.leaves import check_arraylike
from ptojax.lax.conv_patches import conv_general_dilated_patches
from ptojax.ops.convolution import conv_dimension_numbers
from ptojax.ops.linalg import canonicalize_precision, dot_general
from ptojax.ops.operand import as_operand
from ptojax.ops.shape import transpose
from ptojax.public import add_examples as _add_examples


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """The unshared convolution of JAX's ``lax.conv_general_dilated_local``: ``rhs`` has the
    output's spatial sizes in its spatial dimensions and ``C * prod(filter_shape)`` (input
    channel major, then filter position) in its ``I`` dimension."""
    check_arraylike("conv_general_dilated_local", lhs, rhs)
    lhs, rhs = as_operand("conv_general_dilated_local", lhs), \
        as_operand("conv_general_dilated_local", rhs)
    pair = canonicalize_precision(precision)
    if pair is not None and not isinstance(pair, tuple):
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, precision=None if pair is None else pair[0])
    _, rhs_spec, out_spec = conv_dimension_numbers(
        tuple(lhs.shape), (1, 1, *filter_shape), dimension_numbers)
    # batch over the spatial dimensions, in the order they sit in the patches (= the output)
    spatial = sorted(range(len(out_spec) - 2), key=lambda i: out_spec[2 + i])
    batch = ([out_spec[2 + i] for i in spatial], [rhs_spec[2 + i] for i in spatial])
    out = dot_general(patches, rhs, (([out_spec[1]], [rhs_spec[1]]), batch), precision)
    # out: (spatial..., N, O) -> the output layout
    order = [None] * out.ndim
    order[out_spec[0]], order[out_spec[1]] = out.ndim - 2, out.ndim - 1
    rest = iter(range(out.ndim - 2))
    return transpose(out, tuple(next(rest) if o is None else o for o in order))


_add_examples(globals(), """
conv_general_dilated_local:
    >>> x = pnp.arange(4.0).reshape(1, 1, 4)          # N C W
    >>> w = pnp.array([[[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]])   # O=1, I=C*2, W_out=3
    >>> pto.lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,))
    Array([[[1., 4., 9.]]], dtype=float32)
""")
