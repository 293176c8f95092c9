"""Primitives that call a sub-IR: ``checkpoint`` (rematerialized region), ``custom_jvp_call``
and ``custom_vjp_call`` (functions with user-defined derivatives) and ``custom_lin`` (the
linear stand-in of a custom_vjp function inside a JVP, transposed by the user's bwd).

Sub-IRs in params are closed and carry no consts: values a body closes over are passed as
leading operands, so every equation names all its inputs.
"""
from __future__ import annotations

from ptojax.errors import UnsupportedError
from ptojax.trace import Primitive


def _call_abstract(*in_types, body, **_):
    return body.out_types


def _call_impl(*args, body, **_):
    from ptojax.eval.interpreter import eval_ir
    return [_value(o) for o in eval_ir(body, args)]


def _value(x):
    return getattr(x, "_value", x)


def _call_primitive(name):
    prim = Primitive(name, _call_abstract, _call_impl, multiple_results=True)
    prim.call_like = True  # its body may be inlined by executors (never merged by CSE)
    return prim


# checkpoint: body evaluated as is; autodiff recomputes it in the backward pass instead of
# saving its intermediates. params: body, prevent_cse=True
checkpoint_p = _call_primitive("checkpoint")

# custom_jvp_call: params body, jvp (flat rule: (primals, tangents) -> outs + tangent outs),
# num_consts
custom_jvp_call_p = _call_primitive("custom_jvp_call")

# custom_vjp_call: params body, fwd (flat: args -> outs + residuals), bwd (flat: residuals +
# cts -> input cts), num_consts, out_types
custom_vjp_call_p = _call_primitive("custom_vjp_call")


def _custom_lin_abstract(*in_types, num_res, bwd, out_types, **_):
    return list(out_types)


def _custom_lin_impl(*args, **params):
    raise UnsupportedError("forward-mode differentiation (jvp/jacfwd) of a custom_vjp "
                           "function is not supported: it only defines reverse mode. Use "
                           "custom_jvp, or reverse mode (grad/vjp/jacrev).")


# custom_lin(residuals..., tangents...): linear in the tangents; transposed by calling bwd.
custom_lin_p = Primitive("custom_lin", _custom_lin_abstract, _custom_lin_impl,
                         multiple_results=True)

CALL_PRIMITIVES = (checkpoint_p, custom_jvp_call_p, custom_vjp_call_p)
