"""Step-size schedules: functions of the step index ``i`` (a Python int or an integer array,
e.g. a traced loop counter) returning the step size."""
from ptojax import numpy as jnp


def constant(step_size):
    """``step_size`` at every step.

    >>> from ptojax.example_libraries import optimizers
    >>> optimizers.constant(0.1)(1000)
    0.1
    """
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``.

    >>> from ptojax.example_libraries import optimizers
    >>> schedule = optimizers.exponential_decay(1.0, decay_steps=10, decay_rate=0.5)
    >>> schedule(0), schedule(10), schedule(20)
    (1.0, 0.5, 0.25)
    """
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)``; with ``staircase`` the ratio
    ``i / decay_steps`` is floored (the step size drops every ``decay_steps`` steps).

    >>> from ptojax.example_libraries import optimizers
    >>> schedule = optimizers.inverse_time_decay(1.0, decay_steps=2, decay_rate=1.0)
    >>> schedule(2), schedule(3)
    (0.5, 0.4)
    >>> stairs = optimizers.inverse_time_decay(1.0, 2, 1.0, staircase=True)
    >>> stairs(2), stairs(3)
    (Array(0.5, dtype=float32, weak_type=True), Array(0.5, dtype=float32, weak_type=True))
    """
    def schedule(i):
        if staircase:
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
        return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` at step 0 to ``final_step_size`` at ``decay_steps`` (constant
    after) along ``(1 - i / decay_steps) ** power``.

    >>> from ptojax.example_libraries import optimizers
    >>> schedule = optimizers.polynomial_decay(1.0, decay_steps=4, final_step_size=0.2)
    >>> [float(schedule(i)) for i in (0, 2, 4, 8)]
    [1.0, 0.6000000238418579, 0.20000000298023224, 0.20000000298023224]
    """
    def schedule(step_num):
        fraction_left = 1 - jnp.minimum(step_num, decay_steps) / decay_steps
        return fraction_left ** power * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` where ``k`` counts the ``boundaries`` strictly below the step:
    ``values[0]`` up to and including step ``boundaries[0]``, then ``values[1]``, ...

    >>> from ptojax.example_libraries import optimizers
    >>> schedule = optimizers.piecewise_constant([2, 4], [1.0, 0.5, 0.1])
    >>> [float(schedule(i)) for i in range(6)]
    [1.0, 1.0, 1.0, 0.5, 0.5, 0.10000000149011612]
    """
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError(f"piecewise_constant: boundaries and values must be 1-D sequences, "
                         f"got shapes {boundaries.shape} and {values.shape}")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError(f"piecewise_constant: values must have one more entry than "
                         f"boundaries, got {values.shape[0]} values for "
                         f"{boundaries.shape[0]} boundaries")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule: callables are returned as they are, scalars become ``constant``.

    >>> from ptojax.example_libraries import optimizers
    >>> optimizers.make_schedule(0.1)(7)
    0.1
    >>> optimizers.make_schedule(lambda i: 1.0 / (i + 1))(3)
    0.25
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size must be a scalar or a schedule (a function of the step "
                    f"index), got {type(scalar_or_schedule).__name__} of shape "
                    f"{jnp.shape(scalar_or_schedule)}")
