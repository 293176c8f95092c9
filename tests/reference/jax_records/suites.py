"""The suites (one per JAX test file, plus the numpy grad records) and their sampled cases.

SAMPLES is the number of cases drawn per record (JAX draws 10 per test); it is sized so that
the whole run stays under ~150 s on a 2-core machine. ``PTOJAX_RECORDS_SAMPLES=n`` overrides
it for a more thorough local run (the known-failures table then only covers the default).
"""
import os
from typing import NamedTuple

from . import (lax_autodiff, lax_ops, lax_vmap, numpy_fft, numpy_operators, numpy_ops,
               numpy_reducers)
from .cases import cases


class Suite(NamedTuple):
    name: str
    records: list
    kind: str            # "call", "grad" or "vmap" (see check.py)
    samples: int
    extra: object = None


SUITES = [
    Suite("numpy", numpy_ops.RECORDS + numpy_operators.RECORDS, "call", 4),
    Suite("numpy_grad", numpy_ops.GRAD_RECORDS, "grad", 4),
    Suite("reducers", numpy_reducers.RECORDS, "call", 5),
    Suite("lax", lax_ops.RECORDS, "call", 4),
    Suite("autodiff", lax_autodiff.RECORDS, "grad", 3),
    Suite("vmap", lax_vmap.RECORDS, "vmap", 3, lax_vmap.in_axes),
    Suite("fft", numpy_fft.RECORDS, "call", 4),
    Suite("fft_grad", numpy_fft.GRAD_RECORDS, "grad", 3),
]


def samples(suite):
    return int(os.environ.get("PTOJAX_RECORDS_SAMPLES", suite.samples))


def check_names(suite):
    names = [r["name"] for r in suite.records]
    dups = {n for n in names if names.count(n) > 1}
    assert not dups, f"{suite.name}: duplicate record names {sorted(dups)}"


class Item(NamedTuple):
    """One test: a case in a mode; ``group`` is the record's cases (JAX runs them at once)."""
    case: object
    mode: str
    kind: str
    group: list

    @property
    def id(self):
        return self.case.id(self.mode)


def all_cases(only=None):
    """[Item, ...] of every suite (or of the suites named in ``only``)."""
    out, seen = [], set()
    for suite in SUITES:
        if only and suite.name not in only:
            continue
        check_names(suite)
        for rec in suite.records:
            group = cases(suite.name, rec, samples(suite), suite.extra)
            for case in group:
                for mode in rec["modes"]:
                    if case.id(mode) not in seen:
                        seen.add(case.id(mode))
                        out.append(Item(case, mode, suite.kind, group))
    return out
