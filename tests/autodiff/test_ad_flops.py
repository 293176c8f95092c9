"""ptojax.tools.flops counts what its docstring promises, per primitive and in total."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from ptojax.tools.flops import count_flops, flops_by_primitive


def _ir(fn, *shapes):
    return pto.make_ir(fn)(*[pto.ShapeDtypeStruct(s, np.float32) for s in shapes])


def test_matmul_is_two_m_n_k():
    assert count_flops(_ir(lambda a, b: a @ b, (4, 5), (5, 3))) == 2 * 4 * 3 * 5


def test_batched_dot_general_counts_every_batch():
    ir = _ir(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
             (6, 4, 5), (6, 5, 3))
    assert count_flops(ir) == 2 * 6 * 4 * 3 * 5


def test_elementwise_reductions_and_data_movement():
    def fn(x):
        y = pnp.exp(x) * 2.0                 # 2 elementwise ops on 12 elements
        s = pnp.sum(y, axis=0)               # one add per input element
        moved = pnp.transpose(y)[::-1].reshape(12)   # free
        return s, pnp.concatenate([moved, moved])    # free
    assert flops_by_primitive(_ir(fn, (3, 4))) == {"exp": 12, "mul": 12, "reduce_sum": 12}


def test_sort_and_scatter():
    def fn(x):
        return pnp.sort(x, axis=1), x.at[np.array([0, 2])].add(1.0)
    counts = flops_by_primitive(_ir(fn, (3, 8)))
    assert counts["sort"] == 24 * 3 and counts["scatter"] == 2 * 8


def test_sub_irs_are_counted_recursively():
    remat = pto.checkpoint(lambda x: pnp.sin(x) @ x)
    assert count_flops(_ir(remat, (4, 4))) == 16 + 2 * 4 * 4 * 4


def test_a_scan_body_counts_once_per_step():
    def rnn(w, xs):
        return lax.scan(lambda h, x: (pnp.tanh(h @ w + x), None), pnp.zeros(4), xs)[0]
    per_step = 2 * 4 * 4 + 4 + 4                 # h @ w, + x, tanh
    assert count_flops(_ir(rnn, (4, 4), (10, 4))) == 10 * per_step


def test_a_cond_counts_its_costliest_branch_and_a_while_one_iteration():
    def branches(x):
        return lax.cond(x[0, 0] > 0, lambda x: x @ x, lambda x: x + 1.0, x)
    assert flops_by_primitive(_ir(branches, (4, 4)))["dot_general"] == 2 * 4 * 4 * 4
    assert "add" not in flops_by_primitive(_ir(branches, (4, 4)))

    def loop(x):
        return lax.while_loop(lambda c: c[0] < 10.0, lambda c: c * 2.0, x)
    assert flops_by_primitive(_ir(loop, (3,))) == {"lt": 1, "mul": 3}
