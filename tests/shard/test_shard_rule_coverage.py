"""Every primitive has a row in the shard rule table (``transforms/shard.py``): a sharding
rule, a special per-device form, or an explicit, worded "not supported"."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.errors import UnsupportedError
from ptojax.trace import PRIMITIVES
from ptojax.shard.rules import shard_rules

# tile-level ops only exist inside the body of a tile_kernel equation, which has its row
INSIDE_TILE_KERNELS = {n for n in PRIMITIVES if n.startswith("tile_") and n != "tile_kernel"}


@pytest.mark.parametrize("name", sorted(set(PRIMITIVES) - INSIDE_TILE_KERNELS))
def test_shard_rule_exists(name):
    assert PRIMITIVES[name] in shard_rules, \
        f"primitive {name} has no row in the shard rule table (transforms/shard.py)"


def test_nested_shard_is_reported():
    mesh = pto.make_mesh((4,), ("x",))
    inner = pto.shard(lambda a: a * 2, mesh=mesh, in_specs=pto.P("x"), out_specs=pto.P("x"))
    outer = pto.shard(lambda a: inner(a) + 1, mesh=mesh, in_specs=pto.P(), out_specs=pto.P())
    with pytest.raises(UnsupportedError, match="cannot partition `shard_map`.*nesting"):
        outer(np.ones(8, np.float32))
