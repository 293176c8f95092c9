"""``pto.scipy.spatial``: JAX's ``jax.scipy.spatial`` package, whose one module,
``transform`` (``Rotation``, ``Slerp``), is imported by name, as JAX's."""
