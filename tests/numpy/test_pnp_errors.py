"""Bad input to ptojax.numpy raises a specific ptojax error whose message names the operation,
the shapes/dtypes involved and what to do, and whose source is the user's file:line — eagerly
and while tracing under jit. Every case is a one-line lambda: its line is the expected one."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from ptojax.errors import (AxisError, ConcretizationError, DtypeError, IndexingError,
                           IntegerOverflowError, NonArrayLeafError, NoneValueError,
                           NonConcreteBooleanIndexError, PtoError, ShapeError,
                           UnsupportedError)

Y = pnp.ones((4, 5))
BINARY = [pnp.add, pnp.subtract, pnp.multiply, pnp.divide, pnp.maximum, pnp.minimum,
          pnp.power, pnp.equal, pnp.less, pnp.arctan2, pnp.logical_and, pnp.floor_divide,
          pnp.remainder, pnp.hypot, pnp.logaddexp, pnp.copysign]


def case(fn, error, *fragments, id):
    return pytest.param(fn, error, fragments, id=id)


SHAPE_CASES = [
    # a ShapeError is a ValueError, as JAX's (numpy's) error for a ragged list
    case(lambda x: pnp.array([[1, 2], [3]]), ShapeError, "array", "ragged", id="ragged list"),
    *[case(lambda x, f=f: f(x, Y), ShapeError, f.__name__, "(2, 3)", "(4, 5)", "broadcast",
           id=f"{f.__name__} shapes") for f in BINARY],
    case(lambda x: x + Y, ShapeError, "add", "(2, 3)", "(4, 5)", id="operator +"),
    case(lambda x: pnp.where(x > 0, x, Y), ShapeError, "where", "(4, 5)", id="where"),
    case(lambda x: pnp.clip(x, Y), ShapeError, "(2, 3)", "(4, 5)", id="clip"),
    case(lambda x: pnp.concatenate([x, Y]), ShapeError, "concatenate", "(2, 3)", "(4, 5)",
         "axis 0", id="concatenate shapes"),
    case(lambda x: pnp.concatenate([x, pnp.ones(3)]), ShapeError, "concatenate", "rank",
         id="concatenate ranks"),
    case(lambda x: pnp.concatenate([x[0, 0], x[0, 0]]), ShapeError, "zero-dimensional",
         "stack", id="concatenate scalars"),
    case(lambda x: pnp.concatenate([]), ShapeError, "at least one", id="concatenate nothing"),
    case(lambda x: pnp.stack([x, Y]), ShapeError, "stack", "(2, 3)", "(4, 5)", id="stack"),
    case(lambda x: x @ Y, ShapeError, "matmul", "f32[2,3]", "f32[4,5]", "3 vs 4", id="@"),
    case(lambda x: pnp.matmul(pnp.ones((2, 2, 3)), pnp.ones((3, 3, 2))), ShapeError,
         "matmul", "batch", "(2,)", "(3,)", id="matmul batch"),
    case(lambda x: pnp.matmul(x, 2.0), ShapeError, "matmul", "1-D", id="matmul scalar"),
    case(lambda x: pnp.dot(x, Y), ShapeError, "dot", "f32[2,3]", "f32[4,5]", id="dot"),
    case(lambda x: pnp.inner(x, Y), ShapeError, "inner", "size 3", "size 5", id="inner"),
    case(lambda x: pnp.tensordot(x, Y, 1), ShapeError, "tensordot", "size 3", "size 4",
         id="tensordot"),
    case(lambda x: pnp.vdot(x, Y), ShapeError, "vdot", "number of elements", id="vdot"),
    case(lambda x: pnp.einsum("ij,jk->ik", x, Y), ShapeError, "einsum", "'j'", "3", "4",
         id="einsum sizes"),
    case(lambda x: pnp.einsum("ij,jk->ik", x), ShapeError, "einsum", "2 operand specs",
         id="einsum operand count"),
    case(lambda x: pnp.einsum("ijk->i", x), ShapeError, "einsum", "'ijk'", "f32[2,3]",
         id="einsum rank"),
    case(lambda x: pnp.einsum("ij->iz", x), ShapeError, "einsum", "output", id="einsum out"),
    case(lambda x: pnp.einsum("ij->i->j", x), ShapeError, "einsum", "'->'", id="einsum arrows"),
    case(lambda x: pnp.einsum("i1,j->ij", x, x), ShapeError, "einsum", "letters",
         id="einsum characters"),
    case(lambda x: x.reshape(4, 2), ShapeError, "reshape", "f32[2,3]", "(4, 2)",
         id="reshape size"),
    case(lambda x: x.reshape(-1, -1), ShapeError, "reshape", "-1", id="reshape two -1"),
    case(lambda x: pnp.broadcast_to(x, (3, 3)), ShapeError, "broadcast_to", "(2, 3)",
         "(3, 3)", id="broadcast_to"),
    case(lambda x: pnp.squeeze(x, 0), ShapeError, "squeeze", "size 2", id="squeeze"),
    case(lambda x: pnp.split(x, 2, axis=1), ShapeError, "split", "size 3", "array_split",
         id="split"),
    case(lambda x: pnp.tile(x, (2, -1)), ShapeError, "tile", "non-negative", id="tile"),
    case(lambda x: pnp.repeat(x, -1), ShapeError, "repeat", "non-negative", id="repeat"),
    case(lambda x: pnp.repeat(x, np.array([1, 2]), axis=1), ShapeError, "repeat", "(3)",
         id="repeat counts"),
    case(lambda x: pnp.tril(x[0]), ShapeError, "tril", "2 dimensions", "f32[3]", id="tril"),
    case(lambda x: pnp.triu(x[0]), ShapeError, "triu", "2 dimensions", id="triu"),
    case(lambda x: pnp.pad(x, ((1, 1), (1, 1), (1, 1))), ShapeError, "pad", "f32[2,3]",
         id="pad widths"),
    case(lambda x: pnp.pad(x, -1), ShapeError, "pad", "non-negative", id="pad negative"),
    case(lambda x: pnp.max(pnp.zeros((0, 3)), axis=0), ShapeError, "max", "empty", "initial",
         id="max of nothing"),
    case(lambda x: pnp.argmax(pnp.zeros((0, 3)), axis=0), ShapeError, "argmax", "axis 0",
         id="argmax of nothing"),
    case(lambda x: pnp.min(x, where=x > 0), ShapeError, "min", "initial", id="min where"),
    case(lambda x: pnp.zeros(-1), ShapeError, "zeros", "negative", id="zeros negative"),
    case(lambda x: pnp.ones(2.5), ShapeError, "ones", "tuple of ints", id="ones float"),
    case(lambda x: pnp.eye(-1), ShapeError, "eye", "non-negative", id="eye negative"),
    case(lambda x: pnp.linspace(0, 1, -1), ShapeError, "linspace", "non-negative",
         id="linspace"),
    case(lambda x: pnp.arange(0, 5, 0), ShapeError, "arange", "zero", id="arange step"),
]

AXIS_CASES = [
    case(lambda x, f=f: f(x, 5), AxisError, f.__name__, "axis 5", "rank 2",
         id=f"{f.__name__} axis") for f in
    [pnp.sum, pnp.mean, pnp.var, pnp.std, pnp.max, pnp.min, pnp.prod, pnp.any, pnp.all,
     pnp.argmax, pnp.argmin, pnp.cumsum, pnp.cumprod, pnp.sort, pnp.argsort, pnp.flip,
     pnp.squeeze, pnp.count_nonzero]
] + [
    case(lambda x: x.sum(-3), AxisError, "sum", "axis -3", id="method axis"),
    case(lambda x: x.sum((0, 0)), AxisError, "sum", "repeated", id="repeated axis"),
    case(lambda x: x.sum(1.0), AxisError, "sum", "int", id="float axis"),
    case(lambda x: pnp.cumsum(x, (0, 1)), AxisError, "cumsum", "single", id="cumsum tuple"),
    case(lambda x: pnp.expand_dims(x, 5), AxisError, "expand_dims", "axis 5", "rank 3",
         id="expand_dims"),
    case(lambda x: pnp.swapaxes(x, 0, 2), AxisError, "swapaxes", "axis 2", id="swapaxes"),
    case(lambda x: pnp.moveaxis(x, 0, 5), AxisError, "moveaxis", "destination 5",
         id="moveaxis"),
    case(lambda x: pnp.transpose(x, (0, 0)), AxisError, "transpose", "permutation",
         id="transpose"),
    case(lambda x: pnp.concatenate([x, x], axis=2), AxisError, "concatenate", "axis 2",
         id="concatenate axis"),
    case(lambda x: pnp.stack([x, x], axis=4), AxisError, "stack", "axis 4", id="stack axis"),
    case(lambda x: pnp.split(x, 2, axis=3), AxisError, "split", "axis 3", id="split axis"),
    case(lambda x: pnp.take(x, pnp.array([0]), axis=3), AxisError, "take", "axis 3",
         id="take axis"),
    case(lambda x: pnp.take_along_axis(x, pnp.zeros((2, 3), pnp.int32), 2), AxisError,
         "take_along_axis", "axis 2", id="take_along_axis axis"),
    case(lambda x: pnp.roll(x, 1, 3), AxisError, "roll", "axis 3", id="roll axis"),
    case(lambda x: pnp.repeat(x, 2, 3), AxisError, "repeat", "axis 3", id="repeat axis"),
    case(lambda x: pnp.tensordot(x, x, ([0], [5])), AxisError, "tensordot", "axis 5",
         id="tensordot axes"),
    case(lambda x: lax.reduce_sum(x, (2,)), AxisError, "reduce_sum", "axis 2",
         id="lax axis"),
]

INDEX_CASES = [
    case(lambda x: x[:, :0][0, 1], IndexingError, "index 1", "axis 1", "size 0",
         id="empty axis"),
    case(lambda x: x[0, 0, 0], IndexingError, "too many indices", "f32[2,3]", id="too many"),
    case(lambda x: x[..., 0, ...], IndexingError, "ellipsis", id="two ellipses"),
    case(lambda x: x[np.ones((3, 3), bool)], IndexingError, "mask", "(3, 3)", "(2, 3)",
         id="mask shape"),
    case(lambda x: x[1.5], DtypeError, "x[idx]", "float", id="float index"),
    case(lambda x: x[np.array([0.5])], DtypeError, "integer or boolean", "float64",
         id="float index array"),
    case(lambda x: x["a"], DtypeError, "x[idx]", "str", id="str index"),
    case(lambda x: x[np.array([0, 1]), np.array([0, 1, 2])], ShapeError, "(2,)", "(3,)",
         id="index arrays broadcast"),
    case(lambda x: x.at[0].set(pnp.ones(4)), ShapeError, "x.at[idx].set", "f32[4]", "(3,)",
         id="at values shape"),
    case(lambda x: x[:, :0].at[0, 0].add(1.0), IndexingError, "x.at[idx].add", "size 0",
         id="at empty axis"),
    case(lambda x: x[1.5:], DtypeError, "x[idx]", "slice", "float", id="float slice"),
    case(lambda x: x.at[0].get(mode="bad"), IndexingError, "mode", id="at get mode"),
    case(lambda x: pnp.take(x, pnp.array([0.5])), DtypeError, "take", "integers",
         id="take float indices"),
    case(lambda x: pnp.take(x, 0, mode="bad"), IndexingError, "take", "mode", id="take mode"),
    case(lambda x: pnp.take_along_axis(x, pnp.array([0]), 0), IndexingError,
         "take_along_axis", "rank", id="take_along_axis rank"),
]

DTYPE_CASES = [
    case(lambda x: pnp.array(np.array([1 + 2j], np.clongdouble)), DtypeError, "array",
         "complex256", "supported", id="long complex array"),
    case(lambda x: pnp.asarray(np.array([object()])), DtypeError, "asarray", "object",
         id="object array"),
    case(lambda x: pnp.asarray([1, "a"]), DtypeError, "asarray", "str", id="string list"),
    case(lambda x: x.astype(np.clongdouble), DtypeError, "astype", "clongdouble",
         id="astype long complex"),
    case(lambda x: pnp.zeros(3, dtype="float128"), DtypeError, "zeros", "float128",
         id="zeros float128"),
    case(lambda x: pnp.sum(x, dtype="c32"), DtypeError, "sum", "c32", id="sum dtype"),
    case(lambda x: pnp.bitwise_and(x, x), DtypeError, "bitwise_and", "f32[2,3]", "integer",
         id="bitwise float"),
    case(lambda x: pnp.left_shift(x, 1), DtypeError, "left_shift", "integer", id="shift"),
    case(lambda x: pnp.power(pnp.ones(3, pnp.int32), -1), DtypeError, "power", "negative",
         "float", id="negative int power"),
    case(lambda x: pnp.add(pnp.ones(2, pnp.float8_e4m3fn), pnp.ones(2, pnp.float16)),
         DtypeError, "f8e4m3fn", "f16", "astype", id="no common dtype"),
    case(lambda x: pnp.asarray(2**40), IntegerOverflowError, "asarray", "int32",
         "too large to convert", id="int too large"),
    case(lambda x: x.astype(pnp.int32) + 2**40, IntegerOverflowError, "add", "1099511627776",
         "int32", id="int too large for an array"),
    case(lambda x: x * 2**40, IntegerOverflowError, "multiply", "int32", id="int next to f32"),
    case(lambda x: pnp.array(2**40, dtype=pnp.int32), IntegerOverflowError, "array", "i32",
         id="int too large for dtype"),
    case(lambda x: pnp.array([300], dtype=pnp.int8), IntegerOverflowError, "array", "300",
         id="list too large for dtype"),
    case(lambda x: x.astype(pnp.int32).at[0].set(2**40), IntegerOverflowError, "x.at",
         "1099511627776", id="at set int too large"),
    case(lambda x: pnp.full(2, 2**70, dtype=pnp.int8), IntegerOverflowError,
         "1180591620717411303424", id="int beyond 64 bits"),
]

LEAF_CASES = [
    case(lambda x: pnp.add(x, None), NonArrayLeafError, "add", "NoneType", id="None"),
    case(lambda x: x + "a", NonArrayLeafError, "add", "str", id="str operand"),
    case(lambda x: pnp.sum({"a": 1}), NonArrayLeafError, "sum", "dict", id="dict"),
    case(lambda x: pnp.array([1, None]), NoneValueError, "array", "None", id="None in list"),
    case(lambda x: pnp.outer(x, object()), NonArrayLeafError, "outer", "object",
         id="object operand"),
]

UNSUPPORTED_CASES = [
    case(lambda x: pnp.sum(x, out=x), UnsupportedError, "sum", "out=", id="out"),
    case(lambda x: pnp.pad(x, 1, mode="sideways"), UnsupportedError, "pad", "'sideways'",
         "edge", id="pad mode"),
    case(lambda x: pnp.sort(x, order="a"), UnsupportedError, "sort", "order", id="sort order"),
    case(lambda x: pnp.round(pnp.arange(3), -1), UnsupportedError, "round", "i32[3]",
         id="round integers"),
]

# Python's and numpy's own exceptions raised on behalf of the user: still instances of the
# builtin class (``except MemoryError`` works), and PtoErrors naming the user's line.
BUILTIN_CASES = [
    case(lambda x: x[::0], ValueError, "x[idx]", "step cannot be zero", id="slice step 0"),
    case(lambda x: len(x[0, 0]), TypeError, "len()", id="len of 0-d"),
    case(lambda x: iter(x[0, 0]), TypeError, "iteration", id="iter of 0-d"),
    case(lambda x: pnp.broadcast_to(x, (10**10, 10**10, 2, 3)) * 2, ValueError, "too large",
         id="huge broadcast"),
    case(lambda x: pnp.zeros((10**7, 10**7)) + x[0, 0], MemoryError, "allocate",
         id="out of memory"),
]

ALL_CASES = (SHAPE_CASES + AXIS_CASES + INDEX_CASES + DTYPE_CASES + LEAF_CASES +
             UNSUPPORTED_CASES + BUILTIN_CASES)


def _assert_reported(excinfo, fn, error, fragments):
    err = excinfo.value
    assert isinstance(err, error) and isinstance(err, PtoError), repr(err)
    for fragment in fragments:
        assert fragment.lower() in err.message.lower(), \
            f"{fragment!r} missing from: {err.message}"
    assert err.source is not None, f"no source in: {err}"
    assert (err.source.file, err.source.line) == (__file__, fn.__code__.co_firstlineno), \
        f"source {err.source} is not the failing line"
    assert "test_pnp_errors.py" in str(err)


@pytest.mark.parametrize("fn, error, fragments", ALL_CASES)
def test_eager_errors_name_the_op_and_the_users_line(fn, error, fragments):
    with pytest.raises(error) as excinfo:
        fn(pnp.ones((2, 3)))
    _assert_reported(excinfo, fn, error, fragments)


@pytest.mark.parametrize("fn, error, fragments", ALL_CASES)
def test_errors_while_tracing_name_the_op_and_the_users_line(fn, error, fragments):
    with pytest.raises(error) as excinfo:
        pto.jit(fn)(pnp.ones((2, 3)))
    _assert_reported(excinfo, fn, error, fragments)


TRACED_ONLY = [
    case(lambda x: pnp.where(x > 0), ConcretizationError, "nonzero", "size=",
         id="where one arg"),
    # an IndexError, as JAX's NonConcreteBooleanIndexError
    case(lambda x: x[x > 0], NonConcreteBooleanIndexError, "mask", "pnp.where",
         id="traced mask"),
    case(lambda x: pnp.arange(x.sum()), ConcretizationError, "arange", "concrete",
         id="traced arange"),
    case(lambda x: pnp.linspace(0, 1, x[0, 0].astype(int)), ConcretizationError,
         "linspace", "num", id="traced linspace"),
]


@pytest.mark.parametrize("fn, error, fragments", TRACED_ONLY)
def test_values_that_set_a_shape_must_be_concrete_under_jit(fn, error, fragments):
    with pytest.raises(error) as excinfo:
        pto.jit(fn)(pnp.ones((2, 3)))
    _assert_reported(excinfo, fn, error, fragments)
