"""``pto.scipy.spatial.transform`` against ``jax.scipy.spatial.transform``: one program
of the shared API (every from_/as_ conversion, canonical and scalar-first quaternions, a
Tait-Bryan and a proper Euler sequence, extrinsic and intrinsic, gimbal lock, apply and
its inverse with broadcasting, composition, inverse, magnitude, weighted mean, indexing,
concatenate, Slerp at scalar and vector times) run on both, for one rotation and a stack;
jit, grad and vmap; JAX's errors. Beyond JAX: identity(num), random, finite gradients at
the identity."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy.spatial.transform import Rotation, Slerp
from helpers import assert_close
from jax_golden import expected

RNG = np.random.RandomState(0)
QUATS = RNG.randn(5, 4).astype(np.float32)
VECTORS = RNG.randn(5, 3).astype(np.float32)
ANGLES = RNG.uniform(-3, 3, (5, 3)).astype(np.float32)
WEIGHTS = RNG.rand(5).astype(np.float32)
# Tait-Bryan and proper Euler sequences (all twelve triple JAX's compile time)
SEQUENCES = ["zyx", "xyx"]
GIMBAL = np.array([[0.3, 0.0, 0.2], [0.3, np.pi / 2, 0.2], [0.1, np.pi, 0.4]], np.float32)


def _program(rotation_cls, slerp_cls, quat, vectors, angles, sequences):
    """Everything the two implementations share, as a dict of arrays."""
    r = rotation_cls.from_quat(quat)
    out = {"quat": r.quat, "matrix": r.as_matrix(), "rotvec": r.as_rotvec(),
           "rotvec_deg": r.as_rotvec(degrees=True), "mrp": r.as_mrp(),
           "magnitude": r.magnitude(), "inv": r.inv().quat, "composed": (r * r.inv()).quat,
           "canonical": r.as_quat(canonical=True),
           "scalar_first": r.as_quat(canonical=True, scalar_first=True),
           "apply": r.apply(vectors), "apply_inverse": r.apply(vectors, inverse=True),
           "from_matrix": rotation_cls.from_matrix(r.as_matrix()).quat,
           "from_rotvec": rotation_cls.from_rotvec(vectors).quat,
           "from_rotvec_deg": rotation_cls.from_rotvec(vectors * 40, degrees=True).quat,
           "from_mrp": rotation_cls.from_mrp(vectors).quat}
    for seq in sequences:
        for s in (seq, seq.upper()):
            out[f"euler_{s}"] = r.as_euler(s)
            out[f"from_euler_{s}"] = rotation_cls.from_euler(s, angles).quat
    out["euler_deg"] = r.as_euler("zyx", degrees=True)
    out["from_euler_deg"] = rotation_cls.from_euler("xyz", angles * 50, degrees=True).quat
    if not r.single:
        out.update({"item": r[2].quat, "slice": r[1:4].quat, "mean": r.mean().as_matrix(),
                    "weighted_mean": r.mean(WEIGHTS).as_matrix(),
                    "apply_broadcast": r.apply(vectors[0]),
                    "concatenate": rotation_cls.concatenate([r, r[:2]]).quat})
        slerp = slerp_cls.init(np.array([0.0, 1.0, 3.0, 3.5, 6.0], np.float32), r)
        out["slerp"] = slerp(np.array([0.0, 0.5, 1.0, 2.2, 3.5, 6.0], np.float32)).quat
        out["slerp_scalar"] = slerp(np.float32(4.1)).quat
        for seq in ("xyz", "ZXZ"):
            out[f"gimbal_{seq}"] = rotation_cls.from_euler(seq, GIMBAL).as_euler(seq)
    return out


def _args(single):
    """The program's inputs; WEIGHTS and GIMBAL, which it reads too, ride along so that the
    stored values' digest covers them."""
    quats, vectors, angles = (QUATS[0], VECTORS[0], ANGLES[0]) if single else (QUATS, VECTORS,
                                                                             ANGLES)
    return [quats, vectors, angles, WEIGHTS, GIMBAL]


def _jax_grad_vmap(jax, quats, vectors):
    from jax.scipy.spatial.transform import Rotation as JaxRotation
    grad = jax.grad(lambda v: JaxRotation.from_rotvec(v).apply(vectors).sum()
                    + JaxRotation.from_quat(quats + v.sum()).as_euler("zyx").sum())(vectors)
    return [grad, jax.vmap(lambda q: JaxRotation.from_quat(q).as_matrix())(quats)]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py (JAX in 32-bit mode, as
    the tests run it): the program's values in the order of their sorted names."""
    from jax.scipy.spatial.transform import Rotation as JaxRotation, Slerp as JaxSlerp

    def program(single):
        def fn(*args):
            with jax.enable_x64(False):
                out = jax.jit(lambda q, v, a: _program(JaxRotation, JaxSlerp, q, v, a,
                                                       SEQUENCES[:1] if single else SEQUENCES)
                              )(*args[:3])
                return [out[name] for name in sorted(out)]
        return fn
    for single in (True, False):
        yield f"spatial-transform/{'single' if single else 'stack'}", _args(single), program(
            single)

    def grad_vmap(quats, vectors):
        with jax.enable_x64(False):
            return jax.jit(lambda q, v: _jax_grad_vmap(jax, q, v))(quats, vectors)
    yield "spatial-transform/grad-vmap", [QUATS, VECTORS], grad_vmap
    yield ("spatial-transform/scalar-integer-angles", [np.array([90, 10, 20])],
           lambda _: _jax_scalar_and_integer_angles(jax))


