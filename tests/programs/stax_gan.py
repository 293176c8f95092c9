"""A small DCGAN on ``jax.example_libraries``, in the style of public stax GANs: a generator
of ``Dense``, a reshape layer written in stax's convention, ``ConvTranspose`` with
``BatchNorm`` and ``Relu`` to ``Tanh`` images; a discriminator of strided ``Conv`` with
``elementwise(leaky_relu, negative_slope=0.2)``; two ``optimizers.adam`` states updated in
turn by jitted steps with ``value_and_grad`` on binary cross-entropy from logits. Program
tests."""
import jax.numpy as jnp
from jax import jit, random, value_and_grad
from jax.example_libraries import optimizers, stax
from jax.nn import leaky_relu, log_sigmoid

LATENT = 4


def Reshape(shape):
    """A stax layer reshaping each example to ``shape``."""
    def init_fun(rng, input_shape):
        return (input_shape[0],) + shape, ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0],) + shape)
    return init_fun, apply_fun


generator_init, generator = stax.serial(
    stax.Dense(4 * 4 * 8), Reshape((4, 4, 8)), stax.BatchNorm(), stax.Relu,
    stax.ConvTranspose(4, (3, 3), strides=(2, 2), padding="SAME"), stax.BatchNorm(), stax.Relu,
    stax.ConvTranspose(1, (3, 3), strides=(1, 1), padding="SAME"), stax.Tanh)

discriminator_init, discriminator = stax.serial(
    stax.Conv(4, (3, 3), strides=(2, 2), padding="SAME"),
    stax.elementwise(leaky_relu, negative_slope=0.2),
    stax.Conv(8, (3, 3), strides=(2, 2), padding="SAME"),
    stax.elementwise(leaky_relu, negative_slope=0.2),
    stax.Flatten, stax.Dense(1))


def bce_from_logits(logits, label):
    """Binary cross-entropy of ``label`` (1 or 0) against sigmoid(logits)."""
    return -jnp.mean(label * log_sigmoid(logits) + (1 - label) * log_sigmoid(-logits))


def main(real_images, steps=3):
    batch = real_images.shape[0]
    g_key, d_key = random.split(random.PRNGKey(0))
    _, g_params = generator_init(g_key, (batch, LATENT))
    _, d_params = discriminator_init(d_key, real_images.shape)
    d_init, d_update, d_get = optimizers.adam(2e-3, b1=0.5)
    g_init, g_update, g_get = optimizers.adam(2e-3, b1=0.5)

    def d_loss(d_params, g_params, z):
        fake = generator(g_params, z)
        return (bce_from_logits(discriminator(d_params, real_images), 1.0) +
                bce_from_logits(discriminator(d_params, fake), 0.0))

    def g_loss(g_params, d_params, z):
        return bce_from_logits(discriminator(d_params, generator(g_params, z)), 1.0)

    @jit
    def step(i, d_state, g_state, key):
        z = random.normal(key, (batch, LATENT))
        d_value, d_grads = value_and_grad(d_loss)(d_get(d_state), g_get(g_state), z)
        d_state = d_update(i, d_grads, d_state)
        g_value, g_grads = value_and_grad(g_loss)(g_get(g_state), d_get(d_state), z)
        return d_state, g_update(i, g_grads, g_state), jnp.stack([d_value, g_value])

    d_state, g_state, losses = d_init(d_params), g_init(g_params), []
    for i in range(steps):
        d_state, g_state, values = step(i, d_state, g_state, random.fold_in(random.PRNGKey(1), i))
        losses.append(values)
    # the generator's samples, not its params: the biases ahead of BatchNorm get gradients
    # that are exactly 0 but for rounding, which adam scales up to +-step size
    samples = generator(g_get(g_state), random.normal(random.PRNGKey(2), (batch, LATENT)))
    return samples, d_get(d_state), jnp.stack(losses)
