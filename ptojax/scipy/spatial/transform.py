"""``pto.scipy.spatial.transform``: JAX's ``Rotation`` and ``Slerp``.

A ``Rotation`` is a namedtuple (so a pytree) of unit quaternions ``quat``, scalar last, of
shape ``(4,)`` (a single rotation) or ``(n, 4)``. Every conversion is written on the last
axis of whole arrays (no per-rotation loop): rotation matrices, rotation vectors (with
Taylor series below 1e-3 rad, and a safe angle in the other branch so gradients stay finite
at the identity), modified Rodrigues parameters, Euler angles (SciPy's quaternion-to-Euler
algorithm, the axis sequence fixed at trace time) and composition (the Hamilton product).
``Slerp`` interpolates between key rotations at constant angular velocity: the rotation
vector of each step, scaled by the fraction of the step elapsed.

Beyond JAX: ``identity(num)`` stacks ``num`` identities and ``random(key, num)`` draws
uniform rotations (normalized Gaussian quaternions), where JAX raises (AssertionError,
NotImplementedError).
"""
from __future__ import annotations

import math
import re
import typing

from ptojax import numpy as pnp
from ptojax import random as prandom
from ptojax.public import add_examples, dir_function


def _norm(v):
    return pnp.sqrt(pnp.sum(v * v, axis=-1))


def _norm_at_zero_flat(v):
    """``_norm(v)``, whose derivative at ``v = 0`` is 0 rather than NaN (the rotation
    vector series use only its square, which is flat there)."""
    squared = pnp.sum(v * v, axis=-1)
    positive = squared > 0
    return pnp.where(positive, pnp.sqrt(pnp.where(positive, squared, 1)), 0)


def _normalize(quat):
    return quat / _norm(quat)[..., None]


def _inexact(x):
    x = pnp.asarray(x)
    return x if pnp.issubdtype(x.dtype, pnp.inexact) else x.astype(
        pnp.result_type(x.dtype, pnp.float32))


def _compose(p, q):
    """The Hamilton product ``p q`` (the rotation ``q`` then ``p``), broadcasting."""
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    vector = pw * qv + qw * pv + pnp.cross(pv, qv)
    scalar = pw * qw - pnp.sum(pv * qv, axis=-1, keepdims=True)
    return pnp.concatenate([vector, scalar], axis=-1)


def _as_matrix(quat):
    x, y, z, w = (quat[..., i] for i in range(4))
    rows = [[x * x - y * y - z * z + w * w, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), -x * x + y * y - z * z + w * w, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), -x * x - y * y + z * z + w * w]]
    return pnp.stack([pnp.stack(row, axis=-1) for row in rows], axis=-2)


