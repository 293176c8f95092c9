"""The record format, and JAX's dtype and shape groups (x64 disabled: no 64-bit dtypes).

A record is a plain dict made by ``record(fn, **fields)``:

fn        name of the function, ``jnp.fn`` / ``pnp.fn`` (module "numpy") or ``lax.fn`` /
          ``pto.lax.fn`` (module "lax"); a dotted name reaches into submodules. Module
          "operator": ``operator.<fn without underscores>`` on library arrays; module
          "rmethod": ``asarray(y).fn(x)`` (reflected operators).
name      unique name in its suite (default: fn); the case ids start with it.
nargs     number of generated array arguments (default 1; 0 for creation functions).
dtypes    dtype group name (see DTYPES) or list of dtype names; one is drawn per case.
dtype_mode  "same": every array argument has the case dtype; "product" / "cwr": each argument
          its own dtype (itertools.product / combinations_with_replacement of the group);
          "per_arg": dtypes is one group per argument (product); "explicit": dtypes lists the
          per-argument tuples; "kwargs": dtypes lists (dtype, {keyword: value}) pairs.
arg_dtypes  per-argument fixed dtype names overriding the case dtype (None: case dtype).
shapes    shape group name (see SHAPES), or a list of shapes (nargs == 1), or a list of
          per-argument shape tuples; "cwr:<group>" means broadcast-compatible
          combinations_with_replacement of the group, "same:<group>" one shape for all arguments.
combos    list of dicts drawn jointly: "shapes" (per-argument shapes) plus keyword arguments.
kwargs    dict name -> list of values (one drawn per case). Tokens in a list expand per shape of
          the first argument: "@axes" range(-ndim, ndim), "@axes+" range(ndim), "@axes_but_last"
          range(ndim - 1), "@axes_ext"
          range(-ndim, ndim + 1), "@all_axes" tuple(range(ndim)), "@shape", "@size-1",
          "@size//2"; "@dtype" is the case dtype; OMIT leaves the keyword out.
rng       input generator kind (see rngs.py) or a per-argument list of kinds.
consts    list of literal int32 arrays appended to the arguments (traced, like indices).
arg_names keyword names for the array arguments (None: positional), e.g. (None, "where").
positional  keyword values passed positionally after the arrays, e.g. ("dtype",) for
          ``astype(x, dtype, /)``.
pack      "list": the array arguments are passed as one list (concatenate, stack, ...).
tol       JAX's tolerance: a number, or {dtype name: number} over JAX's default table.
modes     which ptojax modes to run: ("eager", "jit") for call suites; JAX is jitted too
          unless "jit" is missing (functions JAX cannot jit without extra arguments).
order, diff_argnums, out_index   autodiff suites: derivative order (1 or 2), the arguments
          differentiated (others are closed over), and which output leaf is differentiated.
Values that are functions or JAX/ptojax objects are written ``Ref("lax.add")`` or
``Ref("lax.GatherDimensionNumbers", offset_dims=(1,), ...)`` and resolved in each library.
"""
from typing import NamedTuple

OMIT = "@omit"

FLOAT = ["bfloat16", "float16", "float32"]
INT = ["int8", "int16", "int32"]
UINT = ["uint8", "uint16", "uint32"]
COMPLEX = ["complex64"]
BOOL = ["bool"]

DTYPES = {
    "float": FLOAT,                                  # jtu.dtypes.all_floating
    "floating": ["float32"],                         # jtu.dtypes.floating
    "int": INT,                                      # jtu.dtypes.all_integer
    "integer": ["int32"],                            # jtu.dtypes.integer
    "uint": UINT,                                    # jtu.dtypes.all_unsigned
    "complex": COMPLEX,
    "bool": BOOL,
    "default": FLOAT + INT,
    "inexact": FLOAT + COMPLEX,
    "grad_inexact": ["float32"] + COMPLEX,           # jtu.dtypes.inexact
    "number": FLOAT + COMPLEX + INT + UINT,
    "all": FLOAT + COMPLEX + INT + UINT + BOOL,
    "int_uint": INT + UINT,
    "int_bool": INT + BOOL,
    "float_int_uint": FLOAT + INT + UINT,
    "default_uint": FLOAT + INT + UINT,
    "default_bool": FLOAT + INT + BOOL,
    "inexact_int": FLOAT + COMPLEX + INT,
    "int_float": INT + FLOAT,
    "number_no_8bit": [d for d in FLOAT + COMPLEX + INT + UINT if d not in ("int8", "uint8")],
    "number_no_bf16": [d for d in FLOAT + COMPLEX + INT + UINT if d != "bfloat16"],
    "all_no_bf16": [d for d in FLOAT + COMPLEX + INT + UINT + BOOL if d != "bfloat16"],
}