@pytest.mark.parametrize("single", [True, False])
def test_rotation_and_slerp_match_jax(single):
    """Against JAX's values stored by jax_golden.py (JAX compiled the program in 3-13 s)."""
    args = _args(single)
    got = _program(Rotation, Slerp, *args[:3], SEQUENCES[:1] if single else SEQUENCES)
    stored = expected(f"spatial-transform/{'single' if single else 'stack'}", args)
    assert len(stored) == len(got)
    want = dict(zip(sorted(got), stored))
    for name in got:
        tolerance = 2e-3 if ("gimbal" in name or "deg" in name) else 2e-5
        if name.endswith("mean"):
            tolerance = 1e-4
        assert got[name].dtype == want[name].dtype, name
        assert got[name].shape == want[name].shape, name
        assert_close(got[name], np.asarray(want[name]), rtol=tolerance, atol=tolerance)


def _jax_scalar_and_integer_angles(jax):
    from jax.scipy.spatial.transform import Rotation as JaxRotation
    with jax.enable_x64(False):
        return [JaxRotation.from_euler("z", 90, degrees=True).quat,
                JaxRotation.from_euler("zy", np.array([10, 20]), degrees=True).quat,
                JaxRotation.identity().quat]


def test_scalar_and_integer_angles():
    """Against JAX's values stored by jax_golden.py (eagerly, JAX compiled each step)."""
    want, want_pair, want_identity = expected("spatial-transform/scalar-integer-angles",
                                              [np.array([90, 10, 20])])
    assert_close(Rotation.from_euler("z", 90, degrees=True).quat, np.asarray(want))
    assert_close(Rotation.from_euler("zy", np.array([10, 20]), degrees=True).quat,
                 np.asarray(want_pair))
    assert_close(Rotation.identity().quat, np.asarray(want_identity))


def test_jit_grad_vmap():
    stack = Rotation.from_quat(QUATS)
    want_grad, want_vmap = expected("spatial-transform/grad-vmap", [QUATS, VECTORS])
    got_grad = pto.grad(lambda v: Rotation.from_rotvec(v).apply(VECTORS).sum()
                        + Rotation.from_quat(QUATS + v.sum()).as_euler("zyx").sum())(VECTORS)
    assert_close(got_grad, np.asarray(want_grad), rtol=1e-3, atol=1e-3)
    assert_close(pto.vmap(lambda q: Rotation.from_quat(q).as_matrix())(QUATS),
                 np.asarray(want_vmap), rtol=1e-5, atol=1e-6)
    assert_close(pto.jit(lambda r, v: r.apply(v))(stack, VECTORS), stack.apply(VECTORS))
    slerp = Slerp.init([0.0, 1.0, 2.0], stack[:3])
    assert_close(pto.jit(lambda s, t: s(t).quat)(slerp, np.float32(0.3)), slerp(0.3).quat)


def test_beyond_jax():
    zero = np.zeros(3, np.float32)   # JAX's derivative here is NaN (0/0 in the angle)
    assert_close(pto.grad(lambda v: Rotation.from_rotvec(v).as_rotvec().sum())(zero),
                 np.ones(3, np.float32))
    assert Rotation.identity(3).quat.shape == (3, 4)
    drawn = Rotation.random(pto.random.key(0), 1000)
    assert_close(pnp.linalg.norm(drawn.quat, axis=-1), np.ones(1000, np.float32), atol=1e-5)
    assert abs(float(drawn.as_matrix()[:, 2, 2].mean())) < 0.1    # uniform: E[R_zz] = 0
    assert Rotation.random(pto.random.key(1)).single


def test_errors_as_jax():
    one, stack = Rotation.from_quat(QUATS[0]), Rotation.from_quat(QUATS)
    with pytest.raises(TypeError, match="not subscriptable"):
        one[0]
    with pytest.raises(TypeError, match="has no len"):
        len(one)
    with pytest.raises(ValueError, match="upto 3 characters"):
        Rotation.from_euler("xyzx", np.zeros(4))
    with pytest.raises(ValueError, match=r"from \['x', 'y', 'z'\]"):
        Rotation.from_euler("xYz", np.zeros(3))
    with pytest.raises(ValueError, match="consecutive axes to be different"):
        Rotation.from_euler("xxy", np.zeros(3))
    with pytest.raises(ValueError, match="Expected 3 axes"):
        one.as_euler("xy")
    with pytest.raises(ValueError, match="1 dimensional"):
        stack.mean(np.ones((5, 1)))
    with pytest.raises(ValueError, match="number of values equal to number of rotations"):
        stack.mean(np.ones(4))
    with pytest.raises(TypeError, match="must be a `Rotation`"):
        Slerp.init([0.0, 1.0], QUATS[:2])
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init([0.0], stack[:1])
    with pytest.raises(ValueError, match="number of timestamps"):
        Slerp.init([0.0, 1.0], stack)
    with pytest.raises(ValueError, match="at most 1-dimensional"):
        Slerp.init([0.0, 1.0], stack[:2])(np.zeros((2, 2)))
