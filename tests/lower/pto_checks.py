"""Structural checks on emitted PTO text (C++ and PTO-AS), independent of the emitters.

- balanced braces / parentheses / brackets;
- flags: in every loop body, and in the whole function, each (src pipe, dst pipe, event) is
  set as many times as it is waited (non-loop blocks count toward their enclosing block);
  cross-core notifications are waited once per vector sub-block;
- every tile fits its buffer at its assigned address (and is aligned);
- C++: two tiles whose address ranges overlap are never live at the same time (a result may
  take over an operand's buffer at the instruction where the operand dies).
"""
import re
from collections import Counter

SPACE = {"Vec": "UB", "Mat": "L1", "Left": "L0A", "Right": "L0B", "Acc": "L0C",
         "vec": "UB", "mat": "L1", "left": "L0A", "right": "L0B", "acc": "L0C"}
CPP_ITEM = {"float": 4, "half": 2, "bfloat16_t": 2, "int32_t": 4, "int16_t": 2, "int8_t": 1,
            "uint8_t": 1}
MLIR_ITEM = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i16": 2, "i8": 1, "ui8": 1}


def check_balanced(text):
    clean = re.sub(r"//.*", "", text)
    clean = re.sub(r'"[^"\n]*"', '""', clean)
    clean = clean.replace("<<<", "").replace(">>>", "")
    stack = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for ch in clean:
        if ch in "([{":
            stack.append(ch)
        elif ch in ")]}":
            assert stack and stack[-1] == pairs[ch], f"unbalanced {ch!r}"
            stack.pop()
    assert not stack, f"unclosed {stack}"


CPP_FLAG = re.compile(r"\b(set|wait)_flag\(PIPE_(\w+), PIPE_(\w+), (\w+)\)")
PTO_FLAG = re.compile(r"pto\.(set|wait)_flag\[<PIPE_(\w+)>, <PIPE_(\w+)>, <(\w+)>\]")


def check_flags(text, dialect):
    """Every set is waited: per loop body and per function (see the module docstring)."""
    flag = CPP_FLAG if dialect == "cpp" else PTO_FLAG
    loop_open = re.compile(r"^\s*for \(" if dialect == "cpp" else r"scf\.for ")
    stack = [("root", Counter())]
    for line in text.splitlines():
        code = line.split("//")[0]
        for m in flag.finditer(code):
            action, src, dst, ev = m.groups()
            stack[-1][1][(src, dst, ev)] += 1 if action == "set" else -1
        kind = "loop" if loop_open.search(code) else "block"
        for ch in code:
            if ch == "{":
                stack.append((kind, Counter()))
                kind = "block"
            elif ch == "}":
                done, counts = stack.pop()
                if done == "loop":
                    bad = {k: v for k, v in counts.items() if v}
                    assert not bad, f"loop body leaves flags unbalanced: {bad}"
                else:
                    stack[-1][1].update(counts)
    assert len(stack) == 1
    bad = {k: v for k, v in stack[0][1].items() if v}
    assert not bad, f"flags set but never waited (or waited but never set): {bad}"
    if dialect == "cpp":
        assert text.count("ffts_cross_core_sync(") == text.count("wait_flag_dev(")
    else:      # vector loops are unrolled (sub-blocks x buffers), so only presence pairs up
        assert ("pto.sync.set" in text) == ("pto.sync.wait" in text)


CPP_TILE = re.compile(r"^\s*(Tile<TileType::(\w+), (\w+), (\d+), (\d+)[^;]*|"
                      r"Tile(Left|Right|Acc)<(\w+), (\d+), (\d+)[^;]*)> (\w+);")
CPP_ASSIGN = re.compile(r"TASSIGN\((\w+), 0x([0-9a-f]+)u(?: \+ \(\w+ % (\d+)u\) \* "
                        r"0x([0-9a-f]+)u)?\);")


