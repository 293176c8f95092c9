"""jacfwd, jacrev and hessian against JAX: argnums, pytree inputs and outputs, has_aux, and
composition with jit. All JAX references come from one ``jax.jit`` call."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.tree_util import tree_leaves, tree_structure
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(11)
X, Y = RNG.standard_normal(3), RNG.standard_normal((3, 2))
M = RNG.standard_normal((2, 3))
P = {"w": RNG.standard_normal(3), "v": RNG.standard_normal(3)}


def two_outputs(x, y, np_):
    return {"a": np_.sin(x) * y[:, 0], "b": np_.tanh(x @ y)}


def scalar_of_pytree(p, np_):
    return np_.sum(np_.sin(p["w"]) * p["v"] ** 2)


def scalar_of_matrix(m, np_):
    return np_.sum(np_.exp(np_.sin(m)) * m[::-1])


# name -> (kind, fn(np_), args, argnums)
JACOBIANS = {
    f"{kind}_{name}": (kind, fn, args, argnums)
    for kind in ("jacfwd", "jacrev")
    for name, fn, args, argnums in [
        ("vector", lambda np_: lambda x: np_.sin(x) * x[::-1], (X,), 0),
        ("pytree_output_argnum1", lambda np_: lambda x, y: two_outputs(x, y, np_), (X, Y), 1),
        ("pytree_output_both_args", lambda np_: lambda x, y: two_outputs(x, y, np_), (X, Y),
         (0, 1)),
        ("matrix_to_scalar", lambda np_: lambda m: scalar_of_matrix(m, np_), (M,), 0),
    ]
}
HESSIANS = {
    "matrix": (lambda np_: lambda m: scalar_of_matrix(m, np_), (M,)),
    "pytree": (lambda np_: lambda p: scalar_of_pytree(p, np_), (P,)),
}


@pytest.fixture(scope="module")
def jax_jacobians_and_hessians(jax):
    import jax.numpy as jnp

    @jax.jit
    def references():
        jac = {name: getattr(jax, kind)(fn(jnp), argnums=argnums)(*args)
               for name, (kind, fn, args, argnums) in JACOBIANS.items()}
        hess = {name: jax.hessian(fn(jnp))(*args) for name, (fn, args) in HESSIANS.items()}
        return jac, hess
    return references()


def _assert_same_tree(got, expected):
    assert tree_structure(got) == tree_structure(
        pto.tree_util.tree_map(np.asarray, expected))
    for g, e in zip(tree_leaves(got), tree_leaves(expected)):
        assert_close(g, np.asarray(e), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", sorted(JACOBIANS))
def test_jacobian_matches_jax(name, jax_jacobians_and_hessians):
    kind, fn, args, argnums = JACOBIANS[name]
    _assert_same_tree(getattr(pto, kind)(fn(pnp), argnums=argnums)(*args),
                      jax_jacobians_and_hessians[0][name])


@pytest.mark.parametrize("name", sorted(HESSIANS))
def test_hessian_matches_jax(name, jax_jacobians_and_hessians):
    fn, args = HESSIANS[name]
    _assert_same_tree(pto.hessian(fn(pnp))(*args), jax_jacobians_and_hessians[1][name])


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_with_aux(kind):
    jac, aux = getattr(pto, kind)(lambda x: (pnp.sin(x), pnp.cos(x) * 2), has_aux=True)(X)
    assert_close(jac, np.diag(np.cos(X)))
    assert_close(aux, np.cos(X) * 2)


def test_jacrev_of_jacfwd_and_jit_of_hessian():
    third = pto.jacrev(pto.jacfwd(lambda x: pnp.sum(x ** 4)))(X)
    assert_close(third, np.diag(12 * X ** 2))
    hessian = pto.jit(pto.hessian(lambda x: pnp.sum(x ** 3)))(X)
    assert_close(hessian, np.diag(6 * X))


def test_hessian_of_a_custom_vjp_function_differentiates_its_bwd():
    @pto.custom_vjp
    def sin(x):
        return pnp.sin(x)
    sin.defvjp(lambda x: (pnp.sin(x), x), lambda x, g: (g * pnp.cos(x),))
    assert_close(pto.hessian(lambda x: pnp.sum(sin(x)))(X), np.diag(-np.sin(X)))


def test_forward_mode_of_a_custom_vjp_function_is_a_type_error_as_in_jax():
    @pto.custom_vjp
    def sin(x):
        return pnp.sin(x)
    sin.defvjp(lambda x: (pnp.sin(x), x), lambda x, g: (g * pnp.cos(x),))
    for forward in (lambda: pto.jacfwd(sin)(X), lambda: pto.jvp(sin, (X,), (X,))):
        with pytest.raises(TypeError, match="custom_vjp"):
            forward()
