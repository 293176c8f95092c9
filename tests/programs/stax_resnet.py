"""A small ResNet in the style of JAX's resnet50 example on ``jax.example_libraries``: a
``GeneralConv(('HWCN', 'OIHW', 'NHWC'))`` stem, ``BatchNorm``, ``MaxPool``, convolution blocks
(``FanOut(2)``, ``parallel(main, shortcut)``, ``FanInSum``) and identity blocks whose last
convolution's width comes from ``stax.shape_dependent``; ``AvgPool``, ``Flatten``, ``Dense``,
``LogSoftmax``; ``optimizers.momentum`` in a jitted update. Program tests."""
import jax.numpy as jnp
from jax import grad, jit, random
from jax.example_libraries import optimizers, stax
from jax.example_libraries.stax import (AvgPool, BatchNorm, Conv, Dense, FanInSum, FanOut,
                                        Flatten, GeneralConv, Identity, LogSoftmax, MaxPool,
                                        Relu)


def ConvBlock(kernel_size, filters, strides=(2, 2)):
    f1, f2, f3 = filters
    main = stax.serial(Conv(f1, (1, 1), strides), BatchNorm(), Relu,
                       Conv(f2, (kernel_size, kernel_size), padding="SAME"), BatchNorm(), Relu,
                       Conv(f3, (1, 1)), BatchNorm())
    shortcut = stax.serial(Conv(f3, (1, 1), strides), BatchNorm())
    return stax.serial(FanOut(2), stax.parallel(main, shortcut), FanInSum, Relu)


def IdentityBlock(kernel_size, filters):
    f1, f2 = filters

    def make_main(input_shape):
        return stax.serial(Conv(f1, (1, 1)), BatchNorm(), Relu,
                           Conv(f2, (kernel_size, kernel_size), padding="SAME"), BatchNorm(),
                           Relu, Conv(input_shape[3], (1, 1)), BatchNorm())
    return stax.serial(FanOut(2), stax.parallel(stax.shape_dependent(make_main), Identity),
                       FanInSum, Relu)


def SmallResNet(num_classes):
    return stax.serial(
        GeneralConv(("HWCN", "OIHW", "NHWC"), 8, (5, 5), (2, 2), "SAME"), BatchNorm(), Relu,
        MaxPool((3, 3), strides=(2, 2)),
        ConvBlock(3, [4, 4, 8], strides=(1, 1)), IdentityBlock(3, [4, 4]),
        ConvBlock(3, [8, 8, 16]), IdentityBlock(3, [8, 8]),
        AvgPool((2, 2)), Flatten, Dense(num_classes), LogSoftmax)


def main(images, labels, steps=2):
    """images: (H, W, C, N) as the example feeds them; labels: (N, classes) one-hot."""
    init_fun, predict_fun = SmallResNet(labels.shape[1])
    _, params = init_fun(random.PRNGKey(0), images.shape)
    loss = lambda params, batch: -jnp.sum(predict_fun(params, batch[0]) * batch[1])
    opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)

    @jit
    def update(i, opt_state, batch):
        return opt_update(i, grad(loss)(get_params(opt_state), batch), opt_state)

    opt_state = opt_init(params)
    for i in range(steps):
        opt_state = update(i, opt_state, (images, labels))
    params = get_params(opt_state)
    return params, loss(params, (images, labels))
