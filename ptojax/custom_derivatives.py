"""``ptojax.custom_derivatives``: functions with their own derivative rules, where JAX's
``jax.custom_derivatives`` lists them (``custom_jvp``, ``custom_vjp``, ``custom_gradient``,
``closure_convert``, ``linear_call``, and the call primitives ``custom_jvp_call_p`` /
``custom_vjp_call_p``). Not here: JAX's symbolic-zero API (``SymbolicZero``,
``zero_from_primal``, ``CustomVJPPrimal``, ``custom_vjp_primal_tree_values``) and its
rematerialization primitive ``remat_opt_p``."""
from ptojax.autodiff.calls import custom_jvp_call_p, custom_vjp_call_p
from ptojax.autodiff.closure import closure_convert, custom_gradient
from ptojax.autodiff.custom_derivatives import custom_jvp, custom_vjp
from ptojax.autodiff.linear_call import linear_call
from ptojax.public import dir_function

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p", "custom_vjp",
           "custom_vjp_call_p", "linear_call"]
__dir__ = dir_function(__all__)
