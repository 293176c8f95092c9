"""What-if study of the flash attention forward's key loop on the 910B pipe model: which
schedule changes would move the cost-model estimate toward its roofline
(``python benchmarks/flash_pipeline_study.py``).

The cost model (``ptojax.lower.pipes``) walks the schedule the lowering really emits, so it
can only price schedules that exist. This study replays the loop's steady state under the
same rules -- in-order pipes, a load's consumer waits for its pipe (a flag pair fires once
the pipe has done all it was given before), a cross-core
wait holds every pipe of its core, a cube set reaches every vector sub-block and the cube
waits for all of them, workspaces with a number of credits -- with each instruction's time
from the same target figures (``ptojax.targets.ascend910b``), for schedules the lowering
does not produce yet (``SCHEDULES``):

    lookahead   how many key blocks ahead the cube computes the scores
    lag         how many steps after it the vector unit adds a block's P @ V
    depth       buffers per cube <-> vector workspace (1 today)
    order       where the vector unit's step loads the scores and P @ V
    sub-blocks  vector sub-blocks splitting a query block's rows (1 today; the 910B has 2)
    ub_reuse    the scores' UB tile shares bytes with P's, so their load waits for P's store

Buffer placement is not derived here: the lowering's flags include the write-after-read
hazards of tiles sharing bytes (``tile/memory.py`` reuses a dead tile's bytes), which a
schedule states with ``ub_reuse``. Leaving it out is what made this study promise 0.386 us a
step for the two-deep schedule, which the cost model priced at 0.492 us once it was lowered
(local branch wt-flash7-wip): at 64x64 float32 the 910B UB is nearly full, and the scores'
second staging copy (the load is double-buffered in the loop) was placed on P's tile, so the
scores' load waited for P's store (MTE3 -> MTE2), which waits for the cube to free P's
workspace -- a cube -> vector -> cube round trip inside every step. With ``ub_reuse`` the
study gives 0.492 us too; the two agree, the model was right and the study was not.

It reproduces the model's figures for the kernel before (0.555 us a 64x64 step), the
single-copy one after it (0.474 us) and today's at 64x64 (0.492 us: the two-deep schedule,
now lowered generally -- ``kernel/lower.py``'s two-copy c2v carries -- with the scores'
staging copy still on P's bytes there; at 128x64 on both sub-blocks it is the faster one),
and is a study, not the cost model: ramps, the diagonal blocks and per-program
overheads are left out. Its two-sub-block projection (68% of the S8192 roofline at 64x64, 80%
at 128x64) did not hold either once the split was lowered (``tile/row_split.py``): the model
gives 1.433 ms at 64x64 (1.422 on one sub-block) and 1.429 ms at 128x64, whose query block,
split along K, is reloaded every step -- the forward's bound is the cube's side of the round
trip, not the vector unit.
"""
from __future__ import annotations

import itertools
from collections import defaultdict, deque

from ptojax.targets import ascend910b as TARGET

PIPES = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")


