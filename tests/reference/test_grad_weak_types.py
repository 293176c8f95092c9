"""Derivatives of complex (and weakly typed) inputs against JAX: values, dtypes and the
weak type of every result of grad, vjp, jacrev, jacfwd and hessian. JAX's rules seen here:
a complex input's cotangent from a real output is strong (it passes the transposes of
``real``/``imag``/``abs``), from a complex output it keeps the input's weak type; a real
input's gradient keeps its weak type; a Jacobian block takes the dtype and weak type of its
input (jacrev) or output (jacfwd)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from pnp_reference import check

_REAL_OF_COMPLEX = {
    "abs": lambda m, x: m.abs(x),
    "real": lambda m, x: m.real(x),
    "imag": lambda m, x: m.imag(x),
    "abs2": lambda m, x: (x * m.conj(x)).real,
    "real(x*x)": lambda m, x: m.real(x * x),
    "angle": lambda m, x: m.angle(x),
    "real(exp)*2": lambda m, x: m.real(m.exp(x)) * 2.0,
    "abs(x+1)": lambda m, x: m.abs(x + 1),
}
# the complex input as given: a Python complex (weak), a strong complex64, a weak array
_COMPLEX_INPUTS = {
    "python": lambda m: 1 + 2j,
    "complex64": lambda m: np.complex64(1 + 2j),
    "weak array": lambda m: m.asarray(1 - 0.5j) * 1,
}


def _pairs(ours, theirs):
    ours = ours if isinstance(ours, (tuple, list)) else (ours,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    assert len(ours) == len(theirs)
    return zip(ours, theirs)


def _check_same(ours, theirs, what):
    for k, (a, b) in enumerate(_pairs(ours, theirs)):
        check(a, b, what=f"{what}[{k}]")
        assert a.weak_type == b.weak_type, \
            f"{what}[{k}]: weak_type {a.weak_type}, JAX {b.weak_type}"


@pytest.mark.parametrize("given", list(_COMPLEX_INPUTS))
@pytest.mark.parametrize("name", list(_REAL_OF_COMPLEX))
def test_grad_of_a_real_function_of_a_complex_input(jax, jnp, name, given):
    f = _REAL_OF_COMPLEX[name]
    ours = pto.grad(lambda x: f(pnp, x))(_COMPLEX_INPUTS[given](pnp))
    theirs = jax.grad(lambda x: f(jnp, x))(_COMPLEX_INPUTS[given](jnp))
    _check_same(ours, theirs, f"grad {name} of a {given} input")


_CASES = {
    "grad holomorphic x*x": lambda t, m: t.grad(lambda x: x * x, holomorphic=True)(1 + 2j),
    "grad holomorphic 2x (complex64)": lambda t, m: t.grad(
        lambda x: 2 * x, holomorphic=True)(np.complex64(1j)),
    "grad sin of a Python float": lambda t, m: t.grad(m.sin)(2.0),
    "grad x*float32(2) of a Python float": lambda t, m: t.grad(
        lambda x: x * np.float32(2))(2.0),
    "grad (complex, real) inputs": lambda t, m: t.grad(
        lambda x, y: m.abs(x) * y, argnums=(0, 1))(1 + 2j, 2.0),
    "grad (real, complex) inputs": lambda t, m: t.grad(
        lambda x, y: m.abs(x * y), argnums=(0, 1))(2.0, 1 + 2j),
    "value_and_grad abs": lambda t, m: t.value_and_grad(m.abs)(1 + 2j),
    "vjp real and complex outputs": lambda t, m: t.vjp(
        lambda x: (m.abs(x), x * 2), 1 + 2j)[1]((m.asarray(1.0), m.asarray(1 + 0j))),
    "vjp complex output": lambda t, m: t.vjp(lambda x: x * 2, 1 + 2j)[1](m.asarray(1 + 0j)),
    "jacrev abs": lambda t, m: t.jacrev(m.abs)(1 + 2j),
    "jacrev abs (complex64)": lambda t, m: t.jacrev(m.abs)(np.complex64(1 + 2j)),
    "jacrev holomorphic": lambda t, m: t.jacrev(lambda x: x * x, holomorphic=True)(1 + 2j),
    "jacfwd holomorphic": lambda t, m: t.jacfwd(lambda x: x * x, holomorphic=True)(1 + 2j),
    "jacfwd of a vector": lambda t, m: t.jacfwd(lambda x: m.sin(x) * 2.0)(
        np.float32([1.0, 2.0])),
    "hessian of a Python float": lambda t, m: t.hessian(lambda x: m.abs(x) ** 3)(2.0),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_derivative_dtypes_and_weak_types_match_jax(jax, jnp, name):
    _check_same(_CASES[name](pto, pnp), _CASES[name](jax, jnp), name)