NONEMPTY_NONSCALAR = [(4,), (3, 4), (3, 1), (1, 4), (2, 1, 4), (2, 3, 4)]
NONEMPTY_ARRAY = [()] + NONEMPTY_NONSCALAR
EMPTY = [(0,), (0, 4), (3, 0)]
SCALAR = ["np", "py"]          # a numpy scalar, a Python scalar (bool only with x64 disabled)

SHAPES = {
    "nonempty_nonscalar": NONEMPTY_NONSCALAR,
    "nonempty_array": NONEMPTY_ARRAY,
    "one_dim": [(1,), (6,), (12,)],
    "empty": EMPTY,
    "scalar": SCALAR,
    "array": NONEMPTY_ARRAY + EMPTY,
    "nonzerodim": NONEMPTY_NONSCALAR + EMPTY,
    "nonempty": SCALAR + NONEMPTY_ARRAY,
    "all": SCALAR + NONEMPTY_ARRAY + EMPTY,
    "broadcast_compatible": [(), (1,), (3,), (1, 3), (4, 1), (4, 3)],
    "rank2plus": [s for s in NONEMPTY_ARRAY + EMPTY if len(s) >= 2],
    "rank12": [s for s in NONEMPTY_ARRAY + EMPTY if len(s) in (1, 2)],
}

# lax_test_util.compatible_shapes / lax_autodiff_test.compatible_shapes
LAX_SHAPE_GROUPS = [[(3,)], [(3, 4), (3, 1), (1, 4)], [(2, 3, 4), (2, 1, 4)]]
AUTODIFF_SHAPE_GROUPS = [[(3,)], [(), (3, 4), (3, 1), (1, 4)], [(2, 3, 4), (2, 1, 4)]]

# JAX's default tolerances (jax._src.public_test_util) for the dtypes used here.
DEFAULT_TOL = {"bool": 0, "int8": 0, "int16": 0, "int32": 0, "uint8": 0, "uint16": 0,
               "uint32": 0, "bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-6,
               "complex64": 1e-6}
DEFAULT_GRAD_TOL = {"bfloat16": 1e-1, "float16": 1e-2, "float32": 2e-3, "complex64": 1e-3}


class Ref(NamedTuple):
    """A value looked up in the library under test: "lax.add", "numpy.float32", or a
    constructor called with keyword arguments."""
    path: str
    kwargs: tuple = ()

    @classmethod
    def call(cls, path, **kwargs):
        return cls(path, tuple(kwargs.items()))

    def __repr__(self):
        args = ",".join(f"{k}={v}" for k, v in self.kwargs)
        return f"{self.path.split('.')[-1]}({args})" if self.kwargs else self.path


FIELDS = {"name": None, "nargs": 1, "dtypes": "float", "dtype_mode": "same",
          "arg_dtypes": None, "shapes": None, "combos": None, "kwargs": {}, "rng": "default",
          "consts": None, "arg_names": None, "positional": (), "pack": None, "tol": None,
          "modes": ("eager", "jit"), "module": "numpy", "order": 1, "diff_argnums": None,
          "out_index": None}


def record(fn, **fields):
    """A record: ``fn`` and the fields above (unknown fields are an error)."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise TypeError(f"record {fn}: unknown fields {sorted(unknown)}")
    rec = dict(FIELDS, fn=fn, **fields)
    rec["name"] = rec["name"] or fn
    return rec


def lax_record(fn, **fields):
    return record(fn, module="lax", **fields)