def step_times(rows=64, keys=64, dim=64, sub_blocks=1):
    """Seconds of each instruction of one key step (float32 blocks), as lower/pipes.py
    prices them."""
    t, hz = TARGET, TARGET.clock_hz

    def dma(nbytes, path):
        return nbytes / t.dma_bandwidth[path] + t.dma_issue_cycles / hz

    def vec(nbytes):
        return (t.vector_issue_cycles + -(-nbytes // t.vector_bytes_per_cycle)) / hz

    f = t.cube_fractal[0]
    mm = (rows // f) * (keys // f) * (dim // f) * f ** 3 / t.cube_macs_per_cycle["float32"] / hz
    vr = rows // sub_blocks
    return dict(
        K=dma(keys * dim * 4, "GM->L1"), Vl=dma(keys * dim * 4, "GM->L1"),
        P=dma(rows * keys * 4, "GM->L1"), exK=keys * dim * 4 / t.dma_bandwidth["L1->L0B"],
        exV=keys * dim * 4 / t.dma_bandwidth["L1->L0B"],
        exP=rows * keys * 4 / t.dma_bandwidth["L1->L0A"], QK=mm, PV=mm,
        FS=dma(rows * keys * 4, "L0C->GM"), FPV=dma(rows * dim * 4, "L0C->GM"),
        LS=dma(vr * keys * 4, "GM->UB"), SP=dma(vr * keys * 4, "UB->GM"),
        LPV=dma(vr * dim * 4, "GM->UB"),
        SM=4 * vec(vr * keys * 4) + vec(vr * 4),        # scale, rowmax, sub, exp; max
        small=3 * vec(vr * 4) + vec(vr * keys * 4),     # alpha, l, rowsum
        ACC=2 * vec(vr * dim * 4))                      # (acc + PV) * alpha


SCHEDULES = {
    # the vector unit's step: its loads where the kernel places them
    "one block ahead": dict(lookahead=1, lag=0, order=("LS", "SM", "PV", "ACC")),
    "scores and P @ V carried in UB": dict(lookahead=2, lag=0, order=("SM", "ACC", "LS", "PV")),
    "workspaces two deep, P @ V a step later": dict(lookahead=2, lag=1, depth=2,
                                                    order=("LS", "SM", "PV", "ACC")),
    # the same as lowered at 64x64 (wt-flash7-wip): the scores' staging copy on P's bytes
    "two deep, scores staged over P (as lowered)": dict(lookahead=2, lag=1, depth=2,
                                                        order=("LS", "SM", "PV", "ACC"),
                                                        ub_reuse=True),
}


def programs(lookahead=1, lag=0, order=("LS", "SM", "PV", "ACC"), ub_reuse=False, **sizes):
    """The cube's and a vector sub-block's statements of step j: the cube computes the scores
    ``lookahead`` blocks ahead of the vector unit's softmax; the vector unit adds a block's
    P @ V ``lag`` steps after the cube computed it; ``order`` is the vector unit's step (LS:
    the scores' load, SM: softmax and P's store, PV: P @ V's load, ACC: the rescaled sum);
    ``ub_reuse``: the scores' load overwrites bytes P's store reads (it waits for MTE3)."""
    d = step_times(**sizes)

    def op(pipe, name, *deps):
        return ("op", pipe, d.get(name, 0.0), name, deps)

    scores = [op("MTE2", "K"), op("MTE1", "exK", "K"), op("M", "QK", "exK"),
              ("wait", "Sfree"), op("FIX", "FS", "QK"), ("set", "Sready", "FS")]

    def cube(j):
        out = [op("M", "mark")] + (scores * (lookahead - 1) if j == 0 else [])
        return out + scores + [
            op("MTE2", "Vl"), op("MTE1", "exV", "Vl"), ("wait", "Pready"), op("MTE2", "P"),
            ("set", "Pfree", "P"), op("MTE1", "exP", "P"), op("M", "PV", "exP", "exV"),
            ("wait", "PVfree"), op("FIX", "FPV", "PV"), ("set", "PVready", "FPV")]

    parts = {"LS": [("wait", "Sready"), op("MTE2", "LS", *(("SP",) if ub_reuse else ())),
                    ("set", "Sfree", "LS")],
             "SM": [op("V", "SM", "LS"), ("wait", "Pfree"), op("MTE3", "SP", "SM"),
                    ("set", "Pready", "SP"), op("V", "small")],
             "PV": [("wait", "PVready"), op("MTE2", "LPV"), ("set", "PVfree", "LPV")],
             "ACC": [op("V", "ACC", "LPV")]}
    carried = order.index("LS") > order.index("SM")      # loaded for the next step

    def vector(j):
        out = parts["LS"] if carried and j == 0 else []
        for part in order:
            if part != "PV" and part != "ACC" or j >= lag:
                out = out + parts[part]
        return out
    return cube, vector


def seconds_per_step(lookahead=1, lag=0, sub_blocks=1, depth=1, order=("LS", "SM", "PV", "ACC"),
                     steps=300, ub_reuse=False, **sizes):
    cube, vector = programs(lookahead, lag, order, ub_reuse, sub_blocks=sub_blocks, **sizes)
    units = ["cube"] + [f"vec{i}" for i in range(sub_blocks)]
    code = {u: [s for j in range(steps) for s in (cube if u == "cube" else vector)(j)]
            for u in units}
    free, done, flags, pipe_of = defaultdict(float), {}, defaultdict(deque), {}
    for name, n in (("Sfree", depth), ("PVfree", depth), ("Pready", 1)):
        flags[("cube", name)].extend([0.0] * n * sub_blocks)
    at, marks, moved = dict.fromkeys(units, 0), [], True
    while moved:
        moved = False
        for u in units:
            while at[u] < len(code[u]):
                s = code[u][at[u]]
                if s[0] == "op":         # a flag pair waits for all its source pipe's work
                    _, pipe, sec, name, deps = s
                    start = max([free[(u, pipe)]] + [free[(u, pipe_of[x])] for x in deps
                                                     if x in pipe_of])
                    free[(u, pipe)] = done[(u, name)] = start + sec
                    pipe_of[name] = pipe
                    if name == "mark":
                        marks.append(start)
                elif s[0] == "set":
                    for to in (units[1:] if u == "cube" else ["cube"]):
                        flags[(to, s[1])].append(done[(u, s[2])])
                else:
                    q, need = flags[(u, s[1])], sub_blocks if u == "cube" else 1
                    if len(q) < need:
                        break
                    when = max(q.popleft() for _ in range(need))
                    for p in PIPES:
                        free[(u, p)] = max(free[(u, p)], when)
                at[u] += 1
                moved = True
    half = len(marks) // 2
    return (marks[-1] - marks[half]) / (len(marks) - 1 - half)


def main():
    heads, seq, dim = 8, 8192, 64
    # causal: half the scores; per cube core, the key steps of its programs
    flops = 2 * 2 * heads * seq * seq // 2 * dim
    roofline = flops / (TARGET.cube_cores * TARGET.cube_macs_per_cycle["float32"] * 2
                        * TARGET.clock_hz)
    print(f"roofline {roofline * 1e3:.3f} ms (cube, float32)")
    for (name, schedule), rows, sub in itertools.product(SCHEDULES.items(), (64, 128), (1, 2)):
        if rows == 128 and sub == 1:
            continue            # the 910B UB holds 64-row blocks on one sub-block (DESIGN.md)
        steps = heads * (seq // rows) * (seq // 64 + 1) / 2 / TARGET.cube_cores
        per = seconds_per_step(sub_blocks=sub, rows=rows, dim=dim, **schedule)
        print(f"{name:<44} {rows}x64 blocks, {sub} sub-block(s): {per * 1e6:.3f} us/step, "
              f"{per * steps * 1e3:.2f} ms, {roofline / (per * steps):.0%} of the roofline")


if __name__ == "__main__":
    main()
