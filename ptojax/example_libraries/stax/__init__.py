"""``pto.example_libraries.stax``: JAX's small neural-network specification library.

A layer is an ``(init_fun, apply_fun)`` pair. ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` (a ``-1`` batch dimension is carried through);
``apply_fun(params, inputs, **kwargs)`` applies the layer (``rng=key`` for ``Dropout``).
Layer constructors are CamelCase (``Dense(10)``, ``Conv(32, (3, 3))``); some layers are
ready-made (``Relu``, ``Flatten``, ``FanInSum``). ``serial``, ``parallel`` and
``shape_dependent`` combine layers. The activation functions and initializers stax uses are
re-exported, with JAX's old aliases ``glorot``, ``randn`` and ``logsoftmax``.
"""
from ptojax.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                       softplus, standardize)
from ptojax.nn.initializers import glorot_normal, normal, ones, zeros
from ptojax.example_libraries.stax.combinators import parallel, serial, shape_dependent
from ptojax.example_libraries.stax.convolution import (Conv, Conv1DTranspose, ConvTranspose,
                                                       GeneralConv, GeneralConvTranspose)
from ptojax.example_libraries.stax.dense import Dense
from ptojax.example_libraries.stax.dropout import Dropout
from ptojax.example_libraries.stax.activations import (Elu, Exp, Gelu, LeakyRelu, LogSoftmax,
                                                       Relu, Selu, Sigmoid, Softmax, Softplus,
                                                       Tanh, elementwise)
from ptojax.example_libraries.stax.normalization import BatchNorm
from ptojax.example_libraries.stax.pooling import AvgPool, MaxPool, SumPool
from ptojax.example_libraries.stax.shaping import (FanInConcat, FanInSum, FanOut, Flatten,
                                                   Identity)
from ptojax.public import dir_function as _dir_function, public_names as _public_names

# the old names JAX's stax keeps
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

__all__ = _public_names(globals())
__dir__ = _dir_function(__all__)
