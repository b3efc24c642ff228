"""Layer 0, the base: optional imports, the kernels' thread count, the progress line, table layouts."""
