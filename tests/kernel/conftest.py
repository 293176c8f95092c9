"""Kernel tests run kernels through the host build and check emitted text with the lower
tests' helpers (tests/lower, tests/lower/host)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
for sub in (("..", "lower"), ("..", "lower", "host")):
    sys.path.insert(0, os.path.join(HERE, *sub))
