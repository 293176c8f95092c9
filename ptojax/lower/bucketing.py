"""A program with symbolic dimensions, run at a bucket: static shapes, padded and masked.

``bucketed(closed, bucket)`` rewrites an IR whose shapes hold symbols (``ir/symbolic.py``)
into a static IR for one *bucket* (a size per symbol, e.g. the next power of two of the
call's size): its first arguments are the call's true sizes (int32 scalars, one per symbol,
in ``bucket``'s order), then the original arguments padded to the bucket; its results are the
original results padded. Every value keeps its true elements in the leading part of each
padded dimension; each equation is rewritten by its primitive's ``bucket`` fact
(``ops/bucketing.py``), which masks or moves what would let padding reach a true element.
An equation without a rule (and not elementwise) makes the program ``Unbucketable``: it
then runs unpadded, on the numpy executor.

The static program compiles like any other (host kernels, tiles), once per bucket, so a
range of sizes costs a compile per bucket used rather than one per size.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.eval.array import Array
from ptojax.ir.core import ClosedIR, Literal, Params, sub_irs
from ptojax.ir.symbolic import evaluate, has_symbols, is_symbolic_shape
from ptojax.ir.types import TensorType
from ptojax.ops.arithmetic import add, mul
from ptojax.ops.bucketing import Unbucketable
from ptojax.trace import trace_flat

SIZE_TYPE = TensorType((), dtypes.int32)


def next_power_of_two(size: int) -> int:
    return 1 << max(size - 1, 0).bit_length()


def bucket_of(size: int, symbol, policy=next_power_of_two) -> int:
    """The bucket of ``size`` for ``symbol``: ``policy(size)`` kept inside the symbol's range
    (and never below ``size``)."""
    bucket = max(int(policy(size)), size)
    return bucket if symbol.hi is None else min(bucket, symbol.hi)


def bucketed(closed: ClosedIR, bucket: dict) -> ClosedIR:
    """``closed`` at ``bucket`` (symbol name -> size): see the module doc."""
    return _trace(bucket, lambda ctx, *args: ctx.evaluate(closed, args),
                  [padded_type(v.type, bucket) for v in closed.ir.invars])


def _trace(bucket: dict, fn, in_types) -> ClosedIR:
    """``fn(ctx, *args)`` traced on the sizes (int32 scalars) and then ``in_types``."""
    names = list(bucket)

    def run(*args):
        return fn(_Context(bucket, dict(zip(names, args[:len(names)]))), *args[len(names):])
    return trace_flat(run, [SIZE_TYPE] * len(names) + list(in_types), "bucketed")


def padded_type(t: TensorType, bucket: dict) -> TensorType:
    return t.update(shape=evaluate(t.shape, bucket)) if is_symbolic_shape(t.shape) else t


class _Context:
    """What the ``bucket`` rules use (``ops/bucketing.py``): the bucket and this call's
    sizes."""

    def __init__(self, bucket: dict, sizes: dict):
        self.bucket = bucket
        self.sizes = sizes
        self.size_args = [sizes[n] for n in bucket]
        self._valid: dict = {}

    def padded(self, value):
        """``value`` (a dim, shape or Params) at the bucket's sizes."""
        if isinstance(value, Params):
            return {k: evaluate(v, self.bucket) for k, v in value.items()}
        return evaluate(value, self.bucket)

    def valid(self, dim):
        """``dim``'s true size in this call, as an int32 scalar."""
        if type(dim) is int:
            return dtypes.int32.type(dim)
        if dim not in self._valid:
            total = None
            for mono, coeff in dim.terms.items():
                term = dtypes.int32.type(coeff)
                for name in mono:
                    term = mul(term, self.sizes[name])
                total = term if total is None else add(total, term)
            self._valid[dim] = total
        return self._valid[dim]

    def padded_type(self, t: TensorType) -> TensorType:
        return padded_type(t, self.bucket)

    def trace(self, fn, in_types) -> ClosedIR:
        """A sub-IR at this bucket: ``fn(inner ctx, *args)`` traced on ``in_types``, taking
        the sizes (pass ``size_args``) before its own arguments."""
        return _trace(self.bucket, fn, in_types)

    def sub_ir(self, closed: ClosedIR) -> ClosedIR:
        """``closed`` at this bucket, taking ``size_args`` before its own arguments."""
        return bucketed(closed, self.bucket)

    def evaluate(self, closed: ClosedIR, args) -> list:
        ir = closed.ir
        env = dict(zip(ir.constvars, closed.consts))
        env.update(zip(ir.invars, args))

        def read(a):   # a literal keeps its type (its numpy value is not a user input)
            return Array(a.value, a.type.weak_type) if type(a) is Literal else env[a]
        for eqn in ir.eqns:
            ins = [read(a) for a in eqn.inputs]
            outs = self._apply(eqn, ins)
            outs = outs if eqn.prim.multiple_results else [outs]
            env.update(zip(eqn.outputs, outs))
        return [read(v) for v in ir.outvars]

    def _apply(self, eqn, ins):
        if not _symbolic(eqn):
            return eqn.prim.bind(*ins, **eqn.params)
        rule = eqn.prim.fact("bucket")
        if rule is not None:
            return rule(self, eqn, *ins)
        if eqn.prim.elementwise:
            return eqn.prim.bind(*ins, **self.padded(eqn.params))
        raise Unbucketable(f"`{eqn.prim.name}` has no rule for padded arrays")


def _symbolic(eqn) -> bool:
    return (any(is_symbolic_shape(a.type.shape) for a in (*eqn.inputs, *eqn.outputs))
            or has_symbols(tuple(eqn.params.values()))
            or any(_ir_symbolic(sub) for sub in sub_irs(eqn.params)))


def _ir_symbolic(closed) -> bool:
    ir = getattr(closed, "ir", closed)
    return any(is_symbolic_shape(v.type.shape) for v in ir.invars) or any(
        _symbolic(e) for e in ir.eqns)
