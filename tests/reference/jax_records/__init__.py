"""The records of JAX's own test files (jax-ml/jax tests/lax_numpy_test.py,
lax_numpy_operators_test.py, lax_numpy_reducers_test.py, lax_test.py, lax_autodiff_test.py,
lax_vmap_op_test.py, fft_test.py) as data, and a runner comparing ptojax with JAX on them.

spec            the record format, JAX's dtype / shape groups and default tolerances
numpy_ops, numpy_operators, numpy_reducers, numpy_fft, lax_ops, lax_autodiff, lax_vmap
                the records
rngs            input generators mimicking JAX's rng kinds
cases           records -> deterministically sampled cases (ids, parameters)
check           one case in ptojax and in JAX, compared; failure reasons
suites          the suites and their sample sizes; all_cases()
known_failures  generated: the cases failing today and why
summary         ``python -m jax_records.summary``: pass rates, failure categories
"""
