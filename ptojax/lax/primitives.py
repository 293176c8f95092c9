"""``pto.lax.<name>_p``: the primitives under JAX's names, for programs that look at or
interpret IR (``eqn.primitive is lax.exp_p``, a registry keyed by primitive, as JAX's "custom
interpreters" page does). Each name is the ptojax primitive of that name (its own operands and
params); a JAX primitive ptojax does not have is not exported."""
from ptojax.trace import PRIMITIVES

# the primitives jax.lax exports (JAX 0.10), as data
JAX_LAX_PRIMITIVES = (
    "abs", "acos", "acosh", "add", "after_all", "all_gather", "all_to_all", "and",
    "approx_top_k", "argmax", "argmin", "asin", "asinh", "atan2", "atan", "atanh",
    "axis_index", "bessel_i0e", "bessel_i1e", "bitcast_convert_type", "broadcast_in_dim",
    "cbrt", "ceil", "clamp", "clz", "complex", "concatenate", "cond", "conj",
    "conv_general_dilated", "convert_element_type", "copy", "cos", "cosh", "create_token",
    "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "digamma", "div", "dot_general",
    "dynamic_slice", "dynamic_update_slice", "eq", "erf_inv", "erf", "erfc", "exp2", "exp",
    "expm1", "fft", "floor", "gather", "ge", "gt", "igamma_grad_a", "igamma", "igammac",
    "imag", "integer_pow", "iota", "is_finite", "le", "lgamma", "linear_solve", "log1p", "log",
    "logistic", "lt", "max", "min", "mul", "mulhi", "ne", "neg", "nextafter", "not",
    "optimization_barrier", "or", "pad", "pmax", "pmin", "polygamma", "population_count",
    "pow", "ppermute", "psum", "ragged_all_to_all", "real", "reduce_and", "reduce_max",
    "reduce_min", "reduce_or", "reduce", "reduce_precision", "reduce_prod", "reduce_sum",
    "reduce_window_max", "reduce_window_min", "reduce_window", "reduce_window_sum",
    "reduce_xor", "regularized_incomplete_beta", "rem", "reshape", "rev", "rng_bit_generator",
    "rng_uniform", "round", "rsqrt", "scan", "scatter_add", "scatter_max", "scatter_min",
    "scatter_mul", "scatter", "scatter_sub", "select_and_gather_add", "select_and_scatter_add",
    "select_and_scatter", "select_n", "sharding_constraint", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "sinh", "slice", "sort",
    "split", "sqrt", "square", "squeeze", "stop_gradient", "sub", "tan", "tanh", "tile",
    "top_k", "transpose", "while", "xor", "zeta",
)


def jax_named_primitives() -> dict:
    """``{"<name>_p": primitive}`` for every JAX lax primitive ptojax has (call after the
    primitives are defined: ``pto.lax`` does)."""
    return {f"{name}_p": PRIMITIVES[name] for name in JAX_LAX_PRIMITIVES if name in PRIMITIVES}
