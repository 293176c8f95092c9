"""vmap tests share the per-primitive case drawers of tests/ops/prim_cases.py."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))
