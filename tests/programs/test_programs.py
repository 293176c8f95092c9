"""Our own small programs, written in JAX's style against ``jax`` (this directory's *.py), run
twice: by JAX itself (32-bit mode) and by ptojax through the name-only mapping
(``import jax...`` -> ``ptojax...``). Final values must match. They exercise what JAX's
examples do: a VAE epoch in a jitted fori_loop, DP-SGD's per-example gradients, ADVI with
scipy.stats, kernel least squares with Precision, GP regression with config and Cholesky,
SGD whose scan carry holds a typed PRNG key, the sharp-bits pages' behaviours, MAML's
gradient of a gradient, the autobatched log densities' ELBO, and a jaxpr interpreter (JAX's
"custom interpreters" page: ``jax.extend.core``, ``lax.*_p``), and jax.numpy's indexing with
its out-of-bounds modes and errors. The ``stax_*`` programs are built on
``jax.example_libraries`` (stax layers and optimizers) in the style of JAX's examples:
mnist_classifier, mnist_vae, differentially_private_sgd, resnet50, plus Dropout and an
optimizer-state checkpoint, and a small DCGAN (ConvTranspose, BatchNorm, two adam states).
fluidsim, hmm_em, pca_from_scratch and physical_optimization make the calls of JAX's examples
of those names, the way they make them, at small sizes.
``ilqr_mpc`` does what JAX's examples/control.py and its test do (LQR, iterative LQR and
MPC in fori_loops/scans with jacobians), ``newton_bfgs`` what newton_method.py and
bfgs_method.py do (Python loops over eager grad/hessian/inv).
``advi_funnel``, ``gp_vmap_kernel``, ``forward_forward`` and ``dqn_cartpole`` call what JAX's
examples advi.py, gaussian_process_regression.py, forward-forward-mnist.py and
deep_qlearning_cartpole.py call, the way they call it (synthetic data; no plotting, optax or
gym)."""
import os

import numpy as np
import pytest

from helpers import assert_close, load_source
import jax_program_values

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.RandomState(0)
# the stax_* programs' inputs: their own stream, so entries added elsewhere in INPUTS do not
# change them (their JAX results are recorded against a digest of the inputs)
STAX_RNG = np.random.RandomState(1)


