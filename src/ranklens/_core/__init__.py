"""Layer 4, the core: a problem and a plan, the kernel run, aggregation into a result, explain, statistics."""
