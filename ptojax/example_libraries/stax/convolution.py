"""Convolution layers: ``GeneralConv`` / ``GeneralConvTranspose`` for any dimension numbers
(``(lhs_spec, rhs_spec, out_spec)`` strings such as ``('NHWC', 'HWIO', 'NHWC')``), and the
channels-last ``Conv``, ``ConvTranspose`` (2-D) and ``Conv1DTranspose``."""
from ptojax import lax
from ptojax import random
from ptojax.nn.initializers import glorot_normal, normal


def _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape):
    """The kernel's shape in ``rhs_spec`` order: ``O`` is ``out_chan``, ``I`` the input's
    channel count, the spatial letters take ``filter_shape`` in order."""
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return [out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec]


def _bias_shape(out_spec, out_chan):
    """The bias broadcasts over the output: ``out_chan`` at ``C``, 1 elsewhere."""
    return [out_chan if c == "C" else 1 for c in out_spec]


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                output_shape_of, convolve):
    """A (transposed) convolution layer with params ``(W, b)``: ``output_shape_of`` gives
    the output shape from (input shape, kernel shape, strides); ``convolve(x, W, strides)``
    applies it."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        w_key, b_key = random.split(rng)
        params = W_init(w_key, kernel_shape), b_init(b_key, _bias_shape(out_spec, out_chan))
        return output_shape_of(input_shape, kernel_shape, strides), params

    def apply_fun(params, inputs, **kwargs):
        weights, bias = params
        return convolve(inputs, weights, strides) + bias

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution to ``out_chan`` channels with a ``filter_shape`` window, ``strides``
    (default 1) and ``padding`` ('VALID', 'SAME' or explicit pairs). ``W_init`` defaults to
    Glorot normal over the kernel's I and O axes; the bias is ``normal(1e-6)``.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 3))
    >>> out_shape, (W, b) = init_fun(pto.random.PRNGKey(0), (2, 3, 8, 8))
    >>> out_shape, W.shape, b.shape
    ((2, 4, 6, 6), (4, 3, 3, 3), (1, 4, 1, 1))
    """
    one = (1,) * len(filter_shape)

    def output_shape_of(input_shape, kernel_shape, strides):
        return lax.conv_general_shape_tuple(input_shape, kernel_shape, strides, padding,
                                            dimension_numbers)

    def convolve(inputs, weights, strides):
        return lax.conv_general_dilated(inputs, weights, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers)

    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, output_shape_of, convolve)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed convolution (``lax.conv_transpose``) to ``out_chan`` channels; arguments
    as ``GeneralConv``'s.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 4, (3, 3),
    ...                                                 strides=(2, 2), padding="SAME")
    >>> init_fun(pto.random.PRNGKey(0), (2, 3, 8, 8))[0]
    (2, 4, 16, 16)
    """

    def output_shape_of(input_shape, kernel_shape, strides):
        return lax.conv_transpose_shape_tuple(input_shape, kernel_shape, strides, padding,
                                              dimension_numbers)

    def convolve(inputs, weights, strides):
        return lax.conv_transpose(inputs, weights, strides, padding,
                                  dimension_numbers=dimension_numbers)

    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, output_shape_of, convolve)


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
         b_init=normal(1e-6)):
    """A 2-D convolution on channels-last images: ``GeneralConv`` with dimension numbers
    ``('NHWC', 'HWIO', 'NHWC')``.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.Conv(16, (3, 3), strides=(2, 2), padding="SAME")
    >>> out_shape, (W, b) = init_fun(pto.random.PRNGKey(0), (-1, 28, 28, 1))
    >>> out_shape, W.shape, b.shape
    ((-1, 14, 14, 16), (3, 3, 1, 16), (1, 1, 1, 16))
    >>> apply_fun((W, b), pnp.ones((2, 28, 28, 1))).shape
    (2, 14, 14, 16)
    """
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def ConvTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                  b_init=normal(1e-6)):
    """A 2-D transposed convolution on channels-last images: ``GeneralConvTranspose`` with
    dimension numbers ``('NHWC', 'HWIO', 'NHWC')``.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.ConvTranspose(8, (3, 3), strides=(2, 2), padding="SAME")
    >>> init_fun(pto.random.PRNGKey(0), (-1, 7, 7, 16))[0]
    (-1, 14, 14, 8)
    """
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def Conv1DTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                    b_init=normal(1e-6)):
    """A 1-D transposed convolution on channels-last sequences: ``GeneralConvTranspose`` with
    dimension numbers ``('NHC', 'HIO', 'NHC')``.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.Conv1DTranspose(2, (3,), strides=(2,))
    >>> init_fun(pto.random.PRNGKey(0), (4, 10, 3))[0]
    (4, 21, 2)
    """
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)
