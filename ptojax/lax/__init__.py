"""``pto.lax``: the primitives as functions, with JAX's lax semantics.

Unlike ``ptojax.numpy`` these do not promote: operands must agree in dtype, except that a
Python scalar takes the dtype of the array operand it meets; binary elementwise operands of
one rank broadcast their size-1 dimensions (as ``jax.lax``). Each function is defined beside
its primitive in ``ptojax/ops/`` (compositions such as ``reduce``, ``select_n``, ``gather``
next to the primitives they use); control flow and the collectives over named axes come from
``ptojax/control_flow/`` and ``ptojax/shard/``, the FFT from ``ptojax/ops/fft.py``.
"""
from ptojax.control_flow import cond, fori_loop, scan, switch, while_loop
from ptojax.control_flow import map as _map
from ptojax.control_flow.associative_scan import associative_scan
from ptojax.control_flow.linear_solve import custom_linear_solve, custom_root
from ptojax.ops.accuracy import AccuracyMode, Tolerance
from ptojax.ops.arithmetic import (RoundingMethod, abs, add, ceil, clamp, div, floor, integer_pow, max, min,
                                   mul, mulhi, neg, nextafter, reciprocal, rem, round, sign,
                                   square, sub)
from ptojax.ops.broadcast import (broadcast, broadcast_in_dim, broadcast_shapes,
                                  broadcast_to_rank, reduce_sum)
from ptojax.ops.complex_parts import complex, conj, imag, real
from ptojax.ops.convert import (bitcast_convert_type, reduce_precision, stop_gradient)
from ptojax.ops.convert import lax_convert_element_type as convert_element_type
from ptojax.ops.convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,
                                    conv_general_dilated, conv_general_permutations,
                                    conv_general_shape_tuple, conv_shape_tuple,
                                    conv_transpose, conv_transpose_shape_tuple,
                                    conv_with_general_padding)
from ptojax.ops.cumulative import cumlogsumexp, cummax, cummin, cumprod, cumsum
from ptojax.ops.dynamic_slicing import (dynamic_index_in_dim, dynamic_slice,
                                        dynamic_update_index_in_dim,
                                        dynamic_slice_in_dim, dynamic_update_slice,
                                        dynamic_update_slice_in_dim)
from ptojax.ops.fft import FftType, fft
from ptojax.ops.linalg import Precision, batch_matmul, dot, dot_general
from ptojax.ops.dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from ptojax.lax import linalg  # noqa: F401  (pto.lax.linalg)
from ptojax.lax.arrays import (broadcast_like, dtype, empty, shape_as_value, stack, stage,
                               unstack)
from ptojax.lax.collectives import pbroadcast, pcast, pshuffle, pswapaxes
from ptojax.lax.type_aliases import (ConvGeneralDilatedDimensionNumbers, DotDimensionNumbers,
                                     PrecisionLike)
from ptojax.lax.staging import (after_all, composite, create_token, dce_sink,
                                platform_dependent)
from ptojax.lax.rng_bit_generator import RandomAlgorithm, rng_bit_generator
from ptojax.lax.rng_uniform import rng_uniform
from ptojax.lax.scaled_dot import scaled_dot
from ptojax.lax.scatter_apply import scatter_apply
from ptojax.lax.conv_patches import conv_general_dilated_patches
from ptojax.lax.conv_local import conv_general_dilated_local
from ptojax.lax.ragged_all_to_all import ragged_all_to_all
from ptojax.lax.ragged_dot import ragged_dot
from ptojax.lax.ragged_dot_general import RaggedDotDimensionNumbers, ragged_dot_general
from ptojax.lax.zeta_family import polygamma, zeta
from ptojax.ops.logic import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, clz, eq, ge,
                              gt, is_finite, le, lt, ne, population_count, select, select_n,
                              shift_left, shift_right_arithmetic, shift_right_logical)
from ptojax.ops.optimization_barrier import optimization_barrier
from ptojax.ops.reduce_window import reduce_window, reduce_window_shape_tuple
from ptojax.ops.reductions import (argmax, argmin, reduce, reduce_and, reduce_max, reduce_min,
                                   reduce_or, reduce_prod, reduce_xor)
from ptojax.ops.shape import collapse, expand_dims, reshape, squeeze, transpose
from ptojax.ops.slicing import (broadcasted_iota, concatenate, full, full_like, index_in_dim,
                                iota, pad, rev, slice, slice_in_dim, split, tile)
from ptojax.ops.sorting import approx_max_k, approx_min_k, sort, sort_key_val, top_k
from ptojax.ops.special import (bessel_i0e, bessel_i1e, betainc, digamma, erf, erf_inv, erfc,
                                igamma, igamma_grad_a, igammac, lgamma, random_gamma_grad)
from ptojax.ops.transcendental import (acos, acosh, asin, asinh, atan, atan2, atanh, cbrt, cos,
                                       cosh, exp, exp2, expm1, log, log1p, logistic, pow,
                                       rsqrt, sin, sinh, sqrt, tan, tanh)
from ptojax.ops.windowed_indexing import (GatherDimensionNumbers, GatherScatterMode,
                                          ScatterDimensionNumbers, gather, index_take,
                                          scatter_add,
                                          scatter_max, scatter_min, scatter_mul, scatter_sub)
from ptojax.ops.windowed_indexing import scatter_set as scatter
from ptojax.ops.windows import padtype_to_pads
from ptojax.shard.constraint import with_sharding_constraint
from ptojax.shard.collectives import (all_gather, all_to_all, axis_index, axis_size, pmax,
                                      pmean, pmin, ppermute, psum, psum_scatter)
from ptojax.public import dir_function as _dir_function, public_names as _public_names


def __getattr__(name):
    """``pto.lax.map`` without a global ``map``, which would shadow the builtin for code that
    does ``from ptojax.lax import *``."""
    if name == "map":
        return _map
    raise AttributeError(f"module 'ptojax.lax' has no attribute {name!r}")


from ptojax.lax.primitives import jax_named_primitives as _jax_named_primitives

globals().update(_jax_named_primitives())   # exp_p, add_p, ...: JAX's primitive names

__all__ = [*_public_names(globals(), submodules=("linalg",)), "map"]
__dir__ = _dir_function(__all__)
