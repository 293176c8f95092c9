"""A VAE in the style of JAX's mnist_vae example on ``jax.example_libraries``: a stax encoder
ending in ``FanOut(2)`` and ``parallel(Dense, serial(Dense, Softplus))`` (mean and variance),
a stax decoder, the reparameterised ELBO, ``optimizers.momentum``, and each epoch one jitted
``lax.fori_loop`` over batches whose keys come from ``random.fold_in``. Program tests."""
import jax.numpy as jnp
from jax import grad, jit, lax, random
from jax.example_libraries import optimizers, stax
from jax.example_libraries.stax import Dense, FanOut, Relu, Softplus

LATENT, BATCH = 3, 8

encoder_init, encode = stax.serial(
    Dense(16), Relu, FanOut(2), stax.parallel(Dense(LATENT), stax.serial(Dense(LATENT), Softplus)))
decoder_init, decode = stax.serial(Dense(16), Relu, Dense(16))


def gaussian_kl(mu, sigmasq):
    return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu ** 2. - sigmasq)


def bernoulli_logpdf(logits, x):
    return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))


def elbo(rng, params, images):
    enc_params, dec_params = params
    mu_z, sigmasq_z = encode(enc_params, images)
    z = mu_z + jnp.sqrt(sigmasq_z) * random.normal(rng, mu_z.shape)
    return bernoulli_logpdf(decode(dec_params, z), images) - gaussian_kl(mu_z, sigmasq_z)


def main(train_images, epochs=3):
    num_batches = train_images.shape[0] // BATCH
    enc_rng, dec_rng = random.split(random.PRNGKey(2))
    _, enc_params = encoder_init(enc_rng, (BATCH, train_images.shape[1]))
    _, dec_params = decoder_init(dec_rng, (BATCH, LATENT))
    opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)

    @jit
    def run_epoch(rng, opt_state):
        def body_fun(i, opt_state):
            elbo_rng, data_rng = random.split(random.fold_in(rng, i))
            batch = lax.dynamic_slice_in_dim(train_images, i * BATCH, BATCH)
            batch = random.bernoulli(data_rng, batch)
            loss = lambda params: -elbo(elbo_rng, params, batch) / BATCH
            return opt_update(i, grad(loss)(get_params(opt_state)), opt_state)
        return lax.fori_loop(0, num_batches, body_fun, opt_state)

    opt_state = opt_init((enc_params, dec_params))
    elbos = []
    for epoch in range(epochs):
        opt_state = run_epoch(random.PRNGKey(epoch), opt_state)
        elbos.append(jit(elbo)(random.PRNGKey(100), get_params(opt_state),
                               train_images > 0.5) / train_images.shape[0])
    return get_params(opt_state), jnp.stack(elbos)
