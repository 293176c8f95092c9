"""Every example and the demo run end to end at small sizes (argv), and their losses fall."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

EXAMPLES = {
    "mlp_synthetic.py": ["--steps", "40", "--hidden", "16", "--points-per-class", "40"],
    "transformer_block.py": ["--steps", "25", "--dim", "16", "--length", "6", "--batch", "8"],
    "train_data_parallel.py": ["--steps", "3", "--batch-per-device", "4"],
    "train_tensor_parallel.py": ["--steps", "3"],
    "resnet_small.py": ["--steps", "8", "--batch", "8", "--width", "4", "--size", "16"],
    "int8_inference.py": ["--steps", "60", "--hidden", "32", "--batch", "64"],
    "moe.py": ["--steps", "12", "--tokens", "64", "--dim", "8", "--hidden", "16"],
    "variable_length_batches.py": ["--sentences", "512", "--max-len", "48"],
}


_RUNS: dict = {}


def _run(args) -> subprocess.CompletedProcess:
    """``python *args`` from the repository's root, run once per module for the same args
    (two tests read the same run of int8_inference and of mlp_synthetic)."""
    key = tuple(args)
    if key not in _RUNS:
        env = {**os.environ, "PTOJAX_NUM_DEVICES": "4"}
        done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        _RUNS[key] = done
    return _RUNS[key]


def run(args):
    return _run(args).stdout


def losses(text):
    """Every number after "loss " or "-> " in the text, in order."""
    return [float(x) for x in re.findall(r"(?:loss|->) (-?[0-9.]+)", text)]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs_and_its_loss_falls(name):
    out = run([f"examples/{name}", *EXAMPLES[name]])
    found = losses(out)
    assert len(found) >= 2 and found[-1] < found[0], out


def test_int8_inference_keeps_accuracy_and_shows_the_int8_cube_kernel():
    out = run(["examples/int8_inference.py", *EXAMPLES["int8_inference.py"]])
    f32, int8, agree = map(float, re.search(
        r"float32 ([0-9.]+)%, int8 ([0-9.]+)%; predictions agree on ([0-9.]+)%", out).groups())
    assert abs(f32 - int8) < 2 and agree > 95, out
    assert re.search(r"pto\.tmatmul ins\(.*dtype=i8", out) and "loc=acc, dtype=i32" in out, out


def test_decode_kv_cache_compiles_once_and_matches_the_static_steps():
    out = run(["examples/decode_kv_cache.py", "--tokens", "96", "--static-tokens", "20",
               "--dim", "32", "--layers", "1"])
    compiles = int(re.search(r"symbolic: 96 tokens in [0-9.]+ s, (\d+) compiled", out).group(1))
    assert compiles <= 10, out
    assert "f32[1,4,length,8]" in out and "first 20 tokens identical: True" in out, out
    # 19 lengths: the prefill's jit(step) of the empty cache shares step's compiled programs
    # (every jit of one function and options does, as in JAX), then 18 more
    assert re.search(r"static: +20 tokens in [0-9.]+ s, 19 compiled steps", out), out


def test_variable_length_batches_compile_once_with_a_symbolic_length():
    out = run(["examples/variable_length_batches.py", "--sentences", "256", "--max-len", "40"])
    rows = dict(re.findall(r"^(pad to max|buckets \(powers of 2\)|symbolic length) +(\d+) ",
                           out, re.M))
    assert rows == {"pad to max": "1", "buckets (powers of 2)": "4", "symbolic length": "1"}, out
    assert "computed the same losses" in out, out


def test_training_examples_show_a_progress_bar():
    done = _run(["examples/mlp_synthetic.py", *EXAMPLES["mlp_synthetic.py"]])
    assert re.search(r"train \[#{24}\] 40/40 .*loss=", done.stderr), done.stderr[-2000:]


def test_demo_shows_ir_gradient_kernel_and_falling_loss():
    out = run(["-m", "ptojax.demo"])
    for heading in ("1. the MLP forward pass", "2. its gradient", "3. softmax as one fused",
                    "4. training"):
        assert heading in out
    assert "tile_kernel" in out and "TROWMAX" in out and "cost estimate on ascend910b" in out
    found = losses(out)
    assert len(found) == 6 and found[-1] < found[0]


WITH_ARGUMENTS = sorted(p.name for p in (ROOT / "examples").glob("*.py")
                        if "argparse" in p.read_text())
# every example's --help in one fresh interpreter, each run as __main__ (one interpreter's
# start-up and ptojax import, 2 s on a busy machine, instead of one per example)
_HELP = """
import contextlib, io, json, runpy, sys
out = {}
for name in sys.argv[1:]:
    sys.argv, text = [f"examples/{name}", "--help"], io.StringIO()
    with contextlib.redirect_stdout(text):
        try:
            runpy.run_path(f"examples/{name}", run_name="__main__")
        except SystemExit as e:
            assert e.code in (0, None), (name, e.code)
    out[name] = text.getvalue()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def help_texts():
    return json.loads(run(["-c", _HELP, *WITH_ARGUMENTS]))


@pytest.mark.parametrize("name", WITH_ARGUMENTS)
def test_example_help_shows_every_default(help_texts, name):
    """``--help`` is quick (the example does no work at import) and states each default."""
    source = (ROOT / "examples" / name).read_text()
    text = help_texts[name]
    assert text.count("(default:") == source.count("add_argument("), text
