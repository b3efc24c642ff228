"""Compiled kernels (numba) over flat arrays with per-query offsets.

This layer imports only numpy and numba. It never sees a DataFrame, a file
or a Python object, validates nothing and aggregates nothing.
"""