def _from_matrix(matrix):
    """SciPy's choice among four formulas by the largest of the diagonal and the trace."""
    m = _inexact(matrix)
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = pnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [None] * 4
        parts[i] = 1 - trace + 2 * m[..., i, i]
        parts[j] = m[..., j, i] + m[..., i, j]
        parts[k] = m[..., k, i] + m[..., i, k]
        parts[3] = m[..., k, j] - m[..., j, k]
        candidates.append(pnp.stack(parts, axis=-1))
    candidates.append(pnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                 m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    choice = pnp.argmax(decision, axis=-1)
    stacked = pnp.stack(candidates, axis=-2)
    quat = pnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
    return _normalize(quat)


def _small_angle(angle):
    """``angle`` with the values at most 1e-3 replaced by 1 (for the branch not taken)."""
    return pnp.where(angle <= 1e-3, pnp.ones_like(angle), angle)


def _as_rotvec(quat, degrees):
    quat = pnp.where(quat[..., 3:] < 0, -quat, quat)     # w >= 0: 0 <= angle <= pi
    angle = 2 * pnp.arctan2(_norm_at_zero_flat(quat[..., :3]), quat[..., 3])
    angle2 = angle * angle
    small = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    safe = _small_angle(angle)
    scale = pnp.where(angle <= 1e-3, small, safe / pnp.sin(safe / 2))
    if degrees:
        scale = pnp.rad2deg(scale)
    return scale[..., None] * quat[..., :3]


def _from_rotvec(rotvec, degrees):
    rotvec = _inexact(rotvec)
    if degrees:
        rotvec = pnp.deg2rad(rotvec)
    angle = _norm_at_zero_flat(rotvec)
    angle2 = angle * angle
    small = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    safe = _small_angle(angle)
    scale = pnp.where(angle <= 1e-3, small, pnp.sin(safe / 2) / safe)
    return pnp.concatenate([scale[..., None] * rotvec, pnp.cos(angle / 2)[..., None]], -1)


def _as_mrp(quat):
    sign = pnp.where(quat[..., 3:] < 0, -1.0, 1.0).astype(quat.dtype)
    return sign * quat[..., :3] / (1 + sign * quat[..., 3:])


def _from_mrp(mrp):
    mrp = _inexact(mrp)
    squared_plus_1 = pnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return pnp.concatenate([2 * mrp[..., :3], 2 - squared_plus_1], -1) / squared_plus_1


def _canonical(quat):
    """``quat`` or ``-quat``, whichever has its first nonzero of (w, x, y, z) positive."""
    x, y, z, w = (quat[..., i] for i in range(4))
    negate = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return pnp.where(negate[..., None], -quat, quat)


def _axes(seq):
    """The axis indices of an Euler sequence and whether it is extrinsic (lower case)."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(a) for a in seq.lower()], extrinsic


def _elementary(axis, angle):
    parts = [pnp.zeros_like(angle)] * 3 + [pnp.cos(angle / 2)]
    parts[axis] = pnp.sin(angle / 2)
    return pnp.stack(parts, axis=-1)


def _from_euler(seq, angles, degrees):
    axes, extrinsic = _axes(seq)
    angles = pnp.atleast_1d(_inexact(angles))
    if angles.shape[-1] != len(axes):
        raise ValueError(f"Expected angles of shape (..., {len(axes)}) for seq {seq!r}, "
                         f"got shape {angles.shape}.")
    if degrees:
        angles = pnp.deg2rad(angles)
    result = _elementary(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], start=1):
        step = _elementary(axis, angles[..., n])
        result = _compose(step, result) if extrinsic else _compose(result, step)
    return result


def _as_euler(quat, seq, degrees):
    """SciPy's (and JAX's) quaternion-to-Euler formulas, gimbal lock included."""
    axes, extrinsic = _axes(seq)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = [quat[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * pnp.arctan2(pnp.hypot(c, d), pnp.hypot(a, b))
    eps = 1e-7
    case = pnp.where(pnp.abs(middle) <= eps, 1, pnp.where(pnp.abs(middle - math.pi) <= eps,
                                                          2, 0))
    half_sum, half_diff = pnp.arctan2(b, a), pnp.arctan2(d, c)
    angles = [2 * half_sum, middle, pnp.zeros_like(middle)]
    angles[0] = pnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    first, third = (0, 2) if extrinsic else (2, 0)
    angles[first] = pnp.where(case == 0, half_sum - half_diff, angles[first])
    angles[third] = pnp.where(case == 0, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - math.pi / 2
    out = (pnp.stack(angles, axis=-1) + math.pi) % (2 * math.pi) - math.pi
    return pnp.rad2deg(out) if degrees else out


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, as unit quaternions ``quat`` (scalar last), one
    ``(4,)`` or a stack ``(n, 4)``. Build one with the ``from_*`` class methods."""

    quat: typing.Any

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        """The rotations of ``rotations`` (a sequence of Rotation) in one Rotation."""
        return cls(pnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False):
        """The rotations by ``angles`` (..., len(seq)) about the axes ``seq``: up to three
        of "xyz" (extrinsic, fixed axes) or "XYZ" (intrinsic, rotating axes)."""
        if not 1 <= len(seq) <= 3:
            raise ValueError(f"Expected axis specification to be a non-empty string of upto "
                             f"3 characters, got {seq}")
        return cls(_from_euler(seq, angles, degrees))

    @classmethod
    def from_matrix(cls, matrix):
        """The rotations of the rotation matrices ``matrix`` (..., 3, 3)."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp):
        """The rotations of the modified Rodrigues parameters ``mrp`` (..., 3)."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat):
        """The rotations of the quaternions ``quat`` (..., 4), scalar last (normalized)."""
        return cls(_normalize(_inexact(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False):
        """The rotations of the rotation vectors ``rotvec`` (..., 3): axis times angle."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """The identity rotation (``num`` of them stacked, if given)."""
        quat = pnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else pnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key, num: int | None = None):
        """Uniformly distributed random rotations (``num`` of them, else one), drawn with
        ``random_key`` as normalized Gaussian quaternions."""
        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(prandom.normal(random_key, shape)))

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:
        """The composition: ``other`` applied first, then ``self``."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """The vectors (..., 3) rotated (by the inverse rotation if ``inverse``)."""
        matrix = self.as_matrix()
        matrix = pnp.where(inverse, pnp.swapaxes(matrix, -1, -2), matrix)
        vectors = pnp.asarray(vectors)
        return pnp.matmul(matrix, vectors[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False):
        """The Euler angles (..., 3) about the three axes ``seq`` ("xyz"-style extrinsic or
        "XYZ"-style intrinsic), each in [-pi, pi)."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        return _as_euler(self.quat, seq, degrees)

    def as_matrix(self):
        """The rotation matrices (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """The modified Rodrigues parameters (..., 3) (of the rotation by at most pi)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        """The rotation vectors (..., 3): the axis times the angle (at most pi)."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """The quaternions (..., 4), scalar last (first if ``scalar_first``); with
        ``canonical``, the sign with w >= 0 (ties broken by x, y, z)."""
        quat = _canonical(self.quat) if canonical else self.quat
        return pnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self):
        """The inverse rotations."""
        return Rotation(self.quat * pnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angles in radians, in [0, pi]."""
        return 2 * pnp.arctan2(_norm(self.quat[..., :3]), pnp.abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation: the eigenvector of ``sum w q q^T`` with the
        largest eigenvalue."""
        dtype = self.quat.dtype
        w = pnp.ones(self.quat.shape[0], dtype) if weights is None else \
            pnp.asarray(weights, dtype=dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(f"Expected `weights` to have number of values equal to number "
                             f"of rotations, got {w.shape[0]} values and {len(self)} "
                             "rotations.")
        k = (w[None, :] * self.quat.T) @ self.quat
        _, vectors = pnp.linalg.eigh(k)
        return Rotation(vectors[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation (``quat`` of shape (4,))."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation of key rotations at key times; build one with
    ``Slerp.init(times, rotations)`` and call it with the times to interpolate at."""

    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations: Rotation):
        """The interpolator through ``rotations`` (at least 2) at the increasing ``times``."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = pnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError(f"Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        starts = Rotation(rotations.quat[:-1])
        steps = starts.inv() * Rotation(rotations.quat[1:])
        return cls(times=times, timedelta=pnp.diff(times), rotations=starts,
                   rotvecs=steps.as_rotvec())

    def __call__(self, times):
        """The rotations at ``times`` (a scalar gives a single rotation)."""
        t = pnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = pnp.atleast_1d(t)
        step = pnp.clip(pnp.searchsorted(self.times, t) - 1, 0, self.times.shape[0] - 2)
        fraction = (t - self.times[step]) / self.timedelta[step]
        result = self.rotations[step] * Rotation.from_rotvec(
            self.rotvecs[step] * fraction[:, None])
        return result[0] if single else result


__all__ = ["Rotation", "Slerp"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
Rotation:
    >>> from ptojax.scipy.spatial.transform import Rotation
    >>> r = Rotation.from_euler("z", 90, degrees=True)
    >>> r.as_rotvec().round(4)
    Array([0.    , 0.    , 1.5708], dtype=float32)
    >>> (r * Rotation.from_euler("x", 90, degrees=True)).as_matrix().round(4)
    Array([[0., 0., 1.],
           [1., 0., 0.],
           [0., 1., 0.]], dtype=float32)
Slerp:
    >>> from ptojax.scipy.spatial.transform import Rotation, Slerp
    >>> keys = Rotation.from_euler("z", pnp.array([[0.0], [90.0]]), degrees=True)
    >>> Slerp.init([0.0, 1.0], keys)(0.5).as_euler("xyz", degrees=True).round(3)
    Array([ 0.,  0., 45.], dtype=float32)
""")
