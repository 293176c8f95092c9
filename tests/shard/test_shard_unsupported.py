"""pto.shard says which primitive it cannot partition and why (every primitive's shard fact
is checked in tests/test_rule_coverage.py)."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.errors import UnsupportedError


def test_nested_shard_is_reported():
    mesh = pto.make_mesh((4,), ("x",))
    inner = pto.shard(lambda a: a * 2, mesh=mesh, in_specs=pto.P("x"), out_specs=pto.P("x"))
    outer = pto.shard(lambda a: inner(a) + 1, mesh=mesh, in_specs=pto.P(), out_specs=pto.P())
    with pytest.raises(UnsupportedError, match="cannot partition `shard_map`.*nesting"):
        outer(np.ones(8, np.float32))