def _maml_inputs(rng, steps=6, tasks=4, shots=10, sizes=(1, 16, 16, 1)):
    """An MLP's initial layers and sine tasks y = a sin(x + phase) for maml_sinusoid."""
    params = [((rng.randn(m, n) * np.sqrt(2 / m)).astype(np.float32), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    amp = rng.uniform(0.1, 0.5, (steps, 1, tasks, 1, 1))
    phase = rng.uniform(0, np.pi, (steps, 1, tasks, 1, 1))
    x = rng.uniform(-5, 5, (steps, 2, tasks, shots, 1))
    return params, x.astype(np.float32), (amp * np.sin(x + phase)).astype(np.float32)

def _forward_forward_inputs(rng, n=48, n_test=16, side=8):
    """Synthetic 8x8 uint8 "digits" for forward_forward: train images, labels, a wrong label
    for each (the example's negatives), test images and labels."""
    labels = rng.randint(0, 10, n)
    wrong = np.array([rng.choice(np.setdiff1d(np.arange(10), [k])) for k in labels])
    return ((rng.rand(n, side, side) * 255).astype(np.uint8), labels, wrong,
            (rng.rand(n_test, side, side) * 255).astype(np.uint8), rng.randint(0, 10, n_test))


def _classes(rng, n, d, k):
    """``n`` examples of ``k`` noisy prototypes in ``d`` dimensions, with one-hot labels."""
    labels = rng.randint(0, k, n)
    x = rng.randn(k, d)[labels] + 0.5 * rng.randn(n, d)
    return x.astype(np.float32), np.eye(k, dtype=np.float32)[labels]


INPUTS = {
    "vae_epoch": (RNG.rand(32, 16).astype(np.float32),),
    "dp_sgd": (RNG.randn(12, 4).astype(np.float32),
               np.eye(3, dtype=np.float32)[RNG.randint(0, 3, 12)]),
    "advi_stats": (),
    "kernel_lsq_precision": (RNG.randn(10, 3).astype(np.float32),
                             RNG.randn(10).astype(np.float32)),
    "gp_cholesky": (np.linspace(0, 3, 9, dtype=np.float32)[:, None],
                    np.sin(np.linspace(0, 3, 9)).astype(np.float32),
                    np.linspace(-0.5, 3.5, 5, dtype=np.float32)[:, None]),
    "neural_ode_rk4": (np.linspace(0, 3, 16, dtype=np.float32),
                       np.array([1.0, 0.0], np.float32)),
    "gmm_em": (np.concatenate([RNG.randn(20, 2) * 0.5 + [2, 2], RNG.randn(20, 2) * 0.7 + [-2, 0],
                               RNG.randn(20, 2) * 0.4 + [0, -2]]).astype(np.float32),),
    "lstm_adam": (RNG.randn(8, 4, 1).astype(np.float32),),
    "nbody_verlet": (np.stack(np.meshgrid(np.arange(3) * 1.2, np.arange(2) * 1.2), -1)
                     .reshape(-1, 2).astype(np.float32),
                     (0.1 * RNG.randn(6, 2)).astype(np.float32)),
    "typed_key_sgd": (RNG.randn(24, 3).astype(np.float32), RNG.randn(24).astype(np.float32)),
    "sharp_bits": (),
    "maml_sinusoid": _maml_inputs(RNG),
    "logreg_elbo": (RNG.randn(40, 5).astype(np.float32), RNG.randint(0, 2, 40).astype(np.int32)),
    "jaxpr_interpreter": (RNG.uniform(-1, 1, (4, 3)).astype(np.float32),
                          RNG.randn(3, 2).astype(np.float32)),
    "fancy_indexing": (np.arange(24.0, dtype=np.float32).reshape(2, 3, 4),),
    "stax_classifier": _classes(STAX_RNG, 40, 12, 4),
    "stax_vae": (STAX_RNG.rand(24, 16).astype(np.float32),),
    "stax_dp_conv": (STAX_RNG.rand(6, 8, 8, 1).astype(np.float32),
                     np.eye(3, dtype=np.float32)[STAX_RNG.randint(0, 3, 6)]),
    "stax_resnet": (STAX_RNG.rand(16, 16, 3, 2).astype(np.float32),
                    np.eye(5, dtype=np.float32)[STAX_RNG.randint(0, 5, 2)]),
    "stax_checkpoint": (STAX_RNG.randn(10, 3).astype(np.float32),
                        STAX_RNG.randn(10, 2).astype(np.float32)),
    "stax_gan": ((STAX_RNG.rand(6, 8, 8, 1) * 2 - 1).astype(np.float32),),
    # JAX's own examples/ (fluidsim, hmm_em, pca_from_scratch, physical_optimization) at small
    # sizes: their inputs are made inside, from fixed seeds
    "fluidsim": (),
    "hmm_em": (),
    "pca_from_scratch": (),
    "physical_optimization": (),
    "ilqr_mpc": (np.array([0.3, -0.8], np.float32), np.array([0.2], np.float32)),
    "newton_bfgs": (np.array([1.0, -1.0, 1.0, -1.0], np.float32),),
    # JAX's examples/ (advi, gaussian_process_regression, forward-forward-mnist,
    # deep_qlearning_cartpole) as our own programs: their own stream too
    "advi_funnel": (),
    "gp_vmap_kernel": (),
    "forward_forward": _forward_forward_inputs(np.random.RandomState(2)),
    "dqn_cartpole": (),
}
# loose where a value is a sum over many rounding steps (training trajectories)
RTOL = {"vae_epoch": 2e-4, "dp_sgd": 1e-4, "advi_stats": 1e-4, "kernel_lsq_precision": 1e-4,
        "gp_cholesky": 5e-4, "neural_ode_rk4": 1e-4, "gmm_em": 2e-4, "lstm_adam": 2e-4,
        "nbody_verlet": 2e-4, "typed_key_sgd": 1e-4, "sharp_bits": 1e-6, "maml_sinusoid": 2e-4,
        "logreg_elbo": 1e-4, "jaxpr_interpreter": 1e-5,
        "fancy_indexing": 1e-6, "stax_classifier": 1e-4, "stax_vae": 2e-4, "stax_dp_conv": 1e-4,
        "stax_resnet": 2e-4, "stax_checkpoint": 1e-4, "stax_gan": 2e-4, "fluidsim": 1e-4,
        "hmm_em": 1e-4, "pca_from_scratch": 1e-4, "physical_optimization": 1e-4,
        "ilqr_mpc": 1e-5, "newton_bfgs": 2e-4, "advi_funnel": 1e-4,
        "gp_vmap_kernel": 1e-4, "forward_forward": 1e-4, "dqn_cartpole": 1e-4}


@pytest.mark.parametrize("name", sorted(set(INPUTS) - set(jax_program_values.PROGRAMS)))
def test_program_matches_jax(jax, name):
    path = os.path.join(HERE, name + ".py")
    got = load_source(path, name, mapped=True).main(*INPUTS[name])
    with jax.enable_x64(False):
        want = jax.tree.map(np.asarray, load_source(path, name, mapped=False).main(*INPUTS[name]))
    assert_close(got, want, rtol=RTOL[name], atol=RTOL[name])


@pytest.mark.parametrize("name", jax_program_values.PROGRAMS)
def test_program_matches_recorded_jax(name):
    """Programs whose JAX run takes many seconds: against JAX's recorded result."""
    path = os.path.join(HERE, name + ".py")
    got = load_source(path, name, mapped=True).main(*INPUTS[name])
    assert_close(got, jax_program_values.expected(name, INPUTS[name]), rtol=RTOL[name],
                 atol=RTOL[name])
