"""Every primitive has a rule in every transform's table (or is listed here with the reason it
needs none): adding a primitive means adding its rows."""
import pytest

import ptojax  # noqa: F401  (registers every primitive and rule)
from ptojax.trace import PRIMITIVES
from ptojax.autodiff.jvp import jvp_rules
from ptojax.batching.vmap import batch_rules

# primitives that are never differentiated or batched as such (with the reason)
NO_JVP = {
    "custom_lin": "only exists inside a JVP; transposed by the user's bwd",
}
NO_VMAP = {
    "custom_lin": "only exists inside a JVP, which is transposed before anything batches it",
}


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_jvp_rule_exists(name):
    prim = PRIMITIVES[name]
    if prim.name in NO_JVP:
        return
    assert prim in jvp_rules, f"primitive {name} has no JVP rule (transforms/jvp.py)"


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_batch_rule_exists(name):
    prim = PRIMITIVES[name]
    if prim.name in NO_VMAP or name.startswith("tile_") or name == "iota":
        return  # iota has no operands; tile ops only appear inside tile kernels
    assert prim in batch_rules, f"primitive {name} has no batching rule (transforms/vmap.py)"
