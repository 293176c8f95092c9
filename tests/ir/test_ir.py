"""PTO IR: printing (golden), source lines, verifier, immutability."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from ptojax.errors import IRVerificationError
from ptojax.ir import IR, ClosedIR, Eqn, Literal, Params, TensorType, TileType, Var, verify
from ptojax.ops import arithmetic as ar
from ptojax.autodiff.calls import checkpoint_p

F32 = np.float32


def test_printer_golden():
    def f(a, b):
        return pnp.tanh(a @ b + 1.0)

    ir = pto.make_ir(f)(np.ones((4, 5), F32), np.ones((5, 3), F32))
    assert str(ir) == (
        "{ lambda ; a:f32[4,5] b:f32[5,3]. let\n"
        "    c:f32[4,3] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] a b\n"
        "    d:f32[4,3] = add c 1.0:f32[]\n"
        "    e:f32[4,3] = tanh d\n"
        "  in (e) }")


def test_printer_shows_consts_and_broadcast():
    w = pnp.asarray(np.ones((3,), F32))

    def f(x):
        return x + w

    text = str(pto.make_ir(f)(np.ones((2, 3), F32)))
    assert text.startswith("{ lambda a:f32[3] ; b:f32[2,3]. let")
    assert "broadcast_in_dim[shape=(2, 3) broadcast_dimensions=(1,)] a" in text


def test_source_lines_point_at_user_code():
    def f(x):
        y = pnp.sin(x)  # the line below is what the printer must show
        return y * 2.0

    ir = pto.make_ir(f)(np.ones(3, F32))
    text = ir.pretty(source=True)
    line = f.__code__.co_firstlineno + 1
    assert f"test_ir.py:{line}" in text
    assert ir.eqns[0].source.function == "f"


def test_html_view_highlights():
    html = pto.make_ir(lambda x: pnp.exp(x))(np.ones(2, F32))._repr_html_()
    assert "pto-ir" in html and "exp" in html and "f32[2]" in html


def test_verify_accepts_traced_ir():
    verify(pto.make_ir(lambda x, y: (x * y).sum(axis=0))(np.ones((2, 3), F32),
                                                      np.ones((2, 3), F32)))


def _var(shape=(3,), dtype=dtypes.float32):
    return Var(TensorType(shape, dtype))


def test_verify_rejects_use_before_definition():
    a, b, c = _var(), _var(), _var()
    ir = IR((), [a], [Eqn(ar.add_p, [a, b], [c], Params())], [c])
    with pytest.raises(IRVerificationError, match="used before"):
        verify(ir)


def test_verify_rejects_double_assignment():
    a, b = _var(), _var()
    eqns = [Eqn(ar.neg_p, [a], [b], Params()), Eqn(ar.neg_p, [a], [b], Params())]
    with pytest.raises(IRVerificationError, match="assigned twice"):
        verify(IR((), [a], eqns, [b]))


def test_verify_rejects_wrong_output_type():
    a, b = _var(), _var(shape=(4,))
    with pytest.raises(IRVerificationError, match="infers f32\\[3\\]"):
        verify(IR((), [a], [Eqn(ar.neg_p, [a], [b], Params())], [b]))


def test_verify_rejects_bad_types_into_a_primitive():
    a, b, c = _var(), _var(dtype=dtypes.int32), _var()
    with pytest.raises(IRVerificationError, match="different dtypes"):
        verify(IR((), [a, b], [Eqn(ar.add_p, [a, b], [c], Params())], [c]))


def test_verify_recurses_into_sub_irs():
    a, b = _var(), _var(shape=(5,))
    bad = ClosedIR(IR((), [a], [Eqn(ar.neg_p, [a], [b], Params())], [b]))
    x, y = _var(), _var()
    outer = IR((), [x], [Eqn(checkpoint_p, [x], [y], Params(body=bad))], [y])
    with pytest.raises(IRVerificationError):
        verify(outer)


def test_params_are_immutable_and_hashable():
    p = Params(axes=(0, 1))
    assert hash(p) == hash(Params({"axes": (0, 1)}))
    assert p.replace(axes=(1,))["axes"] == (1,) and p["axes"] == (0, 1)
    with pytest.raises(TypeError):
        p["axes"] = (2,)


def test_types_print_and_compare():
    assert str(TensorType((2, 3), dtypes.bfloat16)) == "bf16[2,3]"
    assert str(TileType((16, 32), dtypes.float16, "UB")) == "f16<UB>[16,32]"
    assert TensorType((2,), dtypes.float32) != TensorType((2,), dtypes.float32, True)
    with pytest.raises(ValueError):
        TileType((16, 16), dtypes.float32, "HBM")


def test_literal_equality_handles_nan():
    t = TensorType((), dtypes.float32)
    assert Literal(np.nan, t) == Literal(np.nan, t)
    assert Literal(1.0, t) != Literal(2.0, t)
