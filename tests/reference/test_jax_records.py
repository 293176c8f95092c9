"""JAX's own test records (jax_records/: lax_numpy_test, lax_numpy_reducers_test, lax_test,
lax_autodiff_test, lax_vmap_op_test) run against ptojax, with JAX (x64 disabled) as the
reference: values within JAX's tolerances, dtypes and shapes; eager and under pto.jit;
jvp / vjp; vmap. Cases listed in jax_records/known_failures.py are strict xfails: fixing one
makes the run fail until ``python -m jax_records.summary --write-known-failures`` (from
tests/reference) regenerates the table.
"""
import pytest

pytest.importorskip("jax")

from jax_records.check import outcome                   # noqa: E402
from jax_records.known_failures import KNOWN_FAILURES   # noqa: E402
from jax_records.suites import all_cases                # noqa: E402

ITEMS = all_cases()


def _param(item):
    reason = KNOWN_FAILURES.get(item.id)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(item, id=item.id, marks=marks)


@pytest.mark.parametrize("item", [_param(it) for it in ITEMS])
def test_jax_record(item):
    result = outcome(item.case, item.mode, item.kind, item.group)
    assert result.ok, f"{result.reason}\n{result.detail}"


def test_known_failures_are_cases():
    """Every known failure names a generated case (the table is regenerated, not edited)."""
    ids = {it.id for it in ITEMS}
    stale = sorted(set(KNOWN_FAILURES) - ids)
    assert not stale, f"{len(stale)} stale known failures, e.g. {stale[:3]}"


def test_jax_outputs_are_stored_for_every_case():
    """The store of JAX's outputs (jax_records/golden.py) covers every case, so the suite
    runs no JAX program for them; regenerate it after adding records."""
    from jax_records import golden
    from jax_records.check import task_key
    if not golden._load():
        pytest.skip("the store was written by another JAX version: the cases run JAX live")
    missing = {task_key(it.case, it.mode, it.kind) for it in ITEMS} - set(golden._store)
    assert not missing, f"{len(missing)} cases not stored, e.g. {sorted(missing)[:3]}"
