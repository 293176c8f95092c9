"""The PTO instructions of a tile-body equation: its primitive's ``pto`` recipe
(``ptojax/ir/pto.py``), and the instruction subset the emitted C++ may use.

Float -> integer conversion is TCVT with CAST_TRUNC; ptojax's semantics additionally saturate
and send NaN to 0, which a target's TCVT is not documented to guarantee. Nothing here has been
executed on Ascend hardware.
"""
from __future__ import annotations



def lower_eqn(eqn) -> list:
    """PTO instructions for one tile-body equation (loads/stores/loops are scheduled apart)."""
    return eqn.prim.rule("pto", "PTO lowering", eqn.source)(eqn)


# Every instruction the emitted C++ may use (the subset the host header must implement).
INSTRUCTIONS = ("TASSIGN", "TLOAD", "TSTORE", "TEXTRACT", "TMATMUL", "TMATMUL_ACC", "TADD",
                "TSUB", "TMUL", "TDIV", "TMAX", "TMIN", "TADDS", "TSUBS", "TMULS", "TDIVS",
                "TMAXS", "TMINS", "TNEG", "TABS", "TEXP", "TLOG", "TSQRT", "TRSQRT", "TRECIP",
                "TNOT", "TAND", "TOR", "TCMP", "TCMPS", "TSEL", "TCVT", "TMOV", "TEXPANDS",
                "TROWEXPAND", "TCOLEXPAND", "TROWEXPANDADD", "TROWEXPANDSUB",
                "TROWEXPANDMUL", "TROWEXPANDDIV", "TROWEXPANDMAX", "TROWEXPANDMIN",
                "TCOLEXPANDADD", "TCOLEXPANDSUB", "TCOLEXPANDMUL", "TCOLEXPANDDIV",
                "TCOLEXPANDMAX", "TCOLEXPANDMIN", "TROWSUM", "TROWMAX", "TROWMIN", "TCOLSUM",
                "TCI", "TIMG2COL", "TSETFMATRIX", "TSET_IMG2COL_RPT", "TSET_IMG2COL_PADDING")
