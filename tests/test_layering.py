"""The package is layered: a module imports only from its own layer or lower ones, with no
import cycle, and imports inside functions only for optional dependencies.

The layer order is written here and in DESIGN.md ("Layout"); change both together.
"""
import ast
import functools
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "ptojax"

# lowest first; an entry is a module or a package (all modules under it)
LAYERS = [
    ("base", ["errors", "env", "dtypes", "source_info", "pytree", "pytree_nodes", "tree_registry", "tree_util", "tree", "scoped_options", "targets", "sharding",
              "devices", "public"]),
    ("ir", ["ir"]),
    ("core", ["trace", "eval"]),
    ("ops", ["ops"]),
    ("optimize", ["optimize"]),
    ("batching", ["batching"]),
    ("autodiff", ["autodiff"]),
    ("tile", ["tile", "kernel"]),
    ("shard", ["shard"]),
    ("control_flow", ["control_flow"]),
    ("lower", ["lower"]),
    ("api", ["jit", "jit_static", "jit_nested", "lax", "numpy", "scipy", "nn", "random", "tools", "distributed", "demo",
             "config", "debug", "typing", "custom_derivatives", "make_array", "runtime_info", "quant", "mixed_precision", "pmap", "image", "flatten_util", "jit_shardings", "aot_signature", "stages", "profiler", "custom_batching", "ad_checkpoint", "experimental", "extend", "core", "testing", "test_util", "__init__",
             "__main__"]),
    ("example_libraries", ["example_libraries"]),
]
# the only packages a function-level import may name: optional dependencies
OPTIONAL = {"jax", "mpi4py", "graphviz", "matplotlib", "IPython", "absl"}


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    for i, (_, members) in enumerate(LAYERS):
        for m in members:
            if module == m or module.startswith(m + "."):
                return i
    raise AssertionError(f"ptojax.{module} is in no layer: add it to LAYERS (and DESIGN.md)")


def resolve(node, module: str, is_package: bool) -> list:
    """The ptojax modules an import statement names (relative to the package root)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            here = here[:len(here) - node.level + 1]
            base = ".".join([*here, base] if base else here)
            base = "ptojax." + base if base else "ptojax"
        names = [f"{base}.{a.name}" for a in node.names]
    out = []
    for n in names:
        if n != "ptojax" and not n.startswith("ptojax."):
            continue
        n = n[len("ptojax."):] if n != "ptojax" else "__init__"
        while n not in MODULES and "." in n:
            n = n.rsplit(".", 1)[0]
        if n in MODULES:
            out.append(n)
    return out


@functools.cache
def imports(module: str):
    """(module-level imports, function-level import statements) of a module."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    top = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update(resolve(node, module, is_package))
    nested = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    nested.append(node)
    return top - {module}, nested


@functools.cache
def graph():
    """Module -> the modules it imports at module level (parsed when a test first asks, not
    at collection, which every test process does)."""
    return {m: imports(m)[0] for m in MODULES}


def test_every_module_has_a_layer():
    for m in MODULES:
        layer_of(m)


def test_no_module_imports_a_higher_layer():
    wrong = [f"ptojax.{m} ({LAYERS[layer_of(m)][0]}) imports ptojax.{d} "
             f"({LAYERS[layer_of(d)][0]})"
             for m, deps in graph().items() for d in sorted(deps) if layer_of(d) > layer_of(m)]
    assert not wrong, "upward imports:\n" + "\n".join(wrong)


def test_no_import_cycle():
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph()[m]):
            if state.get(d) == "open":
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in MODULES:
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_function_level_imports_are_only_for_optional_dependencies():
    wrong = []
    for m in MODULES:
        for node in imports(m)[1]:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if not node.level else ["ptojax"]
            for n in names:
                if n.split(".")[0] not in OPTIONAL:
                    wrong.append(f"ptojax.{m}:{node.lineno} imports {n} inside a function")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_layers_are_documented_in_design_md(layer):
    design = (PACKAGE.parent / "DESIGN.md").read_text()
    assert f"`{layer}`" in design, f"DESIGN.md's layout section does not name layer {layer}"
