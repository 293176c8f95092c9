"""Pooling layers: ``MaxPool``, ``SumPool`` and ``AvgPool`` over the spatial axes of a
batch (``lax.reduce_window``). ``spec`` names the input's axes (e.g. ``'NCHW'``); without it
the layout is channels-last, batch first (``N...C``)."""
from ptojax import lax
from ptojax import numpy as jnp


def _non_spatial_axes(spec, ndim):
    """The batch and channel axes: from ``spec``'s ``N`` and ``C``, else first and last."""
    if spec is None:
        return 0, ndim - 1
    return spec.index("N"), spec.index("C")


def _with_unit_axes(dims, axes):
    """``dims`` (spatial only) with a 1 inserted at each of ``axes`` (sorted)."""
    dims = tuple(dims)
    for i in sorted(axes):
        dims = dims[:i] + (1,) + dims[i:]
    return dims


def _window_sizes(inputs, spec, window, strides, padding):
    """How many input elements each output window covers (padding excluded), shaped to
    broadcast against the pooled output."""
    axes = _non_spatial_axes(spec, inputs.ndim)
    spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in axes)
    ones = jnp.ones(spatial, dtype=inputs.dtype)
    sizes = lax.reduce_window(ones, 0., lax.add, window, strides, padding)
    for i in sorted(axes):
        sizes = jnp.expand_dims(sizes, i)
    return sizes


def _pooling(name, what, example, reducer, init_value, average=False):
    """The pooling layer constructor ``name``, reducing each window with ``reducer`` from
    ``init_value`` (``what`` it computes and an ``example`` output, for the docstring);
    ``average`` divides by the window's element count."""

    def layer(window_shape, strides=None, padding="VALID", spec=None):
        spatial_window = tuple(window_shape)
        spatial_strides = tuple(strides or (1,) * len(spatial_window))
        axes = _non_spatial_axes(spec, len(spatial_window) + 2)
        window = _with_unit_axes(spatial_window, axes)
        full_strides = _with_unit_axes(spatial_strides, axes)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window, full_strides, padding)
            ones = (1,) * len(window)
            return lax.reduce_window_shape_tuple(input_shape, window, full_strides, pads,
                                                 ones, ones), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_value, reducer, window, full_strides, padding)
            if average:
                out = out / _window_sizes(inputs, spec, spatial_window, spatial_strides, padding)
            return out

        return init_fun, apply_fun

    layer.__name__ = layer.__qualname__ = name
    layer.__doc__ = (f"A pooling layer: the {what} of each ``window_shape`` window, moved by "
                     f"``strides`` (default 1), with ``padding`` ('VALID', 'SAME' or pairs); "
                     f"``spec`` names the input's axes (default batch first, channels last)."
                     f"\n\n    >>> from ptojax.example_libraries import stax"
                     f"\n    >>> init_fun, apply_fun = stax.{name}((2, 2), strides=(2, 2))"
                     f"\n    >>> init_fun(pto.random.PRNGKey(0), (2, 4, 4, 1))[0]"
                     f"\n    (2, 2, 2, 1)"
                     f"\n    >>> x = pnp.arange(16.0).reshape(1, 4, 4, 1)"
                     f"\n    >>> apply_fun((), x)[0, :, :, 0]"
                     f"\n    {example}\n    ")
    return layer


MaxPool = _pooling("MaxPool", "maximum", """Array([[ 5.,  7.],
           [13., 15.]], dtype=float32)""", lax.max, -jnp.inf)
SumPool = _pooling("SumPool", "sum", """Array([[10., 18.],
           [42., 50.]], dtype=float32)""", lax.add, 0.)
AvgPool = _pooling("AvgPool", "mean", """Array([[ 2.5,  4.5],
           [10.5, 12.5]], dtype=float32)""", lax.add, 0., average=True)
