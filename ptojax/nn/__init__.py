"""``pto.nn``: activations, softmax/logsumexp, one-hot, normalization, attention and
initializers (JAX's ``jax.nn``, plus ``layer_norm``, ``rms_norm`` and flax-style
channels-last ``conv``, ``max_pool``, ``avg_pool``, ``sum_pool``).

Everything is written with ``ptojax.numpy`` and ``ptojax.lax``, so every transform (jit, grad,
vmap, tile) traces through it.
"""
from ptojax.nn import initializers
from ptojax.nn.activations import (celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish,
                                   hard_tanh, identity, leaky_relu, log1mexp, log_sigmoid,
                                   mish, relu, relu6, selu, sigmoid, silu, soft_sign, softplus,
                                   sparse_plus, sparse_sigmoid, squareplus, swish, tanh)
from ptojax.nn.attention import dot_product_attention
from ptojax.nn.block_scaling import get_scaled_dot_general_config, scaled_matmul
from ptojax.nn.convolution import avg_pool, conv, max_pool, sum_pool
from ptojax.nn.encoding import one_hot
from ptojax.nn.scaled_dot_general import scaled_dot_general
from ptojax.nn.normalization import layer_norm, rms_norm, standardize
from ptojax.nn.softmax_family import log_softmax, logmeanexp, logsumexp, softmax
from ptojax.public import dir_function as _dir_function, public_names as _public_names

__all__ = _public_names(globals(), submodules=("initializers",))
__dir__ = _dir_function(__all__)
