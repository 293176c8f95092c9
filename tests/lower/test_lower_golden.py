"""Golden PTO-AS and PTO C++ for add, softmax, layer_norm and matmul+bias+gelu.

Set PTOJAX_REGEN_GOLDEN=1 to rewrite the files after an intended change to the emitters,
and review the diff. The text must be deterministic: names and offsets are stable."""
import os
import pathlib

import pytest

from lower_cases import GOLDEN, lowered

HERE = pathlib.Path(__file__).parent / "golden"
REGEN = os.environ.get("PTOJAX_REGEN_GOLDEN") == "1"


@pytest.mark.parametrize("dialect,ext", [("pto", "pto"), ("pto-cpp", "cpp")])
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden(name, dialect, ext):
    text = str(lowered(name, GOLDEN).as_text(dialect))
    path = HERE / f"{name}.{ext}"
    if REGEN:
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}; run with PTOJAX_REGEN_GOLDEN=1"
    assert text == path.read_text(), f"{path.name} changed; if intended, regenerate with " \
                                     f"PTOJAX_REGEN_GOLDEN=1 and review the diff"


@pytest.mark.parametrize("dialect", ["pto", "pto-cpp"])
def test_text_is_deterministic(dialect):
    first = lowered("layer_norm", GOLDEN).as_text(dialect)
    second = lowered("layer_norm", GOLDEN).as_text(dialect)
    assert first == second
