"""A traced value used where Python needs a concrete one raises JAX's exception class for that
use (``pto.errors`` has JAX's names): bool -> TracerBoolConversionError, int/index ->
TracerIntegerConversionError, numpy conversion -> TracerArrayConversionError, float ->
ConcretizationTypeError; all are ConcretizationError (a TypeError)."""
import numpy as np
import pytest

import ptojax as pto

USES = {"bool": lambda x: 1.0 if x > 0 else 0.0, "int": lambda x: int(x) + 0.0,
        "index": lambda x: [1.0, 2.0][x.astype("int32")], "numpy": lambda x: np.asarray(x),
        "float": lambda x: float(x)}


@pytest.mark.parametrize("use", sorted(USES))
def test_concretization_errors_have_jax_classes(jax, use):
    with pytest.raises(Exception) as theirs:
        jax.jit(USES[use])(1.0)
    name = type(theirs.value).__name__
    ours_class = getattr(pto.errors, name)
    with pytest.raises(ours_class) as ours:
        pto.jit(USES[use])(1.0)
    assert isinstance(ours.value, pto.errors.ConcretizationError)
    assert isinstance(ours.value, TypeError) and "test_tracer_errors.py" in str(ours.value)
