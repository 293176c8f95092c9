"""``pto.kernel``: hand-written tile kernels (see ``kernel/api.py``)."""
