"""Every primitive states every fact the transforms and backends read (``ptojax.trace.FACTS``),
or says why it has none (``Unsupported(reason)``): adding a primitive means writing its facts
beside it, and forgetting one fails here, naming the primitive and the fact."""
import pytest

import ptojax  # noqa: F401  (defines every primitive)
from ptojax.ops.tile_forms import TileForm
from ptojax.ops.sharding_rules import ShardRule
from ptojax.tile.kernel import tile_kernel_p
from ptojax.tile.ops import (ELEMENTWISE_TILE_PRIMS, TILE_PRIMS, tile_block_index_p,
                             tile_load_p, tile_loop_p, tile_scalar_load_p, tile_store_p)
from ptojax.trace import FACTS, PRIMITIVES, Unsupported

ALL = sorted(PRIMITIVES)
# read by every transform or tool, for every primitive
EVERYWHERE = ("jvp", "batch", "shard", "tile", "cost", "reference")
# tile ops placed by the kernel schedule (lower/schedule.py) rather than by a recipe
SCHEDULED = {tile_load_p, tile_store_p, tile_scalar_load_p, tile_loop_p, tile_kernel_p,
             tile_block_index_p}


def _stated(prim, fact) -> bool:
    return fact in prim.facts


def _has_rule(prim, fact) -> bool:
    return prim.fact(fact) is not None


def _elementwise_tile_form(prim) -> bool:
    form = prim.fact("tile")
    return form is not None and form.kind == "elementwise"


@pytest.mark.parametrize("fact", EVERYWHERE)
@pytest.mark.parametrize("name", ALL)
def test_every_primitive_states_the_fact(name, fact):
    prim = PRIMITIVES[name]
    assert _stated(prim, fact), \
        f"primitive `{name}` states no `{fact}` fact ({FACTS[fact]}); define it beside the " \
        f"primitive, or Unsupported('why') if it has none"


@pytest.mark.parametrize("name", ALL)
def test_linear_primitives_and_only_they_transpose(name):
    prim = PRIMITIVES[name]
    if prim.linear:
        assert _stated(prim, "transpose"), f"linear primitive `{name}` has no transpose"
    else:
        assert not _has_rule(prim, "transpose"), \
            f"`{name}` has a transpose rule but is not declared linear=True"


@pytest.mark.parametrize("name", ALL)
def test_tile_ops_and_elementwise_tile_forms_have_a_pto_recipe(name):
    """The recipe feeds both emitters (PTO-AS and PTO C++)."""
    prim = PRIMITIVES[name]
    needs = (prim in TILE_PRIMS and prim not in SCHEDULED) or _elementwise_tile_form(prim)
    if needs:
        assert callable(prim.fact("pto")), f"`{name}` has a tile form but no PTO recipe"
    else:
        assert not _has_rule(prim, "pto"), f"`{name}` has a PTO recipe but no tile op"


@pytest.mark.parametrize("name", ALL)
def test_elementwise_tile_forms_have_a_host_function(name):
    """Fused host kernels compute one element of an elementwise op with its host fact."""
    prim = PRIMITIVES[name]
    if _elementwise_tile_form(prim):
        assert _has_rule(prim, "host"), f"`{name}` is tiled but has no host function"
        assert prim in ELEMENTWISE_TILE_PRIMS


@pytest.mark.parametrize("name", ALL)
def test_facts_have_their_forms(name):
    prim = PRIMITIVES[name]
    for fact, value in prim.facts.items():
        if type(value) is Unsupported:
            assert value.reason and value.reason[0].islower(), \
                f"`{name}`'s unsupported {fact} needs a reason a user can read"
            continue
        if fact == "tile":
            assert isinstance(value, TileForm), f"`{name}`: tile fact is not a TileForm"
        elif fact == "shard":
            assert isinstance(value, ShardRule), f"`{name}`: shard fact is not a ShardRule"
        elif fact == "host":
            assert isinstance(value, str) or callable(value)
        else:
            assert callable(value), f"`{name}`: {fact} fact is not callable"


def test_a_fact_is_stated_once():
    prim = PRIMITIVES["exp"]
    with pytest.raises(ValueError, match="already defined"):
        prim.define(jvp=prim.facts["jvp"])
    with pytest.raises(ValueError, match="unknown fact"):
        prim.define(jvpp=None)