def cpp_tiles(text):
    """(name, space, bytes, offset, copies, stride) of every tile declaration."""
    decls = {}
    out = []
    for line in text.splitlines():
        m = CPP_TILE.match(line)
        if m:
            if m.group(2):
                space, ty, r, c = SPACE[m.group(2)], m.group(3), int(m.group(4)), \
                    int(m.group(5))
            else:
                space, ty, r, c = SPACE[m.group(6)], m.group(7), int(m.group(8)), \
                    int(m.group(9))
            decls[m.group(10)] = (space, r * c * CPP_ITEM[ty])
            continue
        m = CPP_ASSIGN.search(line)
        if m:
            name = m.group(1)
            space, nbytes = decls[name]
            copies = int(m.group(3) or 1)
            stride = int(m.group(4) or "0", 16)
            out.append((name, space, nbytes, int(m.group(2), 16), copies, stride))
    return out


def check_tiles_fit(text, dialect, target):
    tiles = cpp_tiles(text) if dialect == "cpp" else pto_tiles(text)
    assert tiles, "no tiles found"
    for name, space, nbytes, offset, copies, stride in tiles:
        end = offset + (copies - 1) * stride + nbytes
        assert end <= target.capacity(space), f"{name} ends at {end} > {space} capacity"
        assert offset % target.alignment[space] == 0, f"{name} misaligned in {space}"
        if copies > 1:
            assert stride >= nbytes, f"{name}'s copies overlap"


PTO_TILE = re.compile(r"(%[\w]+) = pto\.alloc_tile addr = %a(\d+) : !pto\.tile_buf<loc=(\w+), "
                      r"dtype=(\w+), rows=(\d+), cols=(\d+)")


def pto_tiles(text):
    return [(m.group(1), SPACE[m.group(3)], int(m.group(5)) * int(m.group(6))
             * MLIR_ITEM[m.group(4)], int(m.group(2)), 1, 0)
            for m in PTO_TILE.finditer(text)]


def check_no_live_overlap(text):
    """Within each region (a block declaring tiles), tiles whose buffers overlap are not live
    at once: one's first use is at or after the other's last use."""
    regions, current = [], None
    for i, line in enumerate(text.splitlines()):
        if "// region" in line:
            current = []
            regions.append(current)
        if current is not None:
            current.append((i, line))
    assert regions, "no regions found"
    for region in regions:
        _check_region(region)


CARRY_NOTE = re.compile(r"// (t\d+): the loop's next value of (t\d+), in its buffer")


def _check_region(lines):
    body = "\n".join(line for _, line in lines)
    tiles = {t[0]: t for t in cpp_tiles(body)}
    # a loop body's next value of a carry is the carry itself, in the carry's buffer
    carry_of = dict(CARRY_NOTE.findall(body))
    uses = {}
    for i, line in lines:
        if "TASSIGN" in line or "Tile<" in line or "Tile" in line.split("<")[0][-8:] \
                or CARRY_NOTE.search(line):
            continue
        for name in re.findall(r"\b(t\d+)(?:_r)?\b", line):
            if name in tiles:
                uses.setdefault(carry_of.get(name, name), []).append(i)
    names = sorted(uses)
    for a in names:
        for b in names:
            if a >= b:
                continue
            if not _overlap(tiles[a], tiles[b]):
                continue
            fa, la, fb, lb = min(uses[a]), max(uses[a]), min(uses[b]), max(uses[b])
            assert fa >= lb or fb >= la, f"{a} and {b} share memory while both live"


def _ranges(t):
    _, space, nbytes, offset, copies, stride = t
    return [(space, offset + k * stride, offset + k * stride + nbytes) for k in range(copies)]


def _overlap(a, b):
    return any(sa == sb and lo_a < hi_b and lo_b < hi_a
               for sa, lo_a, hi_a in _ranges(a) for sb, lo_b, hi_b in _ranges(b))


def all_checks(text, dialect, target):
    check_balanced(text)
    check_flags(text, dialect)
    check_tiles_fit(text, dialect, target)
    if dialect == "cpp":
        check_no_live_overlap(text)
